package shard

import (
	"sync"
	"testing"
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
		if s.contended.Load() != 0 {
			contended++
		}
		for range calmAfter + 1 { // alone: the shard calms down
			s.Lock()
			section()
			s.Unlock()
		}
		if s.contended.Load() != 0 {
			t.Fatalf("a shard unlocked %d times in a row without a sleeper is still contended", calmAfter+1)
		}
	}
	if want := bursts * (writers*perBurst + calmAfter + 1); count != want {
		t.Fatalf("count = %d, want %d: two writers held the shard at once", count, want)
	}
	if contended == 0 {
		t.Fatalf("no burst of %d writers left the shard contended: the sleeping path went untested", writers)
	}
	if n := s.waiters.Load(); n != 0 {
		t.Fatalf("waiters = %d after every writer returned, want 0", n)
	}
}
