package lockapi_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/faultinject"
)

type result struct {
	l   *lockapi.Lock
	err error
}

func obtainAsync(c *lockapi.Client, ctx context.Context, key string, opts *lockapi.ObtainOptions) <-chan result {
	res := make(chan result, 1)
	go func() {
		l, err := c.Obtain(ctx, key, time.Minute, opts)
		res <- result{l, err}
	}()
	return res
}

func mustObtain(t *testing.T, c *lockapi.Client, key string, ttl time.Duration, opts *lockapi.ObtainOptions) *lockapi.Lock {
	t.Helper()
	l, err := c.Obtain(context.Background(), key, ttl, opts)
	if err != nil {
		t.Fatalf("Obtain(%q) = %v, want a lock", key, err)
	}
	return l
}

func TestTokensUnique(t *testing.T) {
	f := newFixture(t)
	a, b := lockapi.New(f.b, lockapi.Options{}), lockapi.New(f.b, lockapi.Options{})
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		for _, c := range []*lockapi.Client{a, b} {
			l := mustObtain(t, c, "k", time.Minute, nil)
			if seen[l.Token()] || len(l.Token()) != lockapi.TokenLen {
				t.Fatalf("Token() = %q: repeated or not %d bytes", l.Token(), lockapi.TokenLen)
			}
			seen[l.Token()] = true
			l.Release(context.Background())
		}
	}
}

// TestPollingBudget: without a Watcher, LimitRetry(LinearBackoff(10ms), 3)
// makes exactly 1+3 attempts over 30ms of client time, then ErrNotObtained.
func TestPollingBudget(t *testing.T) {
	f := newFixture(t)
	poll := faultinject.New(f.b, faultinject.Options{}) // hides Watch
	cc := newMock()
	c := lockapi.New(poll, lockapi.Options{Clock: cc})
	holder := mustObtain(t, c, "k", time.Hour, nil)
	start := cc.Now()
	res := obtainAsync(c, context.Background(), "k", &lockapi.ObtainOptions{Retry: lockapi.LimitRetry(lockapi.LinearBackoff(10*time.Millisecond), 3)})
	var r result
	for i := 0; ; i++ {
		select {
		case r = <-res:
		default:
			if i == 1000 {
				t.Fatal("Obtain still blocked after 10s of client time")
			}
			cc.Add(time.Millisecond)
			continue
		}
		break
	}
	if !errors.Is(r.err, lockapi.ErrNotObtained) {
		t.Fatalf("Obtain = %v, want ErrNotObtained", r.err)
	}
	if got := poll.Calls(faultinject.Acquire); got != 1+1+3 {
		t.Errorf("Acquire calls = %d, want 5 (holder 1, waiter 1+3)", got)
	}
	if waited := cc.Since(start); waited < 30*time.Millisecond {
		t.Errorf("gave up after %v of client time, want >= 30ms", waited)
	}
	holder.Release(context.Background())
}

// TestWatchNoPolling: with a Watcher, a waiter with an hour-long delay
// acquires at the release, without any clock moving.
func TestWatchNoPolling(t *testing.T) {
	f := newFixture(t)
	cc := newMock() // never advanced
	c := lockapi.New(f.fi, lockapi.Options{Clock: cc})
	holder := mustObtain(t, c, "k", time.Hour, nil)
	f.awaitAcquires(t, 1)
	res := obtainAsync(c, context.Background(), "k", &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)})
	f.awaitAcquires(t, 2) // first attempt, then the attempt after arming the watch
	if err := holder.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	r := await(t, res, "the waiter")
	if r.err != nil {
		t.Fatalf("waiter Obtain = %v, want a lock", r.err)
	}
	if got := f.fi.Calls(faultinject.Acquire); got != 4 {
		t.Errorf("Acquire calls = %d, want 4 (holder 1, waiter 3)", got)
	}
	r.l.Release(context.Background())
}

// TestWatchWakesAtExpiry: a waiter acquires when the holder's TTL runs
// out; not at the deadline itself (the key is alive while now <= deadline).
func TestWatchWakesAtExpiry(t *testing.T) {
	f := newFixture(t)
	c := lockapi.New(f.fi, lockapi.Options{Clock: newMock()})
	holder := mustObtain(t, c, "k", time.Second, nil)
	f.awaitAcquires(t, 1)
	res := obtainAsync(c, context.Background(), "k", &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)})
	f.awaitAcquires(t, 2)
	f.advance(time.Second) // now == deadline
	select {
	case r := <-res:
		t.Fatalf("waiter returned %v, %v at the holder's deadline, want still blocked", r.l, r.err)
	default:
	}
	f.advance(time.Millisecond)
	r := await(t, res, "the waiter after expiry")
	if r.err != nil {
		t.Fatalf("waiter Obtain after expiry = %v, want a lock", r.err)
	}
	hf, _ := holder.Fence()
	if wf, _ := r.l.Fence(); wf <= hf {
		t.Errorf("waiter fence %d <= holder fence %d", wf, hf)
	}
	r.l.Release(context.Background())
}

