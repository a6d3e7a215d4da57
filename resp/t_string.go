package resp

// This file holds the string commands, as Redis's t_string.c: GET, SET and
// its variants, the multi-key MGET/MSET family, ranges, APPEND, counters
// and LCS (Redis 8.4's compare-and-set family is in cas.go).

import (
	"math"
	"time"

	"github.com/nxkv/nxkv/engine"
)

func cmdGet(x *call) {
	v, ok := x.getString(x.st, x.key(1))
	if !ok {
		return
	}
	x.w.bulkString(v)
}

// isTyped reports whether a type TYPE reports is one of the Object types:
// a value string commands refuse with WRONGTYPE.
func isTyped(t string) bool { return t != engine.TypeNone && t != engine.TypeString }

// stringOf returns key's string value in st: found false for a missing
// key; wrong true for a key of another type. Outside a section it reads
// again if the key became a string between its two looks.
func stringOf(st store, key string) (v string, found, wrong bool) {
	for {
		if v, ok := st.Get(key); ok {
			return v, true, false
		}
		switch t := st.Type(key); {
		case t == engine.TypeNone:
			return "", false, false
		case isTyped(t):
			return "", false, true
		}
	}
}

// readString is a read command's lookup of key's string: ok is false
// after replying WRONGTYPE for another type, or, for a missing key, after
// calling missing to reply (a missing key reads as "" when missing is
// nil). A missing key is a read's miss (keymiss), as Redis's
// lookupKeyRead.
func (x *call) readString(key string, missing func()) (v string, ok bool) {
	v, found, wrong := stringOf(x.st, key)
	switch {
	case wrong:
		x.w.errorReply(errWrongType)
		return "", false
	case !found:
		x.miss(key)
		if missing != nil {
			missing()
			return "", false
		}
	}
	return v, true
}

// getString is GET's lookup: key's string value, or ok false after
// replying nil for a missing key (with its keymiss event) or WRONGTYPE for
// another type.
func (x *call) getString(st store, key string) (string, bool) {
	v, found, wrong := stringOf(st, key)
	switch {
	case wrong:
		x.w.errorReply(errWrongType)
	case !found:
		x.miss(key)
		x.w.null()
	}
	return v, found
}

// wrongType replies WRONGTYPE and returns true if key holds a value of
// another type than string.
func (x *call) wrongType(st store, key string) bool {
	if isTyped(st.Type(key)) {
		x.w.errorReply(errWrongType)
		return true
	}
	return false
}

// SET and GETEX option flags, as Redis parses them.
const (
	optNX = 1 << iota
	optXX
	optIFEQ
	optIFNE
	optIFDEQ
	optIFDNE
	optGET
	optEX
	optPX
	optEXAT
	optPXAT
	optKEEPTTL
	optPERSIST
	optExpire = optEX | optPX | optEXAT | optPXAT
	optCond   = optNX | optXX | optIFEQ | optIFNE | optIFDEQ | optIFDNE
	optDigest = optIFDEQ | optIFDNE
)

// parseSetOptions parses SET's options (set true) or GETEX's from argument
// from on, in Redis's order and with its conflict rules. It returns the
// flags, the expire argument and the IFEQ/IFNE value or IFDEQ/IFDNE
// digest, or false after
// replying a syntax error.
func (x *call) parseSetOptions(from int, set bool) (flags, expire int, match []byte, ok bool) {
	args := x.args
	for j := from; j < len(args); j++ {
		opt := args[j]
		next := j+1 < len(args)
		switch {
		case set && equalFold(opt, "nx") && flags&(optCond&^optNX) == 0:
			flags |= optNX
		case set && equalFold(opt, "xx") && flags&(optCond&^optXX) == 0:
			flags |= optXX
		case set && equalFold(opt, "ifeq") && next && flags&(optCond&^optIFEQ) == 0:
			flags |= optIFEQ
			match = args[j+1]
			j++
		case set && equalFold(opt, "ifne") && next && flags&(optCond&^optIFNE) == 0:
			flags |= optIFNE
			match = args[j+1]
			j++
		case set && equalFold(opt, "ifdeq") && next && flags&(optCond&^optIFDEQ) == 0:
			flags |= optIFDEQ
			match = args[j+1]
			j++
		case set && equalFold(opt, "ifdne") && next && flags&(optCond&^optIFDNE) == 0:
			flags |= optIFDNE
			match = args[j+1]
			j++
		case set && equalFold(opt, "get"):
			flags |= optGET
		case set && equalFold(opt, "keepttl") && flags&optExpire == 0:
			flags |= optKEEPTTL
		case !set && equalFold(opt, "persist") && flags&optExpire == 0:
			flags |= optPERSIST
		case equalFold(opt, "ex") && next && flags&(optKEEPTTL|optPERSIST|optPX|optEXAT|optPXAT) == 0:
			flags |= optEX
			expire = j + 1
			j++
		case equalFold(opt, "px") && next && flags&(optKEEPTTL|optPERSIST|optEX|optEXAT|optPXAT) == 0:
			flags |= optPX
			expire = j + 1
			j++
		case equalFold(opt, "exat") && next && flags&(optKEEPTTL|optPERSIST|optEX|optPX|optPXAT) == 0:
			flags |= optEXAT
			expire = j + 1
			j++
		case equalFold(opt, "pxat") && next && flags&(optKEEPTTL|optPERSIST|optEX|optPX|optEXAT) == 0:
			flags |= optPXAT
			expire = j + 1
			j++
		default:
			x.w.errorReply(errSyntax)
			return 0, 0, nil, false
		}
	}
	return flags, expire, match, true
}

