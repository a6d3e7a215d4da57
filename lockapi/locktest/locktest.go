// Package locktest is the conformance suite every lockapi.Backend must
// pass. A backend's tests call Run with a function that builds a fresh Env:
// the backend, the client's fake clock, and a way to move the backend's time.
//
// The suite drives a lockapi.Client over the Backend and checks the
// single-instance lock contract: exclusive acquisition, compare-and-delete
// release, compare-and-expire refresh, expiry after the TTL, ErrNotHeld for a
// lock that expired or was taken (without touching the new holder), fencing
// tokens strictly increasing per key (when Env.Fencing), ctx cancellation,
// the lost-lock signal, waiters woken by a release or an expiry without
// polling (when Env.Instant), TTL reporting, metadata and bad input.
//
// The suite's own tests plant flaws in a reference backend (an
// unconditional delete, an overwriting acquire, restarting fences, no
// expiry, no notifications) and check that the suite fails on each.
//
// Every case uses its own key (derived from the subtest name) and TTLs of a
// minute or more, so a backend with a real clock (Redis) does not expire
// anything by itself while a case runs.
package locktest

import (
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/lockapi"
)

// Env is one backend under test, built fresh for every case.
type Env struct {
	// Backend is the backend under test.
	Backend lockapi.Backend
	// Clock is the client's clock, which the suite advances to drive retry
	// delays and waiting windows; nil makes the suite use its own Mock. It
	// may be the backend's clock too (the in-process backend): the suite
	// only advances it by small steps, far below its TTLs.
	Clock *clock.Mock
	// Advance moves the backend's time forward by d. When it returns, keys
	// whose deadline passed must be gone, and, when Instant, their watchers
	// notified (in-process: the engine's Mock.Add then Reap; Redis: shift
	// every TTL down by d).
	Advance func(d time.Duration)
	// Fencing says the backend returns fencing tokens from Acquire.
	Fencing bool
	// Instant says the backend implements lockapi.Watcher and reports
	// every change of a key, so waiters wake and loss is signalled at once.
	Instant bool
}

// Run runs the conformance suite, one subtest per case, calling newEnv for
// each case. Subtests run sequentially.
func Run(t *testing.T, newEnv func(t *testing.T) Env) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			if env.Backend == nil || env.Advance == nil {
				t.Fatal("locktest: Env.Backend and Env.Advance are required")
			}
			if env.Clock == nil {
				env.Clock = clock.NewMock()
				env.Clock.Set(Epoch)
			}
			if _, ok := env.Backend.(lockapi.Watcher); env.Instant && !ok {
				t.Fatal("locktest: Env.Instant set but the Backend does not implement lockapi.Watcher")
			}
			tc.run(t, &suite{t: t, env: env})
		})
	}
}

// Epoch is the fake time the suite starts its own clocks at; backends'
// tests may use it for theirs.
var Epoch = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
