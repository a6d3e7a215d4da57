package resp

// This file holds the set type and its commands, as Redis's t_set.c: SADD,
// SREM, SISMEMBER, SMISMEMBER, SMEMBERS, SCARD, SPOP, SRANDMEMBER, SMOVE,
// SINTER, SUNION, SDIFF and their STORE forms, SINTERCARD and SSCAN.
//
// A set is an intset (sorted 64-bit integers, replied in ascending order
// as Redis's intset) while every member is an integer in Redis's strict
// form and it has at most set-max-intset-entries members; otherwise, for
// good, a dense table (dense.go) of its members. The package doc gives
// the measured costs per member.

import (
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/nxkv/nxkv/engine"
)

// setObj is a set value: ints while it is an intset, big once not.
type setObj struct {
	ints []int64
	big  *dense[struct{}]
}

func (s *setObj) Type() string { return "set" }

func (s *setObj) encoding() string {
	if s.big != nil {
		return "hashtable"
	}
	return "intset"
}

func (s *setObj) clone() engine.Object {
	if s.big != nil {
		return &setObj{big: s.big.clone()}
	}
	return &setObj{ints: slices.Clone(s.ints)}
}

func (s *setObj) len() int {
	if s.big != nil {
		return s.big.len()
	}
	return len(s.ints)
}

// at returns the member at position i (in iteration order).
func (s *setObj) at(i int) string {
	if s.big != nil {
		return s.big.keys[i]
	}
	return strconv.FormatInt(s.ints[i], 10)
}

// has reports whether m is a member.
func (s *setObj) has(m string) bool {
	if s.big != nil {
		return s.big.find(m) >= 0
	}
	n, ok := parseInt([]byte(m))
	if !ok {
		return false
	}
	_, found := slices.BinarySearch(s.ints, n)
	return found
}

// add adds m and reports whether it is new, converting an intset to a
// hash table for a member that is not an integer or past the limit.
func (s *setObj) add(srv *Server, m string) bool {
	if s.big == nil {
		if n, ok := parseInt([]byte(m)); ok {
			i, found := slices.BinarySearch(s.ints, n)
			if found {
				return false
			}
			s.ints = slices.Insert(s.ints, i, n)
			if int64(len(s.ints)) > srv.limit(limitSetIntEntries) {
				s.convert()
			}
			return true
		}
		s.convert()
	}
	return s.big.put(m, struct{}{})
}

// convert turns an intset into a hash table.
func (s *setObj) convert() {
	d := &dense[struct{}]{}
	for _, n := range s.ints {
		d.add(strconv.FormatInt(n, 10), struct{}{})
	}
	d.index()
	s.big, s.ints = d, nil
}

// remove removes m and reports whether it was a member.
func (s *setObj) remove(m string) bool {
	if s.big != nil {
		return s.big.del(m)
	}
	n, ok := parseInt([]byte(m))
	if !ok {
		return false
	}
	i, found := slices.BinarySearch(s.ints, n)
	if found {
		s.ints = slices.Delete(s.ints, i, i+1)
		if c := cap(s.ints); c > 64 && len(s.ints) <= c/4 {
			s.ints = slices.Clone(s.ints)
		}
	}
	return found
}

func (s *setObj) size() int {
	if s.big != nil {
		return denseSize(s.big, 0, func(int) int { return 0 })
	}
	return 8 * cap(s.ints)
}

// Size is size from sampled members (engine.Sizer).
func (s *setObj) Size() int64 {
	if s.big == nil {
		return int64(8 * cap(s.ints))
	}
	return sampledSize(16*cap(s.big.keys)+32*len(s.big.idx), s.big.len(), 0, func(i int) int { return len(s.big.keys[i]) })
}

func (s *setObj) scanPage(cursor uint64, count int) ([]string, int, uint64) {
	if s.big == nil {
		out := make([]string, len(s.ints))
		for i := range s.ints {
			out[i] = s.at(i)
		}
		return out, 1, 0
	}
	items, next := pageOf(s.big, cursor, count, func(out []string, i int) []string {
		return append(out, s.big.keys[i])
	})
	return items, 1, next
}

// newSet returns an empty set, an intset until a member that is not an
// integer arrives.
func newSet() *setObj { return &setObj{} }

// setEvent reports a change of set s under key, storing it if created.
func setEvent(tx *engine.Tx, key string, s *setObj, created bool, kind engine.Kind) {
	if created {
		tx.SetObject(key, s, kind)
	} else {
		tx.Notify(key, kind)
	}
}

// dropIfEmpty deletes key once its set (or other collection) of n
// members is empty, reporting "del" as Redis does.
func dropIfEmpty(tx *engine.Tx, key string, n int) {
	if n == 0 {
		tx.Del(key)
	}
}

func cmdSAdd(x *call) {
	key := x.key(1)
	x.locked([]string{key}, func(tx *engine.Tx) {
		s, ok := typed[*setObj](x, tx, key)
		if !ok {
			return
		}
		created := s == nil
		if created {
			s = newSet()
		}
		added := 0
		for _, m := range x.args[2:] {
			if s.add(x.s, string(m)) {
				added++
			}
		}
		if created {
			tx.SetObject(key, s, "sadd")
		} else if added > 0 {
			tx.Notify(key, "sadd")
		}
		x.w.int(int64(added))
	})
}

