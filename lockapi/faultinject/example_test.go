package faultinject_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/faultinject"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

// Example tests what code does when a Release's reply is lost: the lock is
// gone, the caller sees an error, and a retried Release reports ErrNotHeld
// rather than touching anyone else's lock.
func Example() {
	e := engine.New(engine.Options{})
	defer e.Close()
	fi := faultinject.New(inproc.New(e, inproc.Options{}), faultinject.Options{})
	c := lockapi.New(fi, lockapi.Options{})
	ctx := context.Background()

	l, _ := c.Obtain(ctx, "job", time.Minute, nil)
	fi.Inject(faultinject.Release, faultinject.Fault{LostReply: true, Next: 1})
	err := l.Release(ctx)
	fmt.Println("first Release:", errors.Is(err, faultinject.ErrInjected))
	fmt.Println("key still there:", e.Exists("job"))
	fmt.Println("retry:", errors.Is(l.Release(ctx), lockapi.ErrNotHeld))
	// Output:
	// first Release: true
	// key still there: false
	// retry: true
}
