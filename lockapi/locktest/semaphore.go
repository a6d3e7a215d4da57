package locktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
)

// The primitives' cases run on backends that implement the primitive's
// interface and skip elsewhere; the Unsupported case checks that the
// others refuse it.

// result is the outcome of an Obtain run in the background.
type result struct {
	l   *lockapi.Lock
	err error
}

// background runs obtain in a goroutine with a retry strategy that, on an
// Instant backend, only a wake-up can satisfy (an hour's delay), and on a
// polling backend polls every 10ms of client time. It returns once the
// Obtain has made its failed first attempt and, on an Instant backend, the
// attempt after arming its watch, so that it is waiting.
func (s *suite) background(sp *spy, obtain func(retry lockapi.RetryStrategy) (*lockapi.Lock, error)) chan result {
	s.t.Helper()
	drain(sp.attempts)
	retry, attempts := lockapi.LinearBackoff(10*time.Millisecond), 1
	if s.env.Instant {
		retry, attempts = lockapi.LinearBackoff(time.Hour), 2
	}
	res := make(chan result, 1)
	go func() {
		l, err := obtain(retry)
		res <- result{l, err}
	}()
	for i := range attempts {
		select {
		case <-sp.attempts:
		case <-time.After(guard):
			s.t.Fatalf("the waiter made %d of %d attempts", i, attempts)
		}
	}
	return res
}

// outcome waits for a background Obtain, driving the client clock on a
// polling backend.
func (s *suite) outcome(res chan result) (*lockapi.Lock, error) {
	s.t.Helper()
	if s.env.Instant {
		select {
		case r := <-res:
			return r.l, r.err
		case <-time.After(guard):
			s.t.Fatal("the waiter was not woken")
		}
	}
	r := drive(s, res, 10*time.Millisecond, 500)
	return r.l, r.err
}

// acquired waits for a background Obtain that must succeed.
func (s *suite) acquired(res chan result, what string) *lockapi.Lock {
	s.t.Helper()
	l, err := s.outcome(res)
	if err != nil {
		s.t.Fatalf("waiter after %s: %v, want a lock", what, err)
	}
	return l
}

// stillWaiting checks that a background Obtain has not returned.
func (s *suite) stillWaiting(res chan result, what string) {
	s.t.Helper()
	select {
	case r := <-res:
		s.t.Fatalf("waiter returned %v, %v %s, want it still waiting", r.l, r.err, what)
	default:
	}
}

// refused checks that err is ErrNotObtained.
func refused(t *testing.T, what string, l *lockapi.Lock, err error) {
	t.Helper()
	if err == nil {
		l.Release(context.Background())
		t.Fatalf("%s succeeded, want ErrNotObtained", what)
	}
	if !errors.Is(err, lockapi.ErrNotObtained) {
		t.Fatalf("%s = %v, want ErrNotObtained", what, err)
	}
}

// fences checks that ls's fences strictly increase in order, when the
// backend gives fences.
func (s *suite) fences(what string, ls ...*lockapi.Lock) {
	s.t.Helper()
	if !s.env.Fencing {
		return
	}
	var last int64
	for i, l := range ls {
		f, ok := l.Fence()
		if !ok || f <= last {
			s.t.Fatalf("%s: lease %d has fence %d, %v, want > %d", what, i, f, ok, last)
		}
		last = f
	}
}

// release releases every l, which must be held.
func (s *suite) release(ls ...*lockapi.Lock) {
	s.t.Helper()
	for _, l := range ls {
		if err := l.Release(context.Background()); err != nil {
			s.t.Fatalf("Release() of %s lease on %q = %v, want nil", l.Kind(), l.Key(), err)
		}
	}
}

func (s *suite) semaphores() bool {
	if _, ok := s.env.Backend.(lockapi.SemaphoreBackend); !ok {
		s.t.Skip("backend has no semaphores")
	}
	return true
}

