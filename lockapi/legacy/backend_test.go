package legacy_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/legacy"
	"github.com/nxkv/nxkv/lockapi/locktest"
)

var _ lockapi.Backend = (*legacy.Backend)(nil)

// TestBackendConformance runs the lockapi conformance suite over the legacy
// Backend on the engine, in milliseconds (see the Backend doc for why not
// seconds). The Backend's time is the client's mock clock.
func TestBackendConformance(t *testing.T) {
	locktest.Run(t, func(t *testing.T) locktest.Env {
		e := engine.New(engine.Options{})
		t.Cleanup(func() { e.Close() })
		clk := clock.NewMock()
		clk.Set(locktest.Epoch)
		b, err := legacy.NewBackend(legacy.Engine(e), legacy.Options{Clock: clk, Unit: legacy.Milliseconds})
		if err != nil {
			t.Fatal(err)
		}
		return locktest.Env{Backend: b, Clock: clk, Advance: clk.Add}
	})
}

func newBackend(t *testing.T, unit legacy.Unit) (*legacy.Backend, legacy.KV, *clock.Mock) {
	t.Helper()
	e := engine.New(engine.Options{})
	t.Cleanup(func() { e.Close() })
	clk := clock.NewMock()
	clk.Set(locktest.Epoch)
	kv := legacy.Engine(e)
	b, err := legacy.NewBackend(kv, legacy.Options{Clock: clk, Unit: unit})
	if err != nil {
		t.Fatal(err)
	}
	return b, kv, clk
}

func TestBackendIsPerInstance(t *testing.T) {
	ctx := context.Background()
	a, kv, clk := newBackend(t, legacy.Seconds)
	other, err := legacy.NewBackend(kv, legacy.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := a.Acquire(ctx, "k", "tok", time.Minute); !ok || err != nil {
		t.Fatalf("Acquire = %v, %v, want true, nil", ok, err)
	}
	if ok, err := other.Release(ctx, "k", "tok"); ok || err != nil {
		t.Fatalf("another Backend's Release with the same value = %v, %v, want false, nil", ok, err)
	}
	if v, _, _ := kv.Get(ctx, "k"); v == "tok" {
		t.Fatalf("the token reached the server: %q", v)
	}
	if ok, err := a.Release(ctx, "k", "tok"); !ok || err != nil {
		t.Fatalf("Release = %v, %v, want true, nil", ok, err)
	}
}

// TestBackendSecondsFreeLate shows the documented difference from a Redis PX
// lock: with Seconds, a lock taken at a whole second becomes free 2 s after
// its TTL, not at once.
func TestBackendSecondsFreeLate(t *testing.T) {
	ctx := context.Background()
	b, _, clk := newBackend(t, legacy.Seconds)
	if _, ok, _ := b.Acquire(ctx, "k", "a", time.Minute); !ok {
		t.Fatal("Acquire failed")
	}
	clk.Add(time.Minute + time.Second + 999*time.Millisecond)
	if _, ok, err := b.Acquire(ctx, "k", "b", time.Minute); ok || err != nil {
		t.Fatalf("Acquire 1.999 s after the TTL = %v, %v, want false, nil", ok, err)
	}
	clk.Add(time.Millisecond)
	if _, ok, err := b.Acquire(ctx, "k", "b", time.Minute); !ok || err != nil {
		t.Fatalf("Acquire 2 s after the TTL = %v, %v, want true, nil", ok, err)
	}
}

func TestBackendRejectsTTLWithinMargin(t *testing.T) {
	ctx := context.Background()
	e := engine.New(engine.Options{})
	defer e.Close()
	b, err := legacy.NewBackend(legacy.Engine(e), legacy.Options{ReleaseMargin: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := b.Acquire(ctx, "k", "v", time.Second); ok || !errors.Is(err, legacy.ErrInvalidOptions) {
		t.Fatalf("Acquire(ttl = margin) = %v, %v, want false, ErrInvalidOptions", ok, err)
	}
	if _, ok := e.Get("k"); ok {
		t.Fatal("a rejected Acquire wrote the key")
	}
	if _, err := legacy.NewBackend(legacy.Engine(e), legacy.Options{ReleaseMargin: -1}); !errors.Is(err, legacy.ErrInvalidOptions) {
		t.Fatalf("NewBackend(negative margin) = %v, want ErrInvalidOptions", err)
	}
}

// TestBackendWithClient uses the Backend through lockapi.Client with a retry
// strategy: a legacy application's crashed lock is taken over once its
// stored time has passed.
func TestBackendWithClient(t *testing.T) {
	ctx := context.Background()
	b, kv, clk := newBackend(t, legacy.Seconds)
	if set, _ := kv.SetNX(ctx, "lock.foo", "1795338031"); !set { // epoch + 30 + 1
		t.Fatal("SetNX failed")
	}
	c := lockapi.New(b, lockapi.Options{Clock: clk})
	done := make(chan error, 1)
	go func() {
		l, err := c.Obtain(ctx, "lock.foo", 10*time.Second, &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(500 * time.Millisecond)})
		if err == nil {
			err = l.Release(ctx)
		}
		done <- err
	}()
	for i := 0; ; i++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Obtain+Release = %v", err)
			}
			if now := clk.Now(); now.Before(locktest.Epoch.Add(32 * time.Second)) {
				t.Fatalf("took the app's lock at %v, before its stored time passed", now)
			}
			return
		default:
		}
		if i == 1000 {
			t.Fatal("Obtain did not return")
		}
		clk.Add(100 * time.Millisecond)
	}
}

