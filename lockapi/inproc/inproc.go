// Package inproc is the in-process lockapi Backend over an *engine.Engine:
// locks live in the engine as keys with TTLs, acquisition is SET NX PX,
// release compare-and-delete, refresh compare-and-pexpire.
//
// # Waking waiters
//
// Backend implements lockapi.Watcher with the engine's Watch, which fires
// on every change of a key, including an expiry found by the engine's timer
// wheel (within about two wheel ticks of the deadline). A blocked Obtain
// therefore acquires within microseconds of a Release and within a wheel
// tick of the holder's expiry, without polling; and a Lock's Lost channel
// closes at once on expiry, overwrite or delete.
//
// # Fencing tokens
//
// Each successful Acquire returns a fencing token from the engine itself
// (engine.SetNXPXFenced): a counter incremented in the same critical section
// as the SET NX PX, so tokens of a key strictly increase in acquisition
// order across releases, expiries and re-creations, for the engine's
// lifetime. The counter lives in the engine, not in a key: it costs no
// memory per locked key, nothing stored can reset it, and any number of
// Backends over one engine share it.
//
// # Semaphores, read-write locks, multi-key and reentrant locks
//
// Backend implements every lockapi primitive. Each acquisition, release or
// refresh is one engine section (engine.Update) over the keys involved,
// with one frozen time, so it is atomic against every other engine call;
// the keys are those of the Redis backend's layout (slot keys, a writer, a
// waiting writer's mark, one key per reader, reentrant holds), so the leases of
// an engine served by nxkv-server are the same whether taken in process or
// over the Redis protocol.
//
//   - A semaphore lease is the lowest slot key below the limit found free
//     by lock-free reads, claimed in a section with the semaphore's
//     counter key, which gives its fencing token (with NoFencing, a plain
//     SET NX PX of the slot).
//   - A read-write lock's readers are listed in a key without TTL, pruned of
//     gone readers at every acquisition; since the keys a section locks
//     must be named up front, a section first reads the list and then
//     locks the keys it names, and runs again if the list changed in
//     between (after a few such races it locks every shard).
//   - A multi-key lock takes its keys with SetNXPXFenced inside one
//     section: its fences are ordered with the same keys' single locks'.
//   - A reentrant lock keeps its owner's holds, by ID, (and the lease's
//     first fence) in a key beside the lock key, with the same deadline.
//
// The fencing tokens of semaphores and read-write locks come from their
// counter keys, as over Redis, so that a lease's token is the same whether
// it was taken in process or through nxkv-server. Those keys lie under
// engine.ReservedPrefix, whose counters the engine never lets repeat a
// value: a counter deleted (by a DEL or FLUSHALL through the Redis
// protocol, or an Engine call that deletes reserved keys) or expired
// resumes above every value it had. So every primitive's tokens strictly
// increase per name for the engine's lifetime, whatever happens to the
// keys; they are not consecutive.
//
// Waiters watch the keys in their way (every slot below their limit, the
// writer, the waiting mark or a live reader, a held key), so they wake on a
// release or an expiry without polling, and each lease's Lost closes when
// its own key expires. The counters and the reader list are the only keys
// left behind once every lease is gone: a few dozen bytes per name.
//
// # Memory bound
//
// Over an engine with a memory bound (engine.Options.MaxMemory), eviction
// never takes a lease: a plain, multi-key or reentrant lock's key is
// written by engine.SetNXPXFenced (with NoFencing too), which marks it a
// held lock until it is released, expires or is overwritten, and every
// other key of the primitives (semaphore slots, read-write lock keys,
// reentrant holds, counters) lies under engine.ReservedPrefix, which
// eviction passes over. When the engine is full and may evict nothing
// else, an acquisition fails with engine.ErrOOM, a backend error to the
// Client (never ErrNotObtained), and leases already held are untouched.
//
// # Inspection
//
// Inspect, InspectSemaphore and InspectRW report a lock's holders (value
// and remaining TTL), the number of a reentrant lock's holds, and the number of
// Obtain calls waiting for it through this Backend (Clients count their
// waiters here, through lockapi.WaitTracker): a debugging aid, reading keys
// one at a time rather than as a snapshot.
//
// # Clock
//
// Backend is a lockapi.Clocker: a lockapi.Client over it with no clock of
// its own waits on the engine's clock, so a fake clock is injected once, into
// the engine.
package inproc

