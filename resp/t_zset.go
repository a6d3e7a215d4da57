package resp

// This file holds the sorted set type and its commands, as Redis's
// t_zset.c: ZADD, ZINCRBY, ZREM, ZSCORE, ZMSCORE, ZCARD, ZCOUNT, ZLEXCOUNT,
// ZRANK, ZREVRANK, the ZRANGE family and ZRANGESTORE, the ZREMRANGEBY
// family, ZPOPMIN, ZPOPMAX, ZMPOP, ZUNION, ZINTER, ZDIFF and their STORE
// forms, ZINTERCARD, ZRANDMEMBER and ZSCAN.
//
// A sorted set is a listpack (a slice of elements sorted by score then
// member, searched linearly as Redis searches its listpack) while it has
// at most zset-max-listpack-entries elements and no member longer than
// zset-max-listpack-value bytes; past either, for good, a skiplist
// (skiplist.go: O(log n) inserts, deletes, ranks and range starts) plus a
// dense table from member to score (dense.go). The package doc gives the
// measured costs per element. Scores are doubles, printed as Redis prints
// them ("%.17g", inf and -inf).

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nxkv/nxkv/engine"
)

// zsetObj is a sorted set value: small while a listpack, dict and sl once
// a skiplist.
type zsetObj struct {
	small []zentry
	dict  *dense[float64]
	sl    *skiplist
}

func (z *zsetObj) Type() string { return "zset" }

func (z *zsetObj) encoding() string {
	if z.sl != nil {
		return "skiplist"
	}
	return "listpack"
}

func (z *zsetObj) clone() engine.Object {
	if z.sl == nil {
		return &zsetObj{small: slices.Clone(z.small)}
	}
	c := &zsetObj{dict: z.dict.clone(), sl: newSkiplist()}
	z.each(0, z.len()-1, false, func(e zentry) { c.sl.insert(e) })
	return c
}

func (z *zsetObj) size() int {
	if z.sl == nil {
		n := 24 * cap(z.small)
		for _, e := range z.small {
			n += len(e.member)
		}
		return n
	}
	return denseSize(z.dict, 8, func(int) int { return 64 })
}

// Size is size from sampled members (engine.Sizer).
func (z *zsetObj) Size() int64 {
	if z.sl == nil {
		return sampledSize(24*cap(z.small), len(z.small), 0, func(i int) int { return len(z.small[i].member) })
	}
	return sampledSize(24*cap(z.dict.keys)+32*len(z.dict.idx), z.dict.len(), 64, func(i int) int { return len(z.dict.keys[i]) })
}

func (z *zsetObj) len() int {
	if z.sl != nil {
		return z.sl.n
	}
	return len(z.small)
}

// score returns member's score.
func (z *zsetObj) score(m string) (float64, bool) {
	if z.sl != nil {
		return z.dict.get(m)
	}
	for _, e := range z.small {
		if e.member == m {
			return e.score, true
		}
	}
	return 0, false
}

// convert turns a listpack into a skiplist.
func (z *zsetObj) convert() {
	z.dict, z.sl = &dense[float64]{}, newSkiplist()
	for _, e := range z.small {
		z.dict.add(e.member, e.score)
		z.sl.insert(e)
	}
	z.dict.index()
	z.small = nil
}

// insert adds e, whose member is absent, converting the listpack as
// Redis's zsetAdd does.
func (z *zsetObj) insert(srv *Server, e zentry) {
	if z.sl == nil && (int64(len(z.small)+1) > srv.limit(limitZsetEntries) || int64(len(e.member)) > srv.limit(limitZsetValue)) {
		z.convert()
	}
	if z.sl != nil {
		z.dict.add(e.member, e.score)
		z.sl.insert(e)
		return
	}
	i := sort.Search(len(z.small), func(i int) bool { return !zless(z.small[i], e) })
	z.small = slices.Insert(z.small, i, e)
}

// remove deletes member m, whose score is s.
func (z *zsetObj) remove(m string, s float64) {
	if z.sl != nil {
		z.dict.del(m)
		z.sl.delete(zentry{m, s})
		return
	}
	i := slices.IndexFunc(z.small, func(e zentry) bool { return e.member == m })
	z.small = slices.Delete(z.small, i, i+1)
	if c := cap(z.small); c > 64 && len(z.small) <= c/4 {
		z.small = slices.Clone(z.small)
	}
}

// del removes member m and reports whether it was there.
func (z *zsetObj) del(m string) bool {
	s, ok := z.score(m)
	if ok {
		z.remove(m, s)
	}
	return ok
}

// at returns the element of 0-based rank i.
func (z *zsetObj) at(i int) zentry {
	if z.sl != nil {
		return z.sl.node(i).e
	}
	return z.small[i]
}

// rank returns m's 0-based rank.
func (z *zsetObj) rank(m string) (int, bool) {
	s, ok := z.score(m)
	if !ok {
		return 0, false
	}
	if z.sl != nil {
		return z.sl.rank(zentry{m, s}), true
	}
	return slices.IndexFunc(z.small, func(e zentry) bool { return e.member == m }), true
}

