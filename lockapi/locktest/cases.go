package locktest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
)

// ttl is the lock TTL of most cases: long enough that a real clock never
// expires a lock while a case runs.
const ttl = time.Minute

// guard bounds how long the suite waits in real time for something a
// correct backend does at once; it only matters when a backend is broken.
const guard = 5 * time.Second

type suite struct {
	t   *testing.T
	env Env
}

type testCase struct {
	name string
	run  func(t *testing.T, s *suite)
}

// cases is the suite, in order.
var cases = []testCase{
	{"Acquire", testAcquire},
	{"ContendNoRetry", testContendNoRetry},
	{"ContendRetryAfterRelease", testContendRetry},
	{"Release", testRelease},
	{"RefreshExtends", testRefreshExtends},
	{"ExpiryFrees", testExpiry},
	{"StealAfterExpiry", testSteal},
	{"NotHeldNeverTouchesNewHolder", testNotHeld},
	{"FencingOrder", testFencing},
	{"FencesSurviveFlush", testFencesSurviveFlush},
	{"CtxCancel", testCtxCancel},
	{"LostSignal", testLost},
	{"InstantWake", testInstantWake},
	{"TTLReport", testTTL},
	{"Metadata", testMetadata},
	{"CallerToken", testCallerToken},
	{"BackendContract", testBackendContract},
	{"InvalidInputRefused", testInvalidInput},
	{"KeysAccepted", testKeys},
	{"TTLRangeAccepted", testTTLRange},
	{"ErrorContract", testErrorContract},
	{"SemaphoreLimit", testSemaphoreLimit},
	{"SemaphoreExpiry", testSemaphoreExpiry},
	{"SemaphoreWake", testSemaphoreWake},
	{"SemaphoreLimitChange", testSemaphoreLimitChange},
	{"SemaphoreLost", testSemaphoreLost},
	{"RWShared", testRWShared},
	{"RWWriterPreferred", testRWWriterPreferred},
	{"RWWriterGivesUp", testRWWriterGivesUp},
	{"RWMarkExpires", testRWMarkExpires},
	{"RWExpiry", testRWExpiry},
	{"RWUpgrade", testRWUpgrade},
	{"RWWake", testRWWake},
	{"MultiAllOrNothing", testMultiAllOrNothing},
	{"MultiTogether", testMultiTogether},
	{"MultiPartialLoss", testMultiPartialLoss},
	{"MultiNoDeadlock", testMultiNoDeadlock},
	{"MultiWake", testMultiWake},
	{"MultiAtomic", testMultiAtomic},
	{"Reentrant", testReentrant},
	{"ReentrantTTL", testReentrantTTL},
	{"ReentrantHolds", testReentrantHolds},
	{"ReentrantStaleHold", testReentrantStaleHold},
	{"PrimitiveInput", testPrimitiveInput},
	{"PrimitiveErrors", testPrimitiveErrors},
	{"Unsupported", testUnsupported},
}

func (s *suite) key() string {
	return "locktest:" + strings.ReplaceAll(s.t.Name(), "/", ":")
}

func (s *suite) client() *lockapi.Client {
	return lockapi.New(s.env.Backend, lockapi.Options{Clock: s.env.Clock})
}

func (s *suite) obtain(c *lockapi.Client, key string, d time.Duration, opts *lockapi.ObtainOptions) *lockapi.Lock {
	s.t.Helper()
	l, err := c.Obtain(context.Background(), key, d, opts)
	if err != nil {
		s.t.Fatalf("Obtain(%q, %v) = %v, want a lock", key, d, err)
	}
	return l
}

// mustNotObtain checks that key is held by someone: a NoRetry Obtain fails.
func (s *suite) mustNotObtain(c *lockapi.Client, key string) {
	s.t.Helper()
	l, err := c.Obtain(context.Background(), key, ttl, nil)
	if err == nil {
		l.Release(context.Background())
		s.t.Fatalf("Obtain(%q) of a held key succeeded, want ErrNotObtained", key)
	}
	if !errors.Is(err, lockapi.ErrNotObtained) {
		s.t.Fatalf("Obtain(%q) of a held key = %v, want ErrNotObtained", key, err)
	}
}

