package inproc_test

import (
	"context"
	"fmt"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

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
