// Package ttl implements a hierarchical timer wheel: it files nodes by
// deadline and hands back the ones that are due as its time advances.
//
// # Model
//
// Time is an int64 count of nanoseconds on the caller's time line (the engine
// uses Unix nanoseconds). The wheel has a tick of 2^k ns (default 2^20 ns,
// about 1 ms) and several levels of 64 buckets each. A bucket of level L spans
// tick·64^L, so a deadline's bucket number on level L is deadline >> (k+6L)
// and its slot is that number's low 6 bits: a shift and a mask, as in Linux
// timers, Kafka's purgatory and otter v2 (internal/expiration/variable.go),
// whose design this follows. With the default tick the levels are:
//
//	level  bucket span  level reaches
//	0      1.05 ms      67.1 ms
//	1      67.1 ms      4.29 s
//	2      4.29 s       4.58 min
//	3      4.58 min     4.89 h
//	4      4.89 h       13.0 days
//	5      13.0 days    2.28 years
//	overflow: one list for anything further ahead (years)
//
// A finer tick adds levels so the levels always reach at least 2^56 ns
// (2.28 years) ahead; a coarser one removes some.
//
// Schedule files a node on the lowest level whose 64 buckets, counted from
// the bucket holding the wheel's time, include the deadline's bucket. Buckets
// are intrusive singly-linked lists whose nodes also point back at whatever
// points at them, so Schedule, Cancel and rescheduling are O(1) and allocate
// nothing. Deadlines at or before the wheel's time go on a due list and fire
// at the next Advance.
//
// Advance visits, on every level, the buckets whose span the wheel's time has
// entered or passed since the last Advance, and either collects each node
// they hold (deadline <= now) or re-files it relative to the new time, which
// puts it on a lower level: this is cascading. A bucket covers a range of
// deadlines, so each node's own deadline is checked and nothing fires early.
// Slot i of a level stands for every bucket number ≡ i mod 64, so however far
// time jumps, at most 64 slots per level are visited, and a per-level bitmap
// of occupied slots skips the empty ones: a jump of hours or days costs
// O(levels + occupied buckets + nodes moved), never O(ticks).
//
// NextDeadline reports a lower bound of the earliest deadline, not the
// deadline itself: the exact minimum would need a scan of every node, while
// the start of the first occupied bucket is found from the bitmaps in a few
// instructions per level. On level 0 the bound is within one tick of the
// deadline, and for the bucket holding the wheel's time it is exact (unless
// the earliest node there was cancelled). An upper-level bound may be far
// below the deadline, but an Advance to it cascades the node down a level, so
// a reaper that sleeps until NextDeadline and then advances reaches each
// deadline within a few wake-ups per level, exactly on time. The bound is
// always after the wheel's time, so such a reaper never spins.
package ttl

import (
	"fmt"
	"math"
	"math/bits"
	"time"
)

const (
	slotBits = 6
	slots    = 1 << slotBits // buckets per level
	slotMask = slots - 1

	// defaultShift selects the default tick, 2^20 ns = 1.048576 ms: lock TTLs
	// are milliseconds.
	defaultShift = 20
	// horizonShift is how far the levels reach: 2^56 ns, 2.28 years.
	horizonShift = 56
	// maxShift keeps at least one level below the horizon: a tick of at most
	// 2^50 ns, 13.0 days.
	maxShift = horizonShift - slotBits

	// verifyWheel checks every invariant after every operation and panics on
	// a violation. It is for debugging only: it makes each call O(n).
	verifyWheel = false
)

// Node is one entry a Wheel can hold. Its zero value is unscheduled. Value is
// the caller's payload; the other fields belong to the wheel, take three
// words, and are guarded by whatever serializes calls to the Wheel holding
// the node. A node is in at most one wheel at a time and must not be copied
// while scheduled.
type Node[T any] struct {
	Value T

	deadline int64
	next     *Node[T]
	// pprev points at the pointer that points at this node: a bucket head
	// or the previous node's next. It is nil exactly when the node is not
	// scheduled.
	pprev **Node[T]
}

// Scheduled reports whether n is in a wheel, that is scheduled and not yet
// fired or cancelled.
func (n *Node[T]) Scheduled() bool { return n.pprev != nil }

// Deadline returns the deadline n was last scheduled at, in nanoseconds, and
// whether it is still scheduled.
func (n *Node[T]) Deadline() (int64, bool) { return n.deadline, n.pprev != nil }

// push files n, which must be unlinked, at the front of the list at head.
func push[T any](head **Node[T], n *Node[T]) {
	n.next = *head
	if n.next != nil {
		n.next.pprev = &n.next
	}
	n.pprev = head
	*head = n
}

