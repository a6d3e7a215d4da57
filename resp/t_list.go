package resp

// This file holds the list type and its commands, as Redis's t_list.c:
// LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP (with a count), LLEN, LRANGE,
// LINDEX, LSET, LINSERT, LREM, LTRIM, LPOS, LMOVE, RPOPLPUSH and LMPOP.
//
// A list is a deque (deque.go): O(1) at both ends and by index, 16 to 64
// bytes an element besides its bytes. Redis 7.0 names every list's
// encoding "quicklist", and so does OBJECT ENCODING here.

import (
	"math"

	"github.com/nxkv/nxkv/engine"
)

// listObj is a list value.
type listObj struct{ d deque }

func (l *listObj) Type() string         { return "list" }
func (l *listObj) encoding() string     { return "quicklist" }
func (l *listObj) clone() engine.Object { return &listObj{d: l.d.clone()} }

func (l *listObj) size() int {
	n := 16 * len(l.d.buf)
	for i := range l.d.len() {
		n += len(l.d.at(i))
	}
	return n
}

// Size is size from sampled elements (engine.Sizer).
func (l *listObj) Size() int64 {
	return sampledSize(16*len(l.d.buf), l.d.len(), 0, func(i int) int { return len(l.d.at(i)) })
}

// Ends of a list, as Redis's LIST_HEAD and LIST_TAIL.
const (
	listHead = iota
	listTail
)

func (l *listObj) push(v string, where int) {
	if where == listHead {
		l.d.pushFront(v)
	} else {
		l.d.pushBack(v)
	}
}

func (l *listObj) pop(where int) string {
	if where == listHead {
		return l.d.popFront()
	}
	return l.d.popBack()
}

// cmdPush is LPUSH, RPUSH, LPUSHX and RPUSHX.
func cmdPush(x *call) {
	where := listHead
	if x.cmd.name[0] == 'r' {
		where = listTail
	}
	onlyIfExists := x.cmd.name[len(x.cmd.name)-1] == 'x'
	key := x.key(1)
	x.locked([]string{key}, func(tx *engine.Tx) {
		l, ok := typed[*listObj](x, tx, key)
		if !ok {
			return
		}
		created := l == nil
		if created {
			if onlyIfExists {
				x.w.int(0)
				return
			}
			l = &listObj{}
		}
		for _, v := range x.args[2:] {
			l.push(string(v), where)
		}
		kind := engine.Kind("lpush")
		if where == listTail {
			kind = "rpush"
		}
		if created {
			tx.SetObject(key, l, kind)
			x.signalReady(x.db, key)
		} else {
			tx.Notify(key, kind)
		}
		x.w.int(int64(l.d.len()))
	})
}

// readList runs fn with the list under argument 1 (nil if absent) unless
// it holds another type.
func (x *call) readList(fn func(tx *engine.Tx, l *listObj)) {
	key := x.key(1)
	x.locked([]string{key}, func(tx *engine.Tx) {
		if l, ok := typed[*listObj](x, tx, key); ok {
			fn(tx, l)
		}
	})
}

// popped reports that elements were popped from the list under key at
// where, and deletes it once empty, as Redis's listElementsRemoved.
func popped(tx *engine.Tx, key string, l *listObj, where int) {
	if where == listHead {
		tx.Notify(key, "lpop")
	} else {
		tx.Notify(key, "rpop")
	}
	dropIfEmpty(tx, key, l.d.len())
}

// replyPopRange pops up to count elements from where and replies them as
// an array, in the order popped.
func (x *call) replyPopRange(l *listObj, where int, count int64) {
	n := int(min(count, int64(l.d.len())))
	x.w.array(n)
	for range n {
		x.w.bulkString(l.pop(where))
	}
}

// cmdPop is LPOP and RPOP key [count].
func cmdPop(x *call) {
	where := listHead
	if x.cmd.name == "rpop" {
		where = listTail
	}
	if len(x.args) > 3 {
		x.w.errorReply("ERR wrong number of arguments for '" + x.cmd.name + "' command")
		return
	}
	hasCount, count := len(x.args) == 3, int64(0)
	if hasCount {
		n, ok := x.positiveArg(2)
		if !ok {
			return
		}
		count = n
	}
	x.readList(func(tx *engine.Tx, l *listObj) {
		switch {
		case l == nil && hasCount:
			x.w.nullArray()
			return
		case l == nil:
			x.w.null()
			return
		case hasCount && count == 0:
			x.w.array(0)
			return
		case !hasCount:
			x.w.bulkString(l.pop(where))
		default:
			x.replyPopRange(l, where, count)
		}
		popped(tx, x.key(1), l, where)
	})
}

func cmdLLen(x *call) {
	x.readList(func(_ *engine.Tx, l *listObj) {
		if l == nil {
			x.w.int(0)
			return
		}
		x.w.int(int64(l.d.len()))
	})
}

