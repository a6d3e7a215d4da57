package inproc_test

import (
	"context"
	"errors"
	"fmt"
	"time"

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
