package lockapi_test

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

// Example obtains and releases a lock on the in-process backend.
func Example() {
	e := engine.New(engine.Options{})
	defer e.Close()
	c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
	ctx := context.Background()

	l, err := c.Obtain(ctx, "invoice:42", 10*time.Second, nil)
	if err != nil {
		fmt.Println("busy:", err)
		return
	}
	fmt.Println("locked", l.Key())

	// A second Obtain fails at once (the default strategy is NoRetry).
	_, err = c.Obtain(ctx, "invoice:42", 10*time.Second, nil)
	fmt.Println(errors.Is(err, lockapi.ErrNotObtained))

	fmt.Println(l.Release(ctx))
	fmt.Println(errors.Is(l.Release(ctx), lockapi.ErrNotHeld))
	// Output:
	// locked invoice:42
	// true
	// <nil>
	// true
}

// ExampleRetryStrategy waits for a lock held by someone else. On the
// in-process backend the waiter wakes when the holder releases, not by
// polling; the strategy only bounds how long it may wait.
func ExampleRetryStrategy() {
	e := engine.New(engine.Options{})
	defer e.Close()
	c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
	ctx := context.Background()

	holder, _ := c.Obtain(ctx, "nightly-job", time.Minute, nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		retry := lockapi.LimitRetry(lockapi.ExponentialBackoff(10*time.Millisecond, time.Second), 20)
		l, err := c.Obtain(ctx, "nightly-job", time.Minute, &lockapi.ObtainOptions{Retry: retry})
		if err != nil {
			fmt.Println("gave up:", err)
			return
		}
		fmt.Println("waiter got the lock")
		l.Release(ctx)
	}()
	holder.Release(ctx)
	<-done
	// Output:
	// waiter got the lock
}

// ExampleLock_Fence protects a resource with fencing tokens: a holder that
// was paused past its TTL comes back with a stale fence and is refused.
func ExampleLock_Fence() {
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	e := engine.New(engine.Options{Clock: mock})
	defer e.Close()
	c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
	ctx := context.Background()

	var highest int64 // the resource remembers the highest fence it saw
	write := func(who string, l *lockapi.Lock) {
		f, _ := l.Fence()
		if f <= highest {
			fmt.Printf("%s (fence %d): rejected, stale\n", who, f)
			return
		}
		highest = f
		fmt.Printf("%s (fence %d): written\n", who, f)
	}

	a, _ := c.Obtain(ctx, "ledger", time.Second, nil)
	mock.Add(2 * time.Second) // A pauses past its TTL...
	e.Reap()
	b, _ := c.Obtain(ctx, "ledger", time.Second, nil) // ...and B takes the lock
	write("B", b)
	write("A", a)
	// Output:
	// B (fence 2): written
	// A (fence 1): rejected, stale
}

// ExampleAutoRefresh keeps a lock alive past its TTL with a watchdog
// limited to three extensions; when they are used up the lock is lost when
// its lease ends, and Lost and Err say so. The fake clock is given once, to
// the engine: the Client takes it from the backend. (Tests can instead run
// in a testing/synctest bubble and inject nothing; see the package doc.)
func ExampleAutoRefresh() {
	mock := clock.NewMock()
	mock.Set(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	e := engine.New(engine.Options{Clock: mock})
	defer e.Close()
	c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
	ctx := context.Background()

	l, _ := c.Obtain(ctx, "report", 30*time.Second,
		&lockapi.ObtainOptions{AutoRefresh: &lockapi.AutoRefresh{MaxExtensions: 3}}) // every 10s
	lost := l.Lost()
	start := mock.Now()
	for !isClosed(lost) && mock.Since(start) < time.Hour {
		mock.Add(time.Second)
		e.Reap()
	}
	fmt.Println("outlived its 30s TTL:", mock.Since(start) > 40*time.Second)
	fmt.Println("lost:", errors.Is(l.Err(), lockapi.ErrLost))
	// Output:
	// outlived its 30s TTL: true
	// lost: true
}

// ExampleLock_Lost reacts to losing a lock: on the in-process backend the
// channel closes as soon as the key is expired, deleted or overwritten.
func ExampleLock_Lost() {
	e := engine.New(engine.Options{})
	defer e.Close()
	c := lockapi.New(inproc.New(e, inproc.Options{}), lockapi.Options{})
	ctx := context.Background()

	l, _ := c.Obtain(ctx, "leader", time.Minute, nil)
	lost := l.Lost()
	e.Set("leader", "an operator's manual override") // someone overwrites the lock
	<-lost
	fmt.Println(errors.Is(l.Err(), lockapi.ErrLost), errors.Is(l.Err(), lockapi.ErrNotHeld))
	fmt.Println(errors.Is(l.Release(ctx), lockapi.ErrNotHeld))
	// Output:
	// true true
	// true
}
