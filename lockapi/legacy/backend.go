package legacy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nxkv/nxkv/clock"
	"github.com/nxkv/nxkv/lockapi"
)

// Backend adapts the legacy protocol to the lockapi.Backend interface, so
// that a lockapi.Client (retry strategies, watchdog, lost-lock signal,
// metadata) can hold locks that legacy applications honour. It is safe for
// concurrent use and holds no goroutines; there is nothing to close.
//
// The protocol stores only a timestamp, so the Client's value (its token and
// metadata) never reaches the server: the Backend remembers, in memory, the
// value and deadline of every acquisition it made, and answers Release,
// Refresh and PTTL from that memory, checked against its clock exactly as
// Lock.Release and Lock.Refresh are. Consequences:
//
//   - Only the Backend instance that acquired a lock can release, refresh or
//     see it; another instance (or process) with the same value cannot.
//   - A lock is held from the clock reading before its SETNX or GETSET for
//     the TTL; Release and Refresh refuse (ok false, nothing written) once
//     no more than the release margin remains, and PTTL reports not held
//     then too.
//   - Others can take a lock over only when its stored time has passed:
//     between one and two units after the TTL (stored times are rounded to
//     the unit). With Seconds that is up to 2 s later than a Redis PX lock
//     would expire, which is why the lockapi conformance suite, which
//     expects a lock to be free 10 ms after its TTL, passes with
//     Milliseconds only.
//   - Acquire's fence is always 0: there are no fencing tokens.
//   - It does not implement lockapi.Watcher; the Client polls with its retry
//     strategy and detects loss on a failed Refresh.
//
// The mutual-exclusion guarantees and weaknesses are those of the package
// doc.
type Backend struct {
	l      *Locker       // clock, unit and KV; its timeout is unused
	margin time.Duration // Options.ReleaseMargin; 0 means ttl/10 per lock

	mu      sync.Mutex
	held    map[string]*Lock // guarded by mu: this Backend's acquisitions by key
	sweepAt int              // guarded by mu: len(held) at which Acquire drops dead entries
}

var (
	_ lockapi.Backend = (*Backend)(nil)
	_ lockapi.Clocker = (*Backend)(nil)
)

// minSweep is the table size below which Acquire never sweeps.
const minSweep = 64

// NewBackend returns a Backend over kv. Of opts, Clock, Unit and
// ReleaseMargin apply (a zero ReleaseMargin selects a tenth of each lock's
// TTL); Timeout and RetryDelay are unused, because the Client passes a TTL
// to every call and does its own retrying. It returns an error wrapping
// ErrInvalidOptions when kv is nil, opts.Unit is unknown or the margin is
// negative.
func NewBackend(kv KV, opts Options) (*Backend, error) {
	if opts.ReleaseMargin < 0 {
		return nil, fmt.Errorf("%w: negative release margin %v", ErrInvalidOptions, opts.ReleaseMargin)
	}
	margin := opts.ReleaseMargin
	opts.Timeout, opts.RetryDelay, opts.ReleaseMargin = 0, 0, 0
	l, err := New(kv, opts)
	if err != nil {
		return nil, err
	}
	return &Backend{l: l, margin: margin, held: make(map[string]*Lock), sweepAt: minSweep}, nil
}

// Clock returns the Backend's clock (nil: the real clock), so that a
// lockapi.Client over it waits and measures leases on the same clock.
func (b *Backend) Clock() clock.Clock { return b.l.clock }

// marginFor returns the release margin of a lock with the given TTL, or an
// error wrapping ErrInvalidOptions when the lock could never be released.
func (b *Backend) marginFor(ttl time.Duration) (time.Duration, error) {
	m := b.margin
	if m == 0 {
		m = ttl / 10
	}
	if ttl <= 0 || m >= ttl {
		return 0, fmt.Errorf("%w: ttl %v not above the release margin %v", ErrInvalidOptions, ttl, m)
	}
	return m, nil
}

