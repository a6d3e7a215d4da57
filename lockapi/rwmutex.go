package lockapi

import (
	"context"
	"time"
)

// RWMutex is a read-write lock over the Client's backend: many readers or
// one writer, each with a lease of its own (a *Lock of Kind KindRead or
// KindWrite, with its own TTL, token and fence). Create it with
// Client.RWMutex; it is a handle, holding no state, safe for concurrent
// use.
//
// # Policy
//
// Writers are preferred. A read lease is granted only when no writer holds
// the lock and no writer is waiting for it; a write lease only when no
// writer holds it and no read lease is live. A writer that fails and will
// wait marks itself waiting (one mark per lock, kept by the first waiting
// writer, lasting its ttl from its latest attempt and removed when it
// acquires or gives up; a waiting writer attempts again at least every
// half ttl, whatever its retry strategy, so its mark lasts while it
// waits), and from then on new readers wait while the
// readers already in finish. So a steady stream of readers cannot starve a
// writer; a steady stream of writers can starve readers. A waiting writer
// that crashes blocks new readers for at most its ttl.
//
// # Upgrade and downgrade
//
// There are none: a read lease and a write lease are separate
// acquisitions. A holder of a read lease that asks for the write lease
// waits for every reader, itself included, so it gets ErrNotObtained when
// its retry strategy or ctx ends the wait (at once with NoRetry), and
// while it waits its mark keeps new readers out: release the read lease
// first. A holder of the write lease that asks for a read lease likewise
// waits until its own write lease ends. Neither deadlocks for longer than
// the lease's TTL, since both leases expire.
//
// # Cost
//
// Readers are listed beside the lock, and every acquisition, read or
// write, checks the readers listed (and drops those gone), so it costs a
// little more for each reader holding at the time.
type RWMutex struct {
	c    *Client
	name string
}

// RWMutex returns the read-write lock called name. It does no I/O and
// checks nothing: ObtainRead and ObtainWrite report a bad name.
func (c *Client) RWMutex(name string) *RWMutex { return &RWMutex{c: c, name: name} }

// Name returns the lock's name.
func (rw *RWMutex) Name() string { return rw.name }

// ObtainRead takes a read lease for ttl and returns it; opts may be nil.
// It waits and fails as Client.Obtain does (ErrNotObtained when a writer
// held the lock or waited for it until the strategy or ctx gave up), and
// refuses the same input as Semaphore.Obtain (a backend without read-write
// locks with errors.ErrUnsupported). It is safe for concurrent use.
func (rw *RWMutex) ObtainRead(ctx context.Context, ttl time.Duration, opts *ObtainOptions) (*Lock, error) {
	return rw.obtain(ctx, ttl, opts, false)
}

// ObtainWrite takes the write lease for ttl and returns it; opts may be
// nil. It waits and fails as Client.Obtain does (ErrNotObtained when a
// writer or live readers held the lock until the strategy or ctx gave up),
// and refuses the same input as ObtainRead. It is safe for concurrent use.
func (rw *RWMutex) ObtainWrite(ctx context.Context, ttl time.Duration, opts *ObtainOptions) (*Lock, error) {
	return rw.obtain(ctx, ttl, opts, true)
}

func (rw *RWMutex) obtain(ctx context.Context, ttl time.Duration, opts *ObtainOptions, write bool) (*Lock, error) {
	c := rw.c
	if err := checkKey(rw.name); err != nil {
		return nil, err
	}
	cfg, err := primitiveConfig(ctx, rw.name, ttl, opts)
	if err != nil {
		return nil, err
	}
	rb, ok := c.b.(RWBackend)
	if !ok {
		return nil, unsupported(rw.name, c.b, "read-write locks")
	}
	l := c.newLock(rw.name, &cfg)
	l.kind = KindRead
	if write {
		l.kind = KindWrite
	}
	l.p = &rwLease{rb: rb, name: rw.name, write: write}
	return c.obtain(ctx, l, ttl, &cfg)
}

// rwLease is the prim of a read or write lease.
type rwLease struct {
	keyLease
	rb     RWBackend
	name   string
	write  bool
	queued bool // a try may have marked this writer waiting
}

var _ prim = (*rwLease)(nil)

func (r *rwLease) try(ctx context.Context, l *Lock, ttl time.Duration, queue bool) (bool, error) {
	var (
		key   string
		fence int64
		ok    bool
		err   error
	)
	if r.write {
		r.queued = r.queued || queue
		key, fence, ok, err = r.rb.AcquireWrite(ctx, r.name, l.value, ttl, queue)
	} else {
		key, fence, ok, err = r.rb.AcquireRead(ctx, r.name, l.value, ttl)
	}
	switch {
	case err != nil:
		return false, err
	case !ok:
		r.blockedBy(key)
		return false, nil
	}
	l.fence = fence
	r.acquired(key)
	return true, nil
}

// cleanup removes the writer's waiting mark when the Obtain gives up, and
// after a failed call a lease a lost reply may have stored.
func (r *rwLease) cleanup(ctx context.Context, l *Lock, failed bool) {
	if failed || r.queued {
		r.rb.Abandon(ctx, r.name, l.value)
	}
}

// renewer is a prim whose waiting leaves a mark at the backend that
// lasts ttl from each attempt; Client.wait attempts every renewEvery(ttl)
// (0: never) to keep it.
type renewer interface {
	renewEvery(ttl time.Duration) time.Duration
}

// renewEvery keeps a waiting writer's mark: an attempt at half its ttl.
func (r *rwLease) renewEvery(ttl time.Duration) time.Duration {
	if r.write {
		return ttl / 2
	}
	return 0
}

// queueKey puts readers and writers of one lock in one FIFO queue.
func (r *rwLease) queueKey() string { return primQueue(KindRead, r.name) }
