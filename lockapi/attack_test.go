package lockapi_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/faultinject"
)

// TestAttackReentrantStaleRelease: a hold that expired must not release
// the hold its owner took afresh after the expiry. Every hold of an owner
// stores the same value (the owner's token), so only the hold's own ID at
// the backend tells them apart.
func TestAttackReentrantStaleRelease(t *testing.T) {
	f := newFixture(t)
	c := lockapi.New(f.b, lockapi.Options{})
	ctx := context.Background()
	re := &lockapi.ObtainOptions{Reentrant: true}
	l1, err := c.Obtain(ctx, "k", time.Second, re)
	if err != nil {
		t.Fatal(err)
	}
	f.advance(2 * time.Second) // l1 expires
	l2, err := c.Obtain(ctx, "k", time.Minute, &lockapi.ObtainOptions{Reentrant: true, Token: l1.Token()})
	if err != nil {
		t.Fatal(err)
	}
	if err := l1.Release(ctx); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Errorf("Release of an expired hold = %v, want ErrNotHeld", err)
	}
	if _, err := l2.TTL(ctx); err != nil {
		t.Errorf("fresh hold after a stale hold's Release: TTL = %v, want held", err)
	}
	l2.Release(ctx)
}

// TestAttackReentrantReleaseRetry: a Release whose reply was lost may be
// retried (Lock.Release's doc); the retry must not remove another hold.
// Counted holds would lose here: the retry would remove a second hold and
// free the key while another hold is live.
func TestAttackReentrantReleaseRetry(t *testing.T) {
	f := newFixture(t)
	c := lockapi.New(f.fi, lockapi.Options{})
	ctx := context.Background()
	l1 := obtainReentrant(t, c, "")
	l2 := obtainReentrant(t, c, l1.Token())
	f.fi.Inject(faultinject.Release, faultinject.Fault{LostReply: true, Next: 1})
	if err := l1.Release(ctx); err == nil {
		t.Fatal("Release with a lost reply succeeded")
	}
	l1.Release(ctx) // the documented retry
	if _, err := l2.TTL(ctx); err != nil {
		t.Errorf("other hold after a retried Release: TTL = %v, want held", err)
	}
	l2.Release(ctx)
}

// obtainReentrant obtains "k" reentrantly for a minute, as the owner of
// token ("" for a new owner).
func obtainReentrant(t *testing.T, c *lockapi.Client, token string) *lockapi.Lock {
	t.Helper()
	l, err := c.Obtain(context.Background(), "k", time.Minute, &lockapi.ObtainOptions{Reentrant: true, Token: token})
	if err != nil {
		t.Fatalf("reentrant Obtain = %v", err)
	}
	return l
}

// TestAttackReentrantObtainLostReply: a re-entry whose reply was lost
// added a hold at the backend; Obtain undoes exactly that hold, so the
// owner's own release frees the key, and the other hold is untouched.
func TestAttackReentrantObtainLostReply(t *testing.T) {
	f := newFixture(t)
	c := lockapi.New(f.fi, lockapi.Options{})
	ctx := context.Background()
	l1 := obtainReentrant(t, c, "")
	f.fi.Inject(faultinject.Acquire, faultinject.Fault{LostReply: true, Next: 1})
	if l, err := c.Obtain(ctx, "k", time.Minute, &lockapi.ObtainOptions{Reentrant: true, Token: l1.Token()}); err == nil {
		t.Fatalf("re-entry with a lost reply = %v, want an error", l)
	}
	if _, err := l1.TTL(ctx); err != nil {
		t.Fatalf("first hold after the failed re-entry: TTL = %v, want held", err)
	}
	if err := l1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	other, err := lockapi.New(f.b, lockapi.Options{}).Obtain(ctx, "k", time.Minute, nil)
	if err != nil {
		t.Fatalf("Obtain after the owner's last release = %v, want the key free (the lost re-entry's hold was left behind)", err)
	}
	other.Release(ctx)
}

