package legacy_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/legacy"
)

// Example shares a legacy lock between two clients of the in-process engine.
// A mock clock makes the stored timestamps reproducible; production code
// leaves Options.Clock nil.
func Example() {
	e := engine.New(engine.Options{})
	defer e.Close()
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)) // Unix 1795338000
	opts := legacy.Options{Clock: clk, Timeout: 30 * time.Second}
	a, _ := legacy.New(legacy.Engine(e), opts)
	b, _ := legacy.New(legacy.Engine(e), opts)
	ctx := context.Background()

	lk, err := a.Obtain(ctx, "lock.foo")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("a holds it; stored now + timeout + 1 =", lk.Value())

	_, err = b.TryObtain(ctx, "lock.foo")
	fmt.Println("b while a holds it:", errors.Is(err, legacy.ErrNotObtained))

	// a crashes without releasing. Once the stored time has passed, b takes
	// the lock over with GETSET.
	clk.Add(32 * time.Second)
	lk2, err := b.TryObtain(ctx, "lock.foo")
	fmt.Println("b after a's time passed:", err == nil, lk2.Value())

	// a's late Release is refused and deletes nothing.
	fmt.Println("a's late release:", errors.Is(lk.Release(ctx), legacy.ErrNotHeld))
	fmt.Println("b's release:", lk2.Release(ctx))
	// Output:
	// a holds it; stored now + timeout + 1 = 1795338031
	// b while a holds it: true
	// b after a's time passed: true 1795338063
	// a's late release: true
	// b's release: <nil>
}

// ExampleNewBackend uses the legacy protocol through lockapi.Client, here
// over the in-process engine; with lockapi/goredis.LegacyKV it would share
// locks with legacy applications on a Redis server.
func ExampleNewBackend() {
	e := engine.New(engine.Options{})
	defer e.Close()
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
	b, err := legacy.NewBackend(legacy.Engine(e), legacy.Options{Clock: clk})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := lockapi.New(b, lockapi.Options{}) // takes the Backend's clock
	ctx := context.Background()

	l, err := c.Obtain(ctx, "lock.foo", 30*time.Second, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	stored, _ := e.Get("lock.foo")
	fmt.Println("stored:", stored) // a timestamp, not the client's token
	ttl, _ := l.TTL(ctx)
	fmt.Println("ttl:", ttl)
	fmt.Println("release:", l.Release(ctx))
	// Output:
	// stored: 1795338031
	// ttl: 30s
	// release: <nil>
}
