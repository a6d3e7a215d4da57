package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

// Example embeds nxkv: Redis string commands on the engine, then locks
// through the lock client over the same engine. The README shows this
// function's body.
func Example() {
	e := engine.New(engine.Options{}) // sharded maps and a timer wheel; Close stops it
	defer e.Close()

	// Redis string commands, in process.
	ok, _ := e.SetNXPX("lock:invoice:42", "token-1", 10*time.Second) // SET NX PX
	v, _ := e.Get("lock:invoice:42")
	released := e.CompareAndDelete("lock:invoice:42", "token-1") // delete only if still ours
	fmt.Println(ok, v, released)

	// The lock client over the same engine.
	c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
	ctx := context.Background()
	first, err := c.Obtain(ctx, "nightly-job", time.Minute, nil) // nil: default options, no retry
	if err != nil {
		fmt.Println("not obtained:", err)
		return
	}
	firstFence, _ := first.Fence() // strictly increasing per key

	// A second Obtain waits for the lock: the engine wakes it the moment
	// the holder releases (or its TTL ends); the strategy only bounds how
	// long it may wait.
	second := make(chan *lockapi.Lock)
	go func() {
		defer close(second)
		l, err := c.Obtain(ctx, "nightly-job", time.Minute, &lockapi.ObtainOptions{
			Retry: lockapi.LimitRetry(lockapi.ExponentialBackoff(10*time.Millisecond, time.Second), 20)})
		if errors.Is(err, lockapi.ErrNotObtained) {
			fmt.Println("busy: held by another for the whole wait")
			return
		}
		if err != nil {
			fmt.Println("not obtained:", err) // a backend failure, never 'busy'
			return
		}
		second <- l
	}()
	if err := first.Release(ctx); err != nil {
		fmt.Println("release:", err)
	}
	l, ok := <-second
	if !ok {
		return
	}
	defer l.Release(ctx)
	fence, _ := l.Fence()
	fmt.Println("the next holder's fence is larger:", fence > firstFence)
	// Output:
	// true token-1 true
	// the next holder's fence is larger: true
}

// ExampleOptions_noFencing locks without fencing tokens, for programs
// that check no fences: Fence reports none.
func ExampleOptions_noFencing() {
	e := engine.New(engine.Options{})
	defer e.Close()
	c := lockapi.New(inproc.New(e, inproc.Options{NoFencing: true}), lockapi.Options{})
	ctx := context.Background()

	l, err := c.Obtain(ctx, "session:7f3a", 30*time.Second, nil)
	if err != nil {
		fmt.Println("not obtained:", err)
		return
	}
	_, fenced := l.Fence()
	fmt.Println("fenced:", fenced)
	fmt.Println(l.Release(ctx))
	// Output:
	// fenced: false
	// <nil>
}

// Example_primitives takes a lease of each kind beyond the mutex. The
// README shows this function's body.
func Example_primitives() {
	e := engine.New(engine.Options{})
	defer e.Close()
	c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
	ctx := context.Background()

	pool := c.Semaphore("db-pool", 4) // up to 4 holders, each lease with its own TTL
	lease, _ := pool.Obtain(ctx, time.Minute, nil)
	defer lease.Release(ctx)

	doc := c.RWMutex("doc:7") // many readers or one writer; a waiting writer keeps new readers out
	r, _ := doc.ObtainRead(ctx, time.Minute, nil)
	_, err := doc.ObtainWrite(ctx, time.Minute, nil) // no retry: refused beside a reader
	fmt.Println("write beside a reader:", errors.Is(err, lockapi.ErrNotObtained))
	r.Release(ctx)

	both, _ := c.ObtainAll(ctx, []string{"{acct}:A", "{acct}:B"}, time.Minute, nil) // all or nothing
	fmt.Println(both.Keys(), len(both.Fences()))
	both.Release(ctx)

	outer, _ := c.Obtain(ctx, "cart:9", time.Minute, &lockapi.ObtainOptions{Reentrant: true})
	inner, _ := c.Obtain(ctx, "cart:9", time.Minute, &lockapi.ObtainOptions{Reentrant: true, Token: outer.Token()})
	fmt.Println("holds:", inner.Holds())
	inner.Release(ctx)
	outer.Release(ctx)

	s := c.Stats() // counts, and wait and hold times, for expvar or any exporter
	fmt.Println("acquired:", s.Acquired, "released:", s.Released)
	// Output:
	// write beside a reader: true
	// [{acct}:A {acct}:B] 2
	// holds: 2
	// acquired: 5 released: 4
}

// ExampleBackend_Inspect shows who holds a lock, for how much longer, and
// with what metadata, as a debugging endpoint might.
func ExampleBackend_Inspect() {
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	e := engine.New(engine.Options{Clock: mock})
	defer e.Close()
	b := inproc.New(e, inproc.Options{})
	c := lockapi.New(b, lockapi.Options{})
	ctx := context.Background()

	c.Obtain(ctx, "nightly-job", time.Minute, &lockapi.ObtainOptions{Token: "host-a:4242", Metadata: " started 09:00"})
	mock.Add(20 * time.Second)
	for _, h := range b.Inspect("nightly-job").Holders {
		fmt.Printf("%s held by %q, %v left\n", "nightly-job", h.Value, h.TTL)
	}
	sem := c.Semaphore("db-pool", 3)
	sem.Obtain(ctx, time.Minute, nil)
	sem.Obtain(ctx, time.Minute, nil)
	fmt.Println("db-pool leases:", len(b.InspectSemaphore("db-pool", 3).Holders))
	// Output:
	// nightly-job held by "host-a:4242 started 09:00", 40s left
	// db-pool leases: 2
}
