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
// Each successful Acquire also increments a counter kept in the engine under
// a reserved key, FencePrefix + key (DefaultFencePrefix unless
// Options.FencePrefix says otherwise), and returns its new value as the
// fencing token. The counter has no TTL, so it survives the lock's releases,
// expiries and re-creations and the tokens of a key strictly increase. The
// counters stay in the engine (one small key per distinct locked key), and
// the Backend remembers each counter key's string (one map entry per
// distinct key, sharing the string the engine holds) so that acquisitions
// of a known key allocate nothing for it.
//
// The increment must be atomic with the acquisition: otherwise a holder
// whose lock expired between its SET NX PX and its increment could receive a
// larger token than the next holder, who acquired later. A striped mutex
// inside the Backend (the stripe chosen by the key's hash) is held across
// the SET NX PX and the increment, so the pair is atomic relative to every
// other Acquire of the same key through this Backend. That is enough because
// the counter moves only on acquisitions through the Backend: Release,
// Refresh and PTTL never touch it, and Acquire refuses keys in the reserved
// namespace. Whatever happens to the lock key between the two steps (an
// expiry, a delete by other code), the next acquisition must take the same
// stripe before its own SET NX PX, so its increment comes after ours: tokens
// follow acquisition order. Failed acquisitions do not increment.
//
// Share one Backend per engine (and per prefix): two Backends over the same
// counters do not exclude each other, and other code must not write the
// reserved keys.
package inproc

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"time"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
)

// DefaultFencePrefix is the reserved key namespace of the fence counters.
const DefaultFencePrefix = "nxkv:fence:"

// ErrReservedKey is returned by Acquire for a key inside the fence
// counters' namespace. Nothing is changed.
var ErrReservedKey = errors.New("inproc: key is in the reserved fence namespace")

// Options configures a Backend. The zero value selects every default.
type Options struct {
	// FencePrefix is the namespace of the fence counters; "" selects
	// DefaultFencePrefix.
	FencePrefix string
	// NoFencing turns fencing off: Acquire is a single SET NX PX and
	// returns fence 0, and no counter keys are created. Use it when nothing
	// checks fences, in particular when locking an unbounded number of
	// distinct keys (each would leave its counter behind).
	NoFencing bool
}

const fenceStripes = 256

// Backend is a lockapi.Backend and lockapi.Watcher over an engine. It is
// safe for concurrent use. Its calls never block on I/O and ignore ctx.
type Backend struct {
	e       *engine.Engine
	prefix  string
	noFence bool
	seed    maphash.Seed
	stripes [fenceStripes]stripe // make a key's acquire and increment atomic
}

type stripe struct {
	mu          sync.Mutex
	counterKeys map[string]string // guarded by mu: key -> FencePrefix+key, so Acquire builds each once
	_           [48]byte          // one cache line per stripe
}

var (
	_ lockapi.Backend = (*Backend)(nil)
	_ lockapi.Watcher = (*Backend)(nil)
)

// New returns a Backend storing locks in e. The engine stays the caller's to
// Close. New panics if e is nil.
func New(e *engine.Engine, opts Options) *Backend {
	if e == nil {
		panic("inproc: New with a nil engine")
	}
	b := &Backend{e: e, prefix: opts.FencePrefix, noFence: opts.NoFencing, seed: maphash.MakeSeed()}
	if b.prefix == "" {
		b.prefix = DefaultFencePrefix
	}
	return b
}

// Acquire stores value under key with ttl if key is absent (SET NX PX) and
// returns the key's next fencing token (0 with NoFencing). It returns
// ErrReservedKey for a key in the fence namespace, engine.ErrInvalidTTL for a
// ttl <= 0, and an error if the fence counter was corrupted by someone else
// (the acquisition is then undone).
func (b *Backend) Acquire(_ context.Context, key, value string, ttl time.Duration) (int64, bool, error) {
	if b.noFence {
		ok, err := b.e.SetNXPX(key, value, ttl)
		return 0, ok, err
	}
	if strings.HasPrefix(key, b.prefix) {
		return 0, false, fmt.Errorf("%w: %q", ErrReservedKey, key)
	}
	s := &b.stripes[maphash.String(b.seed, key)%fenceStripes]
	s.mu.Lock()
	ok, err := b.e.SetNXPX(key, value, ttl)
	if !ok || err != nil {
		s.mu.Unlock()
		return 0, false, err
	}
	ck, ok := s.counterKeys[key]
	if !ok {
		if s.counterKeys == nil {
			s.counterKeys = make(map[string]string)
		}
		ck = b.prefix + key
		s.counterKeys[key] = ck
	}
	fence, err := b.e.IncrBy(ck, 1)
	s.mu.Unlock()
	if err != nil {
		b.e.CompareAndDelete(key, value)
		return 0, false, fmt.Errorf("inproc: fence counter %q: %w", b.prefix+key, err)
	}
	return fence, true, nil
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