// TestWatchWindowBudget: with a Watcher, changes of the key cause retries
// that do not consume the strategy; the strategy's delays bound the total
// wait (5 windows of 10ms).
func TestWatchWindowBudget(t *testing.T) {
	f := newFixture(t)
	cc := newMock()
	c := lockapi.New(f.fi, lockapi.Options{Clock: cc})
	holder := mustObtain(t, c, "k", time.Hour, nil)
	f.awaitAcquires(t, 1)
	res := obtainAsync(c, context.Background(), "k", &lockapi.ObtainOptions{Retry: lockapi.LimitRetry(lockapi.LinearBackoff(10*time.Millisecond), 5)})
	f.awaitAcquires(t, 2)
	const refreshes = 10
	for i := 0; i < refreshes; i++ {
		if err := holder.Refresh(context.Background(), time.Hour); err != nil {
			t.Fatal(err)
		}
		f.awaitAcquires(t, 1) // each change wakes the waiter once
	}
	var r result
	for i := 0; ; i++ {
		select {
		case r = <-res:
		default:
			if i == 1000 {
				t.Fatal("Obtain still blocked after 1000 advances")
			}
			cc.Add(10 * time.Millisecond)
			continue
		}
		break
	}
	if !errors.Is(r.err, lockapi.ErrNotObtained) {
		t.Fatalf("Obtain = %v, want ErrNotObtained", r.err)
	}
	if got, want := f.fi.Calls(faultinject.Acquire), 1+2+refreshes+5; got != want {
		t.Errorf("Acquire calls = %d, want %d (holder 1, waiter 2 + one per change + one per window)", got, want)
	}
	holder.Release(context.Background())
}

func TestFIFO(t *testing.T) {
	f := newFixture(t)
	c := lockapi.New(f.b, lockapi.Options{FIFO: true})
	ctx := context.Background()
	holder := mustObtain(t, c, "k", time.Hour, nil)
	retry := &lockapi.ObtainOptions{Retry: lockapi.LinearBackoff(time.Hour)}

	const n = 6
	order := make(chan int, n)
	done := make(chan error, n)
	cancels := make([]context.CancelFunc, n)
	for i := 0; i < n; i++ {
		wctx, cancel := context.WithCancel(ctx)
		cancels[i] = cancel
		go func() {
			l, err := c.Obtain(wctx, "k", time.Hour, retry)
			if err == nil {
				order <- i
				err = l.Release(ctx)
			}
			done <- err
		}()
		spinUntil(t, func() bool { return lockapi.QueueLen(c, "k") == i+1 }, fmt.Sprintf("waiter %d queued", i))
	}
	// The head (0) and a middle waiter (3) give up; their turns pass on.
	for _, i := range []int{0, 3} {
		cancels[i]()
		if err := await(t, done, "a canceled waiter"); !errors.Is(err, lockapi.ErrNotObtained) || !errors.Is(err, context.Canceled) {
			t.Fatalf("canceled waiter: Obtain = %v, want ErrNotObtained and context.Canceled", err)
		}
	}
	// A late Obtain on the same Client does not barge.
	if _, err := c.Obtain(ctx, "k", time.Hour, nil); !errors.Is(err, lockapi.ErrNotObtained) {
		t.Fatalf("NoRetry Obtain behind a queue = %v, want ErrNotObtained", err)
	}
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	var got []int
	for len(got) < n-2 {
		got = append(got, await(t, order, "the next waiter"))
		if err := await(t, done, "a waiter's release"); err != nil {
			t.Fatalf("waiter Release = %v", err)
		}
	}
	if want := []int{1, 2, 4, 5}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("acquisition order = %v, want %v", got, want)
	}
	for _, cancel := range cancels {
		cancel()
	}
	if q := lockapi.QueueLen(c, "k"); q != 0 {
		t.Errorf("QueueLen after all waiters = %d, want 0", q)
	}
}