func cmdSRem(x *call) {
	key := x.key(1)
	x.locked([]string{key}, func(tx *engine.Tx) {
		s, ok := typed[*setObj](x, tx, key)
		if ok {
			x.removeMembers(tx, key, s == nil, s.remove, s.len, "srem")
		}
	})
}

// readSet runs fn with the set under argument 1 (nil if absent) unless it
// holds another type.
func (x *call) readSet(fn func(s *setObj)) {
	key := x.key(1)
	x.locked([]string{key}, func(tx *engine.Tx) {
		if s, ok := typed[*setObj](x, tx, key); ok {
			fn(s)
		}
	})
}

func cmdSIsMember(x *call) {
	x.readSet(func(s *setObj) {
		if s != nil && s.has(string(x.args[2])) {
			x.w.int(1)
			return
		}
		x.w.int(0)
	})
}

func cmdSMIsMember(x *call) {
	x.readSet(func(s *setObj) {
		x.w.array(len(x.args) - 2)
		for _, m := range x.args[2:] {
			if s != nil && s.has(string(m)) {
				x.w.int(1)
			} else {
				x.w.int(0)
			}
		}
	})
}

func cmdSCard(x *call) {
	x.readSet(func(s *setObj) {
		if s == nil {
			x.w.int(0)
			return
		}
		x.w.int(int64(s.len()))
	})
}

// replySet replies the members of s (nil: empty) as a set.
func (x *call) replySet(s *setObj) {
	if s == nil {
		x.w.set(0)
		return
	}
	x.w.set(s.len())
	for i := range s.len() {
		x.w.bulkString(s.at(i))
	}
}

// cmdSPop is SPOP key [count].
func cmdSPop(x *call) {
	count, ok := x.popCount()
	if !ok {
		return
	}
	key := x.key(1)
	x.locked([]string{key}, func(tx *engine.Tx) {
		s, ok := typed[*setObj](x, tx, key)
		switch {
		case !ok:
			return
		case s == nil && count < 0:
			x.w.null()
			return
		case s == nil || count == 0:
			x.w.set(0)
			return
		}
		tx.Notify(key, "spop")
		if count < 0 {
			m := s.at(rand.IntN(s.len()))
			s.remove(m)
			x.w.bulkString(m)
		} else if count >= int64(s.len()) {
			x.replySet(s)
			s = &setObj{}
		} else {
			x.w.set(int(count))
			for range count {
				m := s.at(rand.IntN(s.len()))
				s.remove(m)
				x.w.bulkString(m)
			}
		}
		if s.len() == 0 {
			tx.Del(key)
		}
	})
}

// cmdSRandMember is SRANDMEMBER key [count].
func cmdSRandMember(x *call) {
	if len(x.args) == 2 {
		x.readSet(func(s *setObj) {
			if s == nil {
				x.w.null()
				return
			}
			x.w.bulkString(s.at(rand.IntN(s.len())))
		})
		return
	}
	count, _, ok := x.randCountArgs("")
	if !ok {
		return
	}
	x.readSet(func(s *setObj) {
		if s == nil {
			x.w.array(0)
			return
		}
		x.randomPick(s.len(), count, false, func(i int) { x.w.bulkString(s.at(i)) })
	})
}

func cmdSMove(x *call) {
	src, dst, m := x.key(1), x.key(2), string(x.args[3])
	x.locked([]string{src, dst}, func(tx *engine.Tx) {
		from, ok := typed[*setObj](x, tx, src)
		if !ok {
			return
		}
		if from == nil {
			x.w.int(0)
			return
		}
		to, ok := typed[*setObj](x, tx, dst)
		if !ok {
			return
		}
		if src == dst {
			if from.has(m) {
				x.w.int(1)
			} else {
				x.w.int(0)
			}
			return
		}
		if !from.remove(m) {
			x.w.int(0)
			return
		}
		tx.Notify(src, "srem")
		dropIfEmpty(tx, src, from.len())
		created := to == nil
		if created {
			to = newSet()
		}
		if to.add(x.s, m) {
			setEvent(tx, dst, to, created, "sadd")
		}
		x.w.int(1)
	})
}

// setsOf looks up the sets of keys (nil for a missing one); ok is false
// after replying WRONGTYPE for a key of another type.
func (x *call) setsOf(tx *engine.Tx, keys []string) ([]*setObj, bool) {
	sets := make([]*setObj, len(keys))
	for i, k := range keys {
		s, ok := typed[*setObj](x, tx, k)
		if !ok {
			return nil, false
		}
		if s == nil && x.cmd.flags&readonly == 0 {
			x.miss(k) // the sources of SINTERSTORE and the rest are read
		}
		sets[i] = s
	}
	return sets, true
}

