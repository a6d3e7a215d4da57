package locktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
)

func (s *suite) rwLocks() lockapi.RWBackend {
	rb, ok := s.env.Backend.(lockapi.RWBackend)
	if !ok {
		s.t.Skip("backend has no read-write locks")
	}
	return rb
}

func (s *suite) read(rw *lockapi.RWMutex) *lockapi.Lock {
	s.t.Helper()
	l, err := rw.ObtainRead(context.Background(), ttl, nil)
	if err != nil {
		s.t.Fatalf("ObtainRead(%q) = %v, want a read lease", rw.Name(), err)
	}
	if l.Kind() != lockapi.KindRead || l.Key() != rw.Name() {
		s.t.Fatalf("read lease Kind() = %v, Key() = %q, want read, %q", l.Kind(), l.Key(), rw.Name())
	}
	return l
}

func (s *suite) write(rw *lockapi.RWMutex) *lockapi.Lock {
	s.t.Helper()
	l, err := rw.ObtainWrite(context.Background(), ttl, nil)
	if err != nil {
		s.t.Fatalf("ObtainWrite(%q) = %v, want the write lease", rw.Name(), err)
	}
	if l.Kind() != lockapi.KindWrite || l.Key() != rw.Name() {
		s.t.Fatalf("write lease Kind() = %v, Key() = %q, want write, %q", l.Kind(), l.Key(), rw.Name())
	}
	return l
}

func (s *suite) noRead(rw *lockapi.RWMutex, what string) {
	s.t.Helper()
	l, err := rw.ObtainRead(context.Background(), ttl, nil)
	refused(s.t, "ObtainRead "+what, l, err)
}

func (s *suite) noWrite(rw *lockapi.RWMutex, what string) {
	s.t.Helper()
	l, err := rw.ObtainWrite(context.Background(), ttl, nil)
	refused(s.t, "ObtainWrite "+what, l, err)
}

// testRWShared: readers share the lock and exclude writers; a writer
// excludes readers and writers, on any Client; a writer that does not wait
// leaves no mark; fences increase across all leases.
func testRWShared(t *testing.T, s *suite) {
	s.rwLocks()
	rw, other := s.client().RWMutex(s.key()), s.client().RWMutex(s.key())
	r1, r2 := s.read(rw), s.read(other)
	s.noWrite(rw, "while two readers hold")
	s.noWrite(other, "from another Client while two readers hold")
	r3 := s.read(rw) // the refused writers did not wait, so left no mark
	s.mustHold(r1)
	s.release(r1, r2, r3)
	w := s.write(other)
	s.noRead(rw, "while a writer holds")
	s.noWrite(rw, "while a writer holds")
	s.mustHold(w)
	s.fences("reads then a write", r1, r2, r3, w)
	s.release(w)
	r4 := s.read(rw)
	s.fences("a read after the write", w, r4)
	s.release(r4)
}

// testRWWriterPreferred: a waiting writer keeps new readers out while the
// readers in finish, then gets the lock; readers get it back after it.
func testRWWriterPreferred(t *testing.T, s *suite) {
	s.rwLocks()
	b, sp := newSpy(s.env.Backend)
	rw := lockapi.New(b, lockapi.Options{Clock: s.env.Clock}).RWMutex(s.key())
	r1, r2 := s.read(rw), s.read(rw)
	drain(sp.queued)
	res := s.background(sp, func(retry lockapi.RetryStrategy) (*lockapi.Lock, error) {
		return rw.ObtainWrite(context.Background(), ttl, &lockapi.ObtainOptions{Retry: retry})
	})
	s.awaitQueued(sp)
	s.noRead(rw, "while a writer waits")
	s.noRead(s.client().RWMutex(s.key()), "from another Client while a writer waits")
	s.release(r1)
	s.stillWaiting(res, "while a reader still holds")
	s.release(r2)
	w := s.acquired(res, "the last reader's release")
	if w.Kind() != lockapi.KindWrite {
		t.Fatalf("waiter got a %v lease, want write", w.Kind())
	}
	s.noRead(rw, "while the writer holds")
	s.release(w)
	s.release(s.read(rw))
}

// awaitQueued waits until a writer has marked itself waiting, driving the
// client clock on a polling backend (which marks at its second attempt).
func (s *suite) awaitQueued(sp *spy) {
	s.t.Helper()
	for i := 0; ; i++ {
		select {
		case <-sp.queued:
			return
		default:
		}
		if s.env.Instant || i == 500 {
			break
		}
		s.env.Clock.Add(10 * time.Millisecond)
	}
	select {
	case <-sp.queued:
	case <-time.After(guard):
		s.t.Fatal("the waiting writer never marked itself waiting")
	}
}

// testRWWriterGivesUp: a waiting writer that gives up (ctx, or its retry
// strategy) removes its mark, so readers are let in again at once.
func testRWWriterGivesUp(t *testing.T, s *suite) {
	s.rwLocks()
	b, sp := newSpy(s.env.Backend)
	rw := lockapi.New(b, lockapi.Options{Clock: s.env.Clock}).RWMutex(s.key())
	r := s.read(rw)
	ctx, cancel := context.WithCancel(context.Background())
	drain(sp.queued)
	res := s.background(sp, func(retry lockapi.RetryStrategy) (*lockapi.Lock, error) {
		return rw.ObtainWrite(ctx, ttl, &lockapi.ObtainOptions{Retry: retry})
	})
	s.awaitQueued(sp)
	s.noRead(rw, "while a writer waits")
	cancel()
	select {
	case r := <-res:
		if !errors.Is(r.err, lockapi.ErrNotObtained) || !errors.Is(r.err, context.Canceled) {
			t.Fatalf("canceled writer = %v, want ErrNotObtained and context.Canceled", r.err)
		}
	case <-time.After(guard):
		t.Fatal("the writer did not return after its ctx was canceled")
	}
	r2 := s.read(rw)

	// A retry strategy that runs out.
	drain(sp.queued)
	res = s.background(sp, func(lockapi.RetryStrategy) (*lockapi.Lock, error) {
		return rw.ObtainWrite(context.Background(), ttl, &lockapi.ObtainOptions{Retry: lockapi.LimitRetry(lockapi.LinearBackoff(10*time.Millisecond), 3)})
	})
	s.awaitQueued(sp)
	if _, err := s.outcomeDriven(res); !errors.Is(err, lockapi.ErrNotObtained) {
		t.Fatalf("writer whose strategy ran out = %v, want ErrNotObtained", err)
	}
	s.release(s.read(rw), r, r2)
	s.release(s.write(rw))
}

