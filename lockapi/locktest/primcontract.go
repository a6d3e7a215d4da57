package locktest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
)

// primitive is one way of obtaining a lease, for the cases that check every
// primitive alike.
type primitive struct {
	name      string
	supported func(b lockapi.Backend) bool
	obtain    func(ctx context.Context, c *lockapi.Client, key string, ttl time.Duration, opts *lockapi.ObtainOptions) (*lockapi.Lock, error)
}

func has[T any](b lockapi.Backend) bool { _, ok := b.(T); return ok }

var primitives = []primitive{
	{"semaphore", has[lockapi.SemaphoreBackend], func(ctx context.Context, c *lockapi.Client, key string, d time.Duration, o *lockapi.ObtainOptions) (*lockapi.Lock, error) {
		return c.Semaphore(key, 2).Obtain(ctx, d, o)
	}},
	{"read", has[lockapi.RWBackend], func(ctx context.Context, c *lockapi.Client, key string, d time.Duration, o *lockapi.ObtainOptions) (*lockapi.Lock, error) {
		return c.RWMutex(key).ObtainRead(ctx, d, o)
	}},
	{"write", has[lockapi.RWBackend], func(ctx context.Context, c *lockapi.Client, key string, d time.Duration, o *lockapi.ObtainOptions) (*lockapi.Lock, error) {
		return c.RWMutex(key).ObtainWrite(ctx, d, o)
	}},
	{"multi", has[lockapi.MultiBackend], func(ctx context.Context, c *lockapi.Client, key string, d time.Duration, o *lockapi.ObtainOptions) (*lockapi.Lock, error) {
		return c.ObtainAll(ctx, []string{"{" + key + "}:a", "{" + key + "}:b"}, d, o)
	}},
	{"reentrant", has[lockapi.ReentrantBackend], func(ctx context.Context, c *lockapi.Client, key string, d time.Duration, o *lockapi.ObtainOptions) (*lockapi.Lock, error) {
		opts := lockapi.ObtainOptions{}
		if o != nil {
			opts = *o
		}
		opts.Reentrant = true
		return c.Obtain(ctx, key, d, &opts)
	}},
}

// testPrimitiveInput: the input contract holds for every primitive: a bad
// name, key list, limit, TTL or option is refused with its sentinel before
// any backend call.
func testPrimitiveInput(t *testing.T, s *suite) {
	b, sp := newSpy(s.env.Backend)
	c := lockapi.New(b, lockapi.Options{Clock: s.env.Clock})
	ctx := context.Background()
	noCalls := func(what string) {
		t.Helper()
		if n := sp.calls.Swap(0); n != 0 {
			t.Errorf("%s made %d backend calls, want 0", what, n)
		}
	}
	check := func(what string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s = %v, want %v", what, err, want)
		}
		noCalls(what)
	}
	for _, name := range []string{"", lockapi.ReservedPrefix + "sem"} {
		_, err := c.Semaphore(name, 2).Obtain(ctx, ttl, nil)
		check("Semaphore("+name+").Obtain", err, lockapi.ErrInvalidKey)
		_, err = c.RWMutex(name).ObtainRead(ctx, ttl, nil)
		check("RWMutex("+name+").ObtainRead", err, lockapi.ErrInvalidKey)
		_, err = c.RWMutex(name).ObtainWrite(ctx, ttl, nil)
		check("RWMutex("+name+").ObtainWrite", err, lockapi.ErrInvalidKey)
		_, err = c.ObtainAll(ctx, []string{s.key(), name}, ttl, nil)
		check("ObtainAll with key "+name, err, lockapi.ErrInvalidKey)
	}
	for _, limit := range []int{0, -1, lockapi.MaxLimit + 1} {
		_, err := c.Semaphore(s.key(), limit).Obtain(ctx, ttl, nil)
		check("Semaphore.Obtain with a bad limit", err, lockapi.ErrInvalidOption)
	}
	tooMany := make([]string, lockapi.MaxKeys+1)
	for i := range tooMany {
		tooMany[i] = s.key() + strings.Repeat("x", i)
	}
	for _, keys := range [][]string{nil, {}, {s.key(), s.key()}, tooMany} {
		_, err := c.ObtainAll(ctx, keys, ttl, nil)
		check("ObtainAll with a bad key list", err, lockapi.ErrInvalidKey)
	}
	reentrant := &lockapi.ObtainOptions{Reentrant: true}
	_, err := c.Semaphore(s.key(), 2).Obtain(ctx, ttl, reentrant)
	check("Semaphore.Obtain with Reentrant", err, lockapi.ErrInvalidOption)
	_, err = c.RWMutex(s.key()).ObtainRead(ctx, ttl, reentrant)
	check("ObtainRead with Reentrant", err, lockapi.ErrInvalidOption)
	_, err = c.ObtainAll(ctx, []string{s.key()}, ttl, reentrant)
	check("ObtainAll with Reentrant", err, lockapi.ErrInvalidOption)
	for _, p := range primitives {
		if !p.supported(s.env.Backend) {
			continue
		}
		for _, d := range []time.Duration{0, lockapi.MinTTL - 1, lockapi.MaxTTL + 1} {
			_, err := p.obtain(ctx, c, s.key(), d, nil)
			check(p.name+" Obtain with a bad ttl", err, lockapi.ErrInvalidTTL)
		}
		_, err := p.obtain(ctx, c, s.key(), ttl, &lockapi.ObtainOptions{AutoRefresh: &lockapi.AutoRefresh{Interval: ttl}})
		check(p.name+" Obtain with a bad AutoRefresh", err, lockapi.ErrInvalidOption)
		l, err := p.obtain(ctx, c, s.key(), ttl, nil)
		if err != nil {
			t.Fatalf("%s Obtain = %v, want a lease", p.name, err)
		}
		sp.calls.Store(0)
		check(p.name+" Refresh with a bad ttl", l.Refresh(ctx, 0), lockapi.ErrInvalidTTL)
		if err := l.Release(ctx); err != nil {
			t.Fatalf("%s Release = %v", p.name, err)
		}
		sp.calls.Store(0)
	}
}

