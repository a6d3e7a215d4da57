package goredis_test

import (
	"testing"
	"time"

	"github.com/nxkv/nxkv/internal/redistest"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/goredis"
	"github.com/nxkv/nxkv/lockapi/locktest"
)

// TestConformance runs the lockapi conformance suite against a real
// redis-server, one server for all cases (each case uses its own key). The
// backend's time moves with advanceScript instead of sleeping.
func TestConformance(t *testing.T) {
	for _, v := range []struct {
		name    string
		opts    goredis.Options
		fencing bool
	}{
		{"scripts", goredis.Options{Native: goredis.NativeOff}, true},
		{"auto", goredis.Options{}, true},
		{"nofence", goredis.Options{NoFencing: true}, false},
	} {
		t.Run(v.name, func(t *testing.T) {
			srv := redistest.Start(t)
			c, _ := newClient(t, srv.Addr)
			locktest.Run(t, func(t *testing.T) locktest.Env {
				return locktest.Env{
					Backend: goredis.New(c, v.opts),
					Advance: func(d time.Duration) { advance(t, c, d) },
					Fencing: v.fencing,
				}
			})
		})
	}
}

var _ lockapi.Backend = (*goredis.Backend)(nil)
