package lockapi_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/faultinject"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

// The watchdog tests run in a synctest bubble with the real clock: the
// engine, its reaper, the client and its watchdog all see the bubble's fake
// time, and synctest.Test fails if any goroutine is left running.

// bubble runs f in a synctest bubble (with the bubble's T) with an engine
// (closed at the end of f), a fault-injecting backend over it, with or
// without Watch, and a Client over that.
func bubble(t *testing.T, watch bool, f func(t *testing.T, e *engine.Engine, fi *faultinject.Backend, c *lockapi.Client)) {
	synctest.Test(t, func(t *testing.T) {
		e := engine.New(engine.Options{})
		defer e.Close()
		b := inproc.New(e, inproc.Options{})
		var c *lockapi.Client
		var fi *faultinject.Backend
		if watch {
			w := faultinject.NewWatcher(b, faultinject.Options{})
			fi, c = w.Backend, lockapi.New(w, lockapi.Options{})
		} else {
			fi = faultinject.New(b, faultinject.Options{})
			c = lockapi.New(fi, lockapi.Options{})
		}
		f(t, e, fi, c)
	})
}

func TestWatchdogKeepsAlive(t *testing.T) {
	for _, watch := range []bool{true, false} {
		bubble(t, watch, func(t *testing.T, e *engine.Engine, fi *faultinject.Backend, c *lockapi.Client) {
			ctx := context.Background()
			l, err := c.Obtain(ctx, "k", 3*time.Second, &lockapi.ObtainOptions{AutoRefresh: &lockapi.AutoRefresh{}})
			if err != nil {
				t.Fatal(err)
			}
			lost := l.Lost()
			time.Sleep(10*time.Second + 500*time.Millisecond)
			if got := fi.Calls(faultinject.Refresh); got != 10 {
				t.Errorf("watch=%v: Refresh calls in 10.5s with ttl 3s = %d, want 10 (every ttl/3)", watch, got)
			}
			if d, err := l.TTL(ctx); err != nil || d <= 2*time.Second {
				t.Errorf("watch=%v: TTL() after 10.5s = %v, %v, want > 2s", watch, d, err)
			}
			if isClosed(lost) {
				t.Errorf("watch=%v: Lost closed while the watchdog kept the lock (Err %v)", watch, l.Err())
			}
			if err := l.Release(ctx); err != nil {
				t.Fatal(err)
			}
			calls := fi.Calls(faultinject.Refresh)
			time.Sleep(10 * time.Second)
			if got := fi.Calls(faultinject.Refresh); got != calls {
				t.Errorf("watch=%v: watchdog refreshed %d times after Release", watch, got-calls)
			}
		})
	}
}

func TestWatchdogMaxExtensions(t *testing.T) {
	for _, watch := range []bool{true, false} {
		bubble(t, watch, func(t *testing.T, e *engine.Engine, fi *faultinject.Backend, c *lockapi.Client) {
			start := time.Now()
			l, err := c.Obtain(context.Background(), "k", 3*time.Second,
				&lockapi.ObtainOptions{AutoRefresh: &lockapi.AutoRefresh{Interval: time.Second, MaxExtensions: 2}})
			if err != nil {
				t.Fatal(err)
			}
			<-l.Lost()
			// Refreshed at 1s and 2s, so valid until 2s + 3s.
			if got := time.Since(start); got != 5*time.Second {
				t.Errorf("watch=%v: lost after %v, want 5s", watch, got)
			}
			if err := l.Err(); !errors.Is(err, lockapi.ErrLost) || !errors.Is(err, lockapi.ErrExtensionsExhausted) {
				t.Errorf("watch=%v: Err() = %v, want ErrLost and ErrExtensionsExhausted", watch, err)
			}
			if got := fi.Calls(faultinject.Refresh); got != 2 {
				t.Errorf("watch=%v: Refresh calls = %d, want 2", watch, got)
			}
			if err := l.Release(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
				t.Errorf("watch=%v: Release after expiry = %v, want ErrNotHeld", watch, err)
			}
		})
	}
}

