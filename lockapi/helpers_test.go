package lockapi_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi/faultinject"
	"github.com/nxkv/nxkv/lockapi/inproc"
)

// epoch is the fake time tests start at.
var epoch = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// guard bounds real-time waits for things a correct client does at once.
const guard = 10 * time.Second

func newMock() *clock.Mock {
	c := clock.NewMock()
	c.Set(epoch)
	return c
}

// fixture is an engine on a mock clock, the inproc backend over it, and a
// fault-injecting wrapper recording Acquire calls.
type fixture struct {
	e        *engine.Engine
	ec       *clock.Mock // the engine's clock
	b        *inproc.Backend
	fi       *faultinject.WatchBackend
	acquires chan error // one value per Acquire call through fi
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{ec: newMock(), acquires: make(chan error, 1024)}
	f.e = engine.New(engine.Options{Clock: f.ec})
	t.Cleanup(func() { f.e.Close() })
	f.b = inproc.New(f.e, inproc.Options{})
	f.fi = faultinject.NewWatcher(f.b, faultinject.Options{OnCall: func(op faultinject.Op, err error) {
		if op == faultinject.Acquire {
			f.acquires <- err
		}
	}})
	return f
}

// advance moves the engine's time and reaps.
func (f *fixture) advance(d time.Duration) {
	f.ec.Add(d)
	f.e.Reap()
}

// awaitAcquires waits until n more Acquire calls have been made.
func (f *fixture) awaitAcquires(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		select {
		case <-f.acquires:
		case <-time.After(guard):
			t.Fatalf("waited for %d Acquire calls, saw %d", n, i)
		}
	}
}

// await waits for ch to close or yield.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// spinUntil yields the processor until cond holds (for states with no
// channel to wait on), failing after the guard.
func spinUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		runtime.Gosched()
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
