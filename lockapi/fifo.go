package lockapi

import (
	"hash/maphash"
	"sync"
)

// waiter is one Obtain call in a FIFO queue. Waiters of a key form a
// circular doubly linked list whose head is the map entry of the key; the
// list is guarded by the stripe's mutex.
type waiter struct {
	next, prev *waiter       // guarded by the stripe's mu
	turn       chan struct{} // closed when the waiter becomes head; nil if it was head on arrival
}

const queueStripes = 64

// waitQueues maps keys to their FIFO queues, striped to spread contention.
type waitQueues struct {
	seed    maphash.Seed
	stripes [queueStripes]queueStripe
}

type queueStripe struct {
	mu    sync.Mutex
	heads map[string]*waiter // guarded by mu; absent when the queue is empty
	_     [40]byte           // keep stripes on separate cache lines
}

func (q *waitQueues) init() { q.seed = maphash.MakeSeed() }

func (q *waitQueues) stripe(key string) *queueStripe {
	return &q.stripes[maphash.String(q.seed, key)%queueStripes]
}

// enqueue appends w to key's queue. It returns nil if w is the head (it may
// attempt at once), or the channel closed when w becomes head.
func (q *waitQueues) enqueue(w *waiter, key string) <-chan struct{} {
	s := q.stripe(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.heads[key]
	if h == nil {
		if s.heads == nil {
			s.heads = make(map[string]*waiter)
		}
		w.next, w.prev = w, w
		s.heads[key] = w
		return nil
	}
	w.turn = make(chan struct{})
	tail := h.prev
	tail.next, w.prev = w, tail
	w.next, h.prev = h, w
	return w.turn
}

// remove takes w out of key's queue; if w was the head, the next waiter
// becomes head and is woken.
func (q *waitQueues) remove(w *waiter, key string) {
	s := q.stripe(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if w.next == w {
		delete(s.heads, key)
	} else {
		w.prev.next, w.next.prev = w.next, w.prev
		if s.heads[key] == w {
			s.heads[key] = w.next
			close(w.next.turn)
		}
	}
	w.next, w.prev = nil, nil
}