// each calls fn with the elements of ranks from to to, ascending, or
// descending from to when rev.
func (z *zsetObj) each(from, to int, rev bool, fn func(zentry)) {
	if from > to {
		return
	}
	if z.sl != nil {
		z.sl.each(from, to, rev, fn)
		return
	}
	if rev {
		for i := to; i >= from; i-- {
			fn(z.small[i])
		}
		return
	}
	for i := from; i <= to; i++ {
		fn(z.small[i])
	}
}

// walk calls fn with the elements from rank i on, ascending (descending
// when rev), while it returns true.
func (z *zsetObj) walk(i int, rev bool, fn func(zentry) bool) {
	if i < 0 || i >= z.len() {
		return
	}
	if z.sl == nil {
		for ; i >= 0 && i < len(z.small); i++ {
			if !fn(z.small[i]) {
				return
			}
			if rev {
				i -= 2
			}
		}
		return
	}
	for x := z.sl.node(i); x != nil; {
		if !fn(x.e) {
			return
		}
		if rev {
			x = x.back
		} else {
			x = x.level[0].next
		}
	}
}

// first returns the rank of the first element that satisfies gteMin, as
// Redis finds it: scanning a listpack from the head, descending a
// skiplist (the same for ranges of scores; for a lexical range over mixed
// scores the two differ as Redis's do). It returns len when none does.
func (z *zsetObj) first(gteMin func(zentry) bool) int {
	if z.sl != nil {
		return z.sl.countWhile(func(e zentry) bool { return !gteMin(e) })
	}
	for i, e := range z.small {
		if gteMin(e) {
			return i
		}
	}
	return len(z.small)
}

// last returns the rank of the last element that satisfies lteMax, found
// as Redis finds it (scanning a listpack from the tail), or -1.
func (z *zsetObj) last(lteMax func(zentry) bool) int {
	if z.sl != nil {
		return z.sl.countWhile(lteMax) - 1
	}
	for i := len(z.small) - 1; i >= 0; i-- {
		if lteMax(z.small[i]) {
			return i
		}
	}
	return -1
}

// deleteRanks removes the elements of ranks from to to.
func (z *zsetObj) deleteRanks(from, to int) {
	if z.sl == nil {
		z.small = slices.Delete(z.small, from, to+1)
		return
	}
	var doomed []zentry
	z.sl.each(from, to, false, func(e zentry) { doomed = append(doomed, e) })
	for _, e := range doomed {
		z.sl.delete(e)
		z.dict.del(e.member)
	}
}

func (z *zsetObj) scanPage(cursor uint64, count int) ([]string, int, uint64) {
	if z.sl == nil {
		out := make([]string, 0, 2*len(z.small))
		for _, e := range z.small {
			out = append(out, e.member, d2string(e.score))
		}
		return out, 2, 0
	}
	items, next := pageOf(z.dict, cursor, count, func(out []string, i int) []string {
		return append(out, z.dict.keys[i], formatDouble(z.dict.vals[i]))
	})
	return items, 2, next
}

// formatDouble prints a score as Redis's replies do: "%.17g", inf, -inf.
func formatDouble(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}

// parseStrtod parses b as C's strtod, the way Redis's score arguments are
// read: ok is false unless the whole text is a number. Leading white space
// is skipped (trailing is not), and "inf", "infinity" and "nan" count as
// numbers (callers refuse NaN). rangeErr is C's ERANGE: a result that
// overflows to an infinity, underflows to 0, or is subnormal; Redis's
// getDoubleFromObject refuses the first two, SORT all three, and
// zslParseRange keeps them.
func parseStrtod(b []byte) (f float64, rangeErr, ok bool) {
	s := strings.TrimLeft(string(b), " \t\n\v\f\r")
	body, neg := s, false
	if body != "" && (body[0] == '+' || body[0] == '-') {
		neg, body = body[0] == '-', body[1:]
	}
	switch strings.ToLower(body) {
	case "inf", "infinity":
		if neg {
			return math.Inf(-1), false, true
		}
		return math.Inf(1), false, true
	case "nan":
		return math.NaN(), false, true
	}
	if !validFloatSyntax(body) {
		return 0, false, false
	}
	if len(body) > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X') && !strings.ContainsAny(body, "pP") {
		s += "p0"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, isNum := err.(*strconv.NumError); isNum && ne.Err == strconv.ErrRange {
			return f, true, true
		}
		return 0, false, false
	}
	return f, f != 0 && math.Abs(f) < 0x1p-1022, true
}

