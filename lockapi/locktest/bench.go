package locktest

import (
	"context"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
)

// Bench runs, as sub-benchmarks, one uncontended acquire and release of
// each kind of lock over b, through a lockapi Client: the mutex (with the
// default sampling of hold times, and timing every lease), a reentrant lock's first hold, a semaphore of 4
// (empty, and with 3 leases held, so that the lease takes the last slot),
// a read and a write lease of an RWMutex, and multi-key locks over 2 and 4
// keys. Each reports allocations; kinds b does not implement are skipped.
func Bench(tb *testing.B, b lockapi.Backend) {
	ctx := context.Background()
	const ttl = time.Minute
	c := lockapi.New(b, lockapi.Options{})
	run := func(name string, cycle func() (*lockapi.Lock, error)) {
		tb.Run(name, func(tb *testing.B) {
			tb.ReportAllocs()
			for tb.Loop() {
				l, err := cycle()
				if err != nil {
					tb.Fatalf("%s: %v", name, err)
				}
				if err := l.Release(ctx); err != nil {
					tb.Fatalf("%s: Release: %v", name, err)
				}
			}
		})
	}
	run("mutex", func() (*lockapi.Lock, error) { return c.Obtain(ctx, "bench:mutex", ttl, nil) })
	timed := lockapi.New(b, lockapi.Options{HoldTimeEvery: 1})
	run("mutex,every-hold-timed", func() (*lockapi.Lock, error) { return timed.Obtain(ctx, "bench:mutex", ttl, nil) })
	if _, ok := b.(lockapi.ReentrantBackend); ok {
		reentrant := &lockapi.ObtainOptions{Reentrant: true}
		run("reentrant", func() (*lockapi.Lock, error) { return c.Obtain(ctx, "bench:reentrant", ttl, reentrant) })
	}
	if _, ok := b.(lockapi.SemaphoreBackend); ok {
		sem := c.Semaphore("bench:sem", 4)
		run("semaphore,empty", func() (*lockapi.Lock, error) { return sem.Obtain(ctx, ttl, nil) })
		full := c.Semaphore("bench:sem3", 4)
		for range 3 {
			l, err := full.Obtain(ctx, ttl, nil)
			if err != nil {
				tb.Fatal(err)
			}
			defer l.Release(ctx)
		}
		run("semaphore,3-held", func() (*lockapi.Lock, error) { return full.Obtain(ctx, ttl, nil) })
	}
	if _, ok := b.(lockapi.RWBackend); ok {
		rw := c.RWMutex("bench:rw")
		run("read", func() (*lockapi.Lock, error) { return rw.ObtainRead(ctx, ttl, nil) })
		run("write", func() (*lockapi.Lock, error) { return rw.ObtainWrite(ctx, ttl, nil) })
	}
	if _, ok := b.(lockapi.MultiBackend); ok {
		two := []string{"{bench}:a", "{bench}:b"}
		four := []string{"{bench}:a", "{bench}:b", "{bench}:c", "{bench}:d"}
		run("multi-2", func() (*lockapi.Lock, error) { return c.ObtainAll(ctx, two, ttl, nil) })
		run("multi-4", func() (*lockapi.Lock, error) { return c.ObtainAll(ctx, four, ttl, nil) })
	}
}
