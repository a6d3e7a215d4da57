package shard

// This file holds the shard's writer lock and what contended writers do.
//
// The lock is the sequence word (see the package doc): Lock takes it with a
// compare-and-swap from even to odd, Unlock makes it even again. A writer
// that finds it held spins briefly (a few loads tens of nanoseconds apart)
// and then sleeps until an unlock wakes it. Sleeping is the point: when two
// cores write keys of the same shards, each operation otherwise pulls the
// shard's lock word, index group and entry from the other core's cache,
// several times the cost of the operation itself (two goroutines on 1,024
// keys ran at under half of one goroutine's total throughput). With the
// loser asleep, the winner runs with its lines local, and the pair runs
// about as fast as one goroutine, as a single mutex-guarded map does.
//
// An unlock must wake a sleeper, and on x86 Unlock is a plain store (see
// unlock_amd64.go), after which a read of the sleeper count could be served
// before the store is visible: the unlocker would see no sleeper while the
// sleeper saw the lock still held. So a shard where a writer is about to
// sleep is marked contended, and its unlocks become an atomic add, which
// orders the read after the store. The mark and the count of sleepers are
// one word (state), so that a writer counts itself only while the mark is
// set, and the mark is cleared (after calmAfter unlocks in a row found no
// sleeper) only while no one is counted: a cleared mark never leaves a
// sleeper behind. The writer that sets the mark does not sleep until the
// holder it saw has unlocked, since that holder may have read the word
// before the mark; every later holder locked after the mark and reads it.
// A writer that finds the mark set by another sleeps at once: if the holder
// it sleeps behind unlocks plainly, the writer that set the mark is still
// waiting for that very unlock, and takes the lock and unlocks atomically
// after it. Elsewhere than x86 every unlock is atomic, and Go's atomics are
// sequentially consistent, so the same argument holds.

import (
	"runtime"
	"sync"
	"sync/atomic"
)

const (
	// contendedBit in a shard's state marks it contended; each writer
	// counted as asleep (or about to sleep) adds oneSleeper.
	contendedBit = 1
	oneSleeper   = 2
	// spinRounds is how many growing pauses a contended Lock spins for
	// before it sleeps (about 60 cheap iterations in all).
	spinRounds = 4
	// calmAfter is how many unlocks in a row without a sleeper return a
	// contended shard to plain unlocks.
	calmAfter = 1 << 16
)

// Lock locks the shard for writing. A reader's Peek fails while it is held.
func (s *Table) Lock() {
	// An odd v (held) expects v-1 and so fails: no branch on the parity.
	if v := atomic.LoadUint64(&s.seq); !atomic.CompareAndSwapUint64(&s.seq, v&^1, v|1) {
		s.lockSlow()
	}
}

// tryLock takes the lock if it is free.
func (s *Table) tryLock() bool {
	v := atomic.LoadUint64(&s.seq)
	return v&1 == 0 && atomic.CompareAndSwapUint64(&s.seq, v, v+1)
}

// lockSlow waits for the shard: it spins briefly, reading the word (which
// shares its cache line instead of stealing it) between growing pauses,
// then sleeps until an unlock wakes it, and tries again.
func (s *Table) lockSlow() {
	for i := range spinRounds {
		pause(4 << i)
		if s.tryLock() {
			return
		}
	}
	for {
		if s.tryLock() {
			return
		}
		st := s.state.Load()
		if st&contendedBit == 0 {
			s.markContended()
			continue
		}
		// Count ourselves, only while the mark is set, before the last
		// look at the lock: an unlock after that look reads the count.
		if !s.state.CompareAndSwap(st, st+oneSleeper) {
			continue
		}
		if s.tryLock() {
			s.state.Add(-oneSleeper)
			return
		}
		s.gate.wait()
		s.state.Add(-oneSleeper)
	}
}

// markContended switches the shard's unlocks to ones that wake sleepers,
// then waits, without sleeping, until the holder seen after the switch (if
// any) has unlocked: it may have read the switch before it was made.
// Every later holder took the lock after the switch and reads it.
func (s *Table) markContended() {
	s.state.Or(contendedBit) // a locked instruction: ordered before the load below
	v := atomic.LoadUint64(&s.seq)
	if v&1 == 0 {
		return
	}
	for i := 0; atomic.LoadUint64(&s.seq) == v; i++ {
		if i < 16 {
			pause(64)
		} else {
			runtime.Gosched()
		}
	}
}

