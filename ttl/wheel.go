// Package ttl implements a hierarchical timer wheel: it files handles (small
// integers naming the caller's entries) by deadline and hands back the ones
// that are due as its time advances.
//
// # Model
//
// Time is an int64 count of nanoseconds on the caller's time line (the engine
// uses Unix nanoseconds). The wheel has a tick of 2^k ns (default 2^20 ns,
// about 1 ms) and several levels of 64 buckets each. A bucket of level L spans
// tick·64^L, so a deadline's bucket number on level L is deadline >> (k+6L)
// and its slot is that number's low 6 bits: a shift and a mask, the classic
// hierarchical timing wheel. With the default tick the levels are:
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
// Schedule files a handle on the lowest level whose 64 buckets, counted from
// the bucket holding the wheel's time, include the deadline's bucket. Buckets
// are doubly-linked lists threaded through the wheel's per-handle links (16
// bytes a handle, in chunks allocated as handles appear), linked by handle
// rather than by pointer, so the caller's entries may live in any store that
// names them by number. Schedule, Cancel and rescheduling are O(1) and, once
// a handle's chunk exists, allocate nothing. Deadlines at or before the
// wheel's time go on a due list and fire at the next Advance.
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

	linkBits  = 6
	linkChunk = 1 << linkBits // links per chunk: 1 KiB

	none        = -1            // end of a list
	unscheduled = math.MinInt32 // prev of a handle that is in no list
)

// Handle names one of the caller's entries: a number from 0 up, dense
// enough that the wheel's per-handle links (16 bytes each, allocated in
// chunks of 64 as handles appear) stay small.
type Handle = int32

// link is the wheel's record of one handle. prev is the previous handle in
// its list, or -(list+1) when the handle heads list number list, or
// unscheduled.
type link struct {
	deadline int64
	next     Handle
	prev     int32
}

// Wheel schedules handles at deadlines (int64 nanoseconds on the caller's
// time line, e.g. Unix nanoseconds) and fires each one exactly once when
// Advance reaches a time at or after its deadline; the package doc describes
// the model. A Wheel is not safe for concurrent use: callers serialize
// access (the engine holds a shard lock); NextDeadline, Len, Now and Tick
// only read, so they may run concurrently with one another. Create wheels
// with New; the zero Wheel is not ready for use, and a Wheel must not be
// copied.
type Wheel struct {
	now   int64 // the wheel's time: the latest Advance, or New's now
	shift uint  // log2 of the tick in nanoseconds

	// heads holds every list: heads[l*64+i] heads the bucket whose number
	// on level l, that is deadline >> (shift+6l), is ≡ i mod 64, then the
	// overflow, due and firing lists. A handle on level 0 has bucket number
	// in [now>>shift, now>>shift + 64) and deadline > now; a handle on level
	// l > 0 has bucket number in (now>>s, now>>s + 64) for that level's
	// shift s, so the bucket holding now is empty above level 0.
	heads   []Handle
	nlevels int
	// occupied[l] has bit i set if bucket i of level l may be non-empty: set
	// when a handle is filed there, cleared when Advance empties the
	// bucket, left set by Cancel (which does not know the bucket). It
	// spares NextDeadline a scan.
	occupied []uint64
	// curMin is at or before every deadline in the level-0 bucket holding
	// now, and after now; it is exact unless a handle there was cancelled.
	// It is meaningless while that bucket is empty.
	curMin      int64
	overflowMin int64 // at or before every deadline in overflow, after now

	links []*[linkChunk]link // chunks allocated one by one: no growth slack
	n     int                // scheduled handles, in every list

	advancing bool // a fire callback is running
}

// The lists after the level buckets.
func (w *Wheel) overflowList() int { return w.nlevels * slots }
func (w *Wheel) dueList() int      { return w.nlevels*slots + 1 }
func (w *Wheel) firingList() int   { return w.nlevels*slots + 2 }

