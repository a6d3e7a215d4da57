package legacy

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nxkv/nxkv/clock"
	"github.com/nxkv/nxkv/lockapi"
)

// KV is the storage the lock runs over: the four Redis string commands the
// protocol uses. Each call must be atomic on the server, as the Redis
// commands are; implementations must be safe for concurrent use. Errors are
// transport or server failures only: an absent key is reported through ok or
// deleted, never as an error. Engine adapts the in-process engine; package
// lockapi/goredis adapts go-redis.
type KV interface {
	// SetNX stores value at key only if key is absent (SETNX) and reports
	// whether it did.
	SetNX(ctx context.Context, key, value string) (set bool, err error)
	// Get returns the value at key (GET); ok is false when key is absent.
	Get(ctx context.Context, key string) (value string, ok bool, err error)
	// GetSet stores value at key and returns the previous value (GETSET);
	// ok is false when key was absent (and is now created).
	GetSet(ctx context.Context, key, value string) (old string, ok bool, err error)
	// Del deletes key (DEL) and reports whether it existed.
	Del(ctx context.Context, key string) (deleted bool, err error)
}

var (
	// ErrNotObtained is returned by TryObtain when the lock is held (its
	// stored time has not passed, or its value is malformed) or another
	// client won the takeover race, and by Obtain when ctx ends first (then
	// wrapping ctx.Err() too).
	ErrNotObtained = errors.New("legacy: lock not obtained")
	// ErrNotHeld is returned by Release and Refresh when this acquisition no
	// longer holds the lock: it was released, or no more than
	// Options.ReleaseMargin of its timeout remains. In that case nothing was
	// written. Release also returns it, after its DEL, if the key was already
	// gone.
	ErrNotHeld = errors.New("legacy: lock not held")
	// ErrMalformed is wrapped (together with ErrNotObtained) when the lock key
	// holds a value that is not a plausible timestamp in the Locker's unit;
	// such a lock is treated as held and never taken over.
	ErrMalformed = errors.New("legacy: malformed lock value")
	// ErrInvalidOptions is returned by New and NewBackend for inconsistent
	// Options, and by Backend.Acquire and Backend.Refresh for a TTL not
	// above the release margin. Nothing is touched.
	ErrInvalidOptions = errors.New("legacy: invalid options")
	// ErrInvalidKey is returned by Obtain and TryObtain for an empty key.
	// Nothing is touched.
	ErrInvalidKey = errors.New("legacy: invalid key")
)

const (
	// DefaultTimeout is the lock timeout when Options.Timeout is 0.
	DefaultTimeout = 10 * time.Second
	// DefaultRetryDelay is Obtain's wait between attempts when
	// Options.RetryDelay is 0.
	DefaultRetryDelay = 100 * time.Millisecond
)

// maxRounds bounds how often one attempt goes back to SETNX when the key
// vanishes between SETNX and GET (the holder released it meanwhile), so that
// TryObtain returns even on a key that churns constantly.
const maxRounds = 3

// Options configures a Locker. The zero value selects every default:
// seconds, a 10 s timeout, a 100 ms retry delay, a 1 s release margin and the
// real clock.
type Options struct {
	// Clock is the time source for timestamps, deadlines and retry delays;
	// nil selects the KV's clock when it has one (it implements
	// lockapi.Clocker, as Engine does), else the real clock (wall-clock
	// timestamps, monotonic deadlines). Every client sharing a key must have a synchronized clock
	// (see the package doc). A *clock.Mock of github.com/benbjohnson/clock
	// satisfies clock.Clock.
	Clock clock.Clock
	// Unit is the resolution of stored timestamps; the zero value is
	// Seconds, what legacy applications write.
	Unit Unit
	// Timeout is how long a lock is held before others may take it over;
	// it is rounded up to a whole unit in the stored time. 0 selects
	// DefaultTimeout; it must not be negative.
	Timeout time.Duration
	// RetryDelay is how long Obtain waits between attempts while the lock
	// is held. 0 selects DefaultRetryDelay; it must not be negative.
	RetryDelay time.Duration
	// ReleaseMargin is the part of the timeout at the end during which
	// Release and Refresh refuse to write (and return ErrNotHeld), to leave
	// room for the time their DEL or GETSET takes to reach the server and
	// for clock differences. 0 selects Timeout/10; it must be less than the
	// timeout and not negative.
	ReleaseMargin time.Duration
}

// Locker obtains legacy timestamp locks over a KV. It is safe for concurrent
// use and holds no resources: there is nothing to close. Create it with New.
type Locker struct {
	kv         KV
	clock      clock.Clock // nil: the real clock
	unit       Unit
	timeout    time.Duration
	stampAdd   int64 // timeout in units, rounded up, + 1
	retryDelay time.Duration
	margin     time.Duration
}