// unlink takes n, which must be linked, out of its list.
func (n *Node[T]) unlink() {
	*n.pprev = n.next
	if n.next != nil {
		n.next.pprev = n.pprev
	}
	n.next, n.pprev = nil, nil
}

// Wheel schedules nodes at deadlines (int64 nanoseconds on the caller's time
// line, e.g. Unix nanoseconds) and fires each one exactly once when Advance
// reaches a time at or after its deadline; the package doc describes the
// model. A Wheel is not safe for concurrent use: callers serialize access
// (the engine holds a shard lock); NextDeadline, Len, Now and Tick only read,
// so they may run concurrently with one another. Create wheels with New; the
// zero Wheel is not ready for use, and a Wheel must not be copied.
type Wheel[T any] struct {
	now   int64 // the wheel's time: the latest Advance, or New's now
	shift uint  // log2 of the tick in nanoseconds

	// levels[l].heads[i] heads the bucket whose number on level l, that is
	// deadline >> (shift+6l), is ≡ i mod 64. A node on level 0 has bucket
	// number in [now>>shift, now>>shift + 64) and deadline > now; a node on
	// level l > 0 has bucket number in (now>>s, now>>s + 64) for that
	// level's shift s, so the bucket holding now is empty above level 0.
	levels []level[T]
	// curMin is at or before every deadline in the level-0 bucket holding
	// now, and after now; it is exact unless a node there was cancelled.
	// It is meaningless while that bucket is empty.
	curMin int64

	overflow    *Node[T] // deadlines past the top level's 64 buckets
	overflowMin int64    // at or before every deadline in overflow, after now

	due    *Node[T] // deadlines at or before now, scheduled since the last Advance
	firing *Node[T] // nodes Advance has collected and not yet fired
	n      int      // scheduled nodes, in every list above

	advancing bool // a fire callback is running
}

// level is one ring of 64 buckets.
type level[T any] struct {
	// occupied has bit i set if heads[i] may be non-empty: set when a node
	// is filed there, cleared when Advance empties the bucket, left set by
	// Cancel (which does not know the bucket). It spares NextDeadline a scan.
	occupied uint64
	heads    [slots]*Node[T]
}

// New returns an empty wheel whose time starts at now, with a tick
// (resolution) of tick rounded down to a power of two nanoseconds, at most
// 2^50 ns; tick <= 0 selects the default of 2^20 ns, about one millisecond.
func New[T any](now int64, tick time.Duration) *Wheel[T] {
	shift := uint(defaultShift)
	if tick > 0 {
		shift = uint(bits.Len64(uint64(tick)) - 1)
	}
	shift = min(shift, maxShift)
	nlevels := (horizonShift - shift + slotBits - 1) / slotBits
	return &Wheel[T]{
		now:    now,
		shift:  shift,
		levels: make([]level[T], nlevels),
	}
}

// Tick returns the wheel's resolution, the span of a level-0 bucket.
func (w *Wheel[T]) Tick() time.Duration { return time.Duration(1) << w.shift }

// Now returns the wheel's time: the latest time passed to Advance, or New's
// now if that is later.
func (w *Wheel[T]) Now() int64 { return w.now }

// Len returns the number of scheduled nodes, including due nodes Advance has
// not fired yet.
func (w *Wheel[T]) Len() int { return w.n }

// Schedule files n to fire at deadline, moving it if it is already scheduled
// in w. It is O(1) and allocates nothing. A deadline at or before the wheel's
// time fires at the next Advance (if Schedule is called from a fire callback,
// the Advance after the current one). n must not be scheduled in another
// wheel.
func (w *Wheel[T]) Schedule(n *Node[T], deadline int64) {
	if n.pprev != nil {
		n.unlink()
	} else {
		w.n++
	}
	n.deadline = deadline
	w.place(n)
	if verifyWheel {
		w.mustVerify()
	}
}

// Cancel removes n from the wheel, so it will not fire; it does nothing if n
// is not scheduled. It is O(1). n must not be scheduled in another wheel.
func (w *Wheel[T]) Cancel(n *Node[T]) {
	if n.pprev == nil {
		return
	}
	n.unlink()
	w.n--
	if verifyWheel {
		w.mustVerify()
	}
}

