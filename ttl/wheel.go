// Package ttl implements a hierarchical timer wheel for expiring entries.
//
// PLACEHOLDER IMPLEMENTATION: this file fixes the API the engine builds on; the
// real hierarchical wheel replaces the naive list below.
package ttl

import "time"

// Node is one entry a Wheel can hold. Its zero value is unscheduled.
// Value is the caller's payload; the other fields belong to the wheel and are
// guarded by whatever serializes calls to the Wheel holding the node.
type Node[T any] struct {
	Value T

	deadline   int64
	prev, next *Node[T]
}

// Scheduled reports whether n is in a wheel.
func (n *Node[T]) Scheduled() bool { return n.next != nil }

// Deadline returns the deadline n was scheduled at, in nanoseconds, and
// whether it is scheduled.
func (n *Node[T]) Deadline() (int64, bool) { return n.deadline, n.next != nil }

// Wheel schedules nodes at deadlines (int64 nanoseconds on the caller's time
// line, e.g. Unix nanoseconds) and fires each one exactly once when Advance
// reaches a time at or after its deadline. A Wheel is not safe for concurrent
// use: callers serialize access (the engine holds a shard lock).
type Wheel[T any] struct {
	head Node[T]
	n    int
	now  int64
}

// New returns an empty wheel whose time starts at now, with the given tick
// (resolution); tick <= 0 selects the default of about one millisecond.
func New[T any](now int64, tick time.Duration) *Wheel[T] {
	w := &Wheel[T]{now: now}
	w.head.next, w.head.prev = &w.head, &w.head
	return w
}

// Schedule files n to fire at deadline, moving it if it is already scheduled.
func (w *Wheel[T]) Schedule(n *Node[T], deadline int64) {
	w.Cancel(n)
	n.deadline = deadline
	n.prev, n.next = w.head.prev, &w.head
	w.head.prev.next = n
	w.head.prev = n
	w.n++
}

// Cancel removes n from the wheel; it does nothing if n is not scheduled.
func (w *Wheel[T]) Cancel(n *Node[T]) {
	if n.next == nil {
		return
	}
	n.prev.next, n.next.prev = n.next, n.prev
	n.prev, n.next = nil, nil
	w.n--
}

// Advance moves the wheel's time to now and calls fire for every node whose
// deadline is <= now, after unlinking it. fire may Schedule or Cancel nodes.
// A now earlier than the wheel's time is treated as the wheel's time.
func (w *Wheel[T]) Advance(now int64, fire func(*Node[T])) {
	if now > w.now {
		w.now = now
	}
	for n := w.head.next; n != &w.head; {
		next := n.next
		if n.deadline <= w.now {
			w.Cancel(n)
			fire(n)
		}
		n = next
	}
}

// NextDeadline returns a time at or before the earliest scheduled deadline,
// and false when the wheel is empty. After Advance(t), NextDeadline is > t,
// so a reaper that sleeps until it never spins.
func (w *Wheel[T]) NextDeadline() (int64, bool) {
	if w.n == 0 {
		return 0, false
	}
	min := int64(1<<63 - 1)
	for n := w.head.next; n != &w.head; n = n.next {
		if n.deadline < min {
			min = n.deadline
		}
	}
	if min <= w.now {
		min = w.now + 1
	}
	return min, true
}

// Len returns the number of scheduled nodes.
func (w *Wheel[T]) Len() int { return w.n }