import (
	"context"
	"time"

	"github.com/nxkv/nxkv/clock"
	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
)

// Options configures a Backend. The zero value selects every default.
type Options struct {
	// NoFencing turns fencing off: Acquire is a plain SET NX PX and returns
	// fence 0.
	NoFencing bool
}

// Backend is a lockapi.Backend and lockapi.Watcher over an engine, with
// every primitive (lockapi.SemaphoreBackend, RWBackend, MultiBackend,
// ReentrantBackend). It is safe for concurrent use. Its calls never block
// on I/O and ignore ctx. Clients that share a Backend see each other's
// waiters in Inspect.
type Backend struct {
	e       *engine.Engine
	noFence bool
	waiters waiters
}

var (
	_ lockapi.Backend          = (*Backend)(nil)
	_ lockapi.Watcher          = (*Backend)(nil)
	_ lockapi.Clocker          = (*Backend)(nil)
	_ lockapi.SemaphoreBackend = (*Backend)(nil)
	_ lockapi.RWBackend        = (*Backend)(nil)
	_ lockapi.MultiBackend     = (*Backend)(nil)
	_ lockapi.ReentrantBackend = (*Backend)(nil)
)

// New returns a Backend storing locks in e. The engine stays the caller's to
// Close. New panics if e is nil.
func New(e *engine.Engine, opts Options) *Backend {
	if e == nil {
		panic("inproc: New with a nil engine")
	}
	return &Backend{e: e, noFence: opts.NoFencing}
}

// Clock returns the engine's clock (nil: the real clock).
func (b *Backend) Clock() clock.Clock { return b.e.Clock() }

// Acquire stores value under key with ttl if key is absent (SET NX PX) and
// returns the key's next fencing token (0 with NoFencing). It returns
// engine.ErrInvalidTTL for a ttl <= 0 or a deadline out of range, and
// engine.ErrOOM when a bounded engine is full and may evict nothing.
func (b *Backend) Acquire(_ context.Context, key, value string, ttl time.Duration) (int64, bool, error) {
	// SetNXPXFenced even without fencing: it marks the key a held lock,
	// which a bounded engine never evicts.
	fence, ok, err := b.e.SetNXPXFenced(key, value, ttl)
	if b.noFence {
		fence = 0
	}
	return fence, ok, err
}

// Release deletes key if it holds value (compare-and-delete) and reports
// whether it did; an absent key reports false.
func (b *Backend) Release(_ context.Context, key, value string) (bool, error) {
	return b.e.CompareAndDelete(key, value), nil
}

// Refresh sets key's TTL to ttl if it holds value (compare-and-pexpire) and
// reports whether it did; an absent key reports false. It returns
// engine.ErrInvalidTTL for a ttl <= 0.
func (b *Backend) Refresh(_ context.Context, key, value string, ttl time.Duration) (bool, error) {
	return b.e.CompareAndPExpire(key, value, ttl)
}

// PTTL returns key's remaining TTL if it holds value; ok is false if key is
// absent or holds another value. A key without a TTL reports
// engine.NoExpiry. The value and the TTL are read in one critical section
// (engine.GetPTTL), so the TTL is always the one of this acquisition.
func (b *Backend) PTTL(_ context.Context, key, value string) (time.Duration, bool, error) {
	v, d, ok := b.e.GetPTTL(key)
	if !ok || v != value {
		return 0, false, nil
	}
	return d, true, nil
}

// Watch returns a channel closed at the next change of key (the engine's
// Watch): write, TTL change, delete or expiry.
func (b *Backend) Watch(key string) (<-chan struct{}, func()) {
	return b.e.Watch(key)
}
