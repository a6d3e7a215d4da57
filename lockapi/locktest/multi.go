package locktest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
)

func (s *suite) multiLocks() {
	if _, ok := s.env.Backend.(lockapi.MultiBackend); !ok {
		s.t.Skip("backend has no multi-key locks")
	}
}

// keys returns n keys of the case, sharing a hash tag so that they lie in
// one Redis Cluster slot.
func (s *suite) keys(n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = fmt.Sprintf("{%s}:%c", s.key(), 'a'+i)
	}
	return ks
}

func (s *suite) obtainAll(c *lockapi.Client, keys []string) *lockapi.Lock {
	s.t.Helper()
	l, err := c.ObtainAll(context.Background(), keys, ttl, nil)
	if err != nil {
		s.t.Fatalf("ObtainAll(%q) = %v, want a lock", keys, err)
	}
	return l
}

// testMultiAllOrNothing: one held key makes ObtainAll fail without taking
// any other key; once free, all are taken together, exclude single locks
// on each key, and get fences ordered with the single locks' fences.
func testMultiAllOrNothing(t *testing.T, s *suite) {
	s.multiLocks()
	c := s.client()
	ks := s.keys(3)
	single := make([]int64, len(ks)) // the latest single lock's fence of each key
	held := s.obtain(c, ks[1], ttl, nil)
	single[1], _ = held.Fence()
	l, err := c.ObtainAll(context.Background(), ks, ttl, nil)
	refused(t, "ObtainAll with one key held", l, err)
	for _, i := range []int{0, 2} { // left untouched
		l := s.obtain(s.client(), ks[i], ttl, nil)
		single[i], _ = l.Fence()
		s.release(l)
	}
	s.release(held)

	m := s.obtainAll(c, ks)
	if m.Kind() != lockapi.KindMulti || !slices.Equal(m.Keys(), ks) {
		t.Fatalf("Kind() = %v, Keys() = %q, want multi, %q", m.Kind(), m.Keys(), ks)
	}
	if s.env.Fencing {
		fs := m.Fences()
		if len(fs) != len(ks) {
			t.Fatalf("Fences() = %v, want one per key", fs)
		}
		for i, f := range fs {
			if f <= single[i] {
				t.Fatalf("fence of %q = %d, want > %d (its last single lock's)", ks[i], f, single[i])
			}
		}
		if f, _ := m.Fence(); f != fs[0] {
			t.Fatalf("Fence() = %d, want the first key's, %d", f, fs[0])
		}
	}
	for _, k := range ks {
		s.mustNotObtain(s.client(), k)
	}
	other := s.keys(4)[3]
	l, err = c.ObtainAll(context.Background(), []string{ks[2], other}, ttl, nil)
	refused(t, "ObtainAll overlapping a held multi-key lock", l, err)
	s.release(s.obtain(c, other, ttl, nil)) // left untouched
	s.mustHold(m)
	s.release(m)
	s.allFree(ks)
}

// allFree checks that each of keys can be locked (and unlocks it).
func (s *suite) allFree(keys []string) {
	s.t.Helper()
	for _, k := range keys {
		s.release(s.obtain(s.client(), k, ttl, nil))
	}
}

// testMultiTogether: Refresh extends every key, TTL is the least of the
// keys', Release frees them all.
func testMultiTogether(t *testing.T, s *suite) {
	s.multiLocks()
	c := s.client()
	ks := s.keys(3)
	m := s.obtainAll(c, ks)
	s.env.Advance(40 * time.Second)
	if err := m.Refresh(context.Background(), ttl); err != nil {
		t.Fatalf("Refresh() = %v, want nil", err)
	}
	if d := s.mustHold(m); d <= 20*time.Second || d > ttl {
		t.Fatalf("TTL() after Refresh = %v, want in (20s, %v]", d, ttl)
	}
	s.env.Advance(40 * time.Second) // past the first deadline
	for _, k := range ks {
		s.mustNotObtain(s.client(), k)
	}
	// Shorten one key behind the lock's back: TTL reports the least.
	if ok, err := s.env.Backend.Refresh(context.Background(), ks[1], m.Token(), 5*time.Second); !ok || err != nil {
		t.Fatalf("Backend.Refresh of one key = %v, %v", ok, err)
	}
	if d := s.mustHold(m); d > 5*time.Second {
		t.Fatalf("TTL() with one key at 5s = %v, want <= 5s", d)
	}
	s.release(m)
	s.allFree(ks)
}