func TestLostOnWatcher(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		breakLock func(f *fixture, key string)
	}{
		{"Overwrite", func(f *fixture, key string) { f.e.Set(key, "someone else") }},
		{"Delete", func(f *fixture, key string) { f.e.Del(key) }},
		{"Persist", nil}, // a TTL change that keeps our value is no loss
		{"Expiry", func(f *fixture, key string) {
			f.advance(time.Second) // at the deadline: still held
			f.advance(time.Nanosecond)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			c := lockapi.New(f.b, lockapi.Options{})
			l := mustObtain(t, c, "k", time.Second, nil)
			lost := l.Lost()
			if tc.breakLock == nil {
				f.e.Persist("k")
				if err := l.Refresh(ctx, time.Minute); err != nil {
					t.Fatal(err)
				}
				if _, err := l.TTL(ctx); err != nil {
					t.Fatal(err)
				}
				if err := l.Release(ctx); err != nil {
					t.Fatal(err)
				}
				if isClosed(lost) || l.Err() != nil {
					t.Fatalf("Lost closed = %v, Err = %v after changes keeping our value and Release", isClosed(lost), l.Err())
				}
				return
			}
			tc.breakLock(f, "k")
			await(t, lost, "Lost")
			if err := l.Err(); !errors.Is(err, lockapi.ErrLost) || !errors.Is(err, lockapi.ErrNotHeld) {
				t.Errorf("Err() = %v, want ErrLost and ErrNotHeld", err)
			}
			if err := l.Release(ctx); !errors.Is(err, lockapi.ErrNotHeld) {
				t.Errorf("Release after loss = %v, want ErrNotHeld", err)
			}
		})
	}
}

func TestLostAtExactExpiry(t *testing.T) {
	f := newFixture(t)
	l := mustObtain(t, lockapi.New(f.b, lockapi.Options{}), "k", time.Second, nil)
	lost := l.Lost()
	f.advance(time.Second)
	if _, err := l.TTL(context.Background()); err != nil || isClosed(lost) {
		t.Fatalf("at the deadline: TTL err = %v, Lost closed = %v, want held", err, isClosed(lost))
	}
	f.advance(time.Nanosecond)
	await(t, lost, "Lost just after the deadline")
}

func TestLostWithoutWatcher(t *testing.T) {
	f := newFixture(t)
	c := lockapi.New(faultinject.New(f.b, faultinject.Options{}), lockapi.Options{})
	l := mustObtain(t, c, "k", time.Second, nil)
	lost := l.Lost()
	f.e.Del("k")
	if isClosed(lost) {
		t.Fatal("Lost closed without a Watcher before any call found the loss")
	}
	if err := l.Refresh(context.Background(), time.Second); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("Refresh of a deleted lock = %v, want ErrNotHeld", err)
	}
	if !isClosed(lost) {
		t.Fatal("Lost not closed after a failed Refresh")
	}
}

// TestAcquireLostReply: an Acquire applied but whose reply was lost fails
// Obtain, and Obtain deletes the lock it may have stored.
func TestAcquireLostReply(t *testing.T) {
	f := newFixture(t)
	fi := faultinject.New(f.b, faultinject.Options{})
	c := lockapi.New(fi, lockapi.Options{})
	fi.Inject(faultinject.Acquire, faultinject.Fault{LostReply: true, Next: 1})
	_, err := c.Obtain(context.Background(), "k", time.Minute, nil)
	if !errors.Is(err, faultinject.ErrInjected) {
		t.Fatalf("Obtain with a lost reply = %v, want ErrInjected", err)
	}
	if _, ok := f.e.Get("k"); ok {
		t.Fatal("the lock stored by the lost Acquire was left behind")
	}
	mustObtain(t, c, "k", time.Minute, nil).Release(context.Background())
}