// expireArg is a parsed expire argument: a relative TTL (EX, PX) or an
// absolute deadline (EXAT, PXAT).
type expireArg struct {
	ttl time.Duration // > 0 for EX/PX
	at  time.Time     // non-zero for EXAT/PXAT
	ms  int64         // the deadline in Unix ms (absolute forms)
}

// parseExpire checks expire argument i as Redis does (integer, > 0, no
// overflow once converted to an absolute millisecond deadline), replying
// the error and returning false if it is bad. Deadlines Redis accepts but
// the engine cannot hold get errBeyondRange.
func (x *call) parseExpire(i int, flags int) (expireArg, bool) {
	ms, ok := x.intArg(i)
	if !ok {
		return expireArg{}, false
	}
	seconds := flags&(optEX|optEXAT) != 0
	if ms <= 0 || (seconds && ms > math.MaxInt64/1000) {
		x.invalidExpire()
		return expireArg{}, false
	}
	if seconds {
		ms *= 1000
	}
	if flags&(optEX|optPX) != 0 {
		now := unixMs(x.now())
		if ms > math.MaxInt64-now {
			x.invalidExpire()
			return expireArg{}, false
		}
		if now+ms > maxEngineMs {
			x.w.errorReply(errBeyondRange)
			return expireArg{}, false
		}
		return expireArg{ttl: time.Duration(ms) * time.Millisecond}, true
	}
	if ms > maxEngineMs {
		x.w.errorReply(errBeyondRange)
		return expireArg{}, false
	}
	return expireArg{at: msTime(ms), ms: ms}, true
}

// setArgs is SET's and MSETEX's deadline: the expire option at argument
// expire (none if 0) and KEEPTTL among flags, or ok false after replying
// the expire time's error.
func (x *call) setArgs(expire int, flags int) (a engine.SetArgs, ok bool) {
	if expire != 0 {
		ex, ok := x.parseExpire(expire, flags)
		if !ok {
			return a, false
		}
		a.TTL, a.At = ex.ttl, ex.at
	}
	a.KeepTTL = flags&optKEEPTTL != 0
	return a, true
}