// waitingWriter has a reader hold read-write lock "doc" for an hour and
// starts a writer, with the given ttl and one long waiting window, that is
// marked waiting when waitingWriter returns (its first attempt, and the
// attempt after arming its watch, are done). The writer's Obtain error
// arrives on done; cancel ends its wait.
func waitingWriter(t *testing.T, f *fixture, ttl time.Duration) (rw *lockapi.RWMutex, reader *lockapi.Lock, done chan error, cancel context.CancelFunc) {
	t.Helper()
	rw = lockapi.New(f.fi, lockapi.Options{}).RWMutex("doc")
	reader, err := rw.ObtainRead(context.Background(), time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	done = make(chan error, 1)
	wctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := rw.ObtainWrite(wctx, ttl, &lockapi.ObtainOptions{Retry: lockapi.LimitRetry(lockapi.LinearBackoff(time.Hour), 1)})
		done <- err
	}()
	f.awaitAcquires(t, 2)
	return rw, reader, done, cancel
}

// TestAttackRWMarkLeftOnCancelDuringAttempt: a waiting writer whose ctx
// ends during an attempt gives up; its mark must not keep readers out.
func TestAttackRWMarkLeftOnCancelDuringAttempt(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	rw, r1, done, cancel := waitingWriter(t, f, time.Hour)
	// The next attempt hangs in latency; ctx ends during it.
	f.fi.Inject(faultinject.Acquire, faultinject.Fault{Latency: time.Hour, NoError: true, Next: 1})
	r1.Release(ctx) // wakes the writer
	spinUntil(t, func() bool { return f.fi.Calls(faultinject.Acquire) >= 3 }, "the writer's third attempt")
	cancel()
	if err := await(t, done, "writer gives up"); err == nil {
		t.Fatal("writer obtained")
	}
	if r, err := rw.ObtainRead(ctx, time.Minute, nil); err != nil {
		t.Errorf("reader after the writer gave up = %v, want granted (mark left behind)", err)
	} else {
		r.Release(ctx)
	}
}

// TestAttackRWMarkLapsesWhileWriterWaits: a writer still waiting keeps
// new readers out past its ttl (its mark, lasting ttl from its latest
// attempt, must not lapse while it waits with long waiting windows).
func TestAttackRWMarkLapsesWhileWriterWaits(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	rw, r1, done, cancel := waitingWriter(t, f, time.Second)
	for range 6 { // 3s: three times the writer's ttl
		f.advance(500 * time.Millisecond)
		f.awaitAcquires(t, 1) // the writer renews its mark
	}
	if r, err := rw.ObtainRead(ctx, time.Minute, nil); err == nil {
		t.Errorf("a new reader got in while a writer was waiting (its mark lapsed after its ttl)")
		r.Release(ctx)
	}
	cancel()
	if err := await(t, done, "writer gives up"); !errors.Is(err, lockapi.ErrNotObtained) {
		t.Errorf("writer Obtain = %v, want ErrNotObtained", err)
	}
	if r, err := rw.ObtainRead(ctx, time.Minute, nil); err != nil {
		t.Errorf("reader after the writer gave up = %v, want granted", err)
	} else {
		r.Release(ctx)
	}
	r1.Release(ctx)
}

