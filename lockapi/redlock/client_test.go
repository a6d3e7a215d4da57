package redlock_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/redlock"
)

// TestClientWatchdog runs lockapi's watchdog over a Redlock of three nodes:
// it keeps the lock alive well past its TTL, and when two nodes lose the key
// (restarts without persistence) the next refresh finds no majority and the
// Lock's Lost channel closes.
func TestClientWatchdog(t *testing.T) {
	w := newWorld(t, 3)
	c := w.client(redlock.Options{})
	lc := lockapi.New(c.rl, lockapi.Options{Clock: c.clock})
	ctx := context.Background()
	l, err := lc.Obtain(ctx, key, ttl, &lockapi.ObtainOptions{AutoRefresh: &lockapi.AutoRefresh{Interval: 3 * time.Second}})
	if err != nil {
		t.Fatalf("Obtain = %v", err)
	}
	defer l.Release(ctx)
	waitRefreshes := func(n int32) {
		t.Helper()
		guard := time.After(10 * time.Second)
		for w.nodes[0].refreshes.Load() < n {
			select {
			case <-guard:
				t.Fatalf("watchdog made %d refreshes, want %d", w.nodes[0].refreshes.Load(), n)
			default:
				runtime.Gosched()
			}
		}
	}
	for i := int32(1); i <= 5; i++ { // 15s: one and a half TTLs
		w.advance(3 * time.Second)
		waitRefreshes(i)
	}
	if d, err := l.TTL(ctx); err != nil || d <= 0 || d > ttl {
		t.Fatalf("TTL() after 15s under the watchdog = %v, %v, want held", d, err)
	}
	select {
	case <-l.Lost():
		t.Fatalf("Lost closed while the watchdog kept the lock: %v", l.Err())
	default:
	}
	w.nodes[1].wipe()
	w.nodes[2].wipe()
	w.advance(3 * time.Second)
	waitRefreshes(6)
	select {
	case <-l.Lost():
	case <-time.After(10 * time.Second):
		t.Fatalf("Lost still open after a refresh found only one node of three")
	}
	if !errors.Is(l.Err(), lockapi.ErrLost) {
		t.Fatalf("Err() = %v, want ErrLost", l.Err())
	}
}