// testPrimitiveErrors: a backend failure in any primitive's call is
// reported as itself, never as ErrNotObtained, ErrNotHeld or a loss; and
// a lease stored by a call whose reply was lost is cleaned up (except a
// reentrant hold, which lockapi leaves to its TTL).
func testPrimitiveErrors(t *testing.T, s *suite) {
	b, sp := newSpy(s.env.Backend)
	c := lockapi.New(b, lockapi.Options{Clock: s.env.Clock})
	ctx := context.Background()
	failure := func(what string, err error) { t.Helper(); injected(t, what, err) }
	for _, p := range primitives {
		if !p.supported(s.env.Backend) {
			continue
		}
		key := s.key() + ":" + p.name
		sp.failNext(1, false)
		_, err := p.obtain(ctx, c, key, ttl, nil)
		failure(p.name+" Obtain", err)

		l, err := p.obtain(ctx, c, key, ttl, nil)
		if err != nil {
			t.Fatalf("%s Obtain = %v, want a lease", p.name, err)
		}
		sp.failNext(1, false)
		failure(p.name+" Refresh", l.Refresh(ctx, ttl))
		sp.failNext(1, false)
		_, err = l.TTL(ctx)
		failure(p.name+" TTL", err)
		sp.failNext(1, false)
		failure(p.name+" Release", l.Release(ctx))
		if l.Err() != nil {
			t.Errorf("%s: Err() after failed calls = %v, want nil", p.name, l.Err())
		}
		if err := l.Release(ctx); err != nil {
			t.Fatalf("%s Release after the failures = %v, want nil", p.name, err)
		}

		// A lost reply: the lease was stored, the caller saw an error, and
		// Obtain cleaned up, so a writer (the most exclusive) gets in.
		if p.name == "reentrant" {
			continue
		}
		sp.failNext(1, true)
		_, err = p.obtain(ctx, c, key, ttl, nil)
		failure(p.name+" Obtain with a lost reply", err)
		l, err = p.obtain(ctx, c, key, ttl, nil)
		if err != nil {
			t.Fatalf("%s Obtain after a lost reply = %v, want a lease (the stranded one cleaned up)", p.name, err)
		}
		if p.name == "semaphore" {
			// A semaphore of 2 would admit a second lease anyway.
			l2, err := p.obtain(ctx, c, key, ttl, nil)
			if err != nil {
				t.Fatalf("second semaphore lease after a lost reply = %v, want one (the stranded lease cleaned up)", err)
			}
			s.release(l2)
		}
		s.release(l)
	}
}

// testUnsupported: a backend without a primitive refuses it with
// errors.ErrUnsupported, before any backend call.
func testUnsupported(t *testing.T, s *suite) {
	cb := &counting{Backend: s.env.Backend}
	c := lockapi.New(cb, lockapi.Options{Clock: s.env.Clock}) // counting hides every primitive
	for _, p := range primitives {
		_, err := p.obtain(context.Background(), c, s.key(), ttl, nil)
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s Obtain on a backend without it = %v, want errors.ErrUnsupported", p.name, err)
		}
		if p.supported(s.env.Backend) {
			continue
		}
		c := lockapi.New(s.env.Backend, lockapi.Options{Clock: s.env.Clock})
		if _, err := p.obtain(context.Background(), c, s.key(), ttl, nil); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s Obtain on the backend = %v, want errors.ErrUnsupported", p.name, err)
		}
	}
	if n := cb.calls.Load(); n != 0 {
		t.Errorf("refused primitives made %d backend calls, want 0", n)
	}
}