// TestAttackFIFOQueueCollision: with FIFO, only Obtain calls naming the
// same lock share a queue. ObtainAll(["a", "b"]) and ObtainAll(["a,b"])
// name different keys, as do a mutex key beginning with NUL and a
// semaphore; a waiter must not queue behind an unrelated lock's waiter.
func TestAttackFIFOQueueCollision(t *testing.T) {
	for _, tc := range []struct {
		name         string
		block, other func(c *lockapi.Client, ctx context.Context, retry lockapi.RetryStrategy) (*lockapi.Lock, error)
	}{{
		name: "multi",
		block: func(c *lockapi.Client, ctx context.Context, retry lockapi.RetryStrategy) (*lockapi.Lock, error) {
			return c.ObtainAll(ctx, []string{"a", "b"}, time.Minute, &lockapi.ObtainOptions{Retry: retry})
		},
		other: func(c *lockapi.Client, ctx context.Context, retry lockapi.RetryStrategy) (*lockapi.Lock, error) {
			return c.ObtainAll(ctx, []string{"a,b"}, time.Minute, &lockapi.ObtainOptions{Retry: retry})
		},
	}, {
		name: "mutex-semaphore",
		block: func(c *lockapi.Client, ctx context.Context, retry lockapi.RetryStrategy) (*lockapi.Lock, error) {
			return c.Semaphore("pool", 1).Obtain(ctx, time.Minute, &lockapi.ObtainOptions{Retry: retry})
		},
		other: func(c *lockapi.Client, ctx context.Context, retry lockapi.RetryStrategy) (*lockapi.Lock, error) {
			return c.Obtain(ctx, "\x00"+string(rune('0'+lockapi.KindSemaphore))+"pool", time.Minute, &lockapi.ObtainOptions{Retry: retry})
		},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			holder := lockapi.New(f.fi, lockapi.Options{})
			h, err := tc.block(holder, ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			c := lockapi.New(f.fi, lockapi.Options{FIFO: true})
			wctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := tc.block(c, wctx, lockapi.LimitRetry(lockapi.LinearBackoff(time.Hour), 1))
				done <- err
			}()
			f.awaitAcquires(t, 3) // the holder's, then the waiter's first and armed attempts
			res := make(chan error, 1)
			go func() {
				l, err := tc.other(c, ctx, lockapi.LimitRetry(lockapi.LinearBackoff(time.Hour), 1))
				if err == nil {
					l.Release(ctx)
				}
				res <- err
			}()
			select {
			case err := <-res:
				if err != nil {
					t.Errorf("Obtain of a free, unrelated lock = %v", err)
				}
				cancel()
				await(t, done, "blocked waiter gives up")
			case <-time.After(guard):
				t.Errorf("Obtain of a free, unrelated lock queued behind another lock's waiter")
				cancel()
				await(t, done, "blocked waiter gives up")
				await(t, res, "second Obtain")
			}
			h.Release(ctx)
		})
	}
}

