package resp

// This file holds what every typed value shares, as Redis's object.c: how
// a command finds a key's value of its type (or replies WRONGTYPE), the
// encodings OBJECT ENCODING names, and the OBJECT command.
//
// Hashes, lists, sets and sorted sets are engine Objects (see package
// engine): the key's entry, with its deadline, is the engine's like a
// string's, so expiry, WATCH, DEL, RENAME, SCAN and FLUSH treat every type
// alike; the value is one of the types of t_hash.go, t_list.go, t_set.go
// and t_zset.go, read and changed only inside an engine section holding
// the key (call.locked), and each change is reported with the command's
// keyspace event (Tx.Notify).

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/nxkv/nxkv/engine"
)

// typed returns key's value as a T (one of the Object types): the zero T
// (nil) with ok true when key is absent, or ok false after replying
// WRONGTYPE when key holds another type. A read-only command's lookup is a
// read, as Redis's lookupKeyRead: a key it misses is published as keymiss
// (a write command that reads a key names the miss itself).
func typed[T engine.Object](x *call, tx *engine.Tx, key string) (obj T, ok bool) {
	o, found := tx.Object(key)
	if !found {
		if x.cmd.flags&readonly != 0 {
			x.miss(key)
		}
		return obj, true
	}
	if obj, ok = o.(T); !ok {
		x.w.errorReply(errWrongType)
	}
	return obj, ok
}

// encoded is an Object that names its encoding as Redis's OBJECT ENCODING
// does.
type encoded interface{ encoding() string }

// copier is an Object that copies itself (COPY).
type copier interface{ clone() engine.Object }

// stringEncoding names a string's encoding as Redis's OBJECT ENCODING
// does: "int" for a value Redis stores as a long, "embstr" up to 44 bytes,
// "raw" beyond. (Redis may keep a short string it built by APPEND or
// SETRANGE as raw; nxkv reports by length only.)
func stringEncoding(v string) string {
	if len(v) <= 20 {
		if _, ok := parseInt([]byte(v)); ok {
			return "int"
		}
	}
	if len(v) <= 44 {
		return "embstr"
	}
	return "raw"
}

