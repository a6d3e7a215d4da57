package locktest_test

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi/inproc"
	"github.com/nxkv/nxkv/lockapi/locktest"
)

// ExampleRun shows a backend's conformance test: here the in-process
// backend over an engine on a mock clock, whose time Advance moves.
func ExampleRun() {
	_ = func(t *testing.T) { // a TestConformance in the backend's package
		locktest.Run(t, func(t *testing.T) locktest.Env {
			c := clock.NewMock()
			c.Set(locktest.Epoch)
			e := engine.New(engine.Options{Clock: c})
			t.Cleanup(func() { e.Close() })
			return locktest.Env{
				Backend: inproc.New(e, inproc.Options{}),
				Clock:   c, // the client may share the engine's clock
				Advance: func(d time.Duration) { c.Add(d); e.Reap() },
				Fencing: true,
				Instant: true,
			}
		})
	}
}