func cmdSet(x *call) {
	flags, expire, match, ok := x.parseSetOptions(3, true)
	if !ok {
		return
	}
	a, ok := x.setArgs(expire, flags)
	if !ok {
		return
	}
	switch {
	case flags&optNX != 0:
		a.Cond = engine.IfAbsent
	case flags&optXX != 0:
		a.Cond = engine.IfPresent
	case flags&optIFEQ != 0:
		a.Cond, a.Match = engine.IfEqual, string(match)
	case flags&optIFNE != 0:
		a.Cond, a.Match = engine.IfNotEqual, string(match)
	case flags&optDigest != 0:
		x.setIfDigest(a, flags, match)
		return
	}
	key, val := x.key(1), string(x.args[2])
	var res engine.SetResult
	var err error
	if flags&optGET != 0 {
		// SET ... GET reads first, as GET: a value of another type is
		// refused, a missing key's keymiss comes before the write's events,
		// and with ownEvents the old value's reply before them too.
		own, wrong := x.ownEvents(), false
		x.atomic([]string{key}, func(st store) {
			if wrong = x.wrongType(st, key); wrong {
				return
			}
			if own {
				x.replyOld(st, key)
				if _, err := st.SetWith(key, val, a); err != nil {
					x.engineErr(err)
				}
				return
			}
			if !st.Exists(key) {
				x.miss(key)
			}
			res, err = st.SetWith(key, val, a)
		})
		if wrong || own {
			return
		}
	} else {
		res, err = x.st.SetWith(key, val, a)
	}
	switch {
	case err != nil:
		x.engineErr(err)
	case flags&optGET != 0 && res.HadOld:
		x.w.bulkString(res.Old)
	case flags&optGET != 0 || !res.Written:
		x.w.null()
	default:
		x.w.simple("OK")
	}
}

func cmdSetNX(x *call) {
	res, err := x.st.SetWith(x.key(1), string(x.args[2]), engine.SetArgs{Cond: engine.IfAbsent})
	switch {
	case err != nil:
		x.engineErr(err)
	case res.Written:
		x.w.int(1)
	default:
		x.w.int(0)
	}
}

// cmdSetEX is SETEX key seconds value and PSETEX key ms value.
func cmdSetEX(x *call) {
	flags := optEX
	if x.cmd.name == "psetex" {
		flags = optPX
	}
	ex, ok := x.parseExpire(2, flags)
	if !ok {
		return
	}
	if _, err := x.st.SetWith(x.key(1), string(x.args[3]), engine.SetArgs{TTL: ex.ttl}); err != nil {
		x.engineErr(err)
		return
	}
	x.w.simple("OK")
}

func cmdGetSet(x *call) {
	key, val := x.key(1), string(x.args[2])
	own := x.ownEvents()
	x.atomic([]string{key}, func(st store) {
		if x.wrongType(st, key) {
			return
		}
		if own {
			// The old value's reply comes before the write's events.
			x.replyOld(st, key)
			if _, _, err := st.GetSet(key, val); err != nil {
				x.engineErr(err)
			}
			return
		}
		if !st.Exists(key) {
			x.miss(key) // the read's keymiss before the write's events
		}
		old, ok, err := st.GetSet(key, val)
		if err != nil {
			x.engineErr(err)
			return
		}
		if !ok {
			x.w.null()
			return
		}
		x.w.bulkString(old)
	})
}

// cmdGetDel is GETDEL key. Redis replies the value before it deletes the
// key, so a client that receives its own keyspace events gets them after
// the reply: GETDEL, GETSET and SET ... GET then read, reply and write in
// one section.
func cmdGetDel(x *call) {
	key := x.key(1)
	own := x.ownEvents()
	x.atomic([]string{key}, func(st store) {
		if x.wrongType(st, key) {
			return
		}
		if own {
			if x.replyOld(st, key) {
				st.Del(key)
			}
			return
		}
		v, ok := st.GetDel(key)
		if !ok {
			x.miss(key)
			x.w.null()
			return
		}
		x.w.bulkString(v)
	})
}

// ownEvents reports whether the client may receive what its command's
// changes push in its own reply stream, where their order against the
// reply shows: keyspace events when it is subscribed (in RESP3), and the
// invalidations of the tracking clients that redirect to it.
func (x *call) ownEvents() bool {
	return x.c.subscribed.Load() && x.s.notify.flags.Load() != 0 || x.c.redirTargets.Load() > 0
}

// replyOld replies key's value, or nil (with its keymiss), and reports
// whether it existed.
func (x *call) replyOld(st store, key string) bool {
	v, ok := st.Get(key)
	if !ok {
		x.miss(key)
		x.w.null()
		return false
	}
	x.w.bulkString(v)
	return true
}

