package lockapi_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
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
