package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/faultinject"
	"github.com/nxkv/nxkv/lockapi/inproc"
	"github.com/nxkv/nxkv/lockapi/redlock"
)

// A Redlock over three independent nodes (in-process engines here; Redis
// masters through lockapi/goredis in production) used through the ordinary
// lockapi Client.
func Example() {
	ctx := context.Background()
	var nodes []lockapi.Backend
	for i := 0; i < 3; i++ {
		e := engine.New(engine.Options{})
		defer e.Close()
		nodes = append(nodes, inproc.New(e, inproc.Options{}))
	}
	rl, err := redlock.New(nodes, redlock.Options{})
	if err != nil {
		panic(err)
	}
	client := lockapi.New(rl, lockapi.Options{})

	l, err := client.Obtain(ctx, "nightly-report", 10*time.Second, nil)
	if err != nil {
		panic(err)
	}
	_, hasFence := l.Fence()
	fmt.Println("obtained; fencing token available:", hasFence)

	_, err = client.Obtain(ctx, "nightly-report", 10*time.Second, nil)
	fmt.Println("second Obtain:", errors.Is(err, lockapi.ErrNotObtained))

	fmt.Println("release:", l.Release(ctx))
	// Output:
	// obtained; fencing token available: false
	// second Obtain: true
	// release: <nil>
}

// With a majority of nodes failing, Obtain fails with an *redlock.Error that
// names them.
func Example_noQuorum() {
	ctx := context.Background()
	var nodes []lockapi.Backend
	for i := 0; i < 3; i++ {
		e := engine.New(engine.Options{})
		defer e.Close()
		fi := faultinject.New(inproc.New(e, inproc.Options{}), faultinject.Options{})
		if i > 0 {
			for _, op := range []faultinject.Op{faultinject.Acquire, faultinject.Release} {
				fi.Inject(op, faultinject.Fault{Err: errors.New("connection refused")})
			}
		}
		nodes = append(nodes, fi)
	}
	rl, err := redlock.New(nodes, redlock.Options{Names: []string{"eu-1", "eu-2", "us-1"}, Tries: 1})
	if err != nil {
		panic(err)
	}
	_, err = lockapi.New(rl, lockapi.Options{}).Obtain(ctx, "nightly-report", 10*time.Second, nil)
	var rerr *redlock.Error
	if errors.As(err, &rerr) {
		fmt.Println(errors.Is(err, redlock.ErrNoQuorum), rerr.FailedNodes())
	}
	// Output:
	// true [eu-2 us-1]
}
