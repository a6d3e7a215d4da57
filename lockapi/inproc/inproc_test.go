package inproc_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nxkv/nxkv/internal/lockkeys"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

// TestFencingLeavesNoKeys: fencing stores nothing in the engine: after
// locking and releasing many distinct keys the engine is empty, and every
// key's fences grew.
func TestFencingLeavesNoKeys(t *testing.T) {
	e, _ := newEngine(t)
	b := inproc.New(e, inproc.Options{})
	ctx := context.Background()
	last := map[string]int64{}
	for round := 0; round < 3; round++ {
		for i := 0; i < 1000; i++ {
			key := fmt.Sprint("job:", i)
			f, ok, err := b.Acquire(ctx, key, "v", time.Minute)
			if !ok || err != nil || f <= last[key] {
				t.Fatalf("Acquire(%q) = %d, %v, %v, want ok with fence > %d", key, f, ok, err, last[key])
			}
			last[key] = f
			b.Release(ctx, key, "v")
		}
	}
	if n := e.LenAll(); n != 0 {
		t.Fatalf("engine holds %d keys after every lock was released, want 0 (no counter keys)", n)
	}
}

// TestFencingSurvivesEverything: nothing user code does to keys resets a
// key's fences, and two Backends over one engine share them.
func TestFencingSurvivesEverything(t *testing.T) {
	e, c := newEngine(t)
	a, b := inproc.New(e, inproc.Options{}), inproc.New(e, inproc.Options{})
	ctx := context.Background()
	var last int64
	acquire := func(be *inproc.Backend, how string) {
		t.Helper()
		f, ok, err := be.Acquire(ctx, "k", how, time.Second)
		if !ok || err != nil || f <= last {
			t.Fatalf("Acquire after %s = %d, %v, %v, want ok with fence > %d", how, f, ok, err, last)
		}
		last = f
	}
	acquire(a, "start")
	e.Del("k")
	acquire(b, "a delete, on another Backend")
	c.Add(2 * time.Second)
	e.Reap()
	acquire(a, "an expiry")
	e.Set("nxkv:fence:k", "1") // the old counter key means nothing now
	e.FlushAll()
	acquire(b, "a flush")
	b.Release(ctx, "k", "a flush")
	acquire(a, "a release")
}

// TestNoFencing: with NoFencing the fence is 0.
func TestNoFencing(t *testing.T) {
	e, _ := newEngine(t)
	b := inproc.New(e, inproc.Options{NoFencing: true})
	f, ok, err := b.Acquire(context.Background(), "k", "v", time.Minute)
	if !ok || err != nil || f != 0 {
		t.Fatalf("Acquire = %d, %v, %v, want 0, true, nil", f, ok, err)
	}
}

// TestPTTLOtherValue: PTTL reports not held for a key holding another
// value, and for a missing key.
func TestPTTLOtherValue(t *testing.T) {
	e, c := newEngine(t)
	b := inproc.New(e, inproc.Options{})
	ctx := context.Background()
	b.Acquire(ctx, "k", "mine", 10*time.Second)
	c.Add(4 * time.Second)
	if d, ok, err := b.PTTL(ctx, "k", "mine"); !ok || err != nil || d != 6*time.Second {
		t.Errorf("PTTL(own) = %v, %v, %v, want 6s, true, nil", d, ok, err)
	}
	if _, ok, _ := b.PTTL(ctx, "k", "theirs"); ok {
		t.Error("PTTL(other value) = true, want false")
	}
	if _, ok, _ := b.PTTL(ctx, "missing", "mine"); ok {
		t.Error("PTTL(missing key) = true, want false")
	}
}

// TestClientTakesEngineClock: a Client over the Backend with no clock of
// its own waits on the engine's: a waiter's retry window passes when the
// engine's Mock moves, not in real time.
func TestClientTakesEngineClock(t *testing.T) {
	e, mock := newEngine(t)
	b := inproc.New(e, inproc.Options{})
	if b.Clock() != mock {
		t.Fatalf("Backend.Clock() = %v, want the engine's Mock", b.Clock())
	}
	c := lockapi.New(b, lockapi.Options{})
	if c.Clock() != mock {
		t.Fatalf("Client.Clock() = %v, want the engine's Mock", c.Clock())
	}
	ctx := context.Background()
	holder, err := c.Obtain(ctx, "k", time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	go func() {
		_, err := c.Obtain(ctx, "k", time.Minute, &lockapi.ObtainOptions{Retry: lockapi.LimitRetry(lockapi.LinearBackoff(time.Minute), 1)})
		res <- err
	}()
	for i := 0; ; i++ {
		select {
		case err := <-res:
			if i == 0 {
				t.Fatalf("Obtain gave up before the engine's clock moved: %v", err)
			}
			if err == nil {
				t.Fatal("Obtain of a held key succeeded")
			}
			holder.Release(ctx)
			return
		case <-time.After(time.Millisecond):
			if i > 10000 {
				t.Fatal("the waiter's one-minute window never ended on the engine's clock")
			}
			mock.Add(time.Second)
		}
	}
}

func TestNewPanicsOnNil(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New(nil) did not panic")
		}
	}()
	inproc.New(nil, inproc.Options{})
}

// TestPrimitiveFencesSurviveDeletes: a semaphore's and a read-write lock's
// fences count in keys (as over Redis), yet never repeat when those keys
// are deleted, flushed or expire.
func TestPrimitiveFencesSurviveDeletes(t *testing.T) {
	e, c := newEngine(t)
	cl := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
	ctx := context.Background()
	for _, p := range []struct {
		name    string
		counter string
		obtain  func() (*lockapi.Lock, error)
	}{
		{"semaphore", lockkeys.NewSemaphore("pool").Fence(), func() (*lockapi.Lock, error) {
			return cl.Semaphore("pool", 2).Obtain(ctx, time.Minute, nil)
		}},
		{"reader", lockkeys.NewRW("doc").Counter(), func() (*lockapi.Lock, error) {
			return cl.RWMutex("doc").ObtainRead(ctx, time.Minute, nil)
		}},
		{"writer", lockkeys.NewRW("doc").Counter(), func() (*lockapi.Lock, error) {
			return cl.RWMutex("doc").ObtainWrite(ctx, time.Minute, nil)
		}},
	} {
		var last int64
		for _, how := range []struct {
			name string
			do   func()
		}{
			{"start", func() {}},
			{"a Del of the counter", func() { e.Del(p.counter) }},
			{"a FlushAll", e.FlushAll},
			{"the counter's expiry", func() { e.PExpire(p.counter, time.Second); c.Add(2 * time.Second) }},
			{"a GetDel of the counter", func() { e.GetDel(p.counter) }},
		} {
			how.do()
			l, err := p.obtain()
			if err != nil {
				t.Fatalf("%s after %s: %v", p.name, how.name, err)
			}
			f, _ := l.Fence()
			if f <= last {
				t.Fatalf("%s fence after %s = %d, want > %d", p.name, how.name, f, last)
			}
			last = f
			l.Release(ctx)
		}
	}
}