// mustHold checks that l is still held: TTL succeeds and is positive.
func (s *suite) mustHold(l *lockapi.Lock) time.Duration {
	s.t.Helper()
	d, err := l.TTL(context.Background())
	if err != nil {
		s.t.Fatalf("TTL() of a held lock = %v, want no error", err)
	}
	if d <= 0 {
		s.t.Fatalf("TTL() of a held lock = %v, want > 0", d)
	}
	return d
}

// drive advances the client clock by step until done yields, at most max
// times; it returns what done yielded.
func drive[T any](s *suite, done <-chan T, step time.Duration, max int) T {
	s.t.Helper()
	for i := 0; ; i++ {
		select {
		case v := <-done:
			return v
		default:
		}
		if i == max {
			break
		}
		s.env.Clock.Add(step)
	}
	select {
	case v := <-done:
		return v
	case <-time.After(guard):
		s.t.Fatalf("still blocked after advancing the client clock %d x %v", max, step)
		panic("unreachable")
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func testAcquire(t *testing.T, s *suite) {
	c := s.client()
	l := s.obtain(c, s.key(), ttl, nil)
	if l.Key() != s.key() {
		t.Errorf("Key() = %q, want %q", l.Key(), s.key())
	}
	if len(l.Token()) != lockapi.TokenLen {
		t.Errorf("len(Token()) = %d, want %d", len(l.Token()), lockapi.TokenLen)
	}
	fence, ok := l.Fence()
	if s.env.Fencing && (!ok || fence <= 0) {
		t.Errorf("Fence() = %d, %v, want a positive fence", fence, ok)
	}
	if d := s.mustHold(l); d > ttl {
		t.Errorf("TTL() = %v, want <= %v", d, ttl)
	}
	s.mustNotObtain(c, s.key())
	s.mustNotObtain(s.client(), s.key())
	if err := l.Release(context.Background()); err != nil {
		t.Fatalf("Release() = %v, want nil", err)
	}
}

func testContendNoRetry(t *testing.T, s *suite) {
	a, b := s.client(), s.client()
	la := s.obtain(a, s.key(), ttl, nil)
	_, err := b.Obtain(context.Background(), s.key(), ttl, &lockapi.ObtainOptions{Retry: lockapi.NoRetry()})
	if !errors.Is(err, lockapi.ErrNotObtained) {
		t.Fatalf("second Obtain with NoRetry = %v, want ErrNotObtained", err)
	}
	s.mustHold(la)
	if err := la.Release(context.Background()); err != nil {
		t.Fatalf("Release() = %v after a failed contender, want nil", err)
	}
}

func testContendRetry(t *testing.T, s *suite) {
	a, b := s.client(), s.client()
	la := s.obtain(a, s.key(), ttl, nil)
	type result struct {
		l   *lockapi.Lock
		err error
	}
	started := make(chan struct{})
	res := make(chan result, 1)
	go func() {
		close(started)
		l, err := b.Obtain(context.Background(), s.key(), ttl, &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(10 * time.Millisecond)})
		res <- result{l, err}
	}()
	<-started
	select {
	case r := <-res:
		t.Fatalf("Obtain with retry on a held key returned %v, %v before the release", r.l, r.err)
	default:
	}
	if err := la.Release(context.Background()); err != nil {
		t.Fatalf("Release() = %v, want nil", err)
	}
	r := drive(s, res, 10*time.Millisecond, 500)
	if r.err != nil {
		t.Fatalf("Obtain with retry after the release = %v, want a lock", r.err)
	}
	s.mustHold(r.l)
	s.mustNotObtain(a, s.key())
	r.l.Release(context.Background())
}

func testRelease(t *testing.T, s *suite) {
	c := s.client()
	l := s.obtain(c, s.key(), ttl, nil)
	if err := l.Release(context.Background()); err != nil {
		t.Fatalf("Release() = %v, want nil", err)
	}
	if err := l.Release(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("second Release() = %v, want ErrNotHeld", err)
	}
	if err := l.Refresh(context.Background(), ttl); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("Refresh() after Release = %v, want ErrNotHeld", err)
	}
	l2 := s.obtain(s.client(), s.key(), ttl, nil)
	s.mustHold(l2)
	if err := l2.Release(context.Background()); err != nil {
		t.Fatalf("Release() of the re-acquired lock = %v, want nil", err)
	}
}

