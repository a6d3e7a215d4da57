package lockapi_test

import (
	"context"
	"errors"
	"expvar"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

// ExampleSemaphore lets at most two workers use a connection pool at once;
// each lease has its own TTL and is released on its own.
func ExampleSemaphore() {
	e := engine.New(engine.Options{})
	defer e.Close()
	c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
	ctx := context.Background()
	pool := c.Semaphore("db-pool", 2)

	a, _ := pool.Obtain(ctx, time.Minute, nil)
	b, _ := pool.Obtain(ctx, time.Minute, nil)
	_, err := pool.Obtain(ctx, time.Minute, nil)
	fmt.Println("third:", errors.Is(err, lockapi.ErrNotObtained))

	a.Release(ctx)
	third, err := pool.Obtain(ctx, time.Minute, nil)
	fmt.Println("after a release:", err, third.Kind())
	fa, _ := a.Fence()
	fc, _ := third.Fence()
	fmt.Println("fences increase:", fc > fa)
	b.Release(ctx)
	third.Release(ctx)
	// Output:
	// third: true
	// after a release: <nil> semaphore
	// fences increase: true
}

// ExampleRWMutex shares a document between readers, lets one writer in
// once they are gone, and shows that a waiting writer keeps new readers
// out.
func ExampleRWMutex() {
	e := engine.New(engine.Options{})
	defer e.Close()
	b := inproc.New(e, inproc.Options{})
	c := lockapi.New(b, lockapi.Options{})
	ctx := context.Background()
	doc := c.RWMutex("doc:7")

	r1, _ := doc.ObtainRead(ctx, time.Minute, nil)
	r2, _ := doc.ObtainRead(ctx, time.Minute, nil)
	_, err := doc.ObtainWrite(ctx, time.Minute, nil)
	fmt.Println("write beside readers:", errors.Is(err, lockapi.ErrNotObtained))

	written := make(chan struct{})
	go func() {
		defer close(written)
		w, err := doc.ObtainWrite(ctx, time.Minute, &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("writer in")
		w.Release(ctx)
	}()
	for b.InspectRW("doc:7").WriterWaiting == nil {
		runtime.Gosched() // until the writer has marked itself waiting
	}
	_, err = doc.ObtainRead(ctx, time.Minute, nil)
	fmt.Println("read while a writer waits:", errors.Is(err, lockapi.ErrNotObtained))
	r1.Release(ctx)
	r2.Release(ctx) // the last reader leaves: the writer gets the lock
	<-written
	r3, err := doc.ObtainRead(ctx, time.Minute, nil)
	fmt.Println("read after the writer:", err)
	r3.Release(ctx)
	// Output:
	// write beside readers: true
	// read while a writer waits: true
	// writer in
	// read after the writer: <nil>
}

// ExampleClient_ObtainAll moves money between two accounts, locking both
// at once: no deadlock whatever order other transfers name them in, and
// nothing is held if one of them is busy.
func ExampleClient_ObtainAll() {
	e := engine.New(engine.Options{})
	defer e.Close()
	c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
	ctx := context.Background()

	busy, _ := c.Obtain(ctx, "account:B", time.Minute, nil)
	_, err := c.ObtainAll(ctx, []string{"account:A", "account:B"}, time.Minute, nil)
	fmt.Println("B busy:", errors.Is(err, lockapi.ErrNotObtained))
	_, err = c.Obtain(ctx, "account:A", time.Minute, nil)
	fmt.Println("A left free:", err == nil)
	e.Del("account:A")
	busy.Release(ctx)

	l, err := c.ObtainAll(ctx, []string{"account:B", "account:A"}, time.Minute, nil)
	fmt.Println(err, l.Keys(), len(l.Fences()))
	fmt.Println(l.Release(ctx))
	// Output:
	// B busy: true
	// A left free: true
	// <nil> [account:B account:A] 2
	// <nil>
}

// ExampleObtainOptions_reentrant re-enters a lock its owner holds: each
// Obtain with the owner's token is one more hold, and the key is free once
// every hold is released.
func ExampleObtainOptions_reentrant() {
	e := engine.New(engine.Options{})
	defer e.Close()
	c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
	ctx := context.Background()

	outer, _ := c.Obtain(ctx, "cart:9", time.Minute, &lockapi.ObtainOptions{Reentrant: true})
	inner, _ := c.Obtain(ctx, "cart:9", time.Minute, &lockapi.ObtainOptions{Reentrant: true, Token: outer.Token()})
	fmt.Println("holds:", outer.Holds(), inner.Holds())
	_, err := c.Obtain(ctx, "cart:9", time.Minute, &lockapi.ObtainOptions{Reentrant: true})
	fmt.Println("another owner:", errors.Is(err, lockapi.ErrNotObtained))
	inner.Release(ctx)
	_, err = c.Obtain(ctx, "cart:9", time.Minute, nil)
	fmt.Println("still held after one release:", errors.Is(err, lockapi.ErrNotObtained))
	outer.Release(ctx)
	l, err := c.Obtain(ctx, "cart:9", time.Minute, nil)
	fmt.Println("free after the last:", err)
	l.Release(ctx)
	// Output:
	// holds: 1 2
	// another owner: true
	// still held after one release: true
	// free after the last: <nil>
}

// ExampleClient_Stats exports a Client's Stats with the standard library's
// expvar, which serves them as JSON at /debug/vars; no metrics library is
// needed. The engine's fake clock makes the hold time exact here.
func ExampleClient_Stats() {
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	e := engine.New(engine.Options{Clock: mock})
	defer e.Close()
	// Time every lease's hold (by default one in 16 is sampled).
	c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{HoldTimeEvery: 1})
	ctx := context.Background()

	expvar.Publish("locks", expvar.Func(func() any {
		s := c.Stats()
		return map[string]any{
			"acquired": s.Acquired, "released": s.Released, "expired": s.Expired, "lost": s.Lost,
			"refresh_failures": s.RefreshFailures, "waited": s.Waited, "not_obtained": s.NotObtained,
			"wait_p99_ms":  s.WaitTime.Quantile(0.99).Milliseconds(),
			"hold_p50_ms":  s.HoldTime.Quantile(0.5).Milliseconds(),
			"hold_mean_ms": s.HoldTime.Mean().Milliseconds(),
		}
	}))

	l, _ := c.Obtain(ctx, "report", time.Minute, nil)
	c.Obtain(ctx, "report", time.Minute, nil) // refused: busy
	mock.Add(100 * time.Millisecond)
	l.Release(ctx)
	fmt.Println(expvar.Get("locks"))
	// Output:
	// {"acquired":1,"expired":0,"hold_mean_ms":100,"hold_p50_ms":131,"lost":0,"not_obtained":1,"refresh_failures":0,"released":1,"wait_p99_ms":0,"waited":0}
}

// ExampleLogEvents logs every acquisition, release, loss and failed
// refresh with log/slog.
func ExampleLogEvents() {
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	e := engine.New(engine.Options{Clock: mock})
	defer e.Close()
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // for a stable output
			}
			return a
		}}))
	c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{OnEvent: lockapi.LogEvents(logger)})
	ctx := context.Background()

	l, _ := c.Obtain(ctx, "report", time.Minute, &lockapi.ObtainOptions{Token: "worker-7"})
	mock.Add(2 * time.Second)
	l.Release(ctx)
	// Output:
	// level=DEBUG msg="lock acquired" lock.event=acquired lock.kind=mutex lock.key=report lock.token=worker-7 lock.fence=1 lock.wait=0s lock.ttl=1m0s
	// level=DEBUG msg="lock released" lock.event=released lock.kind=mutex lock.key=report lock.token=worker-7 lock.fence=1 lock.held=2s
}