// New returns an empty wheel whose time starts at now, with a tick
// (resolution) of tick rounded down to a power of two nanoseconds, at most
// 2^50 ns; tick <= 0 selects the default of 2^20 ns, about one millisecond.
func New(now int64, tick time.Duration) *Wheel {
	shift := uint(defaultShift)
	if tick > 0 {
		shift = uint(bits.Len64(uint64(tick)) - 1)
	}
	shift = min(shift, maxShift)
	nlevels := int((horizonShift - shift + slotBits - 1) / slotBits)
	w := &Wheel{
		now:      now,
		shift:    shift,
		nlevels:  nlevels,
		heads:    make([]Handle, nlevels*slots+3),
		occupied: make([]uint64, nlevels),
	}
	for i := range w.heads {
		w.heads[i] = none
	}
	return w
}

// Tick returns the wheel's resolution, the span of a level-0 bucket.
func (w *Wheel) Tick() time.Duration { return time.Duration(1) << w.shift }

// Now returns the wheel's time: the latest time passed to Advance, or New's
// now if that is later.
func (w *Wheel) Now() int64 { return w.now }

// Len returns the number of scheduled handles, including due handles
// Advance has not fired yet.
func (w *Wheel) Len() int { return w.n }

// link returns h's link, which must exist.
func (w *Wheel) link(h Handle) *link { return &w.links[h>>linkBits][h&(linkChunk-1)] }

// Scheduled reports whether h is scheduled: filed and not yet fired or
// cancelled.
func (w *Wheel) Scheduled(h Handle) bool {
	return h >= 0 && int(h>>linkBits) < len(w.links) && w.link(h).prev != unscheduled
}

// Deadline returns the deadline h was last scheduled at and whether it is
// still scheduled.
func (w *Wheel) Deadline(h Handle) (int64, bool) {
	if !w.Scheduled(h) {
		return 0, false
	}
	return w.link(h).deadline, true
}

// grow makes links for handles up to h.
func (w *Wheel) grow(h Handle) {
	for int(h>>linkBits) >= len(w.links) {
		c := new([linkChunk]link)
		for i := range c {
			c[i].prev = unscheduled
		}
		w.links = append(w.links, c)
	}
}

// push files h, which must be unlinked, at the front of list.
func (w *Wheel) push(list int, h Handle) {
	l := w.link(h)
	l.next = w.heads[list]
	if l.next != none {
		w.link(l.next).prev = int32(h)
	}
	l.prev = int32(-(list + 1))
	w.heads[list] = h
}

// unlink takes h, which must be linked, out of its list.
func (w *Wheel) unlink(h Handle) {
	l := w.link(h)
	if l.prev >= 0 {
		w.link(Handle(l.prev)).next = l.next
	} else {
		w.heads[-l.prev-1] = l.next
	}
	if l.next != none {
		w.link(l.next).prev = l.prev
	}
	l.next, l.prev = none, unscheduled
}

// Schedule files h to fire at deadline, moving it if it is already
// scheduled. It is O(1) and allocates nothing unless h is beyond every
// handle seen so far: then it allocates the 1 KiB chunks of links up to h's
// (and, now and then, a larger list of chunks), amortized O(1) for handles
// handed out in order as a shard's are. A deadline at or before
// the wheel's time fires at the next Advance (if Schedule is called from a
// fire callback, the Advance after the current one). h must be >= 0.
func (w *Wheel) Schedule(h Handle, deadline int64) {
	if int(h>>linkBits) >= len(w.links) {
		w.grow(h)
	}
	l := w.link(h)
	if l.prev != unscheduled {
		w.unlink(h)
	} else {
		w.n++
	}
	l.deadline = deadline
	w.place(h)
	if verifyWheel {
		w.mustVerify()
	}
}

// Cancel removes h from the wheel, so it will not fire; it does nothing if
// h is not scheduled. It is O(1).
func (w *Wheel) Cancel(h Handle) {
	if !w.Scheduled(h) {
		return
	}
	w.unlink(h)
	w.n--
	if verifyWheel {
		w.mustVerify()
	}
}