// New returns a Locker over kv configured by opts. It returns an error
// wrapping ErrInvalidOptions when kv is nil, opts.Unit is unknown, a
// duration is negative, or the release margin is not less than the timeout.
func New(kv KV, opts Options) (*Locker, error) {
	if kv == nil {
		return nil, fmt.Errorf("%w: nil KV", ErrInvalidOptions)
	}
	if !opts.Unit.valid() {
		return nil, fmt.Errorf("%w: unknown unit %v", ErrInvalidOptions, opts.Unit)
	}
	if opts.Timeout < 0 || opts.RetryDelay < 0 || opts.ReleaseMargin < 0 {
		return nil, fmt.Errorf("%w: negative duration (timeout %v, retry delay %v, release margin %v)",
			ErrInvalidOptions, opts.Timeout, opts.RetryDelay, opts.ReleaseMargin)
	}
	l := &Locker{
		kv:         kv,
		clock:      opts.Clock,
		unit:       opts.Unit,
		timeout:    opts.Timeout,
		retryDelay: opts.RetryDelay,
		margin:     opts.ReleaseMargin,
	}
	if l.clock == nil {
		if cl, ok := kv.(lockapi.Clocker); ok {
			l.clock = cl.Clock()
		}
	}
	if clock.IsReal(l.clock) {
		l.clock = nil
	}
	if l.timeout == 0 {
		l.timeout = DefaultTimeout
	}
	if l.retryDelay == 0 {
		l.retryDelay = DefaultRetryDelay
	}
	if l.margin == 0 {
		l.margin = l.timeout / 10
	}
	if l.margin >= l.timeout {
		return nil, fmt.Errorf("%w: release margin %v not less than timeout %v", ErrInvalidOptions, l.margin, l.timeout)
	}
	l.stampAdd = l.unit.ceil(l.timeout) + 1
	return l, nil
}

// Timeout returns the lock timeout in effect.
func (l *Locker) Timeout() time.Duration { return l.timeout }

// now reads the clock: time.Now for the real clock, whose wall reading
// makes the timestamps other applications compare and whose monotonic
// reading keeps deadlines immune to wall-clock steps.
func (l *Locker) now() time.Time {
	if l.clock == nil {
		return time.Now()
	}
	return l.clock.Now()
}

// stamp returns the value to store for a lock taken at now:
// now + timeout + 1, in whole units.
func (l *Locker) stamp(now time.Time) string { return l.stampAt(now, l.stampAdd) }

// stampAt returns the value to store at now for a lock add units ahead.
func (l *Locker) stampAt(now time.Time, add int64) string {
	return strconv.FormatInt(l.unit.floor(now)+add, 10)
}

// expired reports whether the stored value v has passed at now, or an error
// wrapping ErrMalformed.
func (l *Locker) expired(v string, now time.Time) (bool, error) {
	t, err := l.unit.parse(v)
	if err != nil {
		return false, err
	}
	return l.unit.floor(now) > t, nil
}

// Obtain acquires the lock at key, retrying every Options.RetryDelay while it
// is held, until it succeeds or ctx ends. It is safe for concurrent use. When
// ctx ends first the error wraps ErrNotObtained and ctx.Err() (and
// ErrMalformed if the key held a malformed value at the last attempt); KV
// errors end it at once, wrapped.
func (l *Locker) Obtain(ctx context.Context, key string) (*Lock, error) {
	for {
		lk, err := l.TryObtain(ctx, key)
		if err == nil || !errors.Is(err, ErrNotObtained) {
			return lk, err
		}
		if cerr := ctx.Err(); cerr != nil {
			if errors.Is(err, cerr) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %w", err, cerr)
		}
		// A fresh timer per wait: an injected clock's timers are never
		// reset (see package clock).
		timer := clock.NewTimer(l.clock, l.retryDelay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("%w: %w", err, ctx.Err())
		case <-timer.C:
		}
	}
}

// TryObtain makes one attempt to acquire the lock at key, following the
// protocol in the package doc, and never waits. It is safe for concurrent
// use. It returns an error wrapping ErrNotObtained when the lock is held or
// another client won the takeover (also wrapping ErrMalformed when the key
// holds a malformed value), wrapping ctx.Err() when ctx has already ended, or
// wrapping a KV error.
func (l *Locker) TryObtain(ctx context.Context, key string) (*Lock, error) {
	if key == "" {
		return nil, ErrInvalidKey
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrNotObtained, key, err)
	}
	value, now, err := l.acquire(ctx, key, l.stampAdd)
	if err != nil {
		return nil, err
	}
	return l.newLock(key, value, now, l.timeout, l.margin), nil
}