func testRefreshExtends(t *testing.T, s *suite) {
	c := s.client()
	l := s.obtain(c, s.key(), ttl, nil)
	s.env.Advance(40 * time.Second)
	if err := l.Refresh(context.Background(), ttl); err != nil {
		t.Fatalf("Refresh() = %v, want nil", err)
	}
	if d := s.mustHold(l); d <= 20*time.Second {
		t.Errorf("TTL() after Refresh = %v, want > 20s (the original TTL had 20s left)", d)
	}
	s.env.Advance(40 * time.Second) // past the original deadline
	s.mustHold(l)
	s.mustNotObtain(s.client(), s.key())
	if err := l.Release(context.Background()); err != nil {
		t.Fatalf("Release() = %v, want nil", err)
	}
}

func testExpiry(t *testing.T, s *suite) {
	c := s.client()
	l := s.obtain(c, s.key(), ttl, nil)
	s.env.Advance(ttl / 2)
	s.mustNotObtain(s.client(), s.key())
	s.env.Advance(ttl/2 + 10*time.Millisecond)
	l2 := s.obtain(s.client(), s.key(), ttl, nil)
	s.mustHold(l2)
	if _, err := l.TTL(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("TTL() of the expired lock = %v, want ErrNotHeld", err)
	}
	l2.Release(context.Background())
}

func testSteal(t *testing.T, s *suite) {
	a, b := s.client(), s.client()
	la := s.obtain(a, s.key(), ttl, nil)
	s.env.Advance(ttl + 10*time.Millisecond)
	lb := s.obtain(b, s.key(), ttl, nil)
	if la.Token() == lb.Token() {
		t.Fatalf("two acquisitions share token %q", la.Token())
	}
	s.mustHold(lb)
	s.mustNotObtain(a, s.key())
	if err := lb.Release(context.Background()); err != nil {
		t.Fatalf("Release() by the new holder = %v, want nil", err)
	}
}

func testNotHeld(t *testing.T, s *suite) {
	a, b := s.client(), s.client()
	la := s.obtain(a, s.key(), ttl, nil)
	s.env.Advance(ttl + 10*time.Millisecond)
	lb := s.obtain(b, s.key(), 2*ttl, nil)
	before := s.mustHold(lb)

	if err := la.Refresh(context.Background(), 10*time.Second); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("old holder's Refresh() = %v, want ErrNotHeld", err)
	}
	if err := la.Release(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("old holder's Release() = %v, want ErrNotHeld", err)
	}
	if _, err := la.TTL(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("old holder's TTL() = %v, want ErrNotHeld", err)
	}
	// The backend calls themselves, bypassing the Client's memory of loss.
	be := s.env.Backend
	ctx := context.Background()
	if ok, err := be.Refresh(ctx, s.key(), la.Token(), 10*time.Second); ok || err != nil {
		t.Fatalf("Backend.Refresh with the old token = %v, %v, want false, nil", ok, err)
	}
	if ok, err := be.Release(ctx, s.key(), la.Token()); ok || err != nil {
		t.Fatalf("Backend.Release with the old token = %v, %v, want false, nil", ok, err)
	}
	if _, ok, err := be.PTTL(ctx, s.key(), la.Token()); ok || err != nil {
		t.Fatalf("Backend.PTTL with the old token = _, %v, %v, want false, nil", ok, err)
	}
	after := s.mustHold(lb)
	if after <= 10*time.Second || after > before {
		t.Fatalf("new holder's TTL() = %v after the old holder's calls (was %v), want it untouched", after, before)
	}
	s.mustNotObtain(a, s.key())
	if err := lb.Release(context.Background()); err != nil {
		t.Fatalf("new holder's Release() = %v, want nil", err)
	}
}

func testFencing(t *testing.T, s *suite) {
	if !s.env.Fencing {
		t.Skip("backend gives no fencing tokens")
	}
	c := s.client()
	var last int64
	check := func(l *lockapi.Lock, how string) {
		t.Helper()
		f, ok := l.Fence()
		if !ok || f <= last {
			t.Fatalf("Fence() after %s = %d, %v, want > %d", how, f, ok, last)
		}
		last = f
	}
	for i := 0; i < 3; i++ {
		l := s.obtain(c, s.key(), ttl, nil)
		check(l, "a release")
		l.Release(context.Background())
	}
	l := s.obtain(c, s.key(), ttl, nil)
	check(l, "a release")
	s.env.Advance(ttl + 10*time.Millisecond)
	l = s.obtain(s.client(), s.key(), ttl, nil)
	check(l, "an expiry")
	// Another key's acquisitions do not matter to this key's order, and
	// this key's do not restart after it was gone for a while.
	o := s.obtain(c, s.key()+":other", ttl, nil)
	o.Release(context.Background())
	l.Release(context.Background())
	s.env.Advance(10 * ttl)
	l = s.obtain(c, s.key(), ttl, nil)
	check(l, "a long absence")
	l.Release(context.Background())
}

