package engine

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
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

// TestReapOvertakesNoBatch: Reap reclaims every key expired at its time
// even while another reclaimer (the reaper, or another Reap) is between
// batches of one shard, holding fired keys it has not deleted yet. One
// shard holds many keys due at once, so each pass deletes them in many
// batches, and three goroutines Reap and check Len at once. It is a bounded
// stress test: the window between batches is a few nanoseconds, so it
// catches an overtaking Reap reliably under -race (which widens it) and only
// by luck without.
func TestReapOvertakesNoBatch(t *testing.T) {
	mc := clock.NewMock()
	mc.Set(t0)
	e := New(Options{Clock: mc, Shards: 1})
	defer e.Close()
	keys := make([]string, 20*reapBatch)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	for round := 1; round <= 16; round++ {
		for _, k := range keys {
			if err := e.SetPX(k, "v", time.Second); err != nil {
				t.Fatal(err)
			}
		}
		mc.Add(2 * time.Second) // every key expired; the reaper wakes too
		var wg sync.WaitGroup
		var done atomic.Bool
		var left atomic.Int64
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Reap until one Len finds the shard empty: every Reap
				// that returned before must have found it empty too.
				for !done.Load() {
					e.Reap()
					if n := e.Len(); n != 0 {
						left.Store(int64(n))
					} else {
						done.Store(true)
					}
				}
			}()
		}
		wg.Wait()
		if n := left.Load(); n != 0 {
			t.Fatalf("round %d: Len() right after a Reap = %d, want 0 (every key had expired)", round, n)
		}
	}
}
