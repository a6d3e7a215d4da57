// Package locktest is the conformance suite every lockapi.Backend must
// pass. A backend's tests call Run with a function that builds a fresh Env:
// the backend, the client's fake clock, and a way to move the backend's time.
//
// The suite drives a lockapi.Client over the Backend and checks the
// single-instance lock contract: exclusive acquisition, compare-and-delete
// release, compare-and-expire refresh, expiry after the TTL, ErrNotHeld for a
// lock that expired or was taken (without touching the new holder), fencing
// tokens strictly increasing per key (when Env.Fencing) and, where the
// backend promises it (Env.Flush), never repeating for any kind of lock
// even after its whole store is flushed, ctx cancellation, the lost-lock
// signal, waiters woken by a release or an expiry without polling (when
// Env.Instant), TTL reporting and metadata. It also checks
// lockapi's two contracts over the backend: the input contract (every TTL in
// [MinTTL, MaxTTL] and every non-empty key outside ReservedPrefix works,
// including keys with '{' and '}'; anything else is refused before any
// backend call) and the error contract (ErrNotObtained only when the key is
// held; a backend failure, injected with lockapi/faultinject, is reported as
// itself and never as ErrNotObtained, ErrNotHeld or a loss).
//
// On backends that implement them (lockapi.SemaphoreBackend, RWBackend,
// MultiBackend, ReentrantBackend) it checks the other kinds of lock the
// same way: a semaphore's limit, its holders changing the limit, expiry and
// wake-ups; a read-write lock's sharing, writer preference, a waiting
// writer giving up or crashing, and the absence of upgrade; multi-key
// locks all or nothing (including a porcupine check of concurrent
// histories), released, refreshed and lost together, without deadlock;
// reentrant holds, named so that a release removes only its own; and the
// input and error contracts of each. A
// backend without a primitive must refuse it with errors.ErrUnsupported.
// Bench measures every kind's acquire and release, for backends'
// benchmarks.
//
// The suite's own tests plant flaws in a reference backend (an
// unconditional delete, an overwriting acquire, restarting fences, no
// expiry, no notifications) and in the in-process backend's primitives (a
// semaphore admitting one too many, semaphore and read-write fences kept in
// a key a flush resets, readers ignoring writers, a writer's
// mark never set or never removed, multi-key locks taken key by key,
// reentrant holds miscounted), and check that the suite fails on each.
//
// Every case uses its own key (derived from the subtest name) and TTLs of a
// minute or more, so a backend with a real clock (Redis) does not expire
// anything by itself while a case runs.
package locktest

import (
	"testing"
	"time"

	bbclock "github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/clock"
	"github.com/nxkv/nxkv/lockapi"
)

// FakeClock is a clock the suite can advance: a *clock.Mock of
// github.com/benbjohnson/clock is one. The suite calls only Now, After and
// Add.
type FakeClock interface {
	clock.Clock
	// Add moves the clock forward by d, firing what is due.
	Add(d time.Duration)
}

// Env is one backend under test, built fresh for every case.
type Env struct {
	// Backend is the backend under test.
	Backend lockapi.Backend
	// Clock is the client's clock, which the suite advances to drive retry
	// delays and waiting windows; nil makes the suite use its own fake
	// clock. It may be the backend's clock too (the in-process backend): the
	// suite only advances it by small steps, far below its TTLs.
	Clock FakeClock
	// Advance moves the backend's time forward by d. When it returns, keys
	// whose deadline passed must be gone, and, when Instant, their watchers
	// notified (in-process: the engine's Mock.Add then Reap; Redis: shift
	// every TTL down by d).
	Advance func(d time.Duration)
	// Fencing says the backend returns fencing tokens from Acquire.
	Fencing bool
	// Flush, if set, deletes every key of the backend's store, the lock
	// bookkeeping included (in process: the engine's FlushAll; over the
	// Redis protocol: FLUSHALL). The suite then checks that no kind of
	// lock repeats a fencing token across it: set it only for a backend
	// that promises that (the in-process backend, and the Redis backend
	// over nxkv-server, but not over Redis).
	Flush func()
	// MinTTL, when above lockapi.MinTTL, is the shortest TTL the backend
	// can hold at all (Redlock: just above its drift allowance); shorter
	// TTLs must be refused with an error matching lockapi.ErrInvalidTTL.
	// 0 means lockapi.MinTTL.
	MinTTL time.Duration
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
				m := bbclock.NewMock()
				m.Set(Epoch)
				env.Clock = m
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
