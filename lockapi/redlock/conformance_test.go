package redlock_test

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/locktest"
	"github.com/nxkv/nxkv/lockapi/redlock"
)

// TestConformance runs the lockapi conformance suite over a Redlock of five
// fake nodes, each with its own clock; Advance moves every node's clock and
// the Redlock's. Redlock gives no fencing tokens.
func TestConformance(t *testing.T) {
	locktest.Run(t, func(t *testing.T) locktest.Env {
		rlClock := clock.NewMock()
		rlClock.Set(locktest.Epoch)
		nodes := make([]*fakeNode, 5)
		backends := make([]lockapi.Backend, 5)
		for i := range nodes {
			nodes[i] = newFakeNode(t)
			backends[i] = nodes[i]
		}
		rl, err := redlock.New(backends, redlock.Options{Clock: rlClock, Tries: 1})
		if err != nil {
			t.Fatal(err)
		}
		return locktest.Env{
			Backend: rl,
			MinTTL:  3 * time.Millisecond, // above the default drift allowance, 2ms + 1%
			Advance: func(d time.Duration) {
				for _, n := range nodes {
					n.clock.Add(d)
				}
				rlClock.Add(d)
			},
		}
	})
}