// place files the unlinked handle h by its deadline relative to the
// wheel's time.
func (w *Wheel) place(h Handle) {
	d := w.link(h).deadline
	if d <= w.now {
		w.push(w.dueList(), h)
		return
	}
	s := w.shift
	for l := range w.nlevels {
		// d > now, so the unsigned difference of bucket numbers is exact
		// even where the signed one would overflow.
		b, cur := d>>s, w.now>>s
		if uint64(b)-uint64(cur) < slots {
			i := int(uint64(b) & slotMask)
			w.occupied[l] |= 1 << i
			list := l*slots + i
			if l == 0 && b == cur && (w.heads[list] == none || d < w.curMin) {
				w.curMin = d
			}
			w.push(list, h)
			return
		}
		s += slotBits
	}
	if w.heads[w.overflowList()] == none || d < w.overflowMin {
		w.overflowMin = d
	}
	w.push(w.overflowList(), h)
}

// Advance moves the wheel's time to now and calls fire (which must not be
// nil) once for every handle whose deadline is at or before now, after
// unlinking it. Handles fire in no particular order. fire may Schedule or
// Cancel any handle, including the fired one; a handle cancelled before its
// turn does not fire, and one scheduled at or before now fires at the next
// Advance. fire must not call Advance (that panics). A now earlier than the
// wheel's time is treated as the wheel's time. Advance costs O(levels +
// occupied buckets reached + handles fired or moved down a level), however
// far time jumps; it allocates nothing.
func (w *Wheel) Advance(now int64, fire func(Handle)) {
	if w.advancing {
		panic("ttl: Advance called from a fire callback")
	}
	old := w.now
	t := max(now, old)
	w.now = t
	// Handles scheduled at or before the old time are due. (firing is
	// empty unless a fire callback panicked; its handles are due too.)
	for due := w.dueList(); w.heads[due] != none; {
		h := w.heads[due]
		w.unlink(h)
		w.push(w.firingList(), h)
	}
	w.collect(old, t)
	if w.heads[w.firingList()] != none {
		w.fireAll(fire)
	}
	if verifyWheel {
		w.mustVerify()
	}
}

// collect moves every handle with a deadline at or before t to firing and
// re-files every other handle in a bucket that time has reached, given that
// the wheel's time moved from old to t.
func (w *Wheel) collect(old, t int64) {
	// Lower levels first: a handle moved down from level l lands on a level
	// already swept, so it is filed once, relative to t.
	s := w.shift
	for l := range w.nlevels {
		from, to := old>>s, t>>s
		if l > 0 {
			if from == to {
				break // and every higher level is unchanged too
			}
			from++ // the bucket holding old is empty above level 0
		}
		// Visiting a slot covers every bucket number ≡ it mod 64, so 64
		// visits cover any jump; empty slots are skipped by the bitmap.
		visit := ^uint64(0)
		if n := uint64(to) - uint64(from) + 1; n < slots {
			visit = bits.RotateLeft64(1<<n-1, int(uint64(from)&slotMask))
		}
		visit &= w.occupied[l]
		w.occupied[l] &^= visit // first: sweep may refill the current bucket
		for ; visit != 0; visit &= visit - 1 {
			w.sweep(l*slots+bits.TrailingZeros64(visit), t)
		}
		s += slotBits
	}
	if w.heads[w.overflowList()] != none {
		top := w.shift + slotBits*uint(w.nlevels-1)
		if w.overflowMin <= t || uint64(w.overflowMin>>top)-uint64(t>>top) < slots {
			w.sweep(w.overflowList(), t)
		}
	}
}

// sweep empties list, moving due handles to firing and re-filing the others
// relative to the wheel's time t.
func (w *Wheel) sweep(list int, t int64) {
	h := w.heads[list]
	w.heads[list] = none
	for h != none {
		l := w.link(h)
		next := l.next
		l.next, l.prev = none, unscheduled
		if l.deadline <= t {
			w.push(w.firingList(), h)
		} else {
			w.place(h) // may push onto list again: the detached rest is safe
		}
		h = next
	}
}

// fireAll unlinks and fires the handles on firing one at a time, so a
// callback can still cancel or reschedule the ones after it.
func (w *Wheel) fireAll(fire func(Handle)) {
	w.advancing = true
	defer func() { w.advancing = false }()
	for firing := w.firingList(); w.heads[firing] != none; {
		h := w.heads[firing]
		w.unlink(h)
		w.n--
		fire(h)
	}
}