// parseDouble parses a score as Redis's getDoubleFromObject: no leading
// space, the whole text, not NaN, no overflow.
func parseDouble(b []byte) (float64, bool) {
	if len(b) == 0 || strings.ContainsRune(" \t\n\v\f\r", rune(b[0])) {
		return 0, false
	}
	f, rangeErr, ok := parseStrtod(b)
	if !ok || rangeErr && (math.IsInf(f, 0) || f == 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// scoreRange is a range of scores, each end inclusive or exclusive.
type scoreRange struct {
	min, max     float64
	minex, maxex bool
}

func (r *scoreRange) gteMin(e zentry) bool {
	if r.minex {
		return e.score > r.min
	}
	return e.score >= r.min
}

func (r *scoreRange) lteMax(e zentry) bool {
	if r.maxex {
		return e.score < r.max
	}
	return e.score <= r.max
}

// empty reports whether no score can be in the range.
func (r *scoreRange) empty() bool {
	return r.min > r.max || r.min == r.max && (r.minex || r.maxex)
}

// parseScoreBound parses one end of a score range as Redis's
// zslParseRange: "(" makes it exclusive; the rest is strtod's (an empty
// rest is 0, as strtod stops at once).
func parseScoreBound(b []byte) (f float64, ex, ok bool) {
	if len(b) > 0 && b[0] == '(' {
		ex, b = true, b[1:]
	}
	if len(b) == 0 {
		return 0, ex, true
	}
	f, _, ok = parseStrtod(b)
	if !ok || math.IsNaN(f) {
		return 0, false, false
	}
	return f, ex, true
}

func parseScoreRange(min, max []byte) (scoreRange, bool) {
	var r scoreRange
	var ok1, ok2 bool
	r.min, r.minex, ok1 = parseScoreBound(min)
	r.max, r.maxex, ok2 = parseScoreBound(max)
	return r, ok1 && ok2
}

// lexBound is one end of a lexical range: -1 for "-", +1 for "+", or 0
// and s.
type lexBound struct {
	inf int
	s   string
	ex  bool
}

// lexRange is a range of members.
type lexRange struct{ min, max lexBound }

// lexCmp compares a member with a bound, as Redis's sdscmplex.
func lexCmp(m string, b *lexBound) int {
	if b.inf != 0 {
		return -b.inf
	}
	return strings.Compare(m, b.s)
}

func (r *lexRange) gteMin(e zentry) bool {
	c := lexCmp(e.member, &r.min)
	return c > 0 || c == 0 && !r.min.ex
}

func (r *lexRange) lteMax(e zentry) bool {
	c := lexCmp(e.member, &r.max)
	return c < 0 || c == 0 && !r.max.ex
}

func (r *lexRange) empty() bool {
	var c int
	switch {
	case r.min.inf != 0 || r.max.inf != 0:
		c = r.min.inf - r.max.inf
		if r.min.inf == 0 {
			c = -r.max.inf
		} else if r.max.inf == 0 {
			c = r.min.inf
		}
	default:
		c = strings.Compare(r.min.s, r.max.s)
	}
	return c > 0 || c == 0 && (r.min.ex || r.max.ex)
}

func parseLexBound(b []byte) (lexBound, bool) {
	switch {
	case len(b) == 1 && b[0] == '+':
		return lexBound{inf: 1}, true
	case len(b) == 1 && b[0] == '-':
		return lexBound{inf: -1}, true
	case len(b) > 0 && b[0] == '(':
		return lexBound{s: string(b[1:]), ex: true}, true
	case len(b) > 0 && b[0] == '[':
		return lexBound{s: string(b[1:])}, true
	}
	return lexBound{}, false
}

func parseLexRange(min, max []byte) (lexRange, bool) {
	a, ok1 := parseLexBound(min)
	b, ok2 := parseLexBound(max)
	return lexRange{a, b}, ok1 && ok2
}

// ranges is what a score or a lexical range offers the commands.
type ranges interface {
	gteMin(zentry) bool
	lteMax(zentry) bool
	empty() bool
}

// mayHold is Redis's quick test before a range search (zslIsInRange,
// zslIsInLexRange): the range is not empty, the last element is not below
// its min and the first not above its max. For a lexical range over mixed
// scores it decides, as in Redis, that some ranges hold nothing.
func mayHold(z *zsetObj, r ranges) bool {
	return !r.empty() && z.len() > 0 && r.gteMin(z.at(z.len()-1)) && r.lteMax(z.at(0))
}

// inRange returns the ranks from..to of z's elements in r, found and
// walked as Redis does (the first element from the start, then forward
// while lteMax holds), or ok false.
func inRange(z *zsetObj, r ranges) (from, to int, ok bool) {
	if !mayHold(z, r) {
		return 0, 0, false
	}
	from = z.first(r.gteMin)
	if from >= z.len() || !r.lteMax(z.at(from)) {
		return 0, 0, false
	}
	to = from
	z.walk(from+1, false, func(e zentry) bool {
		if r.lteMax(e) {
			to++
			return true
		}
		return false
	})
	return from, to, true
}

// inRangeRev is inRange walking down from the last element that satisfies
// lteMax (the reverse commands).
func inRangeRev(z *zsetObj, r ranges) (from, to int, ok bool) {
	if !mayHold(z, r) {
		return 0, 0, false
	}
	to = z.last(r.lteMax)
	if to < 0 || !r.gteMin(z.at(to)) {
		return 0, 0, false
	}
	from = to
	z.walk(to-1, true, func(e zentry) bool {
		if r.gteMin(e) {
			from--
			return true
		}
		return false
	})
	return from, to, true
}

// zsetEvent stores z under key if created and names the change.
func zsetEvent(tx *engine.Tx, key string, z *zsetObj, created bool, kind engine.Kind) {
	if created {
		tx.SetObject(key, z, kind)
	} else {
		tx.Notify(key, kind)
	}
}

// ZADD flags.
const (
	zaddNX = 1 << iota
	zaddXX
	zaddGT
	zaddLT
	zaddCH
	zaddIncr
)

// cmdZAdd is ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [...] and
// ZINCRBY key increment member, checked in Redis's order.
func cmdZAdd(x *call) {
	flags, i := 0, 2
	if x.cmd.name == "zincrby" {
		flags = zaddIncr
	} else {
	opts:
		for ; i < len(x.args); i++ {
			switch {
			case equalFold(x.args[i], "nx"):
				flags |= zaddNX
			case equalFold(x.args[i], "xx"):
				flags |= zaddXX
			case equalFold(x.args[i], "ch"):
				flags |= zaddCH
			case equalFold(x.args[i], "incr"):
				flags |= zaddIncr
			case equalFold(x.args[i], "gt"):
				flags |= zaddGT
			case equalFold(x.args[i], "lt"):
				flags |= zaddLT
			default:
				break opts
			}
		}
	}
	n := len(x.args) - i
	if n%2 != 0 || n == 0 {
		x.w.errorReply(errSyntax)
		return
	}
	n /= 2
	switch {
	case flags&zaddNX != 0 && flags&zaddXX != 0:
		x.w.errorReply("ERR XX and NX options at the same time are not compatible")
		return
	case flags&zaddGT != 0 && flags&zaddNX != 0, flags&zaddLT != 0 && flags&zaddNX != 0, flags&zaddGT != 0 && flags&zaddLT != 0:
		x.w.errorReply("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	case flags&zaddIncr != 0 && n > 1:
		x.w.errorReply("ERR INCR option supports a single increment-element pair")
		return
	}
	scores := make([]float64, n)
	for j := range n {
		f, ok := parseDouble(x.args[i+2*j])
		if !ok {
			x.w.errorReply(errNotFloat)
			return
		}
		scores[j] = f
	}
	key := x.key(1)
	incr := flags&zaddIncr != 0
	x.locked([]string{key}, func(tx *engine.Tx) {
		z, ok := typed[*zsetObj](x, tx, key)
		if !ok {
			return
		}
		created := false
		added, updated, processed := 0, 0, 0
		score := 0.0
		if z == nil && flags&zaddXX == 0 {
			z, created = &zsetObj{}, true
			if x.s.limit(limitZsetEntries) == 0 || x.s.limit(limitZsetValue) < int64(len(x.args[i+1])) {
				z.convert()
			}
		}
		for j := 0; z != nil && j < n; j++ {
			m, s := string(x.args[i+2*j+1]), scores[j]
			cur, exists := z.score(m)
			switch {
			case exists && flags&zaddNX != 0:
				continue
			case exists:
				if incr {
					if s += cur; math.IsNaN(s) {
						x.w.errorReply("ERR resulting score is not a number (NaN)")
						x.zaddEvents(tx, key, z, created, added, updated, incr)
						return
					}
				}
				if flags&zaddLT != 0 && s >= cur || flags&zaddGT != 0 && s <= cur {
					continue
				}
				if s != cur {
					z.remove(m, cur)
					z.insert(x.s, zentry{m, s})
					updated++
				}
			case flags&zaddXX != 0:
				continue
			default:
				z.insert(x.s, zentry{m, s})
				added++
			}
			processed++
			score = s
		}
		x.zaddEvents(tx, key, z, created, added, updated, incr)
		switch {
		case incr && processed > 0:
			x.w.double(score)
		case incr:
			x.w.null()
		case flags&zaddCH != 0:
			x.w.int(int64(added + updated))
		default:
			x.w.int(int64(added))
		}
	})
}

// zaddEvents reports ZADD's changes: "zadd" (or "zincr") when it added or
// updated, after "new" for a set it created.
func (x *call) zaddEvents(tx *engine.Tx, key string, z *zsetObj, created bool, added, updated int, incr bool) {
	kind := engine.Kind("zadd")
	if incr {
		kind = "zincr"
	}
	if created && z.len() > 0 {
		tx.SetObject(key, z, kind)
		x.signalReady(x.db, key)
	} else if added+updated > 0 {
		tx.Notify(key, kind)
	}
}

// readZset runs fn with the sorted set under key (nil if absent) unless
// it holds another type.
func (x *call) readZset(key string, fn func(tx *engine.Tx, z *zsetObj)) {
	x.locked([]string{key}, func(tx *engine.Tx) {
		if z, ok := typed[*zsetObj](x, tx, key); ok {
			fn(tx, z)
		}
	})
}

func cmdZRem(x *call) {
	key := x.key(1)
	x.readZset(key, func(tx *engine.Tx, z *zsetObj) {
		x.removeMembers(tx, key, z == nil, z.del, z.len, "zrem")
	})
}

func cmdZScore(x *call) {
	x.readZset(x.key(1), func(_ *engine.Tx, z *zsetObj) {
		if z != nil {
			if s, ok := z.score(string(x.args[2])); ok {
				x.w.double(s)
				return
			}
		}
		x.w.null()
	})
}

func cmdZMScore(x *call) {
	x.readZset(x.key(1), func(_ *engine.Tx, z *zsetObj) {
		x.w.array(len(x.args) - 2)
		for _, m := range x.args[2:] {
			if z != nil {
				if s, ok := z.score(string(m)); ok {
					x.w.double(s)
					continue
				}
			}
			x.w.null()
		}
	})
}

func cmdZCard(x *call) {
	x.readZset(x.key(1), func(_ *engine.Tx, z *zsetObj) {
		if z == nil {
			x.w.int(0)
			return
		}
		x.w.int(int64(z.len()))
	})
}

// cmdZCount is ZCOUNT and ZLEXCOUNT.
func cmdZCount(x *call) {
	var r ranges
	if x.cmd.name == "zcount" {
		sr, ok := parseScoreRange(x.args[2], x.args[3])
		if !ok {
			x.w.errorReply("ERR min or max is not a float")
			return
		}
		r = &sr
	} else {
		lr, ok := parseLexRange(x.args[2], x.args[3])
		if !ok {
			x.w.errorReply("ERR min or max not valid string range item")
			return
		}
		r = &lr
	}
	x.readZset(x.key(1), func(_ *engine.Tx, z *zsetObj) {
		if z == nil {
			x.w.int(0)
			return
		}
		if x.cmd.name == "zlexcount" && z.sl != nil {
			// Redis counts a skiplist's lexical range from its first and
			// last element, found by two descents.
			lr := r.(*lexRange)
			if !mayHold(z, lr) {
				x.w.int(0)
				return
			}
			first := z.first(lr.gteMin)
			if first >= z.len() || !lr.lteMax(z.at(first)) {
				x.w.int(0)
				return
			}
			x.w.int(int64(z.last(lr.lteMax) - first + 1))
			return
		}
		from, to, ok := inRange(z, r)
		if !ok {
			x.w.int(0)
			return
		}
		x.w.int(int64(to - from + 1))
	})
}

// cmdZRank is ZRANK and ZREVRANK.
func cmdZRank(x *call) {
	x.readZset(x.key(1), func(_ *engine.Tx, z *zsetObj) {
		if z != nil {
			if r, ok := z.rank(string(x.args[2])); ok {
				if x.cmd.name == "zrevrank" {
					r = z.len() - 1 - r
				}
				x.w.int(int64(r))
				return
			}
		}
		x.w.null()
	})
}

// zrangeSpec is a parsed ZRANGE-family request.
type zrangeSpec struct {
	key            string
	by             int // zbyRank, zbyScore, zbyLex
	rev            bool
	withScores     bool
	offset, limit  int64 // limit -1: none
	start, end     int64
	score          scoreRange
	lex            lexRange
	dst            string // ZRANGESTORE's destination
	store, limited bool
}

const (
	zbyRank = iota
	zbyScore
	zbyLex
)

// parseZRange parses a ZRANGE-family request whose key is argument k and
// min and max the two after it, with the options that follow, as Redis's
// zrangeGenericCommand: by and rev preset by the older commands (ZREVRANGE,
// ZRANGEBYSCORE, ...), -1 when the options choose.
func (x *call) parseZRange(k, by int, rev, store bool) (zrangeSpec, bool) {
	sp := zrangeSpec{key: x.key(k), limit: -1, store: store}
	auto := by < 0 // ZRANGE and ZRANGESTORE: the options choose
	byChosen, revChosen := !auto, !auto
	if auto {
		by = zbyRank
	}
	for j := k + 3; j < len(x.args); j++ {
		left := len(x.args) - j - 1
		switch {
		case !store && equalFold(x.args[j], "withscores"):
			sp.withScores = true
		case equalFold(x.args[j], "limit") && left >= 2:
			off, ok := x.intArg(j + 1)
			if !ok {
				return sp, false
			}
			lim, ok := x.intArg(j + 2)
			if !ok {
				return sp, false
			}
			// As Redis, a limit of -1 counts as no LIMIT given.
			sp.offset, sp.limit, sp.limited = off, lim, lim != -1
			j += 2
		case !revChosen && equalFold(x.args[j], "rev"):
			rev, revChosen = true, true
		case !byChosen && equalFold(x.args[j], "bylex"):
			by, byChosen = zbyLex, true
		case !byChosen && equalFold(x.args[j], "byscore"):
			by, byChosen = zbyScore, true
		default:
			x.w.errorReply(errSyntax)
			return sp, false
		}
	}
	sp.by, sp.rev = by, rev
	if sp.limited && by == zbyRank {
		x.w.errorReply("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return sp, false
	}
	if sp.withScores && by == zbyLex {
		x.w.errorReply("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return sp, false
	}
	lo, hi := x.args[k+1], x.args[k+2]
	if rev && by != zbyRank {
		lo, hi = hi, lo
	}
	var ok bool
	switch by {
	case zbyRank:
		if sp.start, ok = x.intArg(k + 1); !ok {
			return sp, false
		}
		if sp.end, ok = x.intArg(k + 2); !ok {
			return sp, false
		}
	case zbyScore:
		if sp.score, ok = parseScoreRange(lo, hi); !ok {
			x.w.errorReply("ERR min or max is not a float")
			return sp, false
		}
	default:
		if sp.lex, ok = parseLexRange(lo, hi); !ok {
			x.w.errorReply("ERR min or max not valid string range item")
			return sp, false
		}
	}
	return sp, true
}

// zrangeResult returns the elements sp selects from z, in reply order.
func zrangeResult(z *zsetObj, sp *zrangeSpec) []zentry {
	n := z.len()
	var out []zentry
	collect := func(e zentry) { out = append(out, e) }
	if sp.by == zbyRank {
		from, to, ok := listRange(sp.start, sp.end, n)
		if !ok {
			return nil
		}
		if sp.rev {
			z.each(n-1-to, n-1-from, true, collect)
		} else {
			z.each(from, to, false, collect)
		}
		return out
	}
	var r ranges = &sp.score
	if sp.by == zbyLex {
		r = &sp.lex
	}
	if sp.offset > 0 && sp.offset >= int64(n) || sp.offset < 0 {
		return nil
	}
	var from, to int
	var ok bool
	if sp.rev {
		from, to, ok = inRangeRev(z, r)
	} else {
		from, to, ok = inRange(z, r)
	}
	if !ok {
		return nil
	}
	count := int64(to - from + 1)
	if sp.offset >= count {
		return nil
	}
	count -= sp.offset
	if sp.limit >= 0 {
		count = min(count, sp.limit)
	}
	if count == 0 {
		return nil
	}
	if sp.rev {
		hi := to - int(sp.offset)
		z.each(hi-int(count)+1, hi, true, collect)
	} else {
		lo := from + int(sp.offset)
		z.each(lo, lo+int(count)-1, false, collect)
	}
	return out
}

// replyZentries replies elements, with their scores when withScores (as
// pairs in RESP3).
func (x *call) replyZentries(es []zentry, withScores bool) {
	if withScores && !x.w.resp3() {
		x.w.array(2 * len(es))
	} else {
		x.w.array(len(es))
	}
	for _, e := range es {
		if withScores && x.w.resp3() {
			x.w.array(2)
		}
		x.w.bulkString(e.member)
		if withScores {
			x.w.double(e.score)
		}
	}
}

// zrangeForms are how the older commands preset ZRANGE's options.
var zrangeForms = map[string]struct {
	by  int
	rev bool
}{
	"zrange": {-1, false}, "zrangestore": {-1, false}, "zrevrange": {zbyRank, true},
	"zrangebyscore": {zbyScore, false}, "zrevrangebyscore": {zbyScore, true},
	"zrangebylex": {zbyLex, false}, "zrevrangebylex": {zbyLex, true},
}

// cmdZRange is ZRANGE, ZREVRANGE, ZRANGEBYSCORE, ZREVRANGEBYSCORE,
// ZRANGEBYLEX and ZREVRANGEBYLEX.
func cmdZRange(x *call) {
	f := zrangeForms[x.cmd.name]
	sp, ok := x.parseZRange(1, f.by, f.rev, false)
	if !ok {
		return
	}
	x.readZset(sp.key, func(_ *engine.Tx, z *zsetObj) {
		if z == nil {
			x.w.array(0)
			return
		}
		x.replyZentries(zrangeResult(z, &sp), sp.withScores)
	})
}

// cmdZRangeStore is ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV]
// [LIMIT offset count].
func cmdZRangeStore(x *call) {
	sp, ok := x.parseZRange(2, -1, false, true)
	if !ok {
		return
	}
	dst := x.key(1)
	x.locked([]string{dst, sp.key}, func(tx *engine.Tx) {
		z, ok := typed[*zsetObj](x, tx, sp.key)
		if !ok {
			return
		}
		if z == nil {
			x.miss(sp.key) // its source is read, as ZRANGE's
		}
		var es []zentry
		if z != nil {
			es = zrangeResult(z, &sp)
		}
		x.storeZset(tx, dst, es, "zrangestore")
	})
}

// storeZset stores es as a sorted set under dst, replacing any value (or
// deleting dst when es is empty), encoded as Redis encodes a result, and
// replies its size.
func (x *call) storeZset(tx *engine.Tx, dst string, es []zentry, kind engine.Kind) {
	if len(es) == 0 {
		tx.Del(dst)
		x.w.int(0)
		return
	}
	z := &zsetObj{}
	big := int64(len(es)) > x.s.limit(limitZsetEntries)
	for _, e := range es {
		big = big || int64(len(e.member)) > x.s.limit(limitZsetValue)
	}
	if big {
		z.convert()
	}
	for _, e := range es {
		if _, ok := z.score(e.member); !ok {
			z.insert(x.s, e)
		}
	}
	tx.SetObject(dst, z, kind)
	x.signalReady(x.db, dst)
	x.w.int(int64(z.len()))
}

// cmdZRemRange is ZREMRANGEBYRANK, ZREMRANGEBYSCORE and ZREMRANGEBYLEX.
func cmdZRemRange(x *call) {
	var r ranges
	var start, end int64
	switch x.cmd.name {
	case "zremrangebyrank":
		var ok bool
		if start, end, ok = x.intArgs(2); !ok {
			return
		}
	case "zremrangebyscore":
		sr, ok := parseScoreRange(x.args[2], x.args[3])
		if !ok {
			x.w.errorReply("ERR min or max is not a float")
			return
		}
		r = &sr
	default:
		lr, ok := parseLexRange(x.args[2], x.args[3])
		if !ok {
			x.w.errorReply("ERR min or max not valid string range item")
			return
		}
		r = &lr
	}
	key := x.key(1)
	x.readZset(key, func(tx *engine.Tx, z *zsetObj) {
		if z == nil {
			x.w.int(0)
			return
		}
		var from, to int
		var ok bool
		if r == nil {
			from, to, ok = listRange(start, end, z.len())
		} else {
			from, to, ok = inRange(z, r)
		}
		if !ok {
			x.w.int(0)
			return
		}
		z.deleteRanks(from, to)
		tx.Notify(key, engine.Kind(x.cmd.name))
		dropIfEmpty(tx, key, z.len())
		x.w.int(int64(to - from + 1))
	})
}

// zpop pops up to count elements (count -1: one) from the min or max end
// of z under key, replying them as Redis's genericZpopCommand: flat
// member, score pairs, or pairs nested when nested.
func (x *call) zpop(tx *engine.Tx, key string, z *zsetObj, max bool, count int64, nested bool) {
	if count == -1 {
		count = 1
	}
	n := int(min(count, int64(z.len())))
	if nested {
		x.w.array(n)
	} else {
		x.w.array(2 * n)
	}
	for i := range n {
		e := z.popEnd(max)
		if i == 0 {
			// Redis names the pop after the reply's header, before its
			// first element (what it pushes to the client itself lands
			// inside the reply).
			tx.Notify(key, zpopKind(max))
		}
		if nested {
			x.w.array(2)
		}
		x.w.bulkString(e.member)
		x.w.double(e.score)
	}
	dropIfEmpty(tx, key, z.len())
}

// zpopKind names a pop of the lowest or (max) the highest score.
func zpopKind(max bool) engine.Kind {
	if max {
		return "zpopmax"
	}
	return "zpopmin"
}

// popEnd removes and returns the element with the lowest score, or the
// highest when max; z must not be empty.
func (z *zsetObj) popEnd(max bool) zentry {
	i := 0
	if max {
		i = z.len() - 1
	}
	e := z.at(i)
	z.remove(e.member, e.score)
	return e
}

// cmdZPop is ZPOPMIN and ZPOPMAX key [count].
func cmdZPop(x *call) {
	count, ok := x.popCount()
	if !ok {
		return
	}
	key := x.key(1)
	x.readZset(key, func(tx *engine.Tx, z *zsetObj) {
		if z == nil || count == 0 {
			x.w.array(0)
			return
		}
		x.zpop(tx, key, z, x.cmd.name == "zpopmax", count, x.w.resp3() && count != -1)
	})
}

// zsetEnd parses MIN or MAX.
func (x *call) zsetEnd(i int) (int, bool) {
	switch {
	case equalFold(x.args[i], "min"):
		return 0, true
	case equalFold(x.args[i], "max"):
		return 1, true
	}
	x.w.errorReply(errSyntax)
	return 0, false
}

// cmdZMPop is ZMPOP numkeys key [key ...] MIN|MAX [COUNT count].
func cmdZMPop(x *call) {
	keys, where, count, ok := x.parseMPop(1, x.zsetEnd)
	if !ok {
		return
	}
	x.blockingPop(keys, -1, isZset, zsetPopper(where == 1, count))
}

// zsource is an input of ZUNION, ZINTER and ZDIFF: a sorted set, or a set
// whose members all score 1.
type zsource struct {
	z      *zsetObj
	s      *setObj
	weight float64
}

func (src *zsource) len() int {
	switch {
	case src.z != nil:
		return src.z.len()
	case src.s != nil:
		return src.s.len()
	}
	return 0
}

func (src *zsource) each(fn func(zentry)) {
	switch {
	case src.z != nil:
		src.z.each(0, src.z.len()-1, false, fn)
	case src.s != nil:
		for i := range src.s.len() {
			fn(zentry{src.s.at(i), 1})
		}
	}
}

func (src *zsource) score(m string) (float64, bool) {
	switch {
	case src.z != nil:
		return src.z.score(m)
	case src.s != nil && src.s.has(m):
		return 1, true
	}
	return 0, false
}

// Aggregates of ZUNION and ZINTER.
const (
	aggSum = iota
	aggMin
	aggMax
)

func aggregate(acc *float64, v float64, agg int) {
	switch agg {
	case aggSum:
		*acc += v
		if math.IsNaN(*acc) {
			*acc = 0
		}
	case aggMin:
		*acc = min(*acc, v)
	case aggMax:
		*acc = max(*acc, v)
	}
}

// weighted is score times weight, with Redis's 0 for a NaN (0 * inf).
func weighted(s, w float64) float64 {
	v := s * w
	if math.IsNaN(v) {
		return 0
	}
	return v
}

// cmdZSetOp is ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD,
// as Redis's zunionInterDiffGenericCommand: numkeys, the keys' types,
// then the options.
func cmdZSetOp(x *call) {
	name := x.cmd.name
	store := strings.HasSuffix(name, "store")
	card := name == "zintercard"
	op := strings.TrimSuffix(strings.TrimPrefix(name, "z"), "store")
	if card {
		op = "inter"
	}
	numIdx := 1
	if store {
		numIdx = 2
	}
	setnum, ok := x.intArg(numIdx)
	if !ok {
		return
	}
	if setnum < 1 {
		x.w.errorReply("ERR at least 1 input key is needed for '" + name + "' command")
		return
	}
	if setnum > int64(len(x.args)-numIdx-1) {
		x.w.errorReply(errSyntax)
		return
	}
	keys := x.keysOf(numIdx+1, 1)[:setnum]
	locked := keys
	if store {
		locked = append([]string{x.key(1)}, keys...)
	}
	x.locked(locked, func(tx *engine.Tx) {
		srcs := make([]zsource, setnum)
		for i, k := range keys {
			o, _ := tx.Object(k)
			srcs[i].weight = 1
			switch v := o.(type) {
			case nil:
				if tx.Type(k) != engine.TypeNone {
					x.w.errorReply(errWrongType)
					return
				}
				x.miss(k)
			case *zsetObj:
				srcs[i].z = v
			case *setObj:
				srcs[i].s = v
			default:
				x.w.errorReply(errWrongType)
				return
			}
		}
		agg, withScores, limit := aggSum, false, int64(0)
		for j := numIdx + 1 + int(setnum); j < len(x.args); j++ {
			left := len(x.args) - j
			switch {
			case op != "diff" && !card && left >= int(setnum)+1 && equalFold(x.args[j], "weights"):
				for i := range srcs {
					j++
					w, ok := parseDouble(x.args[j])
					if !ok {
						x.w.errorReply("ERR weight value is not a float")
						return
					}
					srcs[i].weight = w
				}
			case op != "diff" && !card && left >= 2 && equalFold(x.args[j], "aggregate"):
				j++
				switch {
				case equalFold(x.args[j], "sum"):
					agg = aggSum
				case equalFold(x.args[j], "min"):
					agg = aggMin
				case equalFold(x.args[j], "max"):
					agg = aggMax
				default:
					x.w.errorReply(errSyntax)
					return
				}
			case !store && !card && equalFold(x.args[j], "withscores"):
				withScores = true
			case card && left >= 2 && equalFold(x.args[j], "limit"):
				j++
				l, ok := x.nonNegativeArg(j, "ERR LIMIT can't be negative")
				if !ok {
					return
				}
				limit = l
			default:
				x.w.errorReply(errSyntax)
				return
			}
		}
		es := zsetOp(srcs, op, agg, limit, card)
		switch {
		case card:
			x.w.int(int64(len(es)))
		case store:
			x.storeZset(tx, x.key(1), es, engine.Kind(name))
		default:
			x.replyZentries(es, withScores)
		}
	})
}

// zsetOp computes a union, intersection or difference of srcs, sorted
// (for ZINTERCARD, up to limit elements, unsorted).
func zsetOp(srcs []zsource, op string, agg int, limit int64, card bool) []zentry {
	var out []zentry
	switch op {
	case "inter":
		sorted := slices.Clone(srcs)
		slices.SortStableFunc(sorted, func(a, b zsource) int { return a.len() - b.len() })
		if sorted[0].len() == 0 {
			return nil
		}
		stop := false
		sorted[0].each(func(e zentry) {
			if stop {
				return
			}
			acc := weighted(e.score, sorted[0].weight)
			for _, o := range sorted[1:] {
				s, ok := o.score(e.member)
				if !ok {
					return
				}
				aggregate(&acc, weighted(s, o.weight), agg)
			}
			out = append(out, zentry{e.member, acc})
			if card && limit > 0 && int64(len(out)) >= limit {
				stop = true
			}
		})
	case "union":
		acc := map[string]int{}
		for _, src := range srcs {
			src.each(func(e zentry) {
				v := weighted(e.score, src.weight)
				if i, ok := acc[e.member]; ok {
					aggregate(&out[i].score, v, agg)
					return
				}
				acc[e.member] = len(out)
				out = append(out, zentry{e.member, v})
			})
		}
	default: // diff
		srcs[0].each(func(e zentry) {
			for _, o := range srcs[1:] {
				if _, ok := o.score(e.member); ok {
					return
				}
			}
			out = append(out, e)
		})
	}
	if !card {
		slices.SortFunc(out, func(a, b zentry) int {
			switch {
			case zless(a, b):
				return -1
			case zless(b, a):
				return 1
			}
			return 0
		})
	}
	return out
}

// cmdZRandMember is ZRANDMEMBER key [count [WITHSCORES]].
func cmdZRandMember(x *call) {
	if len(x.args) == 2 {
		x.readZset(x.key(1), func(_ *engine.Tx, z *zsetObj) {
			if z == nil {
				x.w.null()
				return
			}
			x.w.bulkString(z.randomAt(-1).member)
		})
		return
	}
	count, withScores, ok := x.randCountArgs("withscores")
	if !ok {
		return
	}
	x.readZset(x.key(1), func(_ *engine.Tx, z *zsetObj) {
		if z == nil {
			x.w.array(0)
			return
		}
		all := count >= int64(z.len())
		x.randomPick(z.len(), count, withScores, func(i int) {
			e := z.randomAt(i)
			if all {
				// The whole set, as Redis's iterator walks it: from the
				// highest rank down.
				e = z.at(z.len() - 1 - i)
			}
			if withScores && x.w.resp3() {
				x.w.array(2)
			}
			x.w.bulkString(e.member)
			if withScores {
				x.w.double(e.score)
			}
		})
	})
}

// randomAt returns the element at position i of the set's random-access
// order (its rank in a listpack, its position in the member table of a
// skiplist); i -1 picks one at random.
func (z *zsetObj) randomAt(i int) zentry {
	if i < 0 {
		i = rand.IntN(z.len())
	}
	if z.sl != nil {
		return zentry{z.dict.keys[i], z.dict.vals[i]}
	}
	return z.small[i]
}

// cmdZScan is ZSCAN key cursor [MATCH pattern] [COUNT count].
func cmdZScan(x *call) {
	x.scanTyped(func(tx *engine.Tx, key string) (scanned, bool) {
		z, ok := typed[*zsetObj](x, tx, key)
		if z == nil {
			return nil, ok
		}
		return z, true
	})
}