// TestAttackSemaphoreLostReply: a semaphore acquisition whose reply was
// lost leaves no lease behind, so the slot is free for the next holder.
func TestAttackSemaphoreLostReply(t *testing.T) {
	f := newFixture(t)
	c := lockapi.New(f.fi, lockapi.Options{})
	ctx := context.Background()
	sem := c.Semaphore("pool", 2)
	a, err := sem.Obtain(ctx, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.fi.Inject(faultinject.Acquire, faultinject.Fault{LostReply: true, Next: 1})
	if _, err := sem.Obtain(ctx, time.Minute, nil); err == nil {
		t.Fatal("Obtain with a lost reply succeeded")
	}
	b, err := sem.Obtain(ctx, time.Minute, nil)
	if err != nil {
		t.Fatalf("Obtain after a lost reply = %v, want the slot freed", err)
	}
	if l, err := sem.Obtain(ctx, time.Minute, nil); err == nil {
		t.Errorf("third holder of a semaphore of 2")
		l.Release(ctx)
	}
	for _, l := range []*lockapi.Lock{a, b} {
		if err := l.Release(ctx); err != nil {
			t.Error(err)
		}
	}
	if got := f.b.InspectSemaphore("pool", lockapi.MaxLimit).Holders; len(got) != 0 {
		t.Errorf("holders after every release: %v", got)
	}
}

// TestAttackBadInput: input outside the contract is refused with the
// contract's error, without panics and without touching the backend.
func TestAttackBadInput(t *testing.T) {
	f := newFixture(t)
	c := lockapi.New(f.fi, lockapi.Options{})
	ctx := context.Background()
	many := make([]string, lockapi.MaxKeys+1)
	for i := range many {
		many[i] = "k" + string(rune('a'+i%26)) + time.Duration(i).String()
	}
	dups := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "a"}
	for _, tc := range []struct {
		name string
		call func() (*lockapi.Lock, error)
		want error
	}{
		{"sem empty", func() (*lockapi.Lock, error) { return c.Semaphore("", 1).Obtain(ctx, time.Second, nil) }, lockapi.ErrInvalidKey},
		{"sem reserved", func() (*lockapi.Lock, error) { return c.Semaphore("nxkv:x", 1).Obtain(ctx, time.Second, nil) }, lockapi.ErrInvalidKey},
		{"sem zero", func() (*lockapi.Lock, error) { return c.Semaphore("s", 0).Obtain(ctx, time.Second, nil) }, lockapi.ErrInvalidOption},
		{"sem negative", func() (*lockapi.Lock, error) { return c.Semaphore("s", -1).Obtain(ctx, time.Second, nil) }, lockapi.ErrInvalidOption},
		{"sem huge", func() (*lockapi.Lock, error) { return c.Semaphore("s", 1<<62).Obtain(ctx, time.Second, nil) }, lockapi.ErrInvalidOption},
		{"sem reentrant", func() (*lockapi.Lock, error) {
			return c.Semaphore("s", 1).Obtain(ctx, time.Second, &lockapi.ObtainOptions{Reentrant: true})
		}, lockapi.ErrInvalidOption},
		{"sem ttl", func() (*lockapi.Lock, error) { return c.Semaphore("s", 1).Obtain(ctx, -time.Second, nil) }, lockapi.ErrInvalidTTL},
		{"rw empty", func() (*lockapi.Lock, error) { return c.RWMutex("").ObtainRead(ctx, time.Second, nil) }, lockapi.ErrInvalidKey},
		{"rw reserved", func() (*lockapi.Lock, error) { return c.RWMutex("nxkv:rw").ObtainWrite(ctx, time.Second, nil) }, lockapi.ErrInvalidKey},
		{"rw ttl", func() (*lockapi.Lock, error) { return c.RWMutex("d").ObtainWrite(ctx, lockapi.MaxTTL+time.Hour, nil) }, lockapi.ErrInvalidTTL},
		{"all nil", func() (*lockapi.Lock, error) { return c.ObtainAll(ctx, nil, time.Second, nil) }, lockapi.ErrInvalidKey},
		{"all empty key", func() (*lockapi.Lock, error) { return c.ObtainAll(ctx, []string{"a", ""}, time.Second, nil) }, lockapi.ErrInvalidKey},
		{"all reserved", func() (*lockapi.Lock, error) { return c.ObtainAll(ctx, []string{"a", "nxkv:hold:a"}, time.Second, nil) }, lockapi.ErrInvalidKey},
		{"all too many", func() (*lockapi.Lock, error) { return c.ObtainAll(ctx, many, time.Second, nil) }, lockapi.ErrInvalidKey},
		{"all dup", func() (*lockapi.Lock, error) { return c.ObtainAll(ctx, dups, time.Second, nil) }, lockapi.ErrInvalidKey},
		{"all reentrant", func() (*lockapi.Lock, error) {
			return c.ObtainAll(ctx, []string{"a"}, time.Second, &lockapi.ObtainOptions{Reentrant: true})
		}, lockapi.ErrInvalidOption},
		{"reentrant reserved", func() (*lockapi.Lock, error) {
			return c.Obtain(ctx, "nxkv:fence:a", time.Second, &lockapi.ObtainOptions{Reentrant: true})
		}, lockapi.ErrInvalidKey},
		{"reentrant zero ttl", func() (*lockapi.Lock, error) {
			return c.Obtain(ctx, "a", 0, &lockapi.ObtainOptions{Reentrant: true})
		}, lockapi.ErrInvalidTTL},
	} {
		l, err := tc.call()
		if l != nil || !errors.Is(err, tc.want) {
			t.Errorf("%s: Obtain = %v, %v; want %v", tc.name, l, err, tc.want)
		}
	}
	if n := f.fi.Calls(faultinject.Acquire); n != 0 {
		t.Errorf("refused input made %d Acquire calls", n)
	}
	if got := f.b.InspectSemaphore("s", -1); len(got.Holders) != 0 {
		t.Errorf("InspectSemaphore with a negative limit: %v", got)
	}
}

