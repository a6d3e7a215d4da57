package inproc_test

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"go.uber.org/goleak"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi/inproc"
	"github.com/nxkv/nxkv/lockapi/locktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newEngine returns an engine on a mock clock at locktest.Epoch, closed at
// the end of the test.
func newEngine(t *testing.T) (*engine.Engine, *clock.Mock) {
	t.Helper()
	c := clock.NewMock()
	c.Set(locktest.Epoch)
	e := engine.New(engine.Options{Clock: c})
	t.Cleanup(func() { e.Close() })
	return e, c
}

func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts inproc.Options
	}{
		{"Fencing", inproc.Options{}},
		{"NoFencing", inproc.Options{NoFencing: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			locktest.Run(t, func(t *testing.T) locktest.Env {
				e, c := newEngine(t)
				return locktest.Env{
					Backend: inproc.New(e, tc.opts),
					Clock:   c,
					Advance: func(d time.Duration) { c.Add(d); e.Reap() },
					Fencing: !tc.opts.NoFencing,
					Flush:   e.FlushAll,
					Instant: true,
				}
			})
		})
	}
}