// acquire runs one attempt of the protocol, storing times add units ahead
// of the clock. On success it returns the value it stored and the clock
// reading that value was computed from.
func (l *Locker) acquire(ctx context.Context, key string, add int64) (value string, at time.Time, err error) {
	for range maxRounds {
		now := l.now()
		value := l.stampAt(now, add)
		set, err := l.kv.SetNX(ctx, key, value)
		if err != nil {
			return "", time.Time{}, l.kvError(ctx, "setnx", key, err)
		}
		if set {
			return value, now, nil
		}
		cur, ok, err := l.kv.Get(ctx, key)
		if err != nil {
			return "", time.Time{}, l.kvError(ctx, "get", key, err)
		}
		if !ok {
			continue // released since our SETNX: try SETNX again
		}
		// Read the clock again, right before the write it decides: a stale
		// reading would store a stale time (see the package doc).
		now = l.now()
		exp, err := l.expired(cur, now)
		if err != nil {
			return "", time.Time{}, fmt.Errorf("%w: %q: %w", ErrNotObtained, key, err)
		}
		if !exp {
			return "", time.Time{}, fmt.Errorf("%w: %q is held until %s", ErrNotObtained, key, cur)
		}
		value = l.stampAt(now, add)
		old, ok, err := l.kv.GetSet(ctx, key, value)
		if err != nil {
			return "", time.Time{}, l.kvError(ctx, "getset", key, err)
		}
		if !ok {
			// The key vanished after our GET; GETSET created it as SETNX
			// would have, so nobody else can hold it.
			return value, now, nil
		}
		exp, err = l.expired(old, now)
		if err != nil {
			return "", time.Time{}, fmt.Errorf("%w: %q: %w", ErrNotObtained, key, err)
		}
		if exp {
			return value, now, nil
		}
		return "", time.Time{}, fmt.Errorf("%w: %q was taken over by another client first", ErrNotObtained, key)
	}
	return "", time.Time{}, fmt.Errorf("%w: %q changes hands too fast", ErrNotObtained, key)
}

// kvError wraps a KV error of an acquisition attempt. When ctx has ended
// (the usual cause of a Redis client's error then), it also wraps
// ErrNotObtained and ctx.Err(), as a cancelled Obtain should.
func (l *Locker) kvError(ctx context.Context, op, key string, err error) error {
	cerr := ctx.Err()
	switch {
	case cerr == nil:
		return fmt.Errorf("legacy: %s %q: %w", op, key, err)
	case errors.Is(err, cerr):
		return fmt.Errorf("%w: %s %q: %w", ErrNotObtained, op, key, err)
	default:
		return fmt.Errorf("%w: %s %q: %w: %w", ErrNotObtained, op, key, err, cerr)
	}
}

// Lock is one acquisition of a legacy lock. Its methods are safe for
// concurrent use; Release and Refresh are serialized, so a Refresh never
// re-creates a key that a concurrent Release deleted. The zero value is not
// usable: Locks come from Obtain and TryObtain.
//
// The clock is never read with mu held (an injected clock may block on its
// own mutex): lockNow reads it, then takes mu only if it is free at once,
// so the reading is never older than the wait for mu.
type Lock struct {
	l      *Locker
	key    string
	token  string // the lockapi.Client's value, for a Backend's lock; never stored
	margin time.Duration

	// mu guards the fields below and is held across Release's and
	// Refresh's KV calls.
	mu       sync.Mutex
	value    string    // the timestamp this acquisition last wrote
	deadline time.Time // acquisition (or refresh) time + timeout, on l's clock
	held     bool      // false once released or found expired
	// sweepHint is deadline in Unix nanoseconds, written with mu held and
	// read without it by a Backend's sweeps, which need no precision.
	sweepHint atomic.Int64
}

// newLock returns a held Lock of key acquired at now with value, for ttl.
func (l *Locker) newLock(key, value string, now time.Time, ttl, margin time.Duration) *Lock {
	lk := &Lock{l: l, key: key, value: value, margin: margin, held: true}
	lk.setDeadlineLocked(now.Add(ttl)) // lk is not shared yet
	return lk
}

func (lk *Lock) setDeadlineLocked(d time.Time) {
	lk.deadline = d
	lk.sweepHint.Store(d.UnixNano())
}

// lockNow reads the clock and locks mu right after, without waiting between
// the two: if mu is held, it waits for it to be free and reads again.
func (lk *Lock) lockNow() time.Time {
	for {
		now := lk.l.now()
		if lk.mu.TryLock() {
			return now
		}
		lk.mu.Lock()
		lk.mu.Unlock()
	}
}