// unlockContended unlocks a contended shard: an atomic add, so that the
// sleeper count is read after the unlock is visible, then a wake-up if
// anyone sleeps. After calmAfter unlocks in a row without a sleeper, it
// clears the mark, but only if no writer has counted itself meanwhile.
func (s *Table) unlockContended() {
	if s.state.Load() == contendedBit {
		s.calm++
		if s.calm >= calmAfter && s.state.CompareAndSwap(contendedBit, 0) {
			s.calm = 0
		}
	} else {
		s.calm = 0
	}
	atomic.AddUint64(&s.seq, 1)
	if s.state.Load() >= oneSleeper {
		s.gate.wake()
	}
}

// gate is where contended writers sleep: a semaphore that holds at most one
// wake-up, as a buffered channel of one would, and wakes one sleeper per
// wake-up, the longest asleep first. It is built from mutexes because of
// what the alternatives do:
//   - A channel belongs to the testing/synctest bubble that made it, and
//     any use from outside is a fatal error: an Engine made in one test's
//     bubble and then written to elsewhere (a shared fixture, a later test)
//     would crash the test binary under contention. sync.Cond's wake-ups
//     have the same rule.
//   - A goroutine waiting for a sync.Mutex spins first while another runs,
//     the very thing sleeping avoids: two goroutines writing one shard ran
//     at under half the speed.
//   - A goroutine waiting to read-lock a sync.RWMutex sleeps at once, but
//     one unlock lets every waiter through: with tens of writers on a hot
//     shard (a server's connections) they all woke for every wake-up, and
//     one writer waited seconds.
//
// So each sleeper waits on a sync.RWMutex of its own, write-locked before
// it queues, by read-locking it; a wake-up takes the first sleeper off the
// queue and unlocks its mutex, which wakes that one goroutine. None of this
// belongs to a bubble, and a waiting reader is not "durably blocked" to
// synctest, which is right: it waits for a holder that runs, perhaps
// outside the bubble, so the bubble's clock must not jump meanwhile.
type gate struct {
	mu    sync.Mutex
	queue []*sleeper // guarded by mu: the sleepers, in the order they came
	// hasPending is set when a wake-up found no sleeper queued; it is
	// written under mu and read without it by wake: a wake-up while one is
	// pending (and so nobody queued) changes nothing, and unlocks of a busy
	// shard wake often.
	hasPending atomic.Bool
}

// sleeper is one waiting writer's wake-up: its mutex is write-locked while
// it waits, and the wake-up unlocks it.
type sleeper struct{ rw sync.RWMutex }

// sleepers recycles sleepers: a writer holds one only while it waits.
var sleepers = sync.Pool{New: func() any { return new(sleeper) }}

// wait takes the pending wake-up, or sleeps until a wake-up picks it.
func (g *gate) wait() {
	g.mu.Lock()
	if g.hasPending.Load() {
		g.hasPending.Store(false)
		g.mu.Unlock()
		return
	}
	w := sleepers.Get().(*sleeper)
	w.rw.Lock()
	g.queue = append(g.queue, w)
	g.mu.Unlock()
	w.rw.RLock() // until wake unlocks it
	w.rw.RUnlock()
	sleepers.Put(w)
}

// wake wakes the longest sleeper, or leaves a wake-up pending if none is
// queued (one already pending serves as well: whoever counted itself and
// has not yet queued will take it).
func (g *gate) wake() {
	if g.hasPending.Load() {
		return
	}
	g.mu.Lock()
	if len(g.queue) == 0 {
		g.hasPending.Store(true)
		g.mu.Unlock()
		return
	}
	w := g.queue[0]
	n := copy(g.queue, g.queue[1:]) // sleepers are few: shifting beats a ring
	g.queue[n] = nil
	g.queue = g.queue[:n]
	g.mu.Unlock()
	w.rw.Unlock()
}

// pauseSink keeps pause's loop from being optimized away.
var pauseSink uint32

// pause spins for about n cheap iterations without touching shared memory.
func pause(n int) {
	x := uint32(n)
	for range n {
		x = x*1664525 + 1013904223
	}
	if x == 0 {
		pauseSink = x
	}
}
