package engine

import (
	"strconv"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestReaperReclaims(t *testing.T) {
	e, mc := newTestEngine(t)
	const n = 5000 // several reaper batches per shard
	for i := range n {
		e.SetPX("k"+strconv.Itoa(i), "v", time.Second)
	}
	e.SetPX("later", "v", time.Hour)
	e.Set("forever", "v")
	done, stop := e.Watch("k" + strconv.Itoa(n-1))
	defer stop()
	mc.Add(time.Second + 3*time.Millisecond)
	waitClosed(t, done, "mass expiry")
	// Keys are reclaimed shard by shard; Reap picks up any shard the reaper
	// has not reached yet, and the total must be exactly the expired keys.
	e.Reap()
	if got := e.Len(); got != 2 {
		t.Fatalf("Len() after mass expiry = %d, want 2", got)
	}
	later, stopLater := e.Watch("later")
	defer stopLater()
	mc.Add(time.Hour)
	waitClosed(t, later, "expiry an hour ahead")
	if _, ok := e.Get("forever"); !ok {
		t.Fatal("key without TTL reclaimed")
	}
}

// TestReaperIdle checks that the reaper sleeps until the next deadline
// instead of ticking: advancing the clock far, short of any deadline, wakes
// it at most once or twice.
func TestReaperIdle(t *testing.T) {
	e, mc := newTestEngine(t)
	e.Set("a", "v")
	e.SetPX("b", "v", time.Hour)
	ch, stop := e.Watch("b")
	defer stop()
	before := e.wakes.Load()
	for range 50 {
		mc.Add(time.Minute / 2)
	}
	woke := e.wakes.Load() - before
	// The reaper's first pass and the kick from SetPX may both come after
	// before was read; a ticking reaper would wake about 50 times.
	if woke > 2 {
		t.Fatalf("reaper woke %d times while idle, want <= 2", woke)
	}
	mc.Add(36 * time.Minute)
	waitClosed(t, ch, "expiry after idle")
}

func TestCloseStopsReaper(t *testing.T) {
	opts := goleak.IgnoreCurrent()
	e, mc := newTestEngine(t)
	e.SetPX("k", "v", time.Second)
	e.Close()
	goleak.VerifyNone(t, opts)
	// After Close, expiry stays lazy: the key is invisible but held.
	mc.Add(2 * time.Second)
	if e.Len() != 1 {
		t.Fatalf("Len() after Close and deadline = %d, want 1 (no active reclamation)", e.Len())
	}
	wantGet(t, e, "k", "", false)
	if e.Len() != 0 {
		t.Fatalf("Len() after lazy expiry = %d, want 0", e.Len())
	}
	// The real-clock reaper stops as well.
	r := New(Options{})
	r.SetNXPX("k", "v", time.Hour)
	r.Close()
	goleak.VerifyNone(t, opts)
}

// TestReaperKickEarlier checks that a deadline earlier than the one the
// reaper sleeps until wakes it to re-arm its timer.
func TestReaperKickEarlier(t *testing.T) {
	e, mc := newTestEngine(t)
	e.SetPX("late", "v", time.Hour)
	e.SetPX("soon", "v", 10*time.Millisecond)
	ch, stop := e.Watch("soon")
	defer stop()
	mc.Add(15 * time.Millisecond)
	waitClosed(t, ch, "earlier deadline")
}