// NextDeadline returns a time at or before the earliest scheduled deadline
// and after the wheel's time, and false when the wheel is empty. It is exact
// for the level-0 bucket holding the wheel's time, within one tick for other
// level-0 buckets, and the start of the first occupied bucket on higher
// levels; an Advance to that time moves the handles there down a level, so
// NextDeadline then moves forward. When a handle scheduled at or before the
// wheel's time awaits the next Advance, no such time exists and
// NextDeadline returns the wheel's time plus one nanosecond, so a reaper
// sleeping until it never spins. It looks at the occupied buckets of each
// level in order, stopping at the first non-empty one, so it is O(levels)
// unless handles were cancelled from many buckets since the last Advance.
func (w *Wheel) NextDeadline() (int64, bool) {
	if w.n == 0 {
		return 0, false
	}
	if w.heads[w.dueList()] != none || w.heads[w.firingList()] != none {
		if w.now == math.MaxInt64 {
			return w.now, true
		}
		return w.now + 1, true
	}
	best := int64(math.MaxInt64)
	s := w.shift
	for l := range w.nlevels {
		cur := w.now >> s
		// Bit k of occ stands for the bucket k after the one holding now.
		occ := bits.RotateLeft64(w.occupied[l], -int(uint64(cur)&slotMask))
		if l > 0 {
			occ &^= 1 // the bucket holding now is empty above level 0
		}
		for ; occ != 0; occ &= occ - 1 {
			k := bits.TrailingZeros64(occ)
			if w.heads[l*slots+int((uint64(cur)+uint64(k))&slotMask)] != none {
				b := (cur + int64(k)) << s
				if k == 0 {
					b = w.curMin
				}
				best = min(best, b)
				break
			}
		}
		s += slotBits
		// Every handle above this level (overflow included) is in a bucket
		// of the next level after the one holding now.
		if best>>s <= w.now>>s {
			return best, true
		}
	}
	if w.heads[w.overflowList()] != none {
		best = min(best, w.overflowMin)
	}
	return best, true
}

// mustVerify panics if an invariant does not hold.
func (w *Wheel) mustVerify() {
	if err := w.verify(); err != nil {
		panic(err)
	}
}

// verify checks every invariant documented on Wheel's fields and returns the
// first violation. It is O(n): for tests and debugging.
func (w *Wheel) verify() error {
	count := 0
	walk := func(name string, list int, ok func(d int64) error) error {
		prev := int32(-(list + 1))
		for h := w.heads[list]; h != none; h = w.link(h).next {
			if h < 0 || int(h>>linkBits) >= len(w.links) {
				return fmt.Errorf("ttl: %s: link to handle %d, beyond the links", name, h)
			}
			l := w.link(h)
			if l.prev != prev {
				return fmt.Errorf("ttl: %s: handle %d at %d has a bad back link", name, h, l.deadline)
			}
			if err := ok(l.deadline); err != nil {
				return fmt.Errorf("ttl: %s: %w", name, err)
			}
			count++
			if count > w.n {
				return fmt.Errorf("ttl: %s: more handles than Len %d (or a cycle)", name, w.n)
			}
			prev = int32(h)
		}
		return nil
	}
	now := w.now
	s := w.shift
	for l := range w.nlevels {
		cur := now >> s
		for i := range slots {
			list := l*slots + i
			if w.heads[list] != none && w.occupied[l]&(1<<i) == 0 {
				return fmt.Errorf("ttl: level %d slot %d is not marked occupied", l, i)
			}
			err := walk(fmt.Sprintf("level %d slot %d", l, i), list, func(d int64) error {
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
	if err := walk("overflow", w.overflowList(), func(d int64) error {
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
	if w.heads[w.overflowList()] != none && w.overflowMin <= now {
		return fmt.Errorf("ttl: overflowMin %d not after now %d", w.overflowMin, now)
	}
	for name, list := range map[string]int{"due": w.dueList(), "firing": w.firingList()} {
		if err := walk(name, list, func(d int64) error {
			if d > now {
				return fmt.Errorf("deadline %d after now %d", d, now)
			}
			return nil
		}); err != nil {
			return err
		}
	}
	if count != w.n {
		return fmt.Errorf("ttl: %d handles linked, Len %d", count, w.n)
	}
	return nil
}
