package lockapi_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

// overwriting is a planted bug, built only here: Acquire ignores NX and
// overwrites a held lock (SET PX instead of SET NX PX).
type overwriting struct {
	*inproc.Backend
	e *engine.Engine
}

func (o overwriting) Acquire(_ context.Context, key, value string, ttl time.Duration) (int64, bool, error) {
	return 0, true, o.e.SetPX(key, value, ttl)
}

// exclusionViolations runs goroutines x rounds acquisitions spread over
// keys through c and returns how many times a holder found someone else in
// its critical section.
func exclusionViolations(c *lockapi.Client, goroutines, rounds, keys int) (violations int64, err error) {
	inCS := make([]atomic.Int32, keys)
	var bad atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	retry := &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)}
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				k := (g + r) % keys
				l, err := c.Obtain(context.Background(), fmt.Sprint("mx:", k), time.Minute, retry)
				if err != nil {
					errs <- err
					return
				}
				if inCS[k].Add(1) != 1 {
					bad.Add(1)
				}
				for range 3 {
					runtime.Gosched()
				}
				inCS[k].Add(-1)
				l.Release(context.Background())
			}
		}()
	}
	wg.Wait()
	close(errs)
	return bad.Load(), <-errs
}

// TestMutualExclusion: 8 goroutines x 200 acquisitions on 3 keys over the
// in-process backend (real clock, watch-driven waiting), with and without
// FIFO; no holder ever finds another in its critical section.
func TestMutualExclusion(t *testing.T) {
	for _, fifo := range []bool{false, true} {
		e := engine.New(engine.Options{})
		v, err := exclusionViolations(lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{FIFO: fifo}), 8, 200, 3)
		e.Close()
		if err != nil || v != 0 {
			t.Errorf("FIFO=%v: %d exclusion violations, err %v, want 0, nil", fifo, v, err)
		}
	}
}

// TestMutualExclusionCatchesPlantedBug shows the checker above can fail: a
// backend whose Acquire overwrites held locks lets holders overlap.
func TestMutualExclusionCatchesPlantedBug(t *testing.T) {
	e := engine.New(engine.Options{})
	defer e.Close()
	c := lockapi.New(overwriting{inproc.New(e, inproc.Options{}), e}, lockapi.Options{})
	v, err := exclusionViolations(c, 8, 200, 3)
	if err != nil {
		t.Fatal(err)
	}
	if v == 0 {
		t.Error("exclusion checker found no violation with an overwriting Acquire, want some")
	}
}

// fencedStore is a protected resource: it accepts a write only with a fence
// above every fence it has accepted for the key.
type fencedStore struct {
	mu       sync.Mutex
	last     map[string]int64 // guarded by mu
	accepted int              // guarded by mu
	rejected int              // guarded by mu
}

func (s *fencedStore) write(key string, fence int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fence <= s.last[key] {
		s.rejected++
		return false
	}
	s.last[key] = fence
	s.accepted++
	return true
}

// fenceRun runs workers that obtain short locks, sometimes pause past
// their TTL, then write to a fencedStore. It returns the fences in
// acquisition order per key and the store. It must run in a synctest
// bubble (the pauses are fake time).
func fenceRun(b lockapi.Backend, workers, rounds int) (map[string][]int64, *fencedStore, error) {
	c := lockapi.New(b, lockapi.Options{})
	store := &fencedStore{last: map[string]int64{}}
	var mu sync.Mutex
	order := map[string][]int64{}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for r := 0; r < rounds; r++ {
				key := fmt.Sprint("fence:", rng.IntN(2))
				l, err := c.Obtain(context.Background(), key, 100*time.Millisecond, &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)})
				if err != nil {
					errs <- err
					return
				}
				f, _ := l.Fence()
				mu.Lock()
				order[key] = append(order[key], f)
				mu.Unlock()
				// A third of the holders pause past their TTL (a GC pause,
				// a stopped VM) before touching the resource.
				if rng.IntN(3) == 0 {
					time.Sleep(150 * time.Millisecond)
				} else {
					time.Sleep(time.Duration(rng.IntN(50)) * time.Millisecond)
				}
				store.write(key, f)
				l.Release(context.Background())
			}
		}()
	}
	wg.Wait()
	close(errs)
	return order, store, <-errs
}

// increasing reports the first place fences do not strictly increase.
func increasing(order map[string][]int64) error {
	for k, fs := range order {
		for i := 1; i < len(fs); i++ {
			if fs[i] <= fs[i-1] {
				return fmt.Errorf("key %s: fence %d acquired after %d", k, fs[i], fs[i-1])
			}
		}
	}
	return nil
}

// TestFencingWithPausedHolders: with expiries and holders paused past
// their TTL, fences are strictly increasing in acquisition order, and the
// resource rejects the stale writers.
func TestFencingWithPausedHolders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := engine.New(engine.Options{})
		defer e.Close()
		order, store, err := fenceRun(inproc.New(e, inproc.Options{}), 6, 30)
		if err != nil {
			t.Fatal(err)
		}
		if err := increasing(order); err != nil {
			t.Error(err)
		}
		if store.accepted+store.rejected != 6*30 {
			t.Errorf("store saw %d writes, want %d", store.accepted+store.rejected, 6*30)
		}
		if store.rejected == 0 {
			t.Error("no stale writer was rejected, but holders paused past their TTL")
		}
		t.Logf("%d writes accepted, %d stale writes rejected", store.accepted, store.rejected)
	})
}

// shuffledFences is a planted bug: fences that are not monotonic.
type shuffledFences struct{ *inproc.Backend }

func (s shuffledFences) Acquire(ctx context.Context, key, value string, ttl time.Duration) (int64, bool, error) {
	f, ok, err := s.Backend.Acquire(ctx, key, value, ttl)
	if ok && f%3 == 0 {
		f -= 2 // every third fence goes backwards
	}
	return f, ok, err
}

// TestFencingCatchesPlantedBug shows the fence-order checker can fail.
func TestFencingCatchesPlantedBug(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := engine.New(engine.Options{})
		defer e.Close()
		order, _, err := fenceRun(shuffledFences{inproc.New(e, inproc.Options{})}, 4, 10)
		if err != nil {
			t.Fatal(err)
		}
		if increasing(order) == nil {
			t.Error("fence-order checker accepted non-monotonic fences")
		}
	})
}

// TestStaleWriterRejected is the deterministic story: A pauses past its
// TTL, B acquires the expired lock and writes, A's late write is rejected.
func TestStaleWriterRejected(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := engine.New(engine.Options{})
		defer e.Close()
		c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
		store := &fencedStore{last: map[string]int64{}}
		a, err := c.Obtain(context.Background(), "res", time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.Obtain(context.Background(), "res", time.Second, &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)})
		if err != nil {
			t.Fatal(err) // woken by the engine when A's lock expired
		}
		fa, _ := a.Fence()
		fb, _ := b.Fence()
		if !store.write("res", fb) {
			t.Fatalf("write with B's fence %d rejected", fb)
		}
		if store.write("res", fa) {
			t.Fatalf("stale write with A's fence %d accepted after B's %d", fa, fb)
		}
		b.Release(context.Background())
	})
}