// cmdObject is OBJECT ENCODING, REFCOUNT, IDLETIME and FREQ: nil for a
// missing key. nxkv keeps no access times or counters: IDLETIME is 0 and
// FREQ replies Redis's error for a server without an LFU policy.
func cmdObject(x *call) {
	key := x.key(2)
	x.locked([]string{key}, func(tx *engine.Tx) {
		o, found := tx.Object(key)
		if !found {
			x.w.null()
			return
		}
		switch x.cmd.name {
		case "object|encoding":
			if o == nil {
				v, _ := tx.Get(key)
				x.w.bulkString(stringEncoding(v))
			} else {
				x.w.bulkString(o.(encoded).encoding())
			}
		case "object|refcount":
			x.w.int(1)
		case "object|idletime":
			x.w.int(0)
		default:
			x.w.errorReply("ERR An LFU maxmemory policy is not selected, access frequency not tracked. " +
				"Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
		}
	})
}

// sized is an Object that estimates the bytes it holds (MEMORY USAGE).
type sized interface{ size() int }

// Every Object type is also an engine.Sizer: under maxmemory the engine
// charges a key holding one its Size, an estimate from sampled elements,
// on each write of the key.
var (
	_ engine.Sizer = (*hashObj)(nil)
	_ engine.Sizer = (*listObj)(nil)
	_ engine.Sizer = (*setObj)(nil)
	_ engine.Sizer = (*zsetObj)(nil)
)

// sampledSize estimates, for the engine's memory bound, the bytes of a
// value of n elements: fixed bytes for the whole, each bytes per element,
// and n times the mean of elem (an element's own bytes) over up to eight
// elements taken evenly across the value, as Redis's MEMORY USAGE
// estimates from sampled elements (five by default). It costs O(1)
// whatever n, as it runs on every write; for up to eight elements it
// equals the value's size (MEMORY USAGE's count).
func sampledSize(fixed, n, each int, elem func(i int) int) int64 {
	sum, k := 0, min(n, 8)
	for j := range k {
		sum += elem(j * n / k)
	}
	if k > 0 {
		sum = sum * n / k
	}
	return int64(fixed + n*each + sum)
}

// entryBytes is what the engine spends on a key besides its strings: the
// entry, its index slot and a wheel link (see package engine), and the
// map entry of an Object.
const entryBytes = 40 + 8 + 16

// cmdMemoryUsage is MEMORY USAGE key [SAMPLES count]: nil for a missing
// key, otherwise an estimate of the bytes the key and its value hold (the
// whole value: nxkv does not sample).
func cmdMemoryUsage(x *call) {
	for j := 3; j < len(x.args); j++ {
		if equalFold(x.args[j], "samples") && j+1 < len(x.args) {
			n, ok := x.intArg(j + 1)
			if !ok {
				return
			}
			if n < 0 {
				x.w.errorReply(errSyntax)
				return
			}
			j++
			continue
		}
		x.w.errorReply(errSyntax)
		return
	}
	key := x.key(2)
	x.locked([]string{key}, func(tx *engine.Tx) {
		o, found := tx.Object(key)
		switch {
		case !found:
			x.w.null()
		case o == nil:
			v, _ := tx.Get(key)
			x.w.int(int64(entryBytes + len(key) + len(v)))
		default:
			x.w.int(int64(entryBytes + 40 + len(key) + o.(sized).size()))
		}
	})
}

// cmdObjectHelp is OBJECT HELP.
func cmdObjectHelp(x *call) {
	lines := []string{
		"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"ENCODING <key>",
		"    Return the kind of internal representation used in order to store the value",
		"    associated with a <key>.",
		"FREQ <key>",
		"    Return the access frequency index of the <key>. The returned integer is",
		"    proportional to the logarithm of the recent access frequency of the key.",
		"IDLETIME <key>",
		"    Return the idle time of the <key>, that is the approximated number of",
		"    seconds elapsed since the last access to the key.",
		"REFCOUNT <key>",
		"    Return the number of references of the value associated with the specified",
		"    <key>.",
		"HELP",
		"    Prints this help.",
	}
	x.w.array(len(lines))
	for _, l := range lines {
		x.w.simple(l)
	}
}

// scanned is a typed value HSCAN, SSCAN and ZSCAN walk.
type scanned interface {
	// scanPage returns the elements of about count entries from cursor
	// (0: the start), flat, width strings per entry (the first of each is
	// what MATCH filters on), and the next cursor (0: done). A small
	// encoding returns everything at once, as Redis does.
	scanPage(cursor uint64, count int) (items []string, width int, next uint64)
}

// scanTyped is HSCAN, SSCAN and ZSCAN key cursor [MATCH pattern] [COUNT
// count], in Redis's order: the cursor, the key (an empty page for a
// missing key, WRONGTYPE for another type), then the options. lookup finds
// the command's type (nil, true: absent).
func (x *call) scanTyped(lookup func(tx *engine.Tx, key string) (scanned, bool)) {
	cursor, ok := parseCursor(x.args[2])
	if !ok {
		x.w.errorReply("ERR invalid cursor")
		return
	}
	key := x.key(1)
	x.locked([]string{key}, func(tx *engine.Tx) {
		src, ok := lookup(tx, key)
		if !ok {
			return
		}
		if src == nil {
			x.w.array(2)
			x.w.bulkString("0")
			x.w.array(0)
			return
		}
		count, pat, usePat, _, ok := x.scanOptions(3, false)
		if !ok {
			return
		}
		items, width, next := src.scanPage(cursor, int(min(count, math.MaxInt32)))
		if usePat {
			kept := items[:0]
			for i := 0; i < len(items); i += width {
				if globMatch(pat, items[i]) {
					kept = append(kept, items[i:i+width]...)
				}
			}
			items = kept
		}
		x.w.array(2)
		x.w.bulkString(strconv.FormatUint(next, 10))
		x.w.array(len(items))
		for _, it := range items {
			x.w.bulkString(it)
		}
	})
}

// pageOf is scanPage for a dense table: everything while small, a page of
// positions once indexed. emit appends the strings of position i.
func pageOf[V any](d *dense[V], cursor uint64, count int, emit func(out []string, i int) []string) ([]string, uint64) {
	var out []string
	if !d.indexed() {
		for i := range d.len() {
			out = emit(out, i)
		}
		return out, 0
	}
	from, to, next := d.scan(cursor, count)
	for i := to - 1; i >= from; i-- {
		out = emit(out, i)
	}
	return out, next
}

// positiveArg parses argument i as Redis's getPositiveLongFromObjectOrReply
// without a message of its own: anything but an integer from 0 on is
// "value is out of range, must be positive".
func (x *call) positiveArg(i int) (int64, bool) {
	return x.nonNegativeArg(i, "ERR value is out of range, must be positive")
}

// nonNegativeArg parses argument i as an integer from 0 on, replying msg
// for anything else (Redis's getPositiveLongFromObjectOrReply with a
// message: LPOS's COUNT, SINTERCARD's LIMIT, ...).
func (x *call) nonNegativeArg(i int, msg string) (int64, bool) {
	n, ok := parseInt(x.args[i])
	if !ok || n < 0 {
		x.w.errorReply(msg)
		return 0, false
	}
	return n, true
}

// popCount parses the optional count of SPOP, ZPOPMIN and ZPOPMAX key
// [count]: -1 when absent; more arguments are a syntax error.
func (x *call) popCount() (int64, bool) {
	switch {
	case len(x.args) > 3:
		x.w.errorReply(errSyntax)
		return 0, false
	case len(x.args) == 3:
		return x.positiveArg(2)
	}
	return -1, true
}

// intArgs parses arguments i and i+1 as integers (a range's start and
// end), replying the error of the first that is not.
func (x *call) intArgs(i int) (a, b int64, ok bool) {
	if a, ok = x.intArg(i); ok {
		b, ok = x.intArg(i + 1)
	}
	return a, b, ok
}

// removeMembers is HDEL, SREM and ZREM: it removes each argument from 2 on
// from the value under key (nil: absent) with remove, stops once the value
// is empty, names the change kind if any went (and deletes the emptied
// key), and replies how many went.
func (x *call) removeMembers(tx *engine.Tx, key string, absent bool, remove func(m string) bool, size func() int, kind engine.Kind) {
	removed := 0
	if !absent {
		for _, m := range x.args[2:] {
			if remove(string(m)) {
				removed++
				if size() == 0 {
					break
				}
			}
		}
	}
	if removed > 0 {
		tx.Notify(key, kind)
		dropIfEmpty(tx, key, size())
	}
	x.w.int(int64(removed))
}

// maxRandCount bounds how many elements HRANDFIELD, SRANDMEMBER and
// ZRANDMEMBER return for a negative count: Redis would build a reply of
// any size; nxkv refuses one past 16M elements rather than exhaust memory.
const maxRandCount = 1 << 24

// randCountArgs parses the count of HRANDFIELD, SRANDMEMBER and
// ZRANDMEMBER, and their option (WITHVALUES, WITHSCORES; "" for none), as
// Redis does: the count within plus or minus LONG_MAX, then the syntax,
// then, with the option, a count within half that.
func (x *call) randCountArgs(opt string) (count int64, with bool, ok bool) {
	n, ok := x.intArg(2)
	if !ok {
		return 0, false, false
	}
	if n == math.MinInt64 {
		x.w.errorReply("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return 0, false, false
	}
	switch {
	case len(x.args) > 4 || len(x.args) == 4 && (opt == "" || !equalFold(x.args[3], opt)):
		x.w.errorReply(errSyntax)
		return 0, false, false
	case len(x.args) == 4:
		with = true
		if n < -math.MaxInt64/2 || n > math.MaxInt64/2 {
			x.w.errorReply("ERR value is out of range")
			return 0, false, false
		}
	}
	if n < -maxRandCount {
		x.w.errorReply("ERR nxkv: count is too large (at most 16777216 elements with repetitions)")
		return 0, false, false
	}
	return n, with, true
}

// randomPick replies count random positions of a table of n > 0 entries,
// as Redis's HRANDFIELD, SRANDMEMBER and ZRANDMEMBER with a count: a
// negative count is that many positions drawn with repetition; a positive
// one is that many distinct positions, or every position in the table's
// order when it asks for n or more. pairs says each position is two
// elements (WITHVALUES, WITHSCORES: a flat array in RESP2, an array of
// pairs in RESP3). emit writes the elements of position i.
func (x *call) randomPick(n int, count int64, pairs bool, emit func(i int)) {
	header := func(k int) {
		if pairs && !x.w.resp3() {
			x.w.array(2 * k)
		} else {
			x.w.array(k)
		}
	}
	switch {
	case count == 0:
		x.w.array(0)
	case count < 0:
		header(int(-count))
		for range -count {
			emit(rand.IntN(n))
		}
	case count >= int64(n):
		header(n)
		for i := range n {
			emit(i)
		}
	case count*3 > int64(n):
		header(int(count))
		for _, i := range rand.Perm(n)[:count] {
			emit(i)
		}
	default:
		header(int(count))
		seen := make(map[int]bool, count)
		for len(seen) < int(count) {
			i := rand.IntN(n)
			if !seen[i] {
				seen[i] = true
				emit(i)
			}
		}
	}
}

// d2string prints a double as Redis's d2string stores a score in a
// listpack: an integral value within half of LLONG_MAX as an integer,
// otherwise "%.17g" (inf, -inf, nan and -0 as C prints them).
func d2string(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == 0 && math.Signbit(f):
		return "-0"
	case f == 0:
		return "0"
	case f >= -math.MaxInt64/2 && f <= math.MaxInt64/2 && f == math.Trunc(f):
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}