// TestWatchdogRefreshErrors: when every refresh fails with a transport
// error, the watchdog declares the lock lost at the end of its last known
// validity, never later.
func TestWatchdogRefreshErrors(t *testing.T) {
	bubble(t, false, func(t *testing.T, e *engine.Engine, fi *faultinject.Backend, c *lockapi.Client) {
		start := time.Now()
		l, err := c.Obtain(context.Background(), "k", 3*time.Second, &lockapi.ObtainOptions{AutoRefresh: &lockapi.AutoRefresh{}})
		if err != nil {
			t.Fatal(err)
		}
		fi.Inject(faultinject.Refresh, faultinject.Fault{})
		<-l.Lost()
		if got := time.Since(start); got != 3*time.Second {
			t.Errorf("lost after %v, want 3s (the validity of the acquisition)", got)
		}
		if err := l.Err(); !errors.Is(err, lockapi.ErrLost) || !errors.Is(err, faultinject.ErrInjected) {
			t.Errorf("Err() = %v, want ErrLost and ErrInjected", err)
		}
		if got := fi.Calls(faultinject.Refresh); got != 2 {
			t.Errorf("Refresh attempts = %d, want 2 (at 1s and 2s)", got)
		}
		fi.Clear()
		l.Release(context.Background())
	})
}

// TestWatchdogNotHeld: a watchdog refresh that finds the lock taken ends
// the watchdog and signals the loss.
func TestWatchdogNotHeld(t *testing.T) {
	bubble(t, false, func(t *testing.T, e *engine.Engine, fi *faultinject.Backend, c *lockapi.Client) {
		l, err := c.Obtain(context.Background(), "k", 3*time.Second, &lockapi.ObtainOptions{AutoRefresh: &lockapi.AutoRefresh{}})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond)
		e.Set("k", "intruder")
		start := time.Now()
		<-l.Lost()
		if got := time.Since(start); got != 500*time.Millisecond {
			t.Errorf("loss found %v after the overwrite, want 500ms (the next refresh)", got)
		}
		if err := l.Err(); !errors.Is(err, lockapi.ErrNotHeld) {
			t.Errorf("Err() = %v, want ErrNotHeld", err)
		}
		if v, _ := e.Get("k"); v != "intruder" {
			t.Errorf("key = %q after the watchdog found it taken, want the intruder's value", v)
		}
	})
}

// TestLostMonitorExits: the loss monitor started by Lost exits on Release
// and on loss (synctest.Test fails on a leftover goroutine).
func TestLostMonitorExits(t *testing.T) {
	bubble(t, true, func(t *testing.T, e *engine.Engine, fi *faultinject.Backend, c *lockapi.Client) {
		l1, _ := c.Obtain(context.Background(), "a", time.Second, nil)
		l1.Lost()
		l2, _ := c.Obtain(context.Background(), "b", time.Second, nil)
		lost := l2.Lost()
		l1.Release(context.Background())
		time.Sleep(2 * time.Second)
		if !isClosed(lost) {
			t.Error("Lost not closed after expiry")
		}
		synctest.Wait()
	})
}

// TestWatchdogManualRefreshAfterExhaustion: a manual Refresh after the
// watchdog used its extensions moves the point where it declares the loss.
func TestWatchdogManualRefreshAfterExhaustion(t *testing.T) {
	bubble(t, false, func(t *testing.T, e *engine.Engine, fi *faultinject.Backend, c *lockapi.Client) {
		start := time.Now()
		l, err := c.Obtain(context.Background(), "k", 3*time.Second,
			&lockapi.ObtainOptions{AutoRefresh: &lockapi.AutoRefresh{Interval: time.Second, MaxExtensions: 1}})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // the one extension happened at 1s
		if err := l.Refresh(context.Background(), 10*time.Second); err != nil {
			t.Fatal(err)
		}
		<-l.Lost()
		if got := time.Since(start); got != 12*time.Second {
			t.Errorf("lost after %v, want 12s (the manual Refresh at 2s for 10s)", got)
		}
		if err := l.Err(); !errors.Is(err, lockapi.ErrExtensionsExhausted) {
			t.Errorf("Err() = %v, want ErrExtensionsExhausted", err)
		}
	})
}