// testMultiPartialLoss: when one key is lost, Refresh and TTL report
// ErrNotHeld and change nothing, and Release reports ErrNotHeld but frees
// the keys still held.
func testMultiPartialLoss(t *testing.T, s *suite) {
	s.multiLocks()
	c := s.client()
	ks := s.keys(2)
	m := s.obtainAll(c, ks)
	// Someone deletes one key (as expiry would).
	if ok, err := s.env.Backend.Release(context.Background(), ks[1], m.Token()); !ok || err != nil {
		t.Fatalf("Backend.Release of one key = %v, %v", ok, err)
	}
	if err := m.Refresh(context.Background(), 2*ttl); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("Refresh() with a key lost = %v, want ErrNotHeld", err)
	}
	if d, ok, err := s.env.Backend.PTTL(context.Background(), ks[0], m.Token()); !ok || err != nil || d > ttl {
		t.Fatalf("PTTL of the key still held = %v, %v, %v, want unchanged by the failed Refresh", d, ok, err)
	}
	if _, err := m.TTL(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("TTL() with a key lost = %v, want ErrNotHeld", err)
	}
	if err := m.Release(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("Release() with a key lost = %v, want ErrNotHeld", err)
	}
	s.release(s.obtain(s.client(), ks[0], ttl, nil))
}