// TestReleaseAfterNetworkFailure: a Release that failed (not applied, or
// applied with its reply lost) and is retried after someone else took the
// lock never deletes the new holder's lock.
func TestReleaseAfterNetworkFailure(t *testing.T) {
	for _, lostReply := range []bool{false, true} {
		t.Run(fmt.Sprintf("LostReply=%v", lostReply), func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(t)
			fi := faultinject.New(f.b, faultinject.Options{})
			a, b := lockapi.New(fi, lockapi.Options{}), lockapi.New(f.b, lockapi.Options{})
			la := mustObtain(t, a, "k", time.Second, nil)
			fi.Inject(faultinject.Release, faultinject.Fault{LostReply: lostReply, Next: 1})
			if err := la.Release(ctx); !errors.Is(err, faultinject.ErrInjected) {
				t.Fatalf("Release with a fault = %v, want ErrInjected", err)
			}
			if !lostReply {
				f.advance(time.Second + time.Millisecond) // A's lock expires
			}
			lb := mustObtain(t, b, "k", time.Minute, nil)
			if err := la.Release(ctx); !errors.Is(err, lockapi.ErrNotHeld) {
				t.Fatalf("retried Release = %v, want ErrNotHeld", err)
			}
			if v, ok := f.e.Get("k"); !ok || v != lb.Token() {
				t.Fatalf("key = %q, %v after the old holder's retried Release, want the new holder's token", v, ok)
			}
			if err := lb.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestRefreshError(t *testing.T) {
	f := newFixture(t)
	fi := faultinject.New(f.b, faultinject.Options{})
	l := mustObtain(t, lockapi.New(fi, lockapi.Options{}), "k", time.Minute, nil)
	lost := l.Lost()
	fi.Inject(faultinject.Refresh, faultinject.Fault{Next: 1})
	err := l.Refresh(context.Background(), time.Minute)
	if !errors.Is(err, faultinject.ErrInjected) || errors.Is(err, lockapi.ErrNotHeld) {
		t.Fatalf("Refresh with a transport error = %v, want ErrInjected and not ErrNotHeld", err)
	}
	if isClosed(lost) || l.Err() != nil {
		t.Fatal("a transport error marked the lock lost")
	}
	if err := l.Refresh(context.Background(), time.Minute); err != nil {
		t.Fatalf("Refresh after the fault = %v, want nil", err)
	}
	l.Release(context.Background())
}

// TestObtainLatencyCanceled: an Acquire stuck in (injected) latency ends
// with ctx; the error wraps ctx.Err() but not ErrNotObtained, since nobody
// was found holding the key.
func TestObtainLatencyCanceled(t *testing.T) {
	f := newFixture(t)
	fi := faultinject.New(f.b, faultinject.Options{Clock: newMock()})
	fi.Inject(faultinject.Acquire, faultinject.Fault{Latency: time.Hour, NoError: true})
	ctx, cancel := context.WithCancel(context.Background())
	res := obtainAsync(lockapi.New(fi, lockapi.Options{}), ctx, "k", nil)
	cancel()
	r := await(t, res, "Obtain")
	if errors.Is(r.err, lockapi.ErrNotObtained) || !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Obtain = %v, want context.Canceled and not ErrNotObtained", r.err)
	}
	if _, ok := f.e.Get("k"); ok {
		t.Fatal("canceled Obtain left the key locked")
	}
}

func TestNewPanicsOnNil(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New(nil) did not panic")
		}
	}()
	lockapi.New(nil, lockapi.Options{})
}

func TestLockContext(t *testing.T) {
	f := newFixture(t)
	c := lockapi.New(f.b, lockapi.Options{})
	bg := context.Background()

	l := mustObtain(t, c, "a", time.Minute, nil)
	ctx, cancel := l.Context(bg)
	defer cancel()
	f.e.Del("a")
	await(t, ctx.Done(), "the lock's context after a delete")
	if cause := context.Cause(ctx); !errors.Is(cause, lockapi.ErrLost) {
		t.Errorf("Cause after loss = %v, want ErrLost", cause)
	}

	l = mustObtain(t, c, "b", time.Minute, nil)
	ctx, cancel = l.Context(bg)
	defer cancel()
	if ctx.Err() != nil {
		t.Fatalf("context of a held lock ended: %v", context.Cause(ctx))
	}
	if err := l.Release(bg); err != nil {
		t.Fatal(err)
	}
	if cause := context.Cause(ctx); !errors.Is(cause, lockapi.ErrReleased) {
		t.Errorf("Cause after Release = %v, want ErrReleased", cause)
	}
	// A context asked for after Release is born canceled.
	ctx2, cancel2 := l.Context(bg)
	defer cancel2()
	if cause := context.Cause(ctx2); !errors.Is(cause, lockapi.ErrReleased) {
		t.Errorf("Cause of a context made after Release = %v, want ErrReleased", cause)
	}

	l = mustObtain(t, c, "c", time.Minute, nil)
	parent, cancelParent := context.WithCancel(bg)
	ctx, cancel = l.Context(parent)
	defer cancel()
	cancelParent()
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("context after its parent ended: %v, want context.Canceled", ctx.Err())
	}
	if _, err := l.TTL(bg); err != nil {
		t.Errorf("ending the parent touched the lock: TTL() = %v", err)
	}
	l.Release(bg)
}