// cmdGetEX is GETEX key [EX s|PX ms|EXAT s|PXAT ms|PERSIST]: syntax is
// checked first, then a missing key replies nil before the expire value is
// validated, as Redis does.
func cmdGetEX(x *call) {
	flags, expire, _, ok := x.parseSetOptions(2, false)
	if !ok {
		return
	}
	key := x.key(1)
	x.atomic([]string{key}, func(st store) {
		v, ok := x.getString(st, key)
		if !ok {
			return
		}
		var ex expireArg
		if expire != 0 {
			if ex, ok = x.parseExpire(expire, flags); !ok {
				return
			}
		}
		x.w.bulkString(v)
		switch {
		case ex.ttl > 0:
			_, _ = st.PExpireAtCond(key, st.Now().Add(ex.ttl), engine.ExpireAlways)
		case !ex.at.IsZero() && ex.ms <= unixMs(st.Now()):
			st.Del(key) // a deadline not after now deletes the key, as Redis's GETEX does
		case !ex.at.IsZero():
			_, _ = st.PExpireAtCond(key, ex.at, engine.ExpireAlways)
		case flags&optPERSIST != 0:
			st.Persist(key)
		}
	})
}

// keysOf returns the arguments from index from on, every step-th, as keys.
func (x *call) keysOf(from, step int) []string {
	keys := make([]string, 0, (len(x.args)-from+step-1)/step)
	for i := from; i < len(x.args); i += step {
		keys = append(keys, string(x.args[i]))
	}
	return keys
}

func cmdMGet(x *call) {
	keys := x.keysOf(1, 1)
	x.atomic(keys, func(st store) {
		x.w.array(len(keys))
		for _, k := range keys {
			if v, ok := st.Get(k); ok {
				x.w.bulkString(v)
			} else {
				if x.missNotified() && !st.Exists(k) {
					x.miss(k) // a value of another type is found, not missed
				}
				x.w.null()
			}
		}
	})
}

// cmdMSet is MSET and MSETNX.
func cmdMSet(x *call) {
	if len(x.args)%2 == 0 {
		x.w.errorReply("ERR wrong number of arguments for '" + x.cmd.name + "' command")
		return
	}
	keys := x.keysOf(1, 2)
	nx := x.cmd.name == "msetnx"
	x.atomic(keys, func(st store) {
		if nx {
			for _, k := range keys {
				if st.Exists(k) {
					x.w.int(0)
					return
				}
			}
		}
		for i, k := range keys {
			st.Set(k, string(x.args[2+2*i]))
		}
		if nx {
			x.w.int(1)
		} else {
			x.w.simple("OK")
		}
	})
}

func cmdGetRange(x *call) {
	start, ok := x.intArg(2)
	if !ok {
		return
	}
	end, ok := x.intArg(3)
	if !ok {
		return
	}
	v, ok := x.readString(x.key(1), func() { x.w.bulkString("") })
	if !ok {
		return
	}
	n := int64(len(v))
	if start < 0 && end < 0 && start > end {
		x.w.bulkString("")
		return
	}
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	start, end = max(start, 0), max(end, 0)
	if end >= n {
		end = n - 1
	}
	if start > end || n == 0 {
		x.w.bulkString("")
		return
	}
	x.w.bulkString(v[start : end+1])
}

// checkStringLength replies Redis's error if a string of size bytes grown
// by add bytes would exceed the largest bulk string. Both are at least 0;
// their sum is never formed, so offsets near 2^63 cannot wrap around.
func (x *call) checkStringLength(size, add int64) bool {
	if limit := int64(x.s.maxBulk()); size > limit || add > limit-size {
		x.w.errorReply(errStringLimit)
		return false
	}
	return true
}

func cmdSetRange(x *call) {
	off, ok := x.intArg(2)
	if !ok {
		return
	}
	if off < 0 {
		x.w.errorReply("ERR offset is out of range")
		return
	}
	key, val := x.key(1), x.args[3]
	x.atomic([]string{key}, func(st store) {
		old, exists, wrong := stringOf(st, key)
		if wrong {
			x.w.errorReply(errWrongType)
			return
		}
		if len(val) == 0 {
			x.w.int(int64(len(old)))
			return
		}
		if !x.checkStringLength(off, int64(len(val))) {
			return
		}
		size := max(int64(len(old)), off+int64(len(val)))
		b := make([]byte, size)
		copy(b, old)
		copy(b[off:], val)
		storeString(st, key, string(b), exists, engine.KindSetRange)
		x.w.int(size)
	})
}

func cmdStrlen(x *call) {
	v, found, wrong := stringOf(x.st, x.key(1))
	if wrong {
		x.w.errorReply(errWrongType)
		return
	}
	if !found {
		x.miss(x.key(1))
	}
	x.w.int(int64(len(v)))
}