// outcomeDriven waits for a background Obtain whose strategy ends in client
// time, on any backend.
func (s *suite) outcomeDriven(res chan result) (*lockapi.Lock, error) {
	s.t.Helper()
	r := drive(s, res, 10*time.Millisecond, 500)
	return r.l, r.err
}

// testRWMarkExpires: the mark of a waiting writer that crashed (it never
// retries nor gives up) keeps readers out for at most its ttl.
func testRWMarkExpires(t *testing.T, s *suite) {
	rb := s.rwLocks()
	rw := s.client().RWMutex(s.key())
	r, err := rw.ObtainRead(context.Background(), 3*ttl, nil)
	if err != nil {
		t.Fatalf("ObtainRead = %v", err)
	}
	if _, _, ok, err := rb.AcquireWrite(context.Background(), s.key(), "crashed-writer", ttl, true); ok || err != nil {
		t.Fatalf("AcquireWrite beside a reader = %v, %v, want refused", ok, err)
	}
	s.noRead(rw, "while a (crashed) writer's mark is set")
	s.env.Advance(ttl / 2)
	s.noRead(rw, "half way through the mark's ttl")
	s.env.Advance(ttl/2 + 10*time.Millisecond)
	r2 := s.read(rw)
	s.release(r, r2)
}

// testRWExpiry: an expired reader no longer keeps the writer out, nor an
// expired writer the readers; expired leases cannot release or refresh.
func testRWExpiry(t *testing.T, s *suite) {
	s.rwLocks()
	rw := s.client().RWMutex(s.key())
	r := s.read(rw)
	s.noWrite(rw, "while a reader holds")
	s.env.Advance(ttl + 10*time.Millisecond)
	w := s.write(rw)
	s.env.Advance(ttl + 10*time.Millisecond)
	r2 := s.read(rw)
	for _, l := range []*lockapi.Lock{r, w} {
		if err := l.Refresh(context.Background(), ttl); !errors.Is(err, lockapi.ErrNotHeld) {
			t.Fatalf("expired %v lease's Refresh() = %v, want ErrNotHeld", l.Kind(), err)
		}
		if err := l.Release(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
			t.Fatalf("expired %v lease's Release() = %v, want ErrNotHeld", l.Kind(), err)
		}
	}
	s.noWrite(rw, "while the new reader holds")
	s.release(r2)
}

// testRWUpgrade: there is no upgrade. A reader asking for the write lease
// is refused (NoRetry), or waits until its strategy runs out; either way it
// leaves no mark behind. A writer asking for a read lease is refused.
func testRWUpgrade(t *testing.T, s *suite) {
	s.rwLocks()
	rw := s.client().RWMutex(s.key())
	r := s.read(rw)
	s.noWrite(rw, "by a reader (upgrade)")
	res := make(chan result, 1)
	go func() {
		l, err := rw.ObtainWrite(context.Background(), ttl, &lockapi.ObtainOptions{Retry: lockapi.LimitRetry(lockapi.LinearBackoff(10*time.Millisecond), 3)})
		res <- result{l, err}
	}()
	if l, err := s.outcomeDriven(res); !errors.Is(err, lockapi.ErrNotObtained) {
		if l != nil {
			l.Release(context.Background())
		}
		t.Fatalf("upgrade with a bounded wait = %v, want ErrNotObtained", err)
	}
	r2 := s.read(rw) // no mark left
	s.release(r, r2)
	w := s.write(rw)
	s.noRead(rw, "by the writer (downgrade)")
	s.release(w)
}

// testRWWake: a reader waiting for a writer acquires at the writer's
// release, and a writer waiting for a reader at the reader's expiry.
func testRWWake(t *testing.T, s *suite) {
	s.rwLocks()
	b, sp := newSpy(s.env.Backend)
	rw := lockapi.New(b, lockapi.Options{Clock: s.env.Clock}).RWMutex(s.key())
	w := s.write(rw)
	res := s.background(sp, func(retry lockapi.RetryStrategy) (*lockapi.Lock, error) {
		return rw.ObtainRead(context.Background(), ttl, &lockapi.ObtainOptions{Retry: retry})
	})
	s.stillWaiting(res, "while the writer holds")
	s.release(w)
	r := s.acquired(res, "the writer's release")
	res = s.background(sp, func(retry lockapi.RetryStrategy) (*lockapi.Lock, error) {
		return rw.ObtainWrite(context.Background(), ttl, &lockapi.ObtainOptions{Retry: retry})
	})
	s.stillWaiting(res, "while a reader holds")
	s.env.Advance(ttl + 10*time.Millisecond)
	w2 := s.acquired(res, "the reader's expiry")
	if err := r.Release(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("expired reader's Release() = %v, want ErrNotHeld", err)
	}
	s.release(w2)
}
