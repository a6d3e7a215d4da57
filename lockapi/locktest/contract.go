package locktest

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/faultinject"
)

// counting wraps a Backend and counts its calls, to show that refused input
// never reaches the backend. If acquired is not nil, each Acquire call sends
// on it once it returned (dropped when the buffer is full).
type counting struct {
	lockapi.Backend
	calls    atomic.Int64
	acquired chan struct{}
}

func (c *counting) Acquire(ctx context.Context, key, value string, ttl time.Duration) (int64, bool, error) {
	c.calls.Add(1)
	if c.acquired != nil {
		defer func() {
			select {
			case c.acquired <- struct{}{}:
			default:
			}
		}()
	}
	return c.Backend.Acquire(ctx, key, value, ttl)
}

func (c *counting) Release(ctx context.Context, key, value string) (bool, error) {
	c.calls.Add(1)
	return c.Backend.Release(ctx, key, value)
}

func (c *counting) Refresh(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	c.calls.Add(1)
	return c.Backend.Refresh(ctx, key, value, ttl)
}

func (c *counting) PTTL(ctx context.Context, key, value string) (time.Duration, bool, error) {
	c.calls.Add(1)
	return c.Backend.PTTL(ctx, key, value)
}

// testInvalidInput: TTLs outside [MinTTL, MaxTTL], empty and reserved keys
// and bad options are refused with their sentinel before any backend call,
// and leave the key untouched.
func testInvalidInput(t *testing.T, s *suite) {
	cb := &counting{Backend: s.env.Backend}
	c := lockapi.New(cb, lockapi.Options{Clock: s.env.Clock})
	ctx := context.Background()
	noCalls := func(what string) {
		t.Helper()
		if n := cb.calls.Swap(0); n != 0 {
			t.Errorf("%s made %d backend calls, want 0", what, n)
		}
	}
	badTTLs := []time.Duration{0, -time.Second, lockapi.MinTTL - 1, 500 * time.Microsecond, lockapi.MaxTTL + 1, 1<<63 - 1}
	for _, d := range badTTLs {
		if _, err := c.Obtain(ctx, s.key(), d, nil); !errors.Is(err, lockapi.ErrInvalidTTL) {
			t.Errorf("Obtain(ttl=%v) = %v, want ErrInvalidTTL", d, err)
		}
		noCalls("Obtain with a bad ttl")
	}
	for _, key := range []string{"", lockapi.ReservedPrefix, lockapi.ReservedPrefix + "fence:" + s.key()} {
		if _, err := c.Obtain(ctx, key, ttl, nil); !errors.Is(err, lockapi.ErrInvalidKey) {
			t.Errorf("Obtain(key=%q) = %v, want ErrInvalidKey", key, err)
		}
		noCalls("Obtain with a bad key")
	}
	for _, ar := range []lockapi.AutoRefresh{{Interval: ttl}, {Interval: -1}, {TTL: 500 * time.Microsecond}, {MaxExtensions: -1}} {
		if _, err := c.Obtain(ctx, s.key(), ttl, &lockapi.ObtainOptions{AutoRefresh: &ar}); !errors.Is(err, lockapi.ErrInvalidOption) {
			t.Errorf("Obtain(AutoRefresh %+v) = %v, want ErrInvalidOption", ar, err)
		}
		noCalls("Obtain with a bad AutoRefresh")
	}
	// None of that touched the key.
	l := s.obtain(c, s.key(), ttl, nil)
	before := s.mustHold(l)
	cb.calls.Store(0)
	for _, d := range badTTLs {
		if err := l.Refresh(ctx, d); !errors.Is(err, lockapi.ErrInvalidTTL) {
			t.Errorf("Refresh(%v) = %v, want ErrInvalidTTL", d, err)
		}
		noCalls("Refresh with a bad ttl")
	}
	if after := s.mustHold(l); after > before || after < before-5*time.Second {
		t.Errorf("TTL() after bad Refresh calls = %v, was %v, want unchanged", after, before)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release() = %v, want nil", err)
	}
}

// oddKeys are keys every backend must lock like any other: braces that do
// and do not form a Redis Cluster hash tag, bytes outside ASCII, spaces, a
// NUL, and a long key.
var oddKeys = []string{"job}x", "{job}x", "{", "}", "{}", "}{", "{}{job}", "a{b", "a}b{c}", "ключ", "with space", "nul\x00byte", strings.Repeat("k", 1024)}

// testKeys: every non-empty key outside the reserved namespace is accepted,
// is exclusive, gets increasing fences (when Fencing) and releases.
func testKeys(t *testing.T, s *suite) {
	c := s.client()
	ctx := context.Background()
	for _, k := range oddKeys {
		key := s.key() + ":" + k
		if k == "job}x" {
			key = k // exactly the key that once failed over Redis
		}
		l, err := c.Obtain(ctx, key, ttl, nil)
		if err != nil {
			t.Errorf("Obtain(%q) = %v, want a lock", key, err)
			continue
		}
		s.mustNotObtain(s.client(), key)
		f1, _ := l.Fence()
		if err := l.Release(ctx); err != nil {
			t.Errorf("Release of %q = %v, want nil", key, err)
		}
		l2 := s.obtain(c, key, ttl, nil)
		if f2, _ := l2.Fence(); s.env.Fencing && f2 <= f1 {
			t.Errorf("key %q: fences %d then %d, want strictly increasing", key, f1, f2)
		}
		if err := l2.Release(ctx); err != nil {
			t.Errorf("second Release of %q = %v, want nil", key, err)
		}
	}
}