// interSets returns the members of every set in sets, iterating the
// smallest, up to limit of them (0: all), in its order.
func interSets(sets []*setObj, limit int) []string {
	for _, s := range sets {
		if s == nil {
			return nil
		}
	}
	sorted := slices.Clone(sets)
	slices.SortStableFunc(sorted, func(a, b *setObj) int { return a.len() - b.len() })
	var out []string
	for i := range sorted[0].len() {
		m := sorted[0].at(i)
		in := true
		for _, o := range sorted[1:] {
			if o != sorted[0] && !o.has(m) {
				in = false
				break
			}
		}
		if in {
			out = append(out, m)
			if limit > 0 && len(out) >= limit {
				break
			}
		}
	}
	return out
}

// unionDiff returns the union of sets, or the members of the first not in
// the others (diff), as a new set built as Redis builds it (an intset
// while it can be).
func unionDiff(srv *Server, sets []*setObj, diff bool) *setObj {
	out := newSet()
	for j, s := range sets {
		if s == nil {
			if diff && j == 0 {
				return out
			}
			continue
		}
		if diff && j > 0 {
			if s == sets[0] {
				return newSet()
			}
			for i := range s.len() {
				out.remove(s.at(i))
			}
			continue
		}
		for i := range s.len() {
			out.add(srv, s.at(i))
		}
	}
	return out
}

// cmdSInter is SINTER and SMEMBERS (one key).
func cmdSInter(x *call) {
	keys := x.keysOf(1, 1)
	x.locked(keys, func(tx *engine.Tx) {
		sets, ok := x.setsOf(tx, keys)
		if !ok {
			return
		}
		ms := interSets(sets, 0)
		x.w.set(len(ms))
		for _, m := range ms {
			x.w.bulkString(m)
		}
	})
}

// cmdSUnion is SUNION and SDIFF.
func cmdSUnion(x *call) {
	keys := x.keysOf(1, 1)
	x.locked(keys, func(tx *engine.Tx) {
		sets, ok := x.setsOf(tx, keys)
		if !ok {
			return
		}
		x.replySet(unionDiff(x.s, sets, x.cmd.name == "sdiff"))
	})
}

// cmdSStore is SINTERSTORE, SUNIONSTORE and SDIFFSTORE: the result
// replaces the destination, whatever its type, or deletes it when empty.
func cmdSStore(x *call) {
	dst := x.key(1)
	keys := x.keysOf(2, 1)
	x.locked(append([]string{dst}, keys...), func(tx *engine.Tx) {
		sets, ok := x.setsOf(tx, keys)
		if !ok {
			return
		}
		var out *setObj
		switch x.cmd.name {
		case "sinterstore":
			out = newSet()
			for _, m := range interSets(sets, 0) {
				out.add(x.s, m)
			}
		case "sunionstore":
			out = unionDiff(x.s, sets, false)
		default:
			out = unionDiff(x.s, sets, true)
		}
		if out.len() == 0 {
			if x.cmd.name == "sinterstore" && slices.Contains(sets, nil) {
				// Redis returns at once when a source is missing: the
				// destination's delete is reported before its reply.
				defer x.c.unhold()()
			}
			tx.Del(dst)
			x.w.int(0)
			return
		}
		tx.SetObject(dst, out, engine.Kind(x.cmd.name))
		x.w.int(int64(out.len()))
	})
}

// cmdSInterCard is SINTERCARD numkeys key [key ...] [LIMIT limit].
func cmdSInterCard(x *call) {
	keys, limit, ok := x.numkeysLimit(1)
	if !ok {
		return
	}
	x.locked(keys, func(tx *engine.Tx) {
		sets, ok := x.setsOf(tx, keys)
		if !ok {
			return
		}
		x.w.int(int64(len(interSets(sets, int(limit)))))
	})
}

// numkeysLimit parses "numkeys key [key ...] [LIMIT limit]" from argument
// i on, with Redis's errors (SINTERCARD, ZINTERCARD).
func (x *call) numkeysLimit(i int) (keys []string, limit int64, ok bool) {
	n, ok := parseInt(x.args[i])
	if !ok || n < 1 {
		x.w.errorReply("ERR numkeys should be greater than 0")
		return nil, 0, false
	}
	if n > int64(len(x.args)-i-1) {
		x.w.errorReply("ERR Number of keys can't be greater than number of args")
		return nil, 0, false
	}
	for j := i + 1 + int(n); j < len(x.args); j++ {
		if equalFold(x.args[j], "limit") && j+1 < len(x.args) {
			j++
			l, ok := x.nonNegativeArg(j, "ERR LIMIT can't be negative")
			if !ok {
				return nil, 0, false
			}
			limit = l
			continue
		}
		x.w.errorReply(errSyntax)
		return nil, 0, false
	}
	for j := range int(n) {
		keys = append(keys, x.key(i+1+j))
	}
	return keys, limit, true
}

// cmdSScan is SSCAN key cursor [MATCH pattern] [COUNT count].
func cmdSScan(x *call) {
	x.scanTyped(func(tx *engine.Tx, key string) (scanned, bool) {
		s, ok := typed[*setObj](x, tx, key)
		if s == nil {
			return nil, ok
		}
		return s, true
	})
}