func testCtxCancel(t *testing.T, s *suite) {
	cb := &counting{Backend: s.env.Backend, acquired: make(chan struct{}, 1)}
	a, b := s.client(), lockapi.New(cb, lockapi.Options{Clock: s.env.Clock})
	la := s.obtain(a, s.key(), ttl, nil)
	retry := &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)}

	// A ctx ended before the first attempt: nobody was found holding the
	// key, so the error is the ctx's, not ErrNotObtained, and nothing is
	// sent.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.Obtain(ctx, s.key()+":free", ttl, retry)
	if errors.Is(err, lockapi.ErrNotObtained) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Obtain with a canceled ctx = %v, want context.Canceled and not ErrNotObtained", err)
	}
	if n := cb.calls.Load(); n != 0 {
		t.Fatalf("Obtain with a canceled ctx made %d backend calls, want 0", n)
	}

	// Canceled while waiting for a held key: ErrNotObtained and the ctx's
	// error.
	ctx, cancel = context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() {
		_, err := b.Obtain(ctx, s.key(), ttl, retry)
		res <- err
	}()
	select {
	case <-cb.acquired: // the first attempt found the key held
	case <-time.After(guard):
		t.Fatal("the waiter made no Acquire call")
	}
	cancel()
	select {
	case err = <-res:
	case <-time.After(guard):
		t.Fatal("Obtain did not return after its ctx was canceled")
	}
	if !errors.Is(err, lockapi.ErrNotObtained) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Obtain canceled while waiting = %v, want ErrNotObtained and context.Canceled", err)
	}
	s.mustHold(la)

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if err := la.Release(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Release with a canceled ctx = %v, want context.Canceled", err)
	}
	s.mustHold(la)
	if err := la.Release(context.Background()); err != nil {
		t.Fatalf("Release() = %v, want nil", err)
	}
}

func testLost(t *testing.T, s *suite) {
	c := s.client()
	l := s.obtain(c, s.key(), ttl, nil)
	lost := l.Lost()
	if err := l.Refresh(context.Background(), ttl); err != nil {
		t.Fatalf("Refresh() = %v, want nil", err)
	}
	s.mustHold(l)
	if isClosed(lost) {
		t.Fatalf("Lost() closed while the lock is held (Err() = %v)", l.Err())
	}
	s.env.Advance(ttl + 10*time.Millisecond)
	if !s.env.Instant {
		if err := l.Refresh(context.Background(), ttl); !errors.Is(err, lockapi.ErrNotHeld) {
			t.Fatalf("Refresh() after expiry = %v, want ErrNotHeld", err)
		}
	}
	select {
	case <-lost:
	case <-time.After(guard):
		t.Fatal("Lost() not closed after the lock expired")
	}
	if err := l.Err(); !errors.Is(err, lockapi.ErrLost) {
		t.Fatalf("Err() after loss = %v, want ErrLost", err)
	}
	if err := l.Refresh(context.Background(), ttl); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("Refresh() after loss = %v, want ErrNotHeld", err)
	}

	// A released lock is not lost.
	l2 := s.obtain(c, s.key(), ttl, nil)
	lost2 := l2.Lost()
	if err := l2.Release(context.Background()); err != nil {
		t.Fatalf("Release() = %v, want nil", err)
	}
	if isClosed(lost2) || l2.Err() != nil {
		t.Fatalf("after Release, Lost() closed = %v, Err() = %v, want open and nil", isClosed(lost2), l2.Err())
	}
}

func testTTL(t *testing.T, s *suite) {
	l := s.obtain(s.client(), s.key(), ttl, nil)
	if d := s.mustHold(l); d > ttl || d < ttl-5*time.Second {
		t.Errorf("TTL() just after Obtain(%v) = %v, want close to %v", ttl, d, ttl)
	}
	s.env.Advance(45 * time.Second)
	if d := s.mustHold(l); d > 15*time.Second {
		t.Errorf("TTL() 45s after Obtain(%v) = %v, want <= 15s", ttl, d)
	}
	l.Release(context.Background())
	if _, err := l.TTL(context.Background()); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Errorf("TTL() after Release = %v, want ErrNotHeld", err)
	}
}

