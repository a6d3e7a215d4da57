package lockapi_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/faultinject"
)

// events records what Options.OnEvent receives.
type events struct {
	mu  sync.Mutex
	evs []lockapi.Event // guarded by mu
}

func (e *events) add(ev lockapi.Event) {
	e.mu.Lock()
	e.evs = append(e.evs, ev)
	e.mu.Unlock()
}

func (e *events) take() []lockapi.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	evs := e.evs
	e.evs = nil
	return evs
}

func types(evs []lockapi.Event) []lockapi.EventType {
	ts := make([]lockapi.EventType, len(evs))
	for i, ev := range evs {
		ts[i] = ev.Type
	}
	return ts
}

// TestStatsAndEvents drives every counter and event on a fake clock and
// checks counts, distributions and event fields exactly.
func TestStatsAndEvents(t *testing.T) {
	f := newFixture(t)
	var evs events
	c := lockapi.New(f.fi, lockapi.Options{OnEvent: evs.add}) // times every lease
	ctx := context.Background()
	check := func(what string, got, want lockapi.Stats) {
		t.Helper()
		got.WaitTime.Buckets, got.HoldTime.Buckets = [lockapi.HistogramBuckets]uint64{}, [lockapi.HistogramBuckets]uint64{}
		if got != want {
			t.Fatalf("%s: Stats() = %+v, want %+v", what, got, want)
		}
	}

	// Acquired at once, held 3ms, released.
	l := mustObtain(t, c, "job", time.Minute, nil)
	f.awaitAcquires(t, 1)
	f.advance(3 * time.Millisecond)
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	want := lockapi.Stats{Acquired: 1, Released: 1, HoldTime: lockapi.Histogram{Count: 1, Sum: 3 * time.Millisecond}}
	check("after one cycle", c.Stats(), want)
	if s := c.Stats(); s.HoldTime.Buckets[12] != 1 || s.HoldTime.Quantile(0.5) != 4096*time.Microsecond {
		t.Fatalf("3ms hold: buckets %v, median %v, want bucket 12 (2.048ms, 4.096ms]", s.HoldTime.Buckets, s.HoldTime.Quantile(0.5))
	}
	got := evs.take()
	if ts := types(got); len(ts) != 2 || ts[0] != lockapi.EventAcquired || ts[1] != lockapi.EventReleased {
		t.Fatalf("events = %v, want acquired, released", ts)
	}
	if a, r := got[0], got[1]; a.Key != "job" || a.Token != l.Token() || a.Kind != lockapi.KindMutex || a.Wait != 0 || a.TTL != time.Minute ||
		r.Held != 3*time.Millisecond || !r.Time.Equal(a.Time.Add(3*time.Millisecond)) {
		t.Fatalf("events = %+v, want the lock's key and token, no wait, a 1m ttl, 3ms held", got)
	}
	if fence, _ := l.Fence(); got[0].Fence != fence {
		t.Fatalf("event fence = %d, want %d", got[0].Fence, fence)
	}

	// Refused at once, then obtained after a 7ms wait.
	holder := mustObtain(t, c, "job", time.Minute, nil)
	if _, err := c.Obtain(ctx, "job", time.Minute, nil); !errors.Is(err, lockapi.ErrNotObtained) {
		t.Fatalf("Obtain of a held key = %v", err)
	}
	f.awaitAcquires(t, 2)
	res := obtainAsync(c, ctx, "job", &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)})
	f.awaitAcquires(t, 2) // the first attempt, and the one after arming the watch
	f.advance(7 * time.Millisecond)
	holder.Release(ctx)
	r := await(t, res, "the waiter")
	if r.err != nil {
		t.Fatal(r.err)
	}
	want.Acquired, want.Released, want.NotObtained, want.Waited = 3, 2, 1, 1
	want.WaitTime = lockapi.Histogram{Count: 1, Sum: 7 * time.Millisecond}
	want.HoldTime = lockapi.Histogram{Count: 2, Sum: 10 * time.Millisecond}
	check("after a wait", c.Stats(), want)
	got = evs.take()
	if last := got[len(got)-1]; last.Type != lockapi.EventAcquired || last.Wait != 7*time.Millisecond {
		t.Fatalf("last event = %+v, want acquired after a 7ms wait", last)
	}

	// Expired while held, found by Refresh: a refresh failure, an expiry,
	// a loss.
	f.advance(time.Minute + time.Millisecond)
	if err := r.l.Refresh(ctx, time.Minute); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("Refresh() of an expired lock = %v", err)
	}
	want.Expired, want.Lost, want.RefreshFailures = 1, 1, 1
	want.HoldTime = lockapi.Histogram{Count: 3, Sum: 10*time.Millisecond + time.Minute + time.Millisecond}
	check("after an expiry", c.Stats(), want)
	got = evs.take()
	if ts := types(got); len(ts) != 2 || ts[0] != lockapi.EventRefreshFailed || ts[1] != lockapi.EventLost {
		t.Fatalf("events = %v, want refresh-failed, lost", ts)
	}
	if !errors.Is(got[1].Err, lockapi.ErrLost) || got[1].Held != time.Minute+time.Millisecond {
		t.Fatalf("lost event = %+v, want ErrLost after 1m0.001s", got[1])
	}

}

