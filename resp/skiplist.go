package resp

// This file holds skiplist, the order of a large sorted set: Pugh's skip
// list with a span on every link (the number of elements the link jumps),
// as Redis's zskiplist, so that an element's rank and the element at a
// rank are found in O(log n) expected time, as are inserts and deletes.
// Each element costs a node (its element, back link and levels' slice
// header, 56 bytes) and its levels (16 bytes each, 1.33 on average with
// p = 1/4, allocated apart), besides the member's bytes. No Go library kept
// up to date offers an ordered structure with ranks (google/btree and
// tidwall/btree have no rank of a key), so the sorted set carries its own.

import "math/rand/v2"

// zentry is a sorted set's element.
type zentry struct {
	member string
	score  float64
}

// zless orders elements by score, then member bytes, as Redis does.
func zless(a, b zentry) bool {
	return a.score < b.score || a.score == b.score && a.member < b.member
}

const (
	zslMaxLevel = 32
	zslP        = 0.25
)

type zslLevel struct {
	next *zslNode
	span int
}

type zslNode struct {
	e     zentry
	back  *zslNode
	level []zslLevel
}

// skiplist is an ordered sequence of distinct zentries.
type skiplist struct {
	head  *zslNode
	tail  *zslNode
	n     int
	level int
}

func newSkiplist() *skiplist {
	return &skiplist{head: &zslNode{level: make([]zslLevel, zslMaxLevel)}, level: 1}
}

func zslRandomLevel() int {
	l := 1
	for l < zslMaxLevel && rand.Float64() < zslP {
		l++
	}
	return l
}

// insert adds e, which must not be in the list.
func (sl *skiplist) insert(e zentry) {
	var update [zslMaxLevel]*zslNode
	var rank [zslMaxLevel]int
	x := sl.head
	for i := sl.level - 1; i >= 0; i-- {
		if i < sl.level-1 {
			rank[i] = rank[i+1]
		}
		for x.level[i].next != nil && zless(x.level[i].next.e, e) {
			rank[i] += x.level[i].span
			x = x.level[i].next
		}
		update[i] = x
	}
	lvl := zslRandomLevel()
	if lvl > sl.level {
		for i := sl.level; i < lvl; i++ {
			rank[i] = 0
			update[i] = sl.head
			update[i].level[i].span = sl.n
		}
		sl.level = lvl
	}
	node := &zslNode{e: e, level: make([]zslLevel, lvl)}
	for i := range lvl {
		node.level[i].next = update[i].level[i].next
		update[i].level[i].next = node
		node.level[i].span = update[i].level[i].span - (rank[0] - rank[i])
		update[i].level[i].span = rank[0] - rank[i] + 1
	}
	for i := lvl; i < sl.level; i++ {
		update[i].level[i].span++
	}
	if update[0] != sl.head {
		node.back = update[0]
	}
	if node.level[0].next != nil {
		node.level[0].next.back = node
	} else {
		sl.tail = node
	}
	sl.n++
}

// delete removes e and reports whether it was in the list.
func (sl *skiplist) delete(e zentry) bool {
	var update [zslMaxLevel]*zslNode
	x := sl.head
	for i := sl.level - 1; i >= 0; i-- {
		for x.level[i].next != nil && zless(x.level[i].next.e, e) {
			x = x.level[i].next
		}
		update[i] = x
	}
	x = x.level[0].next
	if x == nil || x.e != e {
		return false
	}
	for i := range sl.level {
		if update[i].level[i].next == x {
			update[i].level[i].span += x.level[i].span - 1
			update[i].level[i].next = x.level[i].next
		} else {
			update[i].level[i].span--
		}
	}
	if x.level[0].next != nil {
		x.level[0].next.back = x.back
	} else {
		sl.tail = x.back
	}
	for sl.level > 1 && sl.head.level[sl.level-1].next == nil {
		sl.level--
	}
	sl.n--
	return true
}

// countWhile returns how many elements, from the first, satisfy before,
// which must hold for a prefix of the order (score < min, and the like).
func (sl *skiplist) countWhile(before func(zentry) bool) int {
	x, r := sl.head, 0
	for i := sl.level - 1; i >= 0; i-- {
		for x.level[i].next != nil && before(x.level[i].next.e) {
			r += x.level[i].span
			x = x.level[i].next
		}
	}
	return r
}

// rank returns e's 0-based rank; e must be in the list.
func (sl *skiplist) rank(e zentry) int {
	return sl.countWhile(func(y zentry) bool { return zless(y, e) })
}

// node returns the node at 0-based rank r < n.
func (sl *skiplist) node(r int) *zslNode {
	x, t := sl.head, 0
	r++
	for i := sl.level - 1; i >= 0; i-- {
		for x.level[i].next != nil && t+x.level[i].span <= r {
			t += x.level[i].span
			x = x.level[i].next
		}
		if t == r {
			return x
		}
	}
	return nil
}

// each calls fn with the elements of ranks from to to (inclusive, 0-based,
// from <= to < n), in ascending order, or descending from to down to from
// when rev.
func (sl *skiplist) each(from, to int, rev bool, fn func(zentry)) {
	if rev {
		x := sl.node(to)
		for i := to; i >= from; i-- {
			fn(x.e)
			x = x.back
		}
		return
	}
	x := sl.node(from)
	for i := from; i <= to; i++ {
		fn(x.e)
		x = x.level[0].next
	}
}