// testSemaphoreLimit: N leases at once, with distinct tokens and
// increasing fences; the N+1th is refused for any Client; a release frees
// a lease for the next.
func testSemaphoreLimit(t *testing.T, s *suite) {
	s.semaphores()
	c := s.client()
	sem := c.Semaphore(s.key(), 3)
	var ls []*lockapi.Lock
	tokens := map[string]bool{}
	for i := range 3 {
		l, err := sem.Obtain(context.Background(), ttl, nil)
		if err != nil {
			t.Fatalf("Obtain %d of 3 = %v, want a lease", i+1, err)
		}
		if l.Kind() != lockapi.KindSemaphore || l.Key() != s.key() {
			t.Fatalf("lease Kind() = %v, Key() = %q, want semaphore, %q", l.Kind(), l.Key(), s.key())
		}
		if tokens[l.Token()] {
			t.Fatalf("two leases share token %q", l.Token())
		}
		tokens[l.Token()] = true
		s.mustHold(l)
		ls = append(ls, l)
	}
	s.fences("three leases", ls...)
	l, err := sem.Obtain(context.Background(), ttl, nil)
	refused(t, "a 4th Obtain of a semaphore of 3", l, err)
	l, err = s.client().Semaphore(s.key(), 3).Obtain(context.Background(), ttl, nil)
	refused(t, "a 4th Obtain from another Client", l, err)

	s.release(ls[1])
	l4, err := sem.Obtain(context.Background(), ttl, nil)
	if err != nil {
		t.Fatalf("Obtain after a release = %v, want a lease", err)
	}
	s.fences("leases in acquisition order", ls[0], ls[2], l4)
	l, err = sem.Obtain(context.Background(), ttl, nil)
	refused(t, "Obtain with all 3 held again", l, err)
	if err := ls[1].Release(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("second Release of a lease = %v, want ErrNotHeld", err)
	}
	s.release(ls[0], ls[2], l4)
	s.release(s.obtainSem(sem))
}

func (s *suite) obtainSem(sem *lockapi.Semaphore) *lockapi.Lock {
	s.t.Helper()
	l, err := sem.Obtain(context.Background(), ttl, nil)
	if err != nil {
		s.t.Fatalf("Obtain of semaphore %q (limit %d) = %v, want a lease", sem.Name(), sem.Limit(), err)
	}
	return l
}

// testSemaphoreExpiry: each lease has its own TTL; an expired lease frees
// its slot for a new holder and can no longer release, refresh or read the
// new holder's.
func testSemaphoreExpiry(t *testing.T, s *suite) {
	s.semaphores()
	sem := s.client().Semaphore(s.key(), 2)
	a := s.obtainSem(sem)
	s.env.Advance(ttl / 2)
	b := s.obtainSem(sem)
	l, err := sem.Obtain(context.Background(), ttl, nil)
	refused(t, "Obtain of a full semaphore", l, err)
	s.env.Advance(ttl/2 + 10*time.Millisecond) // a expired, b has half its TTL
	c := s.obtainSem(sem)
	l, err = sem.Obtain(context.Background(), ttl, nil)
	refused(t, "Obtain after one expiry and one new lease", l, err)
	before := s.mustHold(c)
	if err := a.Refresh(context.Background(), ttl); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("expired lease's Refresh() = %v, want ErrNotHeld", err)
	}
	if err := a.Release(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("expired lease's Release() = %v, want ErrNotHeld", err)
	}
	if after := s.mustHold(c); after > before {
		t.Fatalf("new lease's TTL() = %v after the old lease's calls, was %v", after, before)
	}
	s.mustHold(b)
	s.fences("leases", a, b, c)
	s.release(b, c)
}