// place files the unlinked node n by its deadline relative to the wheel's
// time.
func (w *Wheel[T]) place(n *Node[T]) {
	d := n.deadline
	if d <= w.now {
		push(&w.due, n)
		return
	}
	s := w.shift
	for l := range w.levels {
		// d > now, so the unsigned difference of bucket numbers is exact
		// even where the signed one would overflow.
		b, cur := d>>s, w.now>>s
		if uint64(b)-uint64(cur) < slots {
			lv, i := &w.levels[l], uint64(b)&slotMask
			lv.occupied |= 1 << i
			head := &lv.heads[i]
			if l == 0 && b == cur && (*head == nil || d < w.curMin) {
				w.curMin = d
			}
			push(head, n)
			return
		}
		s += slotBits
	}
	if w.overflow == nil || d < w.overflowMin {
		w.overflowMin = d
	}
	push(&w.overflow, n)
}

// Advance moves the wheel's time to now and calls fire (which must not be
// nil) once for every node whose deadline is at or before now, after
// unlinking it. Nodes fire in no particular order. fire may Schedule or
// Cancel any node, including the fired one; a node cancelled before its turn
// does not fire, and one scheduled at or before now fires at the next
// Advance. fire must not call Advance (that panics). A now earlier than the
// wheel's time is treated as the wheel's time. Advance costs O(levels +
// occupied buckets reached + nodes fired or moved down a level), however far
// time jumps; it allocates nothing.
func (w *Wheel[T]) Advance(now int64, fire func(*Node[T])) {
	if w.advancing {
		panic("ttl: Advance called from a fire callback")
	}
	old := w.now
	t := max(now, old)
	w.now = t
	// Nodes scheduled at or before the old time are due. (firing is empty
	// unless a fire callback panicked; its nodes are due too.)
	for w.due != nil {
		n := w.due
		n.unlink()
		push(&w.firing, n)
	}
	w.collect(old, t)
	if w.firing != nil {
		w.fireAll(fire)
	}
	if verifyWheel {
		w.mustVerify()
	}
}

// collect moves every node with a deadline at or before t to firing and
// re-files every other node in a bucket that time has reached, given that
// the wheel's time moved from old to t.
func (w *Wheel[T]) collect(old, t int64) {
	// Lower levels first: a node moved down from level l lands on a level
	// already swept, so it is filed once, relative to t.
	s := w.shift
	for l := range w.levels {
		from, to := old>>s, t>>s
		if l > 0 {
			if from == to {
				break // and every higher level is unchanged too
			}
			from++ // the bucket holding old is empty above level 0
		}
		// Visiting a slot covers every bucket number ≡ it mod 64, so 64
		// visits cover any jump; empty slots are skipped by the bitmap.
		lv := &w.levels[l]
		visit := ^uint64(0)
		if n := uint64(to) - uint64(from) + 1; n < slots {
			visit = bits.RotateLeft64(1<<n-1, int(uint64(from)&slotMask))
		}
		visit &= lv.occupied
		lv.occupied &^= visit // first: sweep may refill the current bucket
		for ; visit != 0; visit &= visit - 1 {
			w.sweep(&lv.heads[bits.TrailingZeros64(visit)], t)
		}
		s += slotBits
	}
	if w.overflow != nil {
		top := w.shift + slotBits*uint(len(w.levels)-1)
		if w.overflowMin <= t || uint64(w.overflowMin>>top)-uint64(t>>top) < slots {
			w.sweep(&w.overflow, t)
		}
	}
}

// sweep empties the list at head, moving due nodes to firing and re-filing
// the others relative to the wheel's time t.
func (w *Wheel[T]) sweep(head **Node[T], t int64) {
	n := *head
	*head = nil
	for n != nil {
		next := n.next
		n.next, n.pprev = nil, nil
		if n.deadline <= t {
			push(&w.firing, n)
		} else {
			w.place(n) // may push onto head again: the detached rest is safe
		}
		n = next
	}
}

// fireAll unlinks and fires the nodes on firing one at a time, so a callback
// can still cancel or reschedule the ones after it.
func (w *Wheel[T]) fireAll(fire func(*Node[T])) {
	w.advancing = true
	defer func() { w.advancing = false }()
	for w.firing != nil {
		n := w.firing
		n.unlink()
		w.n--
		fire(n)
	}
}