func testMetadata(t *testing.T, s *suite) {
	const md = "owner=worker-7;pid=4242"
	l := s.obtain(s.client(), s.key(), ttl, &lockapi.ObtainOptions{Metadata: md})
	if l.Metadata() != md {
		t.Errorf("Metadata() = %q, want %q", l.Metadata(), md)
	}
	// The stored value is token + metadata.
	if _, ok, err := s.env.Backend.PTTL(context.Background(), s.key(), l.Token()+md); !ok || err != nil {
		t.Errorf("Backend.PTTL(key, token+metadata) = _, %v, %v, want true, nil", ok, err)
	}
	if _, ok, _ := s.env.Backend.PTTL(context.Background(), s.key(), l.Token()); ok {
		t.Errorf("Backend.PTTL(key, token) without the metadata = true, want false")
	}
	s.mustHold(l)
	if err := l.Release(context.Background()); err != nil {
		t.Fatalf("Release() with metadata = %v, want nil", err)
	}
	s.obtain(s.client(), s.key(), ttl, nil).Release(context.Background())
}

func testCallerToken(t *testing.T, s *suite) {
	l := s.obtain(s.client(), s.key(), ttl, &lockapi.ObtainOptions{Token: "caller-token-1"})
	if l.Token() != "caller-token-1" {
		t.Errorf("Token() = %q, want %q", l.Token(), "caller-token-1")
	}
	s.mustNotObtain(s.client(), s.key())
	if err := l.Release(context.Background()); err != nil {
		t.Fatalf("Release() = %v, want nil", err)
	}
}

// testBackendContract checks the Backend's ok results directly.
func testBackendContract(t *testing.T, s *suite) {
	be := s.env.Backend
	ctx := context.Background()
	key := s.key()
	if _, ok, err := be.PTTL(ctx, key, "v1"); ok || err != nil {
		t.Fatalf("PTTL(absent) = _, %v, %v, want false, nil", ok, err)
	}
	if ok, err := be.Release(ctx, key, "v1"); ok || err != nil {
		t.Fatalf("Release(absent) = %v, %v, want false, nil", ok, err)
	}
	if ok, err := be.Refresh(ctx, key, "v1", ttl); ok || err != nil {
		t.Fatalf("Refresh(absent) = %v, %v, want false, nil", ok, err)
	}
	f1, ok, err := be.Acquire(ctx, key, "v1", ttl)
	if !ok || err != nil {
		t.Fatalf("Acquire(absent) = _, %v, %v, want true, nil", ok, err)
	}
	if _, ok, err := be.Acquire(ctx, key, "v2", ttl); ok || err != nil {
		t.Fatalf("Acquire(held) = _, %v, %v, want false, nil", ok, err)
	}
	if _, ok, err := be.Acquire(ctx, key, "v1", ttl); ok || err != nil {
		t.Fatalf("Acquire(held, same value) = _, %v, %v, want false, nil", ok, err)
	}
	if ok, err := be.Release(ctx, key, "v2"); ok || err != nil {
		t.Fatalf("Release(other value) = %v, %v, want false, nil", ok, err)
	}
	if ok, err := be.Refresh(ctx, key, "v1", 2*ttl); !ok || err != nil {
		t.Fatalf("Refresh(own value) = %v, %v, want true, nil", ok, err)
	}
	if d, ok, err := be.PTTL(ctx, key, "v1"); !ok || err != nil || d <= ttl || d > 2*ttl {
		t.Fatalf("PTTL after Refresh(2*ttl) = %v, %v, %v, want (ttl, 2*ttl], true, nil", d, ok, err)
	}
	if ok, err := be.Release(ctx, key, "v1"); !ok || err != nil {
		t.Fatalf("Release(own value) = %v, %v, want true, nil", ok, err)
	}
	f2, ok, err := be.Acquire(ctx, key, "v2", ttl)
	if !ok || err != nil {
		t.Fatalf("Acquire after Release = _, %v, %v, want true, nil", ok, err)
	}
	if s.env.Fencing && f2 <= f1 {
		t.Fatalf("fences %d then %d, want strictly increasing", f1, f2)
	}
	if !s.env.Fencing && (f1 != 0 || f2 != 0) {
		t.Logf("backend without Fencing returned fences %d, %d", f1, f2)
	}
	be.Release(ctx, key, "v2")
}