func cmdAppend(x *call) {
	key, val := x.key(1), x.args[2]
	x.atomic([]string{key}, func(st store) {
		old, exists, wrong := stringOf(st, key)
		if wrong {
			x.w.errorReply(errWrongType)
			return
		}
		if exists && !x.checkStringLength(int64(len(old)), int64(len(val))) {
			return
		}
		nv := old + string(val)
		kind := engine.KindAppend
		if x.s.plantedPush == "keyspace" {
			kind = engine.KindSet
		}
		storeString(st, key, nv, exists, kind)
		x.w.int(int64(len(nv)))
	})
}

// addFloat adds incr to cur as INCRBYFLOAT and HINCRBYFLOAT do and
// returns the sum as Redis prints it, or false after replying the error of
// a sum that is not finite.
func (x *call) addFloat(cur, incr longDouble) (string, bool) {
	sum, ok := addLongDouble(cur, incr)
	if !ok {
		x.w.errorReply("ERR increment would produce NaN or Infinity")
		return "", false
	}
	return formatLongDouble(sum), true
}

// storeString writes a string built from key's old value (APPEND,
// SETRANGE, INCRBYFLOAT), keeping its TTL, and names the change as Redis
// does: "new" for a key it creates, then the command's event.
func storeString(st store, key, value string, exists bool, kind engine.Kind) {
	defer quietly(st)()
	if exists {
		_, _ = st.SetWith(key, value, engine.SetArgs{KeepTTL: true})
	} else {
		st.Set(key, value)
		notify(st, key, engine.KindNew)
	}
	notify(st, key, kind)
}

// cmdIncr is INCR and DECR.
func cmdIncr(x *call) {
	n := int64(1)
	if x.cmd.name == "decr" {
		n = -1
	}
	x.incrBy(n)
}

// cmdIncrBy is INCRBY and DECRBY.
func cmdIncrBy(x *call) {
	n, ok := x.intArg(2)
	if !ok {
		return
	}
	if x.cmd.name == "decrby" {
		if n == math.MinInt64 {
			x.w.errorReply("ERR decrement would overflow")
			return
		}
		n = -n
	}
	x.incrBy(n)
}

func (x *call) incrBy(n int64) {
	v, err := x.st.IncrBy(x.key(1), n)
	if err != nil {
		x.engineErr(err)
		return
	}
	x.w.int(v)
}

// cmdIncrByFloat checks in Redis's order: the key's type, its value,
// then the increment.
func cmdIncrByFloat(x *call) {
	key := x.key(1)
	x.atomic([]string{key}, func(st store) {
		old, exists, wrong := stringOf(st, key)
		if wrong {
			x.w.errorReply(errWrongType)
			return
		}
		cur := zeroLongDouble()
		var ok bool
		if exists {
			if cur, ok = parseLongDouble([]byte(old)); !ok {
				x.w.errorReply(errNotFloat)
				return
			}
		}
		incr, ok := parseLongDouble(x.args[2])
		if !ok {
			x.w.errorReply(errNotFloat)
			return
		}
		s, ok := x.addFloat(cur, incr)
		if !ok {
			return
		}
		storeString(st, key, s, exists, engine.KindIncrByFloat)
		x.w.bulkString(s)
	})
}

