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

// TestSynctestZeroInjection is the zero-injection way to test code that
// uses nxkv in fake time, as the package doc shows: no clock is given to the
// engine or the Client, and inside a testing/synctest bubble the engine's
// expiry, a waiter's wake-up, the watchdog's refreshes and the lease's end
// all follow the bubble's virtual clock, to the nanosecond, without
// sleeping in real time.
func TestSynctestZeroInjection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := engine.New(engine.Options{})
		defer e.Close()
		c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
		ctx := context.Background()
		start := time.Now()

		// A waiter wakes when the holder's 30s lock expires (the engine's
		// reaper, within its ~1ms tick), though its retry delay is an hour.
		if _, err := c.Obtain(ctx, "job", 30*time.Second, nil); err != nil {
			t.Fatal(err)
		}
		l, err := c.Obtain(ctx, "job", time.Second, &lockapi.ObtainOptions{
			Retry:       lockapi.LinearBackoff(time.Hour),
			AutoRefresh: &lockapi.AutoRefresh{MaxExtensions: 2},
		})
		if err != nil {
			t.Fatal(err)
		}
		got := time.Since(start)
		if got <= 30*time.Second || got > 30*time.Second+3*time.Millisecond {
			t.Errorf("waiter acquired after %v, want just after the holder's 30s", got)
		}

		// The watchdog refreshes every ttl/3 and, with its two extensions
		// used, the lock is lost when the last lease ends.
		acquired := time.Now()
		<-l.Lost()
		interval := time.Second / 3
		if got, want := time.Since(acquired), 2*interval+time.Second; got != want {
			t.Errorf("lost %v after Obtain, want %v (two refreshes, then the 1s lease)", got, want)
		}
		if err := l.Err(); !errors.Is(err, lockapi.ErrExtensionsExhausted) {
			t.Errorf("Err() = %v, want ErrExtensionsExhausted", err)
		}
	})
}

// TestSynctestPrimitives: with nothing injected, every primitive's waiters
// wake, and its Lost closes, at the expiry of the lease in their way, in
// the bubble's virtual time.
func TestSynctestPrimitives(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := engine.New(engine.Options{})
		defer e.Close()
		c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
		ctx := context.Background()
		wait := &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)}
		within := func(what string, start time.Time, ttl time.Duration) {
			t.Helper()
			if got := time.Since(start); got <= ttl || got > ttl+3*time.Millisecond {
				t.Errorf("%s after %v, want just after the %v lease in its way expired", what, got, ttl)
			}
		}

		start := time.Now()
		sem := c.Semaphore("pool", 1)
		held, err := sem.Obtain(ctx, 30*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		lost := held.Lost()
		next, err := sem.Obtain(ctx, time.Minute, wait)
		if err != nil {
			t.Fatal(err)
		}
		within("semaphore waiter", start, 30*time.Second)
		<-lost
		within("semaphore lease lost", start, 30*time.Second)
		next.Release(ctx)

		start = time.Now()
		doc := c.RWMutex("doc")
		r, _ := doc.ObtainRead(ctx, 10*time.Second, nil)
		rlost := r.Lost()
		w, err := doc.ObtainWrite(ctx, 10*time.Second, wait)
		if err != nil {
			t.Fatal(err)
		}
		within("writer", start, 10*time.Second)
		<-rlost
		start = time.Now()
		r2, err := doc.ObtainRead(ctx, time.Second, wait)
		if err != nil {
			t.Fatal(err)
		}
		within("reader", start, 10*time.Second)
		if !errors.Is(w.Release(ctx), lockapi.ErrNotHeld) {
			t.Error("the expired writer could release")
		}
		r2.Release(ctx)

		start = time.Now()
		if _, err := c.Obtain(ctx, "{t}:b", 5*time.Second, nil); err != nil {
			t.Fatal(err)
		}
		m, err := c.ObtainAll(ctx, []string{"{t}:a", "{t}:b"}, 2*time.Second, wait)
		if err != nil {
			t.Fatal(err)
		}
		within("multi-key waiter", start, 5*time.Second)
		mlost := m.Lost()
		<-mlost
		within("multi-key lock lost", start, 7*time.Second)
	})
}

// TestSynctestCleanupBounded: the undo after a failed attempt (here of a
// re-entry whose reply was lost) is not cancelled with the Obtain's ctx,
// but it is bounded by the lock's ttl, after which what it would undo has
// expired anyway: a backend that hangs on it for an hour holds Obtain for
// the ttl, not the hour.
func TestSynctestCleanupBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := engine.New(engine.Options{})
		defer e.Close()
		fi := faultinject.New(inproc.New(e, inproc.Options{}), faultinject.Options{})
		c := lockapi.New(fi, lockapi.Options{})
		ctx := context.Background()
		const ttl = time.Minute
		l1, err := c.Obtain(ctx, "k", ttl, &lockapi.ObtainOptions{Reentrant: true})
		if err != nil {
			t.Fatal(err)
		}
		fi.Inject(faultinject.Acquire, faultinject.Fault{LostReply: true, Next: 1})
		fi.Inject(faultinject.Release, faultinject.Fault{Latency: time.Hour, NoError: true, Next: 1})
		start := time.Now()
		if l, err := c.Obtain(ctx, "k", ttl, &lockapi.ObtainOptions{Reentrant: true, Token: l1.Token()}); err == nil {
			t.Fatalf("re-entry with a lost reply = %v, want an error", l)
		}
		if got := time.Since(start); got > ttl {
			t.Errorf("Obtain returned after %v, want at most the ttl %v (its undo hung for an hour)", got, ttl)
		}
		l1.Release(ctx)
	})
}