// listRange resolves Redis's start and end indexes (negative from the
// end) on a list of n elements: the first and last index, or ok false
// for an empty range.
func listRange(start, end int64, n int) (from, to int, ok bool) {
	ln := int64(n)
	if start < 0 {
		start += ln
	}
	if end < 0 {
		end += ln
	}
	start = max(start, 0)
	if start > end || start >= ln {
		return 0, 0, false
	}
	end = min(end, ln-1)
	return int(start), int(end), true
}

func cmdLRange(x *call) {
	start, end, ok := x.intArgs(2)
	if !ok {
		return
	}
	x.readList(func(_ *engine.Tx, l *listObj) {
		if l == nil {
			x.w.array(0)
			return
		}
		from, to, ok := listRange(start, end, l.d.len())
		if !ok {
			x.w.array(0)
			return
		}
		x.w.array(to - from + 1)
		for i := from; i <= to; i++ {
			x.w.bulkString(l.d.at(i))
		}
	})
}

// index resolves a Redis index (negative from the end) on a list of n
// elements.
func index(i int64, n int) (int, bool) {
	if i < 0 {
		i += int64(n)
	}
	if i < 0 || i >= int64(n) {
		return 0, false
	}
	return int(i), true
}

// cmdLIndex checks the key before the index, as Redis does.
func cmdLIndex(x *call) {
	x.readList(func(_ *engine.Tx, l *listObj) {
		if l == nil {
			x.w.null()
			return
		}
		n, ok := x.intArg(2)
		if !ok {
			return
		}
		if i, ok := index(n, l.d.len()); ok {
			x.w.bulkString(l.d.at(i))
			return
		}
		x.w.null()
	})
}

func cmdLSet(x *call) {
	x.readList(func(tx *engine.Tx, l *listObj) {
		if l == nil {
			x.w.errorReply(errNoSuchKey)
			return
		}
		n, ok := x.intArg(2)
		if !ok {
			return
		}
		i, ok := index(n, l.d.len())
		if !ok {
			x.w.errorReply("ERR index out of range")
			return
		}
		l.d.set(i, string(x.args[3]))
		tx.Notify(x.key(1), "lset")
		x.w.simple("OK")
	})
}

func cmdLInsert(x *call) {
	var after bool
	switch {
	case equalFold(x.args[2], "after"):
		after = true
	case equalFold(x.args[2], "before"):
	default:
		x.w.errorReply(errSyntax)
		return
	}
	x.readList(func(tx *engine.Tx, l *listObj) {
		if l == nil {
			x.w.int(0)
			return
		}
		pivot := string(x.args[3])
		for i := range l.d.len() {
			if l.d.at(i) == pivot {
				if after {
					i++
				}
				l.d.insert(i, string(x.args[4]))
				tx.Notify(x.key(1), "linsert")
				x.w.int(int64(l.d.len()))
				return
			}
		}
		x.w.int(-1)
	})
}

func cmdLRem(x *call) {
	n, ok := x.intArg(2)
	if !ok {
		return
	}
	x.readList(func(tx *engine.Tx, l *listObj) {
		if l == nil {
			x.w.int(0)
			return
		}
		v := string(x.args[3])
		limit := n
		if limit < 0 {
			limit = -limit
		}
		if limit == math.MinInt64 {
			limit = math.MaxInt64
		}
		// The elements to remove, counted from the head (n >= 0) or the
		// tail (n < 0).
		remove := make(map[int]bool)
		size := l.d.len()
		for k := range size {
			i := k
			if n < 0 {
				i = size - 1 - k
			}
			if l.d.at(i) == v {
				remove[i] = true
				if limit != 0 && int64(len(remove)) == limit {
					break
				}
			}
		}
		if len(remove) > 0 {
			l.d.filter(func(i int, _ string) bool { return !remove[i] })
			tx.Notify(x.key(1), "lrem")
			dropIfEmpty(tx, x.key(1), l.d.len())
		}
		x.w.int(int64(len(remove)))
	})
}

func cmdLTrim(x *call) {
	start, end, ok := x.intArgs(2)
	if !ok {
		return
	}
	x.readList(func(tx *engine.Tx, l *listObj) {
		if l == nil {
			x.w.simple("OK")
			return
		}
		from, to, ok := listRange(start, end, l.d.len())
		if !ok {
			from, to = 0, -1
		}
		l.d.filter(func(i int, _ string) bool { return i >= from && i <= to })
		tx.Notify(x.key(1), "ltrim")
		dropIfEmpty(tx, x.key(1), l.d.len())
		x.w.simple("OK")
	})
}

