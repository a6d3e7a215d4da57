package shard

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestLockExclusion: writers that contend for one shard, taking it by Lock
// and by Upgrade, never hold it together (a counter they increment without
// atomics loses no update, and the race detector sees every section
// ordered), and none sleeps forever: the test ends. The writers alternate
// bursts together with stretches where one runs alone for longer than it
// takes a shard to switch back to plain unlocks, so both switches happen
// many times.
func TestLockExclusion(t *testing.T) {
	var s Table
	s.init(1)
	const writers, bursts, perBurst = 4, 20, 500
	count := 0 // guarded by s's lock
	section := func() {
		count++
		pause(200) // long enough that the writers meet
	}
	contended := 0
	for range bursts {
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perBurst {
					if v, ok := s.ReadVersion(); ok && (w+i)%2 == 0 && s.Upgrade(v) {
						section()
						s.Unlock()
						continue
					}
					s.Lock()
					section()
					s.Unlock()
				}
			}()
		}
		wg.Wait()
		if s.state.Load()&contendedBit != 0 {
			contended++
		}
		for range calmAfter + 1 { // alone: the shard calms down
			s.Lock()
			section()
			s.Unlock()
		}
		if s.state.Load() != 0 {
			t.Fatalf("a shard unlocked %d times in a row without a sleeper is still contended", calmAfter+1)
		}
	}
	if want := bursts * (writers*perBurst + calmAfter + 1); count != want {
		t.Fatalf("count = %d, want %d: two writers held the shard at once", count, want)
	}
	if contended == 0 && runtime.GOMAXPROCS(0) > 1 {
		t.Fatalf("no burst of %d writers left the shard contended: the sleeping path went untested", writers)
	}
	if n := s.state.Load() / oneSleeper; n != 0 {
		t.Fatalf("%d sleepers counted after every writer returned, want 0", n)
	}
}

// TestLockCalmRace: the unlock that clears a shard's contended mark races
// with writers arriving at that moment. When clearing the mark and counting
// a sleeper were two separate steps, one unlock could clear the mark after
// two writers had counted themselves, wake one of them, and leave the other
// asleep behind plain unlocks that wake no one: the shard free and a writer
// asleep for good. Each round here presets a held shard to the unlock that
// clears the mark, and writers arrive as it unlocks. A round that does not
// finish is that missed wake-up; the watchdog allows ten seconds, where a
// round takes microseconds.
func TestLockCalmRace(t *testing.T) {
	const writers, rounds = 4, 20000
	var s Table
	s.init(1)
	var round, done atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 1))
			for seen := int64(0); seen < rounds; {
				g := round.Load()
				if g == seen {
					runtime.Gosched()
					continue
				}
				seen = g
				pause(1 + r.IntN(400))
				s.Lock()
				s.Unlock()
				done.Add(1)
			}
		}()
	}
	r := rand.New(rand.NewPCG(7, 7))
	for i := range rounds {
		done.Store(0)
		s.Lock()
		s.state.Store(s.state.Load() | contendedBit)
		s.calm = calmAfter - 1
		round.Add(1)
		pause(1 + r.IntN(600))
		s.Unlock()
		start := time.Now()
		for done.Load() != writers {
			if time.Since(start) > 10*time.Second {
				t.Fatalf("round %d: %d of %d writers still waiting after 10s with the shard free (word %d, state %d): a missed wake-up",
					i, writers-done.Load(), writers, atomic.LoadUint64(&s.seq), s.state.Load())
			}
			runtime.Gosched()
		}
		if s.gate.hasPending.Load() { // a stale wake-up: every round starts alike
			s.gate.wait()
		}
	}
	wg.Wait()
}

// sleepThrough makes a writer sleep on s behind the caller's hold and then
// wakes it with the unlock: the shard is preset contended, so the writer
// counts itself and sleeps without waiting for the holder first.
func sleepThrough(t *testing.T, s *Table) {
	t.Helper()
	s.Lock()
	s.state.Or(contendedBit)
	done := make(chan struct{})
	go func() {
		s.Lock()
		s.Unlock()
		close(done)
	}()
	for s.state.Load() < oneSleeper {
		runtime.Gosched()
	}
	s.Unlock()
	<-done
}

// TestLockAcrossSynctestBubbles: a shard made inside a testing/synctest
// bubble works outside it and in another bubble (a shared fixture, a
// parallel test), contended writers sleeping and waking included; with a
// channel to sleep on, made in the first bubble, that panicked. A writer in
// a bubble that sleeps behind a holder outside it does not count as durably
// blocked, so the bubble's clock does not jump while it waits.
func TestLockAcrossSynctestBubbles(t *testing.T) {
	var s *Table
	synctest.Test(t, func(t *testing.T) {
		s = new(Table)
		s.init(1)
		sleepThrough(t, s)
	})
	sleepThrough(t, s)
	synctest.Test(t, func(t *testing.T) { sleepThrough(t, s) })

	s.Lock()
	s.state.Or(contendedBit)
	go func() {
		for s.state.Load() < oneSleeper {
			runtime.Gosched()
		}
		s.Unlock()
	}()
	synctest.Test(t, func(t *testing.T) {
		slept := make(chan struct{})
		go func() { // the clock's next stop if the bubble idles
			time.Sleep(time.Hour)
			close(slept)
		}()
		start := time.Now()
		s.Lock()
		s.Unlock()
		if d := time.Since(start); d != 0 {
			t.Errorf("a writer in a bubble, asleep behind a holder outside it, saw the bubble's clock move %v, want 0", d)
		}
		<-slept
	})
}

// queued reports how many sleepers wait on g.
func (g *gate) queued() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.queue)
}

// TestGateWakesOneInOrder: a wake-up with nobody queued stays pending for
// the next sleeper (a writer counts itself before it queues, so dropping
// it would leave that writer asleep with the shard free), a second one
// adds nothing, and each wake-up releases exactly one sleeper, the longest
// waiting first (releasing every sleeper made one of 64 writers wait
// seconds).
func TestGateWakesOneInOrder(t *testing.T) {
	var g gate // the zero gate has no wake-up pending
	g.wake()
	g.wake()
	took := make(chan struct{})
	go func() {
		g.wait() // the pending wake-up: returns at once
		close(took)
	}()
	select {
	case <-took:
	case <-time.After(10 * time.Second): // a watchdog; it takes microseconds
		t.Fatal("a sleeper after a wake-up with nobody queued still slept after 10s: the wake-up was dropped")
	}
	if g.hasPending.Load() {
		t.Fatal("two wake-ups with nobody queued left two pending, want one")
	}
	const n = 3
	woke := make(chan int, n)
	for i := range n {
		go func() {
			g.wait()
			woke <- i
		}()
		for g.queued() != i+1 {
			runtime.Gosched()
		}
	}
	for want := range n {
		g.wake()
		if got := <-woke; got != want {
			t.Fatalf("wake-up %d released sleeper %d, want %d (the longest waiting)", want, got, want)
		}
		if q := g.queued(); q != n-1-want {
			t.Fatalf("after wake-up %d, %d sleepers queued, want %d: one wake-up released more than one", want, q, n-1-want)
		}
	}
}
