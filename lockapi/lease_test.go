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

// The tests in this file check that a Lock's idea of its validity is the
// lease the backend last granted, counted from when the granting call was
// sent, and never later: Lost must close no later than the moment another
// client can obtain the key. They run in synctest bubbles (fake time).

// lostAt waits for l's loss and returns how long after start it closed.
func lostAt(l *lockapi.Lock, start time.Time) time.Duration {
	<-l.Lost()
	return time.Since(start)
}

// TestWatchdogShorterRefreshTTL: a watchdog refreshing with a TTL shorter
// than the Obtain's moves the lease's end earlier; when its refreshes then
// fail, Lost closes at the end of the last granted (1s) lease, not at the
// end of the first (10s) one, and no later than another client gets the
// key.
func TestWatchdogShorterRefreshTTL(t *testing.T) {
	bubble(t, false, func(t *testing.T, e *engine.Engine, fi *faultinject.Backend, c *lockapi.Client) {
		start := time.Now()
		l, err := c.Obtain(context.Background(), "k", 10*time.Second,
			&lockapi.ObtainOptions{AutoRefresh: &lockapi.AutoRefresh{TTL: time.Second, Interval: 400 * time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		lost := l.Lost()
		time.Sleep(500 * time.Millisecond) // the refresh at 400ms set the lease to 1.4s
		fi.Inject(faultinject.Refresh, faultinject.Fault{})
		other := make(chan time.Duration, 1)
		go func() {
			l2, err := lockapi.New(fi, lockapi.Options{}).Obtain(context.Background(), "k", time.Minute,
				&lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Millisecond)})
			if err != nil {
				t.Error(err)
				other <- 0
				return
			}
			other <- time.Since(start)
			l2.Release(context.Background())
		}()
		got := lostAt(l, start)
		if want := 1400 * time.Millisecond; got != want {
			t.Errorf("Lost closed %v after Obtain, want %v (the refresh at 400ms granted 1s)", got, want)
		}
		if o := <-other; o <= got {
			t.Errorf("another client obtained the key at %v, before Lost closed at %v", o, got)
		}
		if !isClosed(lost) {
			t.Error("Lost open")
		}
	})
}

// TestManualRefreshShorterTTL: a manual Refresh with a shorter ttl on a
// watchdog lock shortens the lease the Client counts on; Lost closes when
// that lease ends, not at the watchdog's next turn nor at the old lease's
// end.
func TestManualRefreshShorterTTL(t *testing.T) {
	bubble(t, false, func(t *testing.T, e *engine.Engine, fi *faultinject.Backend, c *lockapi.Client) {
		start := time.Now()
		l, err := c.Obtain(context.Background(), "k", 10*time.Second,
			&lockapi.ObtainOptions{AutoRefresh: &lockapi.AutoRefresh{Interval: 3 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		if err := l.Refresh(context.Background(), time.Second); err != nil {
			t.Fatal(err)
		}
		if got, want := lostAt(l, start), 1500*time.Millisecond; got != want {
			t.Errorf("Lost closed %v after Obtain, want %v (Refresh(1s) sent at 500ms)", got, want)
		}
		time.Sleep(time.Millisecond) // the key is alive at its deadline, gone after
		if _, ok := e.Get("k"); ok {
			t.Errorf("key still held just after the end of the lease")
		}
	})
}

// TestWatchdogRefreshHangs: a watchdog Refresh that hangs (a stalled
// server) is bounded by the remaining validity: Lost closes when the
// validity ends, the hanging call is cancelled, and the backend never
// applies it.
func TestWatchdogRefreshHangs(t *testing.T) {
	for _, watch := range []bool{false, true} {
		bubble(t, watch, func(t *testing.T, e *engine.Engine, fi *faultinject.Backend, c *lockapi.Client) {
			start := time.Now()
			l, err := c.Obtain(context.Background(), "k", 3*time.Second, &lockapi.ObtainOptions{AutoRefresh: &lockapi.AutoRefresh{}})
			if err != nil {
				t.Fatal(err)
			}
			fi.Inject(faultinject.Refresh, faultinject.Fault{Latency: 20 * time.Second, NoError: true})
			if got, want := lostAt(l, start), 3*time.Second; got != want {
				t.Errorf("watch=%v: Lost closed %v after Obtain, want %v (the end of the validity)", watch, got, want)
			}
			if err := l.Err(); !errors.Is(err, lockapi.ErrLost) || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("watch=%v: Err() = %v, want ErrLost and context.DeadlineExceeded", watch, err)
			}
			synctest.Wait()              // the cancelled call returns
			time.Sleep(time.Millisecond) // the key is alive at its deadline, gone after
			if got := fi.Calls(faultinject.Refresh); got != 1 {
				t.Errorf("watch=%v: Refresh calls = %d, want 1 (at 1s, hanging)", watch, got)
			}
			if _, ok := e.Get("k"); ok {
				t.Errorf("watch=%v: key still present just after the validity ended", watch)
			}
		})
	}
}

// gatedRelease applies the first Release at the backend, then holds its
// reply until gate is closed.
type gatedRelease struct {
	lockapi.Backend
	gate    chan struct{}
	entered chan struct{}
	first   bool
}

func (g *gatedRelease) Release(ctx context.Context, key, value string) (bool, error) {
	ok, err := g.Backend.Release(ctx, key, value)
	if !g.first {
		g.first = true
		close(g.entered)
		<-g.gate
	}
	return ok, err
}

// TestConcurrentRelease: while a first Release is in flight (applied, its
// reply delayed), a second Release on the same Lock must not mark the lock
// lost: a successful Release is never a loss.
func TestConcurrentRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := engine.New(engine.Options{})
		defer e.Close()
		g := &gatedRelease{Backend: inproc.New(e, inproc.Options{}), gate: make(chan struct{}), entered: make(chan struct{})}
		l, err := lockapi.New(g, lockapi.Options{}).Obtain(context.Background(), "k", time.Minute, nil)
		if err != nil {
			t.Fatal(err)
		}
		lost := l.Lost()
		first := make(chan error, 1)
		go func() { first <- l.Release(context.Background()) }()
		<-g.entered
		second := make(chan error, 1)
		go func() { second <- l.Release(context.Background()) }()
		synctest.Wait() // the second Release finished or waits for the first
		close(g.gate)
		if err := <-first; err != nil {
			t.Fatalf("first Release = %v, want nil", err)
		}
		if err := <-second; !errors.Is(err, lockapi.ErrNotHeld) {
			t.Errorf("second Release = %v, want ErrNotHeld (already released)", err)
		}
		if isClosed(lost) || l.Err() != nil {
			t.Errorf("after a successful Release: Lost closed = %v, Err() = %v, want open and nil", isClosed(lost), l.Err())
		}
	})
}