// Acquire runs one attempt of the protocol with a timeout of ttl. ok is false
// when the lock is held (including by a malformed value) or another client
// won the takeover race; fence is always 0. It returns ctx.Err() when ctx
// has ended, an error wrapping ErrInvalidOptions when ttl is not above the
// release margin, and KV errors wrapped.
func (b *Backend) Acquire(ctx context.Context, key, value string, ttl time.Duration) (fence int64, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return 0, false, err
	}
	margin, err := b.marginFor(ttl)
	if err != nil {
		return 0, false, err
	}
	stamp, at, err := b.l.acquire(ctx, key, b.l.unit.ceil(ttl)+1)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, ErrNotObtained) {
			return 0, false, nil
		}
		return 0, false, err
	}
	lk := b.l.newLock(key, stamp, at, ttl, margin)
	lk.token = value
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held[key] = lk
	if len(b.held) >= b.sweepAt {
		b.sweepLocked(at.UnixNano())
	}
	return 0, true, nil
}

// sweepLocked drops the entries whose deadline passed before now, so that
// locks never released do not accumulate.
func (b *Backend) sweepLocked(now int64) {
	for k, lk := range b.held {
		if lk.sweepHint.Load() < now {
			delete(b.held, k)
		}
	}
	b.sweepAt = max(2*len(b.held), minSweep)
}

// hold returns this Backend's acquisition of key with value, locked, and
// the clock read just before locking it (see Lock.lockNow); or nil.
func (b *Backend) hold(key, value string) (*Lock, time.Time) {
	b.mu.Lock()
	lk := b.held[key]
	b.mu.Unlock()
	if lk == nil || lk.token != value {
		return nil, time.Time{}
	}
	now := lk.lockNow()
	if !lk.held {
		lk.mu.Unlock()
		return nil, time.Time{}
	}
	return lk, now
}

// forgetLocked drops lk from the table once it is no longer held; lk.mu is
// held.
func (b *Backend) forgetLocked(lk *Lock) {
	if lk.held {
		return
	}
	b.mu.Lock()
	if b.held[lk.key] == lk {
		delete(b.held, lk.key)
	}
	b.mu.Unlock()
}

// Release deletes key (DEL) if this Backend acquired it with value and more
// than the release margin of its TTL remains; otherwise ok is false and
// nothing is written. ok is also false if the key was already gone. It
// returns ctx.Err() when ctx has ended and KV errors wrapped; after an
// error the acquisition stays releasable.
func (b *Backend) Release(ctx context.Context, key, value string) (ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	lk, now := b.hold(key, value)
	if lk == nil {
		return false, nil
	}
	defer lk.mu.Unlock()
	defer b.forgetLocked(lk)
	_, deleted, err := lk.releaseLocked(ctx, now)
	return deleted, err
}

// Refresh stores a new time ttl ahead (GETSET) if this Backend acquired key
// with value and more than the release margin of its current TTL remains;
// otherwise ok is false and nothing is written. It returns ctx.Err() when
// ctx has ended, an error wrapping ErrInvalidOptions when ttl is not above
// the release margin, and KV errors wrapped (the old deadline then stays).
func (b *Backend) Refresh(ctx context.Context, key, value string, ttl time.Duration) (ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	margin, err := b.marginFor(ttl)
	if err != nil {
		return false, err
	}
	lk, now := b.hold(key, value)
	if lk == nil {
		return false, nil
	}
	defer lk.mu.Unlock()
	defer b.forgetLocked(lk)
	usable, err := lk.refreshLocked(ctx, now, ttl, margin)
	return usable && err == nil, err
}

// PTTL returns the time left until the deadline of this Backend's
// acquisition of key with value. ok is false when there is none, or no more
// than the release margin remains. It does no I/O: the protocol keeps no TTL
// at the server.
func (b *Backend) PTTL(ctx context.Context, key, value string) (ttl time.Duration, ok bool, err error) {
	lk, now := b.hold(key, value)
	if lk == nil {
		return 0, false, nil
	}
	defer lk.mu.Unlock()
	defer b.forgetLocked(lk)
	if !lk.usableLocked(now) {
		return 0, false, nil
	}
	return lk.deadline.Sub(now), true, nil
}