// testSemaphoreWake: a waiter for a full semaphore acquires when a lease
// is released and when one expires (at once, without polling, on an
// Instant backend).
func testSemaphoreWake(t *testing.T, s *suite) {
	s.semaphores()
	b, sp := newSpy(s.env.Backend)
	c := lockapi.New(b, lockapi.Options{Clock: s.env.Clock})
	sem := c.Semaphore(s.key(), 2)
	x, y := s.obtainSem(sem), s.obtainSem(sem)
	defer y.Release(context.Background()) // expired by then: a no-op
	waitOne := func(free func(), how string) *lockapi.Lock {
		res := s.background(sp, func(retry lockapi.RetryStrategy) (*lockapi.Lock, error) {
			return sem.Obtain(context.Background(), ttl, &lockapi.ObtainOptions{Retry: retry})
		})
		s.stillWaiting(res, "while the semaphore is full")
		free()
		return s.acquired(res, how)
	}
	z := waitOne(func() { s.release(x) }, "a release")
	s.env.Advance(ttl / 2)
	z.Refresh(context.Background(), ttl)
	w := waitOne(func() { s.env.Advance(ttl/2 + 10*time.Millisecond) }, "an expiry") // y expires
	s.release(z, w)
}

// testSemaphoreLimitChange: the limit is the Obtain's. With three holders
// of a semaphore of 3, an Obtain with limit 2 is refused and one with
// limit 5 succeeds; a lower limit revokes nothing and grants only slots
// below it.
func testSemaphoreLimitChange(t *testing.T, s *suite) {
	s.semaphores()
	c := s.client()
	s2, s3, s5 := c.Semaphore(s.key(), 2), c.Semaphore(s.key(), 3), c.Semaphore(s.key(), 5)
	a, b, d := s.obtainSem(s3), s.obtainSem(s3), s.obtainSem(s3)
	l, err := s2.Obtain(context.Background(), ttl, nil)
	refused(t, "Obtain with limit 2 beside 3 holders", l, err)
	e := s.obtainSem(s5) // a fourth holder, under limit 5
	s.release(a)         // frees the lowest slot
	f := s.obtainSem(s2) // limit 2 gets it
	l, err = s2.Obtain(context.Background(), ttl, nil)
	refused(t, "Obtain with limit 2 when its two slots are held", l, err)
	s.release(d) // frees the third slot: still nothing below 2
	l, err = s2.Obtain(context.Background(), ttl, nil)
	refused(t, "Obtain with limit 2 after a slot above it freed", l, err)
	g := s.obtainSem(s3)
	l, err = s3.Obtain(context.Background(), ttl, nil)
	refused(t, "Obtain with limit 3 when its three slots are held", l, err)
	s.mustHold(b)
	s.mustHold(e)
	s.release(b, e, f, g)
}

// testSemaphoreLost: a lease's Lost closes when it expires (found by
// the monitor on an Instant backend, by the next call elsewhere), and
// stays open for a released lease.
func testSemaphoreLost(t *testing.T, s *suite) {
	s.semaphores()
	sem := s.client().Semaphore(s.key(), 2)
	l := s.obtainSem(sem)
	other := s.obtainSem(sem)
	lost := l.Lost()
	if err := l.Refresh(context.Background(), ttl); err != nil {
		t.Fatalf("Refresh() = %v, want nil", err)
	}
	s.env.Advance(ttl / 2)
	other.Refresh(context.Background(), ttl)
	s.env.Advance(ttl/2 + 10*time.Millisecond)
	if isClosed(other.Lost()) {
		t.Fatalf("Lost() of the refreshed lease closed (Err() = %v)", other.Err())
	}
	if !s.env.Instant {
		if _, err := l.TTL(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
			t.Fatalf("TTL() after expiry = %v, want ErrNotHeld", err)
		}
	}
	select {
	case <-lost:
	case <-time.After(guard):
		t.Fatal("Lost() not closed after the lease expired")
	}
	if err := l.Err(); !errors.Is(err, lockapi.ErrLost) {
		t.Fatalf("Err() after loss = %v, want ErrLost", err)
	}
	s.release(other)
	if isClosed(other.Lost()) {
		t.Fatal("Lost() of a released lease closed")
	}
}