// TestWaiterWakesWithinTicksOfExpiry: with the real clock (in a bubble), a
// waiter blocked on a lock that is never released acquires it within two
// wheel ticks (about 2ms) of the holder's deadline, woken by the engine's
// reaper, while its own retry delay is an hour.
func TestWaiterWakesWithinTicksOfExpiry(t *testing.T) {
	bubble(t, true, func(t *testing.T, e *engine.Engine, fi *faultinject.Backend, c *lockapi.Client) {
		start := time.Now()
		if _, err := c.Obtain(context.Background(), "k", 100*time.Millisecond, nil); err != nil {
			t.Fatal(err)
		}
		l, err := c.Obtain(context.Background(), "k", time.Second, &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		waited := time.Since(start)
		if waited <= 100*time.Millisecond || waited > 103*time.Millisecond {
			t.Errorf("waiter acquired %v after the holder's 100ms lock was taken, want within (100ms, 103ms]", waited)
		}
		t.Logf("waiter acquired %v after the holder's 100ms lock was taken", waited)
		l.Release(context.Background())
	})
}

// TestReleaseFromEvent releases a lock from Options.OnEvent as its
// watchdog reports trouble: a failed refresh (the backend erred), and a loss
// (the key was deleted behind the lock's back). The event runs on the
// lock's monitor goroutine, which Release stops: Release must not wait for
// that goroutine to exit while it is the one calling.
func TestReleaseFromEvent(t *testing.T) {
	for _, tc := range []struct {
		name    string
		on      lockapi.EventType
		trouble func(e *engine.Engine, fi *faultinject.Backend)
		wantErr error
	}{
		{"refresh failed", lockapi.EventRefreshFailed, func(_ *engine.Engine, fi *faultinject.Backend) {
			fi.Inject(faultinject.Refresh, faultinject.Fault{Next: 1})
		}, nil},
		{"lost", lockapi.EventLost, func(e *engine.Engine, _ *faultinject.Backend) {
			e.Del("k")
		}, lockapi.ErrNotHeld},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := engine.New(engine.Options{})
				defer e.Close()
				fi := faultinject.New(inproc.New(e, inproc.Options{}), faultinject.Options{})
				var l *lockapi.Lock
				released := make(chan error, 1)
				c := lockapi.New(fi, lockapi.Options{OnEvent: func(ev lockapi.Event) {
					if ev.Type == tc.on {
						released <- l.Release(context.Background())
					}
				}})
				var err error
				l, err = c.Obtain(context.Background(), "k", 3*time.Second, &lockapi.ObtainOptions{AutoRefresh: &lockapi.AutoRefresh{}})
				if err != nil {
					t.Fatal(err)
				}
				tc.trouble(e, fi)
				select {
				case err := <-released:
					if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
						t.Errorf("Release from OnEvent(%v) = %v, want %v", tc.on, err, tc.wantErr)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("Release from OnEvent(%v) did not return in 10s", tc.on)
				}
				if _, ok := e.Get("k"); ok {
					t.Errorf("Get(k) after the Release = held, want absent")
				}
			})
		})
	}
}

// TestReleaseWithEndedContextStopsWatchdog is the deferred Release of a
// request whose context was cancelled: Release returns the context's error,
// and the watchdog stops, so the lock expires at its TTL instead of being
// refreshed for ever.
func TestReleaseWithEndedContextStopsWatchdog(t *testing.T) {
	bubble(t, false, func(t *testing.T, e *engine.Engine, fi *faultinject.Backend, c *lockapi.Client) {
		reqCtx, cancel := context.WithCancel(context.Background())
		l, err := c.Obtain(reqCtx, "job", time.Second, &lockapi.ObtainOptions{AutoRefresh: &lockapi.AutoRefresh{}})
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := l.Release(reqCtx); !errors.Is(err, context.Canceled) {
			t.Errorf("Release(ended ctx) = %v, want context.Canceled", err)
		}
		refreshes := fi.Calls(faultinject.Refresh)
		time.Sleep(time.Hour)
		if got := fi.Calls(faultinject.Refresh); got != refreshes {
			t.Errorf("Refresh calls in the hour after Release = %d, want 0", got-refreshes)
		}
		other, err := c.Obtain(context.Background(), "job", time.Second, nil)
		if err != nil {
			t.Fatalf("Obtain an hour after Release(ended ctx) = %v, want the expired lock", err)
		}
		other.Release(context.Background())
		if err := l.Release(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
			t.Errorf("retried Release after expiry = %v, want ErrNotHeld", err)
		}
	})
}

// TestAutoRefreshDefaultInterval obtains a lock for a second and has the
// watchdog extend it by a minute at a time: the default interval must fit
// the shorter lease, the first one.
func TestAutoRefreshDefaultInterval(t *testing.T) {
	bubble(t, false, func(t *testing.T, e *engine.Engine, fi *faultinject.Backend, c *lockapi.Client) {
		ctx := context.Background()
		l, err := c.Obtain(ctx, "k", time.Second, &lockapi.ObtainOptions{AutoRefresh: &lockapi.AutoRefresh{TTL: time.Minute}})
		if err != nil {
			t.Fatalf("Obtain(ttl 1s, AutoRefresh.TTL 1m) = %v, want the lock", err)
		}
		time.Sleep(5 * time.Second)
		if d, err := l.TTL(ctx); err != nil || d <= time.Second {
			t.Errorf("TTL() after 5s = %v, %v, want over 1s (refreshed with the 1m TTL)", d, err)
		}
		if err := l.Release(ctx); err != nil {
			t.Errorf("Release() = %v", err)
		}
	})
}
