package engine

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
)

// TestStepBackReaper: after the clock steps backwards, the engine's time
// stands still at the latest reading, and keys written after the step are
// still reclaimed by the reaper (and their watchers fire) once the clock
// passes their deadlines. No Reap, no lazy reads: the reaper alone.
func TestStepBackReaper(t *testing.T) {
	e, mc := newTestEngine(t)
	e.SetPX("before", "v", time.Hour)
	mc.Add(time.Minute)
	if got := e.Now(); !got.Equal(t0.Add(time.Minute)) {
		t.Fatalf("Now() = %v, want %v", got, t0.Add(time.Minute))
	}
	mc.Set(t0.Add(-time.Hour)) // an NTP step back, or a test's Set
	if got := e.Now(); !got.Equal(t0.Add(time.Minute)) {
		t.Fatalf("Now() after a step back = %v, want it held at %v", got, t0.Add(time.Minute))
	}
	// Written after the step: its deadline counts from the held time.
	if err := e.SetPX("after", "v", time.Second); err != nil {
		t.Fatal(err)
	}
	if d, _ := e.PTTL("after"); d != time.Second {
		t.Fatalf("PTTL(after) = %v, want 1s", d)
	}
	// Two seconds of clock time later the clock is still an hour behind
	// the held time: the key is alive, its TTL untouched.
	mc.Add(2 * time.Second)
	if d, ok := e.PTTL("after"); !ok || d != time.Second {
		t.Fatalf("PTTL(after) while the clock is behind = %v, %v, want 1s, true", d, ok)
	}
	ch, stop := e.Watch("after")
	defer stop()
	// The clock climbs back past the held time and the key's deadline.
	mc.Add(time.Hour + time.Minute - time.Second + 3*time.Millisecond)
	waitClosed(t, ch, "reaper after a step back")
	if n := e.Len(); n != 1 {
		t.Fatalf("Len() = %d, want 1 (only the hour-long key)", n)
	}
}

// TestStepBackNoResurrection: a key the engine has seen expire (here by a
// Now reading past its deadline) stays expired when the clock steps back
// before its deadline.
func TestStepBackNoResurrection(t *testing.T) {
	e, mc := newTestEngine(t)
	e.SetPX("lock", "a", time.Second)
	mc.Add(2 * time.Second)
	e.Now()
	mc.Set(t0)
	wantGet(t, e, "lock", "", false)
	if ok, _ := e.SetNXPX("lock", "b", time.Second); !ok {
		t.Fatal("SetNXPX(lock) after the step back = false, want true")
	}
	// The time used is the held one: the new lease ends 1s after it.
	if at, _ := e.ExpireTime("lock"); !at.Equal(t0.Add(3 * time.Second)) {
		t.Fatalf("ExpireTime(lock) = %v, want %v", at, t0.Add(3*time.Second))
	}
}

// TestDeadlineAtUnixZero: a deadline that computes to exactly Unix 0 ns is a
// deadline like any other, not "no TTL".
func TestDeadlineAtUnixZero(t *testing.T) {
	mc := clock.NewMock()
	mc.Set(time.Unix(-1, 0)) // one second before the epoch
	e := New(Options{Clock: mc})
	defer e.Close()
	if err := e.SetPX("k", "v", time.Second); err != nil { // deadline == 0
		t.Fatal(err)
	}
	if d, ok := e.PTTL("k"); !ok || d != time.Second {
		t.Fatalf("PTTL(k) = %v, %v, want 1s, true", d, ok)
	}
	mc.Add(time.Second)
	wantGet(t, e, "k", "v", true) // now == deadline: still alive
	mc.Add(time.Nanosecond)
	wantGet(t, e, "k", "", false)
	if ok, _ := e.PExpireAt("absent", time.Unix(0, 0)); ok {
		t.Fatal("PExpireAt(absent, Unix 0) = true, want false")
	}
}

// TestSharedMockHammer drives the engine from several goroutines while
// another advances the same benbjohnson Mock in a loop: the shape that hung
// when the engine read the Mock under a shard lock and reset its timers (the
// Mock fires timers under its own mutex). The bound only turns a hang into
// a failure.
func TestSharedMockHammer(t *testing.T) {
	e, mc := newTestEngine(t)
	const workers, rounds = 4, 2000
	stopAdd := make(chan struct{})
	var adder sync.WaitGroup
	adder.Add(1)
	go func() {
		defer adder.Done()
		for {
			select {
			case <-stopAdd:
				return
			default:
				mc.Add(time.Millisecond)
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				k := "k" + strconv.Itoa((w*rounds+i)%8)
				e.SetNXPX(k, "v", time.Duration(1+i%5)*time.Millisecond)
				e.Get(k)
				ch, stop := e.Watch(k)
				select {
				case <-ch:
				default:
				}
				stop()
				e.Reap()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("engine and a concurrently advanced Mock deadlocked")
	}
	close(stopAdd)
	adder.Wait()
}