// Key returns the lock's key.
func (lk *Lock) Key() string { return lk.key }

// Value returns the timestamp this acquisition last stored. Another client
// may have overwritten it with a nearby time (a GETSET race loser), which
// does not mean the lock was lost.
func (lk *Lock) Value() string {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	return lk.value
}

// Deadline returns the time, on the Locker's clock, at which this
// acquisition's timeout ends: the time it was acquired or last refreshed,
// plus the timeout. Release and Refresh work until ReleaseMargin before it.
func (lk *Lock) Deadline() time.Time {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	return lk.deadline
}

// TTL returns how much of the timeout remains (never negative), or 0 once the
// lock was released. It is computed locally: the protocol keeps no TTL at
// the server.
func (lk *Lock) TTL() time.Duration {
	now := lk.lockNow()
	defer lk.mu.Unlock()
	if !lk.held {
		return 0
	}
	return max(lk.deadline.Sub(now), 0)
}

// usableLocked reports whether more than the release margin remains at now,
// and marks the lock not held otherwise.
func (lk *Lock) usableLocked(now time.Time) bool {
	if lk.held && lk.deadline.Sub(now) <= lk.margin {
		lk.held = false
	}
	return lk.held
}

// releaseLocked is Release's work, shared with Backend.Release: unless the
// lock is no longer usable at now (usable false, nothing written), DEL the
// key. After a KV error the lock stays releasable.
func (lk *Lock) releaseLocked(ctx context.Context, now time.Time) (usable, deleted bool, err error) {
	if !lk.usableLocked(now) {
		return false, false, nil
	}
	deleted, err = lk.l.kv.Del(ctx, lk.key)
	if err != nil {
		return true, false, fmt.Errorf("legacy: del %q: %w", lk.key, err)
	}
	lk.held = false
	return true, deleted, nil
}

// refreshLocked is Refresh's work, shared with Backend.Refresh: unless the
// lock is no longer usable at now (usable false, nothing written), GETSET a
// time ttl ahead of now and move the deadline, with margin as the new
// release margin. After a KV error the deadline stays the old one, the safe
// assumption whether or not the write happened.
func (lk *Lock) refreshLocked(ctx context.Context, now time.Time, ttl, margin time.Duration) (usable bool, err error) {
	if !lk.usableLocked(now) {
		return false, nil
	}
	value := lk.l.stampAt(now, lk.l.unit.ceil(ttl)+1)
	if _, _, err := lk.l.kv.GetSet(ctx, lk.key, value); err != nil {
		return true, fmt.Errorf("legacy: getset %q: %w", lk.key, err)
	}
	lk.value, lk.margin = value, margin
	lk.setDeadlineLocked(now.Add(ttl))
	return true, nil
}

// Release deletes the lock key if more than Options.ReleaseMargin of this
// acquisition's timeout remains. Otherwise it writes nothing and returns an
// error wrapping ErrNotHeld: the key may already belong to another client,
// and the bare timestamp cannot tell. It also returns ErrNotHeld after a
// first Release, and after its DEL if the key was already gone. A KV error,
// or ctx having ended before the call, is returned wrapped and leaves the
// lock releasable, so Release can be retried (the deadline check is
// repeated).
func (lk *Lock) Release(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("legacy: release %q: %w", lk.key, err)
	}
	now := lk.lockNow()
	defer lk.mu.Unlock()
	usable, deleted, err := lk.releaseLocked(ctx, now)
	switch {
	case err != nil:
		return err
	case !usable:
		return fmt.Errorf("%w: %q", ErrNotHeld, lk.key)
	case !deleted:
		return fmt.Errorf("%w: %q was already deleted", ErrNotHeld, lk.key)
	}
	return nil
}

// Refresh extends the lock by the Locker's timeout from now, storing a new
// time with GETSET, if more than Options.ReleaseMargin of the current timeout
// remains; otherwise it writes nothing and returns an error wrapping
// ErrNotHeld. The value GETSET returns is not checked: a nearby time written
// by a GETSET race loser is normal, and an absent key means GETSET created
// it as SETNX would. A KV error is returned wrapped; the deadline then stays
// the old one, the safe assumption whether or not the write happened. When
// ctx has ended before the call, it returns ctx.Err() wrapped and writes
// nothing.
func (lk *Lock) Refresh(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("legacy: refresh %q: %w", lk.key, err)
	}
	now := lk.lockNow()
	defer lk.mu.Unlock()
	usable, err := lk.refreshLocked(ctx, now, lk.l.timeout, lk.margin)
	switch {
	case err != nil:
		return err
	case !usable:
		return fmt.Errorf("%w: %q", ErrNotHeld, lk.key)
	}
	return nil
}
