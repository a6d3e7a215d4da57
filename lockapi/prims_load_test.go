package lockapi_test

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

// primViolations runs goroutines x rounds acquisitions through c, each
// goroutine taking in turn a semaphore lease (of limit), a read lease and a
// write lease, waiting as long as it takes (woken by the engine), and
// counts the times a holder found the primitive's rule broken: more than
// limit holders, a writer beside anyone. It also tells whether every
// acquisition came through, which a missed wake-up would prevent.
func primViolations(c *lockapi.Client, goroutines, rounds, limit int) (int64, error) {
	var semHeld, readers, writers atomic.Int32
	var bad atomic.Int64
	wait := &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sem, rw := c.Semaphore("load:sem", limit), c.RWMutex("load:rw")
	hold := func() {
		for range 3 {
			runtime.Gosched()
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				var (
					l   *lockapi.Lock
					err error
				)
				switch (g + r) % 3 {
				case 0:
					if l, err = sem.Obtain(ctx, time.Minute, wait); err == nil {
						if semHeld.Add(1) > int32(limit) {
							bad.Add(1)
						}
						hold()
						semHeld.Add(-1)
					}
				case 1:
					if l, err = rw.ObtainRead(ctx, time.Minute, wait); err == nil {
						readers.Add(1)
						if writers.Load() != 0 {
							bad.Add(1)
						}
						hold()
						readers.Add(-1)
					}
				default:
					if l, err = rw.ObtainWrite(ctx, time.Minute, wait); err == nil {
						if writers.Add(1) != 1 || readers.Load() != 0 {
							bad.Add(1)
						}
						hold()
						writers.Add(-1)
					}
				}
				if err != nil {
					errs <- fmt.Errorf("goroutine %d round %d: %w", g, r, err)
					return
				}
				if err := l.Release(context.Background()); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return bad.Load(), <-errs
}

// TestPrimitivesUnderLoad: 8 goroutines x 150 acquisitions of a semaphore
// of 2 and a read-write lock on the in-process backend (real clock,
// waiters woken by the engine, read-write sections racing their optimistic
// reads): never more than 2 holders, never a writer beside anyone, and no
// waiter left behind.
func TestPrimitivesUnderLoad(t *testing.T) {
	e := engine.New(engine.Options{})
	defer e.Close()
	v, err := primViolations(lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{}), 8, 150, 2)
	if err != nil || v != 0 {
		t.Fatalf("%d violations, err %v, want 0, nil", v, err)
	}
}

// apart is a planted bug: readers take a read-write lock other than the
// writers' (and the semaphore admits one more).
type apart struct{ *inproc.Backend }

func (a apart) AcquireRead(ctx context.Context, name, value string, ttl time.Duration) (string, int64, bool, error) {
	return a.Backend.AcquireRead(ctx, name+"'", value, ttl)
}

func (a apart) AcquireSlot(ctx context.Context, name string, limit int, value string, ttl time.Duration) (string, int64, bool, error) {
	return a.Backend.AcquireSlot(ctx, name, limit+1, value, ttl)
}

// TestPrimitivesUnderLoadCatchesPlantedBug shows the checker above can
// fail.
func TestPrimitivesUnderLoadCatchesPlantedBug(t *testing.T) {
	e := engine.New(engine.Options{})
	defer e.Close()
	v, err := primViolations(lockapi.New(apart{inproc.New(e, inproc.Options{})}, lockapi.Options{}), 8, 150, 2)
	if err != nil {
		t.Fatal(err)
	}
	if v == 0 {
		t.Error("the checker found no violation with readers apart from writers, want some")
	}
}