// testMultiNoDeadlock: clients taking overlapping key sets in opposite
// orders, with waiting, all finish.
func testMultiNoDeadlock(t *testing.T, s *suite) {
	s.multiLocks()
	ks := s.keys(3)
	orders := [][]string{{ks[0], ks[1], ks[2]}, {ks[2], ks[1], ks[0]}, {ks[1], ks[0]}, {ks[2], ks[0]}}
	const rounds = 20
	var wg sync.WaitGroup
	errs := make(chan error, len(orders))
	retry := lockapi.LinearBackoff(10 * time.Millisecond)
	for _, keys := range orders {
		c := s.client()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				l, err := c.ObtainAll(context.Background(), keys, ttl, &lockapi.ObtainOptions{Retry: retry})
				if err != nil {
					errs <- fmt.Errorf("ObtainAll(%q) = %v", keys, err)
					return
				}
				if err := l.Release(context.Background()); err != nil {
					errs <- fmt.Errorf("Release of %q = %v", keys, err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	deadline := time.After(4 * guard)
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		case <-deadline:
			t.Fatal("clients taking overlapping keys in different orders did not finish")
		default:
			// Polling clients wait on the client clock.
			s.env.Clock.Add(10 * time.Millisecond)
			runtime.Gosched()
		}
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// testMultiWake: a waiter for a multi-key lock acquires when the single
// lock blocking it is released, and when another expires.
func testMultiWake(t *testing.T, s *suite) {
	s.multiLocks()
	b, sp := newSpy(s.env.Backend)
	c := lockapi.New(b, lockapi.Options{Clock: s.env.Clock})
	ks := s.keys(3)
	x := s.obtain(c, ks[1], ttl, nil)
	res := s.background(sp, func(retry lockapi.RetryStrategy) (*lockapi.Lock, error) {
		return c.ObtainAll(context.Background(), ks, ttl, &lockapi.ObtainOptions{Retry: retry})
	})
	s.stillWaiting(res, "while a key is held")
	s.release(x)
	m := s.acquired(res, "the release of the key")
	s.release(m)
	y := s.obtain(c, ks[2], ttl, nil)
	res = s.background(sp, func(retry lockapi.RetryStrategy) (*lockapi.Lock, error) {
		return c.ObtainAll(context.Background(), ks, ttl, &lockapi.ObtainOptions{Retry: retry})
	})
	s.env.Advance(ttl + 10*time.Millisecond)
	m = s.acquired(res, "the expiry of the key")
	if err := y.Release(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("expired single lock's Release() = %v, want ErrNotHeld", err)
	}
	s.release(m)
}

func (s *suite) reentrant() {
	if _, ok := s.env.Backend.(lockapi.ReentrantBackend); !ok {
		s.t.Skip("backend has no reentrant locks")
	}
}

// testReentrant: the owner's token re-acquires with a hold count and the
// first hold's fence; others are refused; the key is freed with the last
// hold, whatever the order of the releases; only a reentrant lock can be
// re-entered.
func testReentrant(t *testing.T, s *suite) {
	s.reentrant()
	c := s.client()
	l1 := s.obtain(c, s.key(), ttl, &lockapi.ObtainOptions{Reentrant: true})
	if l1.Holds() != 1 {
		t.Fatalf("first Holds() = %d, want 1", l1.Holds())
	}
	l2 := s.obtain(c, s.key(), ttl, &lockapi.ObtainOptions{Reentrant: true, Token: l1.Token()})
	l3 := s.obtain(s.client(), s.key(), ttl, &lockapi.ObtainOptions{Reentrant: true, Token: l1.Token()})
	if l2.Holds() != 2 || l3.Holds() != 3 {
		t.Fatalf("Holds() = %d, %d, want 2, 3", l2.Holds(), l3.Holds())
	}
	f1, _ := l1.Fence()
	for _, l := range []*lockapi.Lock{l2, l3} {
		if f, _ := l.Fence(); f != f1 {
			t.Fatalf("re-entry Fence() = %d, want the first hold's %d", f, f1)
		}
	}
	l, err := c.Obtain(context.Background(), s.key(), ttl, &lockapi.ObtainOptions{Reentrant: true})
	refused(t, "reentrant Obtain with another token", l, err)
	s.mustNotObtain(s.client(), s.key())
	s.release(l1, l3) // out of order: the key stays held by the last hold
	s.mustNotObtain(s.client(), s.key())
	s.mustHold(l2)
	s.release(l2)
	if err := l2.Release(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("second Release() of a hold = %v, want ErrNotHeld", err)
	}
	p := s.obtain(s.client(), s.key(), ttl, &lockapi.ObtainOptions{Token: "caller-token"})
	l, err = c.Obtain(context.Background(), s.key(), ttl, &lockapi.ObtainOptions{Reentrant: true, Token: "caller-token"})
	refused(t, "reentrant Obtain of a key held without Reentrant", l, err)
	s.release(p)
}

// testReentrantHolds: a reentrant lock's holds are named, at the backend:
// adding a hold twice adds it once and releasing it twice removes it once
// (so a call retried after a lost reply is harmless), a release never
// removes another hold, and a hold of an earlier lease of the key releases
// nothing of a later one. A hold ID the layout cannot carry is refused,
// changing nothing.
func testReentrantHolds(t *testing.T, s *suite) {
	s.reentrant()
	rb := s.env.Backend.(lockapi.ReentrantBackend)
	ctx := context.Background()
	key, v := s.key(), "owner-token"
	add := func(hold string, want int) {
		t.Helper()
		if _, holds, ok, err := rb.AcquireReentrant(ctx, key, v, hold, ttl); err != nil || !ok || holds != want {
			t.Fatalf("AcquireReentrant(%q) = %d holds, %v, %v, want %d holds, true, nil", hold, holds, ok, err, want)
		}
	}
	del := func(hold string, wantOK bool, want int) {
		t.Helper()
		if holds, ok, err := rb.ReleaseReentrant(ctx, key, v, hold); err != nil || ok != wantOK || holds != want {
			t.Fatalf("ReleaseReentrant(%q) = %d holds, %v, %v, want %d holds, %v, nil", hold, holds, ok, err, want, wantOK)
		}
	}
	held := func(want bool) {
		t.Helper()
		if _, ok, err := rb.PTTL(ctx, key, v); err != nil || ok != want {
			t.Fatalf("PTTL held = %v, %v, want %v, nil", ok, err, want)
		}
	}
	add("a", 1)
	add("b", 2)
	add("b", 2) // a retried call
	del("a", true, 1)
	del("a", false, 0) // a retried call: b stays
	held(true)
	for _, bad := range []string{"", "c d", "c\td", "c\u00a0d", "c\x7fd"} {
		if _, _, _, err := rb.AcquireReentrant(ctx, key, v, bad, ttl); err == nil {
			t.Fatalf("AcquireReentrant(%q) = nil error, want one", bad)
		}
		if _, _, err := rb.ReleaseReentrant(ctx, key, v, bad); err == nil {
			t.Fatalf("ReleaseReentrant(%q) = nil error, want one", bad)
		}
	}
	add("b", 1) // nothing changed
	del("b", true, 0)
	held(false)

	add("old", 1)
	s.env.Advance(ttl + 10*time.Millisecond) // that lease expires
	add("new", 1)
	del("old", false, 0)
	held(true)
	del("new", true, 0)
	held(false)
}

// testReentrantStaleHold: a hold whose lease expired is not held, even
// once its owner holds the key again: its Refresh and TTL report
// ErrNotHeld, and neither they nor its Release touch the owner's new hold.
func testReentrantStaleHold(t *testing.T, s *suite) {
	s.reentrant()
	c := s.client()
	ctx := context.Background()
	// Two holds of one lease: each is asked one thing, so that each
	// question reaches the backend (a Lock known lost answers itself).
	old1 := s.obtain(c, s.key(), ttl, &lockapi.ObtainOptions{Reentrant: true})
	old2 := s.obtain(c, s.key(), ttl, &lockapi.ObtainOptions{Reentrant: true, Token: old1.Token()})
	s.env.Advance(ttl + 10*time.Millisecond)
	l := s.obtain(c, s.key(), ttl, &lockapi.ObtainOptions{Reentrant: true, Token: old1.Token()})
	if _, err := old1.TTL(ctx); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Errorf("TTL() of an expired hold after its owner took the key again = %v, want ErrNotHeld", err)
	}
	if err := old2.Refresh(ctx, 100*ttl); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Errorf("Refresh() of an expired hold after its owner took the key again = %v, want ErrNotHeld", err)
	}
	for _, old := range []*lockapi.Lock{old1, old2} {
		if err := old.Release(ctx); !errors.Is(err, lockapi.ErrNotHeld) {
			t.Errorf("Release() of an expired hold after its owner took the key again = %v, want ErrNotHeld", err)
		}
	}
	if d := s.mustHold(l); d > ttl {
		t.Errorf("the new hold's TTL() = %v, want at most its own %v", d, ttl)
	}
	s.release(l)
	s.release(s.obtain(s.client(), s.key(), ttl, nil))
}

// testReentrantTTL: a hold's Refresh never shortens the lock (the other
// holds count on it); the holds share the lock's expiry and its loss.
func testReentrantTTL(t *testing.T, s *suite) {
	s.reentrant()
	c := s.client()
	l1 := s.obtain(c, s.key(), 2*ttl, &lockapi.ObtainOptions{Reentrant: true})
	l2 := s.obtain(c, s.key(), ttl, &lockapi.ObtainOptions{Reentrant: true, Token: l1.Token()})
	if d := s.mustHold(l2); d <= ttl {
		t.Fatalf("TTL() after a shorter re-entry = %v, want the first hold's 2*ttl kept", d)
	}
	if err := l2.Refresh(context.Background(), 10*time.Second); err != nil {
		t.Fatalf("Refresh() = %v", err)
	}
	if d := s.mustHold(l1); d <= ttl {
		t.Fatalf("TTL() after a shorter Refresh = %v, want it not shortened", d)
	}
	if err := l2.Refresh(context.Background(), 3*ttl); err != nil {
		t.Fatalf("Refresh() = %v", err)
	}
	if d := s.mustHold(l1); d <= 2*ttl {
		t.Fatalf("TTL() after a longer Refresh = %v, want > 2*ttl", d)
	}
	lost := l1.Lost()
	s.env.Advance(3*ttl + 10*time.Millisecond)
	for _, l := range []*lockapi.Lock{l1, l2} {
		if _, err := l.TTL(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
			t.Fatalf("TTL() of an expired hold = %v, want ErrNotHeld", err)
		}
	}
	select {
	case <-lost:
	case <-time.After(guard):
		t.Fatal("Lost() of an expired hold not closed")
	}
	s.release(s.obtain(s.client(), s.key(), ttl, nil))
}
