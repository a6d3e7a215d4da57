package resp

// This file holds SORT and SORT_RO, as Redis's sort.c: the elements of a
// list, set or sorted set, sorted as numbers or (ALPHA) as strings, by
// themselves or by other keys (BY pattern, BY nosort), with LIMIT, GET
// patterns and STORE into a list. Strings compare byte by byte (Redis's
// strcoll in the C locale).

import (
	"math"
	"slices"
	"strings"

	"github.com/nxkv/nxkv/engine"
)

// sortItem is one element being sorted: its score (numeric sort) or the
// string it sorts by (ALPHA with BY; by is nil where the BY key is
// missing).
type sortItem struct {
	elem  string
	score float64
	by    *string
}

// lookupByPattern returns what pattern names for elem, as Redis's
// lookupKeyByPattern: "#" is elem itself; otherwise the first '*' is
// replaced by elem and the key read as a string, or, with "->field" after
// the '*', the field of the hash there. ok is false for a missing key or
// field, a key of another type, or a pattern without '*'. A missing key
// is a read's miss (keymiss), as in Redis.
func (x *call) lookupByPattern(tx *engine.Tx, pattern, elem string) (string, bool) {
	if pattern == "#" {
		return elem, true
	}
	star := strings.IndexByte(pattern, '*')
	if star < 0 {
		return "", false
	}
	key, field := pattern, ""
	if f := strings.Index(pattern[star+1:], "->"); f >= 0 && star+1+f+2 < len(pattern) {
		key, field = pattern[:star+1+f], pattern[star+1+f+2:]
	}
	key = key[:star] + elem + key[star+1:]
	o, found := tx.Object(key)
	switch {
	case !found:
		x.miss(key)
		return "", false
	case field == "" && o == nil:
		return tx.Get(key)
	case field != "":
		if h, ok := o.(*hashObj); ok {
			return h.d.get(field)
		}
	}
	return "", false
}

// sortKeys finds SORT's keys as Redis's sortGetKeys: the key, and the
// destination of the last STORE, skipping the arguments of LIMIT, GET and
// BY.
func sortKeys(args [][]byte) []int {
	pos, store := []int{1}, 0
	for i := 2; i < len(args); i++ {
		switch {
		case equalFold(args[i], "limit"):
			i += 2
		case equalFold(args[i], "get"), equalFold(args[i], "by"):
			i++
		case equalFold(args[i], "store") && i+1 < len(args):
			store = i + 1
		}
	}
	if store != 0 {
		pos = append(pos, store)
	}
	return pos
}

// cmdSort is SORT key [BY pattern] [LIMIT offset count] [GET pattern ...]
// [ASC|DESC] [ALPHA] [STORE destination], and SORT_RO without STORE.
func cmdSort(x *call) {
	ro := x.cmd.name == "sort_ro"
	var desc, alpha, dontSort bool
	var by, store *string
	var gets []string
	limitStart, limitCount := int64(0), int64(-1)
	for j := 2; j < len(x.args); j++ {
		left := len(x.args) - j - 1
		switch {
		case equalFold(x.args[j], "asc"):
			desc = false
		case equalFold(x.args[j], "desc"):
			desc = true
		case equalFold(x.args[j], "alpha"):
			alpha = true
		case equalFold(x.args[j], "limit") && left >= 2:
			var ok bool
			if limitStart, limitCount, ok = x.intArgs(j + 1); !ok {
				return
			}
			j += 2
		case !ro && equalFold(x.args[j], "store") && left >= 1:
			s := x.key(j + 1)
			store = &s
			j++
		case equalFold(x.args[j], "by") && left >= 1:
			s := string(x.args[j+1])
			by, dontSort = &s, !strings.Contains(s, "*")
			j++
		case equalFold(x.args[j], "get") && left >= 1:
			gets = append(gets, string(x.args[j+1]))
			j++
		default:
			x.w.errorReply(errSyntax)
			return
		}
	}
	key := x.key(1)
	var locked []string // nil: every key, which BY and GET may read
	if (by == nil || dontSort) && len(gets) == 0 {
		locked = []string{key}
		if store != nil {
			locked = append(locked, *store)
		}
	}
	x.locked(locked, func(tx *engine.Tx) {
		o, found := tx.Object(key)
		if found && o == nil {
			x.w.errorReply(errWrongType)
			return
		}
		if !found {
			x.miss(key)
		}
		set, isSet := o.(*setObj)
		if isSet && dontSort && (store != nil || x.lua != nil) {
			// As Redis: a set's order is its own, so a script or a STORE
			// sorts it to stay deterministic.
			dontSort, alpha, by = false, true, nil
		}
		var n int
		switch v := o.(type) {
		case nil:
		case *listObj:
			n = v.d.len()
		case *setObj:
			n = v.len()
		case *zsetObj:
			n = v.len()
			if v.sl == nil {
				v.convert() // as Redis's SORT, which leaves a sorted set a skiplist
			}
		default:
			x.w.errorReply(errWrongType)
			return
		}
		start := min(max(limitStart, 0), int64(n))
		count := min(max(limitCount, -1), int64(n))
		end := start + count - 1
		if count < 0 {
			end = int64(n) - 1
		}
		if start >= int64(n) {
			start, end = int64(n)-1, int64(n)-2
		}
		end = min(end, int64(n)-1)
		var items []sortItem
		add := func(e string) { items = append(items, sortItem{elem: e}) }
		switch v := o.(type) {
		case *listObj:
			if dontSort && end >= start {
				for i := start; i <= end; i++ {
					if desc {
						add(v.d.at(n - 1 - int(i)))
					} else {
						add(v.d.at(int(i)))
					}
				}
				end, start = end-start, 0
			} else if !dontSort || end >= start {
				for i := range n {
					add(v.d.at(i))
				}
			}
		case *setObj:
			for i := range n {
				add(set.at(i))
			}
		case *zsetObj:
			if dontSort {
				if end >= start {
					v.each(int(start), int(end), false, func(e zentry) { add(e.member) })
					if desc {
						items = items[:0]
						v.each(n-1-int(end), n-1-int(start), true, func(e zentry) { add(e.member) })
					}
				}
				end, start = end-start, 0
			} else {
				v.each(0, n-1, false, func(e zentry) { add(e.member) })
			}
		}
		if !dontSort {
			if !x.sortItems(tx, items, by, alpha, desc, store != nil) {
				return
			}
		}
		x.sortReply(tx, items, start, end, gets, store)
	})
}