// BenchmarkBackendClientObtainRelease is an uncontended lockapi.Client
// Obtain+Release over the legacy Backend on the engine, for comparison with
// BenchmarkObtainRelease (the Locker alone).
func BenchmarkBackendClientObtainRelease(b *testing.B) {
	e := engine.New(engine.Options{})
	defer e.Close()
	be, err := legacy.NewBackend(legacy.Engine(e), legacy.Options{})
	if err != nil {
		b.Fatal(err)
	}
	c := lockapi.New(be, lockapi.Options{})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		l, err := c.Obtain(ctx, "lock.foo", 10*time.Second, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// contendBackend has workers goroutines each Obtain and Release the same key
// rounds times through lockapi.Client over one Backend (and so one table)
// on wrap(engine KV); inside the critical section each calls hold and checks
// that nobody else is inside. A mock clock, advanced from this goroutine
// only, drives their retries. It returns the overlaps seen, the
// acquisitions made and the workers' errors.
func contendBackend(t *testing.T, workers, rounds int, wrap func(legacy.KV) legacy.KV, hold func(round int, clk *clock.Mock)) (overlaps, acquired int32, errs []error) {
	t.Helper()
	e := engine.New(engine.Options{})
	t.Cleanup(func() { e.Close() })
	clk := clock.NewMock()
	clk.Set(locktest.Epoch)
	b, err := legacy.NewBackend(wrap(legacy.Engine(e)), legacy.Options{Clock: clk, Unit: legacy.Milliseconds})
	if err != nil {
		t.Fatal(err)
	}
	var inside, over, acq atomic.Int32
	errc := make(chan error, workers)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for range workers {
		c := lockapi.New(b, lockapi.Options{Clock: clk})
		wg.Go(func() {
			for round := range rounds {
				l, err := c.Obtain(ctx, "k", 10*time.Second, &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Millisecond)})
				if err != nil {
					errc <- err
					return
				}
				if inside.Add(1) != 1 {
					over.Add(1)
				}
				hold(round, clk)
				acq.Add(1)
				inside.Add(-1)
				if err := l.Release(ctx); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
drive:
	for i := 0; ; i++ {
		select {
		case <-finished:
			break drive
		default:
		}
		if i == 100_000 {
			cancel()
			<-finished
			t.Fatal("workers stuck")
		}
		clk.Add(time.Millisecond)
	}
	close(errc)
	for err := range errc {
		errs = append(errs, err)
	}
	return over.Load(), acq.Load(), errs
}

// TestBackendConcurrentClients: several Clients contend over one Backend and
// never overlap.
func TestBackendConcurrentClients(t *testing.T) {
	const workers, rounds = 4, 50
	var refused atomic.Int32
	wrap := func(kv legacy.KV) legacy.KV { return refusals{kv, &refused} }
	// Holding the lock until the mock clock moves on lets the others run
	// into it, however few cores there are.
	hold := func(_ int, clk *clock.Mock) { <-clk.After(time.Millisecond) }
	overlaps, acquired, errs := contendBackend(t, workers, rounds, wrap, hold)
	for _, err := range errs {
		t.Errorf("worker: %v", err)
	}
	if overlaps != 0 || acquired != workers*rounds {
		t.Fatalf("overlaps = %d, acquisitions = %d, want 0, %d", overlaps, acquired, workers*rounds)
	}
	if refused.Load() == 0 {
		t.Fatal("no SETNX was refused: the workers never contended")
	}
	t.Logf("%d acquisitions, %d refused SETNX", acquired, refused.Load())
}

// refusals counts refused SETNX calls.
type refusals struct {
	legacy.KV
	n *atomic.Int32
}

func (k refusals) SetNX(ctx context.Context, key, value string) (bool, error) {
	set, err := k.KV.SetNX(ctx, key, value)
	if err == nil && !set {
		k.n.Add(1)
	}
	return set, err
}

// brokenSetNX is a planted bug: its SetNX overwrites a present key and claims
// success.
type brokenSetNX struct{ legacy.KV }

func (k brokenSetNX) SetNX(ctx context.Context, key, value string) (bool, error) {
	_, _, err := k.KV.GetSet(ctx, key, value)
	return err == nil, err
}

// TestBackendOverlapCheckCatchesBrokenLock shows that contendBackend's check
// fails a lock that admits two holders: the first holder waits inside its
// critical section until a second one has entered.
func TestBackendOverlapCheckCatchesBrokenLock(t *testing.T) {
	var entered atomic.Int32
	second := make(chan struct{})
	hold := func(round int, _ *clock.Mock) {
		if round == 0 {
			if entered.Add(1) == 2 {
				close(second)
			}
			<-second
		}
	}
	overlaps, acquired, errs := contendBackend(t, 2, 3, func(kv legacy.KV) legacy.KV { return brokenSetNX{kv} }, hold)
	if overlaps == 0 {
		t.Fatalf("no overlap reported over a broken SETNX (%d acquisitions, errors %v)", acquired, errs)
	}
}
