package inproc

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi/locktest"
)

// TestRWFallback runs the conformance suite with read-write sections that
// always take the fallback (every shard locked, the keys read inside),
// which otherwise runs only after repeated races.
func TestRWFallback(t *testing.T) {
	defer func(n int) { optimisticTries = n }(optimisticTries)
	optimisticTries = 0
	locktest.Run(t, func(t *testing.T) locktest.Env {
		c := clock.NewMock()
		c.Set(locktest.Epoch)
		e := engine.New(engine.Options{Clock: c})
		t.Cleanup(func() { e.Close() })
		return locktest.Env{
			Backend: New(e, Options{}),
			Clock:   c,
			Advance: func(d time.Duration) { c.Add(d); e.Reap() },
			Fencing: true,
			Instant: true,
		}
	})
}