// NextDeadline returns a time at or before the earliest scheduled deadline
// and after the wheel's time, and false when the wheel is empty. It is exact
// for the level-0 bucket holding the wheel's time, within one tick for other
// level-0 buckets, and the start of the first occupied bucket on higher
// levels; an Advance to that time moves the nodes there down a level, so
// NextDeadline then moves forward. When a node scheduled at or before the
// wheel's time awaits the next Advance, no such time exists and NextDeadline
// returns the wheel's time plus one nanosecond, so a reaper sleeping until
// it never spins. It looks at the occupied buckets of each level in order,
// stopping at the first non-empty one, so it is O(levels) unless nodes were
// cancelled from many buckets since the last Advance.
func (w *Wheel[T]) NextDeadline() (int64, bool) {
	if w.n == 0 {
		return 0, false
	}
	if w.due != nil || w.firing != nil {
		if w.now == math.MaxInt64 {
			return w.now, true
		}
		return w.now + 1, true
	}
	best := int64(math.MaxInt64)
	s := w.shift
	for l := range w.levels {
		lv, cur := &w.levels[l], w.now>>s
		// Bit k of occ stands for the bucket k after the one holding now.
		occ := bits.RotateLeft64(lv.occupied, -int(uint64(cur)&slotMask))
		if l > 0 {
			occ &^= 1 // the bucket holding now is empty above level 0
		}
		for ; occ != 0; occ &= occ - 1 {
			k := bits.TrailingZeros64(occ)
			if lv.heads[(uint64(cur)+uint64(k))&slotMask] != nil {
				b := (cur + int64(k)) << s
				if k == 0 {
					b = w.curMin
				}
				best = min(best, b)
				break
			}
		}
		s += slotBits
		// Every node above this level (overflow included) is in a bucket of
		// the next level after the one holding now.
		if best>>s <= w.now>>s {
			return best, true
		}
	}
	if w.overflow != nil {
		best = min(best, w.overflowMin)
	}
	return best, true
}

// mustVerify panics if an invariant does not hold.
func (w *Wheel[T]) mustVerify() {
	if err := w.verify(); err != nil {
		panic(err)
	}
}

// verify checks every invariant documented on Wheel's fields and returns the
// first violation. It is O(n): for tests and debugging.
func (w *Wheel[T]) verify() error {
	count := 0
	walk := func(name string, head **Node[T], ok func(d int64) error) error {
		prev := head
		for n := *head; n != nil; n = n.next {
			if n.pprev != prev {
				return fmt.Errorf("ttl: %s: node at %d has a bad back pointer", name, n.deadline)
			}
			if err := ok(n.deadline); err != nil {
				return fmt.Errorf("ttl: %s: %w", name, err)
			}
			count++
			if count > w.n {
				return fmt.Errorf("ttl: %s: more nodes than Len %d (or a cycle)", name, w.n)
			}
			prev = &n.next
		}
		return nil
	}
	now := w.now
	s := w.shift
	for l := range w.levels {
		cur := now >> s
		for i := range w.levels[l].heads {
			if w.levels[l].heads[i] != nil && w.levels[l].occupied&(1<<i) == 0 {
				return fmt.Errorf("ttl: level %d slot %d is not marked occupied", l, i)
			}
			err := walk(fmt.Sprintf("level %d slot %d", l, i), &w.levels[l].heads[i], func(d int64) error {
				b := d >> s
				switch {
				case d <= now:
					return fmt.Errorf("deadline %d not after now %d", d, now)
				case uint64(b)&slotMask != uint64(i):
					return fmt.Errorf("deadline %d belongs in slot %d", d, uint64(b)&slotMask)
				case uint64(b)-uint64(cur) >= slots:
					return fmt.Errorf("deadline %d is 64 or more buckets past now %d", d, now)
				case l > 0 && b == cur:
					return fmt.Errorf("deadline %d in the bucket holding now %d", d, now)
				case l == 0 && b == cur && (d < w.curMin || w.curMin <= now):
					return fmt.Errorf("deadline %d, curMin %d, now %d: want now < curMin <= deadline", d, w.curMin, now)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		s += slotBits
	}
	top := s - slotBits
	if err := walk("overflow", &w.overflow, func(d int64) error {
		switch {
		case d <= now || uint64(d>>top)-uint64(now>>top) < slots:
			return fmt.Errorf("deadline %d fits the levels at now %d", d, now)
		case d < w.overflowMin:
			return fmt.Errorf("deadline %d before overflowMin %d", d, w.overflowMin)
		}
		return nil
	}); err != nil {
		return err
	}
	if w.overflow != nil && w.overflowMin <= now {
		return fmt.Errorf("ttl: overflowMin %d not after now %d", w.overflowMin, now)
	}
	if err := walk("due", &w.due, func(d int64) error {
		if d > now {
			return fmt.Errorf("deadline %d after now %d", d, now)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := walk("firing", &w.firing, func(d int64) error {
		if d > now {
			return fmt.Errorf("deadline %d after now %d", d, now)
		}
		return nil
	}); err != nil {
		return err
	}
	if count != w.n {
		return fmt.Errorf("ttl: %d nodes linked, Len %d", count, w.n)
	}
	return nil
}