// TestStatsWatchdog: a watchdog whose refreshes fail until its lease ends
// counts each failed refresh and one loss that is not an expiry, and emits
// their events, in fake time.
func TestStatsWatchdog(t *testing.T) {
	bubble(t, true, func(t *testing.T, e *engine.Engine, fi *faultinject.Backend, _ *lockapi.Client) {
		var evs events
		c := lockapi.New(fi, lockapi.Options{OnEvent: evs.add})
		l, err := c.Obtain(context.Background(), "wd", 3*time.Second, &lockapi.ObtainOptions{AutoRefresh: &lockapi.AutoRefresh{}})
		if err != nil {
			t.Fatal(err)
		}
		fi.Inject(faultinject.Refresh, faultinject.Fault{})
		start := time.Now()
		<-l.Lost()
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("lost after %v, want at the lease's end, 3s", d)
		}
		s := c.Stats()
		if s.Lost != 1 || s.Expired != 0 || s.RefreshFailures != 2 {
			t.Fatalf("Stats() = %+v, want 1 lost, 0 expired, 2 refresh failures (at 1s and 2s)", s)
		}
		if s.HoldTime.Count != 1 || s.HoldTime.Sum != 3*time.Second {
			t.Fatalf("HoldTime = %+v, want one hold of 3s", s.HoldTime)
		}
		got := evs.take()
		want := []lockapi.EventType{lockapi.EventAcquired, lockapi.EventRefreshFailed, lockapi.EventRefreshFailed, lockapi.EventLost}
		if !slices.Equal(types(got), want) {
			t.Fatalf("events = %v, want %v", types(got), want)
		}
		if lost := got[3]; !errors.Is(lost.Err, faultinject.ErrInjected) || !errors.Is(lost.Err, lockapi.ErrLost) || lost.Held != 3*time.Second {
			t.Fatalf("lost event = %+v, want ErrLost wrapping the refresh failure, held 3s", lost)
		}
		l.Release(context.Background())
	})
}

// TestHoldTimeEvery: hold times are sampled, one acquisition in
// HoldTimeEvery (16 by default), all with 1, none when negative; the
// counters count every lease.
func TestHoldTimeEvery(t *testing.T) {
	for _, tc := range []struct{ every, timed int }{{0, 3}, {1, 48}, {5, 9}, {-1, 0}} {
		f := newFixture(t)
		c := lockapi.New(f.b, lockapi.Options{HoldTimeEvery: tc.every})
		for range 48 {
			l := mustObtain(t, c, "k", time.Minute, nil)
			f.ec.Add(time.Millisecond)
			l.Release(context.Background())
		}
		s := c.Stats()
		if s.Acquired != 48 || s.Released != 48 || s.HoldTime.Count != uint64(tc.timed) || s.HoldTime.Sum != time.Duration(tc.timed)*time.Millisecond {
			t.Errorf("HoldTimeEvery %d: Stats() = %+v, want 48 acquired and released, %d holds of 1ms timed", tc.every, s, tc.timed)
		}
	}
}

// TestLogEvents: the slog adapter logs acquisitions at Debug and losses at
// Warn, with the event's attributes.
func TestLogEvents(t *testing.T) {
	f := newFixture(t)
	var buf syncBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	c := lockapi.New(f.b, lockapi.Options{OnEvent: lockapi.LogEvents(logger)})
	l := mustObtain(t, c, "report", time.Minute, &lockapi.ObtainOptions{Token: "tok-1"})
	l.Lost()
	f.advance(time.Minute + time.Millisecond)
	await(t, l.Lost(), "the loss")
	// The event follows the close of Lost, on the monitor's goroutine.
	spinUntil(t, func() bool { return strings.Contains(buf.String(), "lock lost") }, "the loss is logged")
	out := buf.String()
	for _, want := range []string{
		`level=DEBUG msg="lock acquired" lock.event=acquired lock.kind=mutex lock.key=report lock.token=tok-1 lock.fence=1 lock.wait=0s lock.ttl=1m0s`,
		`level=WARN msg="lock lost" lock.event=lost lock.kind=mutex lock.key=report lock.token=tok-1 lock.fence=1 lock.held=1m0.`, `lock.err="lockapi: \"report\": lock lost: expired, deleted or taken over"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q; log:\n%s", want, out)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer // guarded by mu
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestHistogramBuckets checks the bucket bounds and quantiles.
func TestHistogramBuckets(t *testing.T) {
	var h lockapi.Histogram
	for _, tc := range []struct {
		d      time.Duration
		bucket int
	}{
		{0, 0}, {time.Microsecond, 0}, {time.Microsecond + 1, 1}, {2 * time.Microsecond, 1},
		{3 * time.Microsecond, 2}, {time.Millisecond, 10}, {time.Second, 20}, {1 << 62, lockapi.HistogramBuckets - 1},
	} {
		got := lockapi.BucketOf(tc.d)
		if got != tc.bucket {
			t.Errorf("bucket of %v = %d, want %d", tc.d, got, tc.bucket)
		}
		if tc.d > lockapi.BucketBound(got) || got > 0 && tc.d <= lockapi.BucketBound(got-1) {
			t.Errorf("%v outside bucket %d's bounds (%v, %v]", tc.d, got, lockapi.BucketBound(got-1), lockapi.BucketBound(got))
		}
	}
	h.Count, h.Buckets[3], h.Buckets[10] = 4, 3, 1
	if q := h.Quantile(0.5); q != 8*time.Microsecond {
		t.Errorf("median = %v, want 8µs", q)
	}
	if q := h.Quantile(0.99); q != 1024*time.Microsecond {
		t.Errorf("p99 = %v, want 1.024ms", q)
	}
	if q := (&lockapi.Histogram{}).Quantile(0.5); q != 0 {
		t.Errorf("median of nothing = %v, want 0", q)
	}
}