// cmdLPos is LPOS key element [RANK rank] [COUNT num] [MAXLEN len].
func cmdLPos(x *call) {
	rank, count, maxLen := int64(1), int64(-1), int64(0)
	for j := 3; j < len(x.args); j++ {
		more := j+1 < len(x.args)
		switch {
		case equalFold(x.args[j], "rank") && more:
			j++
			n, ok := x.intArg(j)
			if !ok {
				return
			}
			if n == 0 {
				x.w.errorReply("ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list")
				return
			}
			rank = n
		case equalFold(x.args[j], "count") && more:
			j++
			var ok bool
			if count, ok = x.nonNegativeArg(j, "ERR COUNT can't be negative"); !ok {
				return
			}
		case equalFold(x.args[j], "maxlen") && more:
			j++
			var ok bool
			if maxLen, ok = x.nonNegativeArg(j, "ERR MAXLEN can't be negative"); !ok {
				return
			}
		default:
			x.w.errorReply(errSyntax)
			return
		}
	}
	backwards := rank < 0
	if backwards {
		rank = -rank // wraps for the least int64, as Redis's does
	}
	x.readList(func(_ *engine.Tx, l *listObj) {
		if l == nil {
			if count != -1 {
				x.w.array(0)
			} else {
				x.w.null()
			}
			return
		}
		v, n := string(x.args[2]), l.d.len()
		var found []int64
		matches := int64(0)
		for k := 0; k < n && (maxLen == 0 || int64(k) < maxLen); k++ {
			i := k
			if backwards {
				i = n - 1 - k
			}
			if l.d.at(i) != v {
				continue
			}
			matches++
			if matches >= rank {
				found = append(found, int64(i))
				if count == -1 || count != 0 && matches-rank+1 >= count {
					break
				}
			}
		}
		if count != -1 {
			x.w.array(len(found))
			for _, i := range found {
				x.w.int(i)
			}
			return
		}
		if len(found) == 0 {
			x.w.null()
			return
		}
		x.w.int(found[0])
	})
}

// listEnd parses LEFT or RIGHT.
func (x *call) listEnd(i int) (int, bool) {
	switch {
	case equalFold(x.args[i], "left"):
		return listHead, true
	case equalFold(x.args[i], "right"):
		return listTail, true
	}
	x.w.errorReply(errSyntax)
	return 0, false
}

// cmdLMove is LMOVE source destination LEFT|RIGHT LEFT|RIGHT and
// RPOPLPUSH source destination.
func cmdLMove(x *call) {
	from, to := listTail, listHead
	if x.cmd.name == "lmove" {
		var ok bool
		if from, ok = x.listEnd(3); !ok {
			return
		}
		if to, ok = x.listEnd(4); !ok {
			return
		}
	}
	src, dst := x.key(1), x.key(2)
	x.locked([]string{src, dst}, func(tx *engine.Tx) {
		x.lmove(tx, src, dst, from, to)
		x.signalReady(x.db, dst)
	})
}

// lmove moves one element from the list src (at from) to the list dst
// (at to) and replies it, or nil when src is missing; its events are
// Redis's: the push (after "new" for a list it creates), then the pop,
// then "del" for a source left empty.
func (x *call) lmove(tx *engine.Tx, src, dst string, from, to int) {
	sl, ok := typed[*listObj](x, tx, src)
	if !ok {
		return
	}
	if sl == nil {
		x.w.null()
		return
	}
	dl, ok := typed[*listObj](x, tx, dst)
	if !ok {
		return
	}
	v := sl.pop(from)
	created := dl == nil
	if created {
		dl = &listObj{}
	}
	dl.push(v, to)
	kind := engine.Kind("lpush")
	if to == listTail {
		kind = "rpush"
	}
	if created {
		tx.SetObject(dst, dl, kind)
	} else {
		tx.Notify(dst, kind)
	}
	x.w.bulkString(v)
	if from == listHead {
		tx.Notify(src, "lpop")
	} else {
		tx.Notify(src, "rpop")
	}
	dropIfEmpty(tx, src, sl.d.len()) // never when src is dst: the element came back
}

// parseMPop parses "numkeys key [key ...] LEFT|RIGHT [COUNT count]" from
// argument i on (LMPOP, BLMPOP), with Redis's errors.
func (x *call) parseMPop(i int, ends func(j int) (int, bool)) (keys []string, where int, count int64, ok bool) {
	n, ok := parseInt(x.args[i])
	if !ok || n < 1 {
		x.w.errorReply("ERR numkeys should be greater than 0")
		return nil, 0, 0, false
	}
	whereIdx := int64(i) + n + 1 // no overflow: n is checked against the arguments first
	if n >= int64(len(x.args)-i-1) || whereIdx >= int64(len(x.args)) {
		x.w.errorReply(errSyntax)
		return nil, 0, 0, false
	}
	if where, ok = ends(int(whereIdx)); !ok {
		return nil, 0, 0, false
	}
	count = -1
	for j := int(whereIdx) + 1; j < len(x.args); j++ {
		if count == -1 && equalFold(x.args[j], "count") && j+1 < len(x.args) {
			j++
			c, ok := parseInt(x.args[j])
			if !ok || c < 1 {
				x.w.errorReply("ERR count should be greater than 0")
				return nil, 0, 0, false
			}
			count = c
			continue
		}
		x.w.errorReply(errSyntax)
		return nil, 0, 0, false
	}
	if count == -1 {
		count = 1
	}
	for j := range int(n) {
		keys = append(keys, x.key(i+1+j))
	}
	return keys, where, count, true
}

// cmdLMPop is LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count].
func cmdLMPop(x *call) {
	keys, where, count, ok := x.parseMPop(1, x.listEnd)
	if !ok {
		return
	}
	x.blockingPop(keys, -1, isList, listPopper(where, count))
}
