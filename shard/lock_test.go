package shard

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
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
		select { // a stale wake-up: every round starts alike
		case <-s.sema:
		default:
		}
	}
	wg.Wait()
}
