package lockapi

import (
	"context"
	"time"
)

// reentrantLease is the prim of a reentrant mutex lock
// (ObtainOptions.Reentrant): the key holds the owner's value, and the
// backend counts the owner's holds beside it.
type reentrantLease struct {
	rb    ReentrantBackend
	holds int      // the hold count right after this acquisition
	watch []string // the key alone
}

var _ prim = (*reentrantLease)(nil)

func (r *reentrantLease) try(ctx context.Context, l *Lock, ttl time.Duration, _ bool) (bool, error) {
	fence, holds, ok, err := r.rb.AcquireReentrant(ctx, l.key, l.value, ttl)
	if err != nil || !ok {
		return false, err
	}
	l.fence, r.holds = fence, holds
	return true, nil
}

func (r *reentrantLease) watchKeys() []string { return r.watch }

// cleanup does nothing: a failed call may have added a hold, but removing
// one could as well remove one of the owner's real holds, which is worse
// than a hold that keeps the lock until its TTL.
func (r *reentrantLease) cleanup(context.Context, *Lock, bool) {}

func (r *reentrantLease) queueKey() string { return mutexQueue(r.watch[0]) }

func (r *reentrantLease) release(ctx context.Context, l *Lock) (bool, error) {
	_, ok, err := r.rb.ReleaseReentrant(ctx, l.key, l.value)
	return ok, err
}

func (r *reentrantLease) refresh(ctx context.Context, l *Lock, ttl time.Duration) (bool, error) {
	return r.rb.RefreshReentrant(ctx, l.key, l.value, ttl)
}

func (r *reentrantLease) pttl(ctx context.Context, l *Lock) (time.Duration, bool, error) {
	return r.rb.PTTL(ctx, l.key, l.value)
}