// cmdLCS is LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN].
// A missing key counts as the empty string.
func cmdLCS(x *call) {
	k1, k2 := x.key(1), x.key(2)
	var a, b string
	wrong := false
	x.atomic([]string{k1, k2}, func(st store) {
		a, _ = st.Get(k1)
		b, _ = st.Get(k2)
		ta, tb := st.Type(k1), st.Type(k2)
		wrong = isTyped(ta) || isTyped(tb)
		if ta == engine.TypeNone {
			x.miss(k1)
		}
		if tb == engine.TypeNone {
			x.miss(k2)
		}
	})
	if wrong {
		x.w.errorReply("ERR The specified keys must contain string values")
		return
	}
	var getLen, getIdx, withMatchLen bool
	minMatchLen := int64(0)
	for j := 3; j < len(x.args); j++ {
		switch {
		case equalFold(x.args[j], "idx"):
			getIdx = true
		case equalFold(x.args[j], "len"):
			getLen = true
		case equalFold(x.args[j], "withmatchlen"):
			withMatchLen = true
		case equalFold(x.args[j], "minmatchlen") && j < len(x.args)-1:
			n, ok := x.intArg(j + 1)
			if !ok {
				return
			}
			minMatchLen = max(n, 0)
			j++
		default:
			x.w.errorReply(errSyntax)
			return
		}
	}
	if getLen && getIdx {
		x.w.errorReply("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	if uint64(len(a)) >= math.MaxUint32-1 || uint64(len(b)) >= math.MaxUint32-1 {
		x.w.errorReply("ERR String too long for LCS")
		return
	}
	cells := uint64(len(a)+1) * uint64(len(b)+1)
	if cells*4 > uint64(x.s.maxBulk()) {
		x.w.errorReply("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	t := lcsTable(a, b)
	total := t.at(len(a), len(b))
	if getLen {
		x.w.int(int64(total))
		return
	}
	seq, matches := t.walk(a, b, getIdx)
	if !getIdx {
		x.w.bulk(seq)
		return
	}
	x.w.mapHeader(2)
	x.w.bulkString("matches")
	n := 0
	for _, m := range matches {
		if minMatchLen == 0 || int64(m.len()) >= minMatchLen {
			n++
		}
	}
	x.w.array(n)
	for _, m := range matches {
		if minMatchLen != 0 && int64(m.len()) < minMatchLen {
			continue
		}
		if withMatchLen {
			x.w.array(3)
		} else {
			x.w.array(2)
		}
		x.w.array(2)
		x.w.int(int64(m.aStart))
		x.w.int(int64(m.aEnd))
		x.w.array(2)
		x.w.int(int64(m.bStart))
		x.w.int(int64(m.bEnd))
		if withMatchLen {
			x.w.int(int64(m.len()))
		}
	}
	x.w.bulkString("len")
	x.w.int(int64(total))
}

// lcsLengths holds, at row i and column j, the length of the longest
// common subsequence of a[:i] and b[:j].
type lcsLengths struct {
	cols int // len(b)+1
	l    []uint32
}

func (t *lcsLengths) at(i, j int) uint32 { return t.l[i*t.cols+j] }

// lcsTable fills the table of a and b.
func lcsTable(a, b string) *lcsLengths {
	t := &lcsLengths{cols: len(b) + 1, l: make([]uint32, (len(a)+1)*(len(b)+1))}
	for i := 1; i <= len(a); i++ {
		row, prev := t.l[i*t.cols:], t.l[(i-1)*t.cols:]
		for j := 1; j <= len(b); j++ {
			switch {
			case a[i-1] == b[j-1]:
				row[j] = prev[j-1] + 1
			case prev[j] > row[j-1]:
				row[j] = prev[j]
			default:
				row[j] = row[j-1]
			}
		}
	}
	return t
}

// lcsMatch is a run of the subsequence contiguous in both strings:
// a[aStart..aEnd] equals b[bStart..bEnd], bounds included.
type lcsMatch struct{ aStart, aEnd, bStart, bEnd int }

func (m lcsMatch) len() int { return m.aEnd - m.aStart + 1 }

// walk goes back from the table's last cell and returns the subsequence
// and, when runs is set, its contiguous runs from the end of the strings
// to their start. Where both directions keep the length, it steps back
// in b, as Redis does, so the runs are Redis's.
func (t *lcsLengths) walk(a, b string, runs bool) ([]byte, []lcsMatch) {
	k := int(t.at(len(a), len(b)))
	seq := make([]byte, k)
	var out []lcsMatch
	open := false
	var cur lcsMatch
	i, j := len(a), len(b)
	for i > 0 && j > 0 {
		emit := false
		if a[i-1] == b[j-1] {
			seq[k-1] = a[i-1]
			switch {
			case !open:
				cur = lcsMatch{aStart: i - 1, aEnd: i - 1, bStart: j - 1, bEnd: j - 1}
				open = true
			case cur.aStart == i && cur.bStart == j:
				cur.aStart--
				cur.bStart--
			default:
				emit = true
			}
			if cur.aStart == 0 || cur.bStart == 0 {
				emit = true
			}
			k--
			i--
			j--
		} else {
			if t.at(i-1, j) > t.at(i, j-1) {
				i--
			} else {
				j--
			}
			emit = open
		}
		if emit {
			if runs {
				out = append(out, cur)
			}
			open = false
		}
	}
	return seq, out
}
