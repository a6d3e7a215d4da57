package engine

import (
	"testing"
	"testing/synctest"
	"time"
)

// TestRealClockReaper runs the engine on its real (fast monotonic) clock
// inside a synctest bubble, where time is virtual: the reaper must reclaim a
// key within two ticks of its deadline, sleep while idle, and exit on Close
// (synctest.Test fails if a goroutine of the bubble is left running).
func TestRealClockReaper(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := New(Options{})
		defer e.Close()
		if err := e.SetPX("k", "v", 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		ch, stop := e.Watch("k")
		defer stop()
		time.Sleep(100 * time.Millisecond) // virtual time: at the deadline
		synctest.Wait()
		if closed(ch) {
			t.Fatal("key reclaimed at its deadline, want alive while now <= D")
		}
		time.Sleep(2 * time.Millisecond) // two ticks (about 1 ms each)
		synctest.Wait()
		if !closed(ch) {
			t.Fatal("key not reclaimed within two ticks of its deadline")
		}
		if n := e.Len(); n != 0 {
			t.Fatalf("Len() = %d, want 0", n)
		}
		// Idle: an hour with nothing scheduled wakes the reaper not once.
		before := e.wakes.Load()
		time.Sleep(time.Hour)
		synctest.Wait()
		if woke := e.wakes.Load() - before; woke != 0 {
			t.Fatalf("idle reaper woke %d times in an hour, want 0", woke)
		}
		// A key an hour ahead wakes it about once, not every tick.
		e.SetPX("later", "v", time.Hour)
		synctest.Wait()
		before = e.wakes.Load()
		time.Sleep(time.Hour + 2*time.Millisecond)
		synctest.Wait()
		if _, ok := e.Get("later"); ok {
			t.Fatal("key alive an hour past its TTL")
		}
		if n := e.Len(); n != 0 {
			t.Fatalf("Len() = %d, want 0 (reaper reclaims)", n)
		}
		// The hierarchical wheel may wake the reaper once per level it
		// cascades through on the way; a ticking reaper would wake 3.6M times.
		woke := e.wakes.Load() - before
		t.Logf("reaper woke %d times for one key an hour ahead", woke)
		if woke > 16 {
			t.Fatalf("reaper woke %d times for one key an hour ahead, want <= 16", woke)
		}
	})
}
