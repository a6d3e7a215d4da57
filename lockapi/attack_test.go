package lockapi_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/faultinject"
)

// TestAttackReentrantStaleRelease: a hold that expired must not release
// the hold its owner took afresh after the expiry.
//
// Unfixed: every hold of an owner stores the same value (the owner's
// token), and ReleaseReentrant compares only that value, so a stale hold's
// Release removes the owner's fresh hold and frees the key under it. A fix
// needs a per-epoch identity in the release (the first hold's fence, kept
// in the hold key, is one; it is 0 with NoFencing), a change of the
// ReentrantBackend interface.
func TestAttackReentrantStaleRelease(t *testing.T) {
	t.Skip("known defect: a stale reentrant hold releases the owner's later hold (see comment)")
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
//
// Unfixed: holds are counted, not named, so a Release applied at the
// backend whose reply was lost, when retried, removes a second hold and
// the key is freed while another hold is live. A fix needs per-hold
// identities at the backend (a change of the ReentrantBackend interface
// and of the key layout shared with the Redis backend).
func TestAttackReentrantReleaseRetry(t *testing.T) {
	t.Skip("known defect: a retried reentrant Release removes another hold (see comment)")
	f := newFixture(t)
	c := lockapi.New(f.fi, lockapi.Options{})
	ctx := context.Background()
	l1, err := c.Obtain(ctx, "k", time.Minute, &lockapi.ObtainOptions{Reentrant: true})
	if err != nil {
		t.Fatal(err)
	}
	l2, err := c.Obtain(ctx, "k", time.Minute, &lockapi.ObtainOptions{Reentrant: true, Token: l1.Token()})
	if err != nil {
		t.Fatal(err)
	}
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

// TestAttackRWMarkLeftOnCancelDuringAttempt: a waiting writer whose ctx
// ends during an attempt gives up; its mark must not keep readers out.
func TestAttackRWMarkLeftOnCancelDuringAttempt(t *testing.T) {
	f := newFixture(t)
	c := lockapi.New(f.fi, lockapi.Options{})
	ctx := context.Background()
	rw := c.RWMutex("doc")
	r1, err := rw.ObtainRead(ctx, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	go func() {
		_, err := rw.ObtainWrite(wctx, time.Hour, &lockapi.ObtainOptions{Retry: lockapi.LimitRetry(lockapi.LinearBackoff(time.Hour), 1)})
		done <- err
	}()
	f.awaitAcquires(t, 2) // marked waiting
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
	c := lockapi.New(f.fi, lockapi.Options{})
	ctx := context.Background()
	rw := c.RWMutex("doc")
	r1, err := rw.ObtainRead(ctx, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	go func() {
		_, err := rw.ObtainWrite(wctx, time.Second, &lockapi.ObtainOptions{Retry: lockapi.LimitRetry(lockapi.LinearBackoff(time.Hour), 1)})
		done <- err
	}()
	f.awaitAcquires(t, 2) // the first attempt, and the attempt after arming the watch
	for range 6 {         // 3s: three times the writer's ttl
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
