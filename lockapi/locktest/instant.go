package locktest

import (
	"context"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
)

// watchingCounter wraps a Backend and Watcher and reports every Acquire
// call on a channel, so the suite knows when a waiter has armed its watch.
type watchingCounter struct {
	lockapi.Backend
	w        lockapi.Watcher
	acquires chan struct{}
}

func (c *watchingCounter) Acquire(ctx context.Context, key, value string, ttl time.Duration) (int64, bool, error) {
	defer func() { c.acquires <- struct{}{} }()
	return c.Backend.Acquire(ctx, key, value, ttl)
}

func (c *watchingCounter) Watch(key string) (<-chan struct{}, func()) { return c.w.Watch(key) }

// testInstantWake checks that on an Instant backend a waiter whose retry
// delay is an hour acquires at a release and at an expiry, with the client
// clock standing still.
func testInstantWake(t *testing.T, s *suite) {
	if !s.env.Instant {
		t.Skip("backend does not report changes")
	}
	wc := &watchingCounter{Backend: s.env.Backend, w: s.env.Backend.(lockapi.Watcher), acquires: make(chan struct{}, 64)}
	c := lockapi.New(wc, lockapi.Options{Clock: s.env.Clock})
	awaitAcquires := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			select {
			case <-wc.acquires:
			case <-time.After(guard):
				t.Fatalf("saw %d of %d Acquire calls", i, n)
			}
		}
	}
	for _, how := range []string{"release", "expiry"} {
		holder := s.obtain(c, s.key(), ttl, nil)
		awaitAcquires(1)
		res := make(chan error, 1)
		var got *lockapi.Lock
		go func() {
			l, err := c.Obtain(context.Background(), s.key(), ttl, &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)})
			got = l
			res <- err
		}()
		awaitAcquires(2) // the first attempt, then the one after arming the watch
		if how == "release" {
			if err := holder.Release(context.Background()); err != nil {
				t.Fatalf("Release() = %v", err)
			}
		} else {
			s.env.Advance(ttl + 10*time.Millisecond)
		}
		select {
		case err := <-res:
			if err != nil {
				t.Fatalf("waiter after %s: Obtain = %v, want a lock", how, err)
			}
		case <-time.After(guard):
			t.Fatalf("waiter with an hour's retry delay not woken by the %s", how)
		}
		got.Release(context.Background())
		for len(wc.acquires) > 0 {
			<-wc.acquires
		}
	}
}