// sortItems sorts items as Redis's sortCommandGeneric does, and reports
// false after replying the error of an element (or BY value) that is not
// a number in a numeric sort.
func (x *call) sortItems(tx *engine.Tx, items []sortItem, by *string, alpha, desc, binary bool) bool {
	for i := range items {
		v := items[i].elem
		if by != nil {
			b, ok := x.lookupByPattern(tx, *by, v)
			if !ok {
				continue
			}
			v = b
			if alpha {
				items[i].by = &b
			}
		}
		if !alpha && v != "" { // strtod reads nothing of "" and stops at its end: 0
			f, rangeErr, ok := parseStrtod([]byte(v))
			if !ok || rangeErr || math.IsNaN(f) {
				x.w.errorReply("ERR One or more scores can't be converted into double")
				return false
			}
			items[i].score = f
		}
	}
	slices.SortStableFunc(items, func(a, b sortItem) int {
		var c int
		switch {
		case !alpha:
			switch {
			case a.score > b.score:
				c = 1
			case a.score < b.score:
				c = -1
			default:
				c = strings.Compare(a.elem, b.elem)
			}
		case by != nil:
			switch {
			case a.by == nil || b.by == nil:
				if a.by == nil && b.by != nil {
					c = -1
				} else if a.by != nil {
					c = 1
				}
			default:
				c = strings.Compare(*a.by, *b.by)
			}
		default:
			c = strings.Compare(a.elem, b.elem)
		}
		if desc {
			return -c
		}
		return c
	})
	return true
}

// sortReply replies (or stores) the sorted items from start to end, each
// as itself or as its GET patterns.
func (x *call) sortReply(tx *engine.Tx, items []sortItem, start, end int64, gets []string, store *string) {
	var out []string
	hasNil := make(map[int]bool)
	for i := start; i <= end; i++ {
		if len(gets) == 0 {
			out = append(out, items[i].elem)
			continue
		}
		for _, g := range gets {
			v, ok := x.lookupByPattern(tx, g, items[i].elem)
			if !ok {
				hasNil[len(out)] = true
			}
			out = append(out, v)
		}
	}
	if store == nil {
		x.w.array(len(out))
		for i, v := range out {
			if hasNil[i] {
				x.w.null()
			} else {
				x.w.bulkString(v)
			}
		}
		return
	}
	if len(out) == 0 {
		tx.Del(*store)
		x.w.int(0)
		return
	}
	l := &listObj{}
	for _, v := range out {
		l.push(v, listTail)
	}
	tx.SetObject(*store, l, "sortstore")
	x.signalReady(x.db, *store)
	x.w.int(int64(len(out)))
}