// testTTLRange: MinTTL, a TTL with a sub-millisecond part, and MaxTTL are
// accepted by Obtain and Refresh; a backend may round up, never down. A
// backend with a larger Env.MinTTL refuses shorter TTLs with
// ErrInvalidTTL.
func testTTLRange(t *testing.T, s *suite) {
	c := s.client()
	ctx := context.Background()
	for _, d := range []time.Duration{lockapi.MinTTL, 1500 * time.Microsecond, s.env.MinTTL} {
		if d == 0 {
			continue
		}
		l, err := c.Obtain(ctx, s.key(), d, nil)
		if d < s.env.MinTTL {
			if !errors.Is(err, lockapi.ErrInvalidTTL) {
				t.Errorf("Obtain(ttl=%v) below Env.MinTTL %v = %v, want ErrInvalidTTL", d, s.env.MinTTL, err)
			}
			if err == nil {
				l.Release(ctx)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Obtain(ttl=%v) = %v, want a lock", d, err)
		}
		// A real clock may expire so short a lock before the Release.
		if err := l.Release(ctx); err != nil && !errors.Is(err, lockapi.ErrNotHeld) {
			t.Fatalf("Release of a %v lock = %v, want nil or ErrNotHeld", d, err)
		}
		s.env.Advance(10 * time.Millisecond)
	}
	l := s.obtain(c, s.key(), lockapi.MaxTTL, nil)
	// Within 2%: Redlock reports its validity, less a 1% drift allowance.
	if d := s.mustHold(l); d > lockapi.MaxTTL || d < lockapi.MaxTTL-lockapi.MaxTTL/50 {
		t.Errorf("TTL() of a MaxTTL lock = %v, want about %v", d, lockapi.MaxTTL)
	}
	if err := l.Refresh(ctx, time.Minute+500*time.Microsecond); err != nil {
		t.Fatalf("Refresh(1m0.0005s) = %v, want nil", err)
	}
	if d := s.mustHold(l); d > time.Minute+time.Millisecond || d < time.Minute-time.Minute/50-5*time.Second {
		t.Errorf("TTL() after Refresh(1m0.0005s) = %v, want about 1m (at most 1ms more)", d)
	}
	if err := l.Refresh(ctx, lockapi.MaxTTL); err != nil {
		t.Fatalf("Refresh(MaxTTL) = %v, want nil", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release() = %v, want nil", err)
	}
}

// testErrorContract: with failures injected in front of the backend, every
// call reports the failure itself: never ErrNotObtained (the key was not
// found held), never ErrNotHeld, and the lock is not marked lost. An Obtain
// that waits on a held key and then meets a failure also reports the
// failure, not ErrNotObtained.
func testErrorContract(t *testing.T, s *suite) {
	acquires := make(chan error, 1024)
	fi := faultinject.New(s.env.Backend, faultinject.Options{Clock: s.env.Clock, OnCall: func(op faultinject.Op, err error) {
		if op == faultinject.Acquire {
			select {
			case acquires <- err:
			default:
			}
		}
	}})
	c := lockapi.New(fi, lockapi.Options{Clock: s.env.Clock})
	ctx := context.Background()
	failure := func(what string, err error) {
		t.Helper()
		switch {
		case !errors.Is(err, faultinject.ErrInjected):
			t.Errorf("%s with an injected failure = %v, want it to wrap the failure", what, err)
		case errors.Is(err, lockapi.ErrNotObtained), errors.Is(err, lockapi.ErrNotHeld), errors.Is(err, lockapi.ErrLost):
			t.Errorf("%s with an injected failure = %v, want neither ErrNotObtained, ErrNotHeld nor ErrLost", what, err)
		}
	}
	fi.Inject(faultinject.Acquire, faultinject.Fault{Next: 1})
	_, err := c.Obtain(ctx, s.key(), ttl, nil)
	failure("Obtain", err)

	l := s.obtain(c, s.key(), ttl, nil)
	lost := l.Lost()
	fi.Inject(faultinject.Refresh, faultinject.Fault{Next: 1})
	failure("Refresh", l.Refresh(ctx, ttl))
	fi.Inject(faultinject.PTTL, faultinject.Fault{Next: 1})
	_, err = l.TTL(ctx)
	failure("TTL", err)

	// A waiter finds the key held, then meets a failure: the failure is
	// what it reports, not ErrNotObtained (its ctx did not end).
	for len(acquires) > 0 {
		<-acquires
	}
	res := make(chan error, 1)
	go func() {
		l2, err := c.Obtain(ctx, s.key(), ttl, &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(10 * time.Millisecond)})
		if err == nil {
			l2.Release(ctx)
		}
		res <- err
	}()
	select {
	case err := <-acquires:
		if err != nil {
			t.Fatalf("waiter's first Acquire = %v, want no error", err)
		}
	case <-time.After(guard):
		t.Fatal("waiter made no Acquire call")
	}
	fi.Inject(faultinject.Acquire, faultinject.Fault{})
	failure("Obtain waiting on a held key", drive(s, res, 10*time.Millisecond, 500))
	fi.Clear()

	fi.Inject(faultinject.Release, faultinject.Fault{Next: 1})
	failure("Release", l.Release(ctx))
	if isClosed(lost) || l.Err() != nil {
		t.Errorf("after failed calls: Lost closed = %v, Err() = %v, want open and nil", isClosed(lost), l.Err())
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("Release() after the failures = %v, want nil", err)
	}
}