// TestAttackLostPrims: Lost closes when a primitive's lease expires, and
// stays open after a successful Release, for every kind (a reentrant hold
// that is not the last included); Stats count each once.
func TestAttackLostPrims(t *testing.T) {
	f := newFixture(t)
	c := lockapi.New(f.fi, lockapi.Options{})
	ctx := context.Background()
	rw := c.RWMutex("doc")
	obtain := []func(ttl time.Duration) (*lockapi.Lock, error){
		func(ttl time.Duration) (*lockapi.Lock, error) { return c.Semaphore("pool", 3).Obtain(ctx, ttl, nil) },
		func(ttl time.Duration) (*lockapi.Lock, error) { return rw.ObtainRead(ctx, ttl, nil) },
		func(ttl time.Duration) (*lockapi.Lock, error) {
			return c.ObtainAll(ctx, []string{"m1", "m2"}, ttl, nil)
		},
		func(ttl time.Duration) (*lockapi.Lock, error) {
			return c.Obtain(ctx, "re", ttl, &lockapi.ObtainOptions{Reentrant: true})
		},
	}
	var expiring, released []*lockapi.Lock
	for _, ob := range obtain {
		l, err := ob(time.Second)
		if err != nil {
			t.Fatal(err)
		}
		l.Lost()
		expiring = append(expiring, l)
	}
	f.advance(2 * time.Second)
	for _, l := range expiring {
		await(t, l.Lost(), l.Kind().String()+" lease's Lost at expiry")
	}
	for _, ob := range obtain {
		l, err := ob(time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		l.Lost()
		released = append(released, l)
	}
	re2, err := c.Obtain(ctx, "re", time.Minute, &lockapi.ObtainOptions{Reentrant: true, Token: released[3].Token()})
	if err != nil {
		t.Fatal(err)
	}
	re2.Lost()
	released = append(released, re2)
	for _, l := range released {
		if err := l.Release(ctx); err != nil {
			t.Errorf("%v Release = %v", l.Kind(), err)
		}
		if isClosed(l.Lost()) || l.Err() != nil {
			t.Errorf("%v lease lost after a successful Release: %v", l.Kind(), l.Err())
		}
	}
	st := c.Stats()
	if st.Acquired != 9 || st.Released != 5 || st.Lost != 4 || st.Expired != 4 {
		t.Errorf("Stats = acquired %d released %d lost %d expired %d, want 9 5 4 4", st.Acquired, st.Released, st.Lost, st.Expired)
	}
}

// TestAttackReentrantKnownLostRelease: a hold known lost (its Lost
// closed at its expiry) must not, on Release, remove the hold its owner
// took afresh after the expiry.
func TestAttackReentrantKnownLostRelease(t *testing.T) {
	f := newFixture(t)
	c := lockapi.New(f.b, lockapi.Options{})
	ctx := context.Background()
	l1, err := c.Obtain(ctx, "k", time.Second, &lockapi.ObtainOptions{Reentrant: true})
	if err != nil {
		t.Fatal(err)
	}
	lost := l1.Lost()
	f.advance(2 * time.Second)
	await(t, lost, "Lost at expiry")
	l2, err := c.Obtain(ctx, "k", time.Minute, &lockapi.ObtainOptions{Reentrant: true, Token: l1.Token()})
	if err != nil {
		t.Fatal(err)
	}
	if err := l1.Release(ctx); !errors.Is(err, lockapi.ErrNotHeld) {
		t.Errorf("Release of a lost hold = %v, want ErrNotHeld", err)
	}
	if _, err := l2.TTL(ctx); err != nil {
		t.Errorf("fresh hold after a lost hold's Release: TTL = %v, want held", err)
	}
	if err := l2.Release(ctx); err != nil {
		t.Error(err)
	}
	if info := f.b.Inspect("k"); len(info.Holders) != 0 {
		t.Errorf("key held after the last hold's Release: %+v", info)
	}
}

// TestAttackMaxSizes: ObtainAll of MaxKeys keys and a semaphore of
// MaxLimit work at the limits: all or nothing, exactly MaxLimit holders,
// and a waiter woken by the expiry of the last slot.
func TestAttackMaxSizes(t *testing.T) {
	f := newFixture(t)
	c := lockapi.New(f.b, lockapi.Options{})
	cw := lockapi.New(f.fi, lockapi.Options{}) // the waiter's, counting its attempts
	ctx := context.Background()
	keys := make([]string, lockapi.MaxKeys)
	for i := range keys {
		keys[i] = "k" + time.Duration(i).String()
	}
	single, err := c.Obtain(ctx, keys[lockapi.MaxKeys-1], time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ObtainAll(ctx, keys, time.Minute, nil); !errors.Is(err, lockapi.ErrNotObtained) {
		t.Fatalf("ObtainAll with its last key held = %v, want ErrNotObtained", err)
	}
	if l, err := c.Obtain(ctx, keys[0], time.Minute, nil); err != nil {
		t.Fatalf("first key after a failed ObtainAll = %v, want free", err)
	} else {
		l.Release(ctx)
	}
	single.Release(ctx)
	all, err := c.ObtainAll(ctx, keys, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := all.Release(ctx); err != nil {
		t.Fatal(err)
	}

	sem := c.Semaphore("big", lockapi.MaxLimit)
	for i := range lockapi.MaxLimit {
		ttl := time.Minute
		if i == lockapi.MaxLimit-1 {
			ttl = time.Second
		}
		if _, err := sem.Obtain(ctx, ttl, nil); err != nil {
			t.Fatalf("lease %d: %v", i, err)
		}
	}
	res := make(chan error, 1)
	go func() {
		l, err := cw.Semaphore("big", lockapi.MaxLimit).Obtain(ctx, time.Minute, &lockapi.ObtainOptions{Retry: lockapi.LimitRetry(lockapi.LinearBackoff(time.Hour), 1)})
		if err == nil {
			l.Release(ctx)
		}
		res <- err
	}()
	f.awaitAcquires(t, 2)      // the first attempt, and the attempt after arming the watches
	f.advance(2 * time.Second) // the last slot expires
	if err := await(t, res, "waiter woken by the last slot's expiry"); err != nil {
		t.Fatalf("waiter = %v", err)
	}
	if n := len(f.b.InspectSemaphore("big", lockapi.MaxLimit).Holders); n != lockapi.MaxLimit-1 {
		t.Fatalf("%d holders, want %d (the waiter released its lease)", n, lockapi.MaxLimit-1)
	}
	if l, err := sem.Obtain(ctx, time.Minute, nil); err != nil {
		t.Fatalf("lease in the freed slot: %v", err)
	} else if _, err := sem.Obtain(ctx, time.Minute, nil); !errors.Is(err, lockapi.ErrNotObtained) {
		t.Fatalf("holder MaxLimit+1 = %v, want ErrNotObtained", err)
	} else {
		l.Release(ctx)
	}
}

// TestAttackReentrantFIFO: with FIFO, the owner's re-entry must not queue
// behind a waiter for the key it holds (the waiter waits for the owner's
// release, so the re-entry would fail at once with NoRetry, or wait for
// nothing).
func TestAttackReentrantFIFO(t *testing.T) {
	f := newFixture(t)
	c := lockapi.New(f.fi, lockapi.Options{FIFO: true})
	ctx := context.Background()
	l1, err := c.Obtain(ctx, "k", time.Minute, &lockapi.ObtainOptions{Reentrant: true})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		l, err := c.Obtain(wctx, "k", time.Minute, &lockapi.ObtainOptions{Retry: lockapi.LimitRetry(lockapi.LinearBackoff(time.Hour), 1)})
		if err == nil {
			l.Release(ctx)
		}
		done <- err
	}()
	f.awaitAcquires(t, 3) // l1's, then the waiter's first and armed attempts
	l2, err := c.Obtain(ctx, "k", time.Minute, &lockapi.ObtainOptions{Reentrant: true, Token: l1.Token()})
	if err != nil {
		t.Errorf("re-entry by the owner with a waiter queued = %v, want a second hold", err)
	} else if err := l2.Release(ctx); err != nil {
		t.Error(err)
	}
	cancel()
	await(t, done, "waiter gives up")
	l1.Release(ctx)
}

// TestAttackRWStress: concurrent readers and writers (NoRetry, leases
// that never expire in the test) never overlap a writer with anyone.
func TestAttackRWStress(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var readers, writers atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := lockapi.New(f.b, lockapi.Options{})
			rw := c.RWMutex("doc")
			for i := range 300 {
				write := (g+i)%3 == 0
				var l *lockapi.Lock
				var err error
				if write {
					l, err = rw.ObtainWrite(ctx, time.Hour, nil)
				} else {
					l, err = rw.ObtainRead(ctx, time.Hour, nil)
				}
				if err != nil {
					continue
				}
				if write {
					if n := writers.Add(1); n != 1 || readers.Load() != 0 {
						select {
						case errs <- "writer beside another holder":
						default:
						}
					}
					writers.Add(-1)
				} else {
					readers.Add(1)
					if writers.Load() != 0 {
						select {
						case errs <- "reader beside a writer":
						default:
						}
					}
					readers.Add(-1)
				}
				if err := l.Release(ctx); err != nil {
					select {
					case errs <- err.Error():
					default:
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	info := f.b.InspectRW("doc")
	if info.Writer != nil || len(info.Readers) != 0 || info.WriterWaiting != nil {
		t.Errorf("after every release: %+v", info)
	}
}
