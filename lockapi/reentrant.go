package lockapi

import (
	"context"
	"time"
)

// reentrantLease is the prim of a reentrant mutex lock
// (ObtainOptions.Reentrant): the key holds the owner's value, and the
// backend keeps the set of the owner's holds beside it, each named by its
// Lock's hold ID, so that a release removes its own hold and no other.
type reentrantLease struct {
	rb    ReentrantBackend
	hold  string   // this hold's ID, unique to it (Client.holdID)
	holds int      // the number of holds right after this acquisition
	watch []string // the key alone
}

var _ prim = (*reentrantLease)(nil)

func (r *reentrantLease) try(ctx context.Context, l *Lock, ttl time.Duration, _ bool) (bool, error) {
	fence, holds, ok, err := r.rb.AcquireReentrant(ctx, l.key, l.value, r.hold, ttl)
	if err != nil || !ok {
		return false, err
	}
	l.fence, r.holds = fence, holds
	return true, nil
}

func (r *reentrantLease) watchKeys() []string { return r.watch }

// cleanup, after a failed call, removes the hold a lost reply may have
// added: it is named by this hold's own ID, so no other hold of the owner
// can be removed by it.
func (r *reentrantLease) cleanup(ctx context.Context, l *Lock, failed bool) {
	if failed {
		r.rb.ReleaseReentrant(ctx, l.key, l.value, r.hold)
	}
}

func (r *reentrantLease) queueKey() string { return mutexQueue(r.watch[0]) }

func (r *reentrantLease) release(ctx context.Context, l *Lock) (bool, error) {
	_, ok, err := r.rb.ReleaseReentrant(ctx, l.key, l.value, r.hold)
	return ok, err
}

func (r *reentrantLease) refresh(ctx context.Context, l *Lock, ttl time.Duration) (bool, error) {
	return r.rb.RefreshReentrant(ctx, l.key, l.value, r.hold, ttl)
}

func (r *reentrantLease) pttl(ctx context.Context, l *Lock) (time.Duration, bool, error) {
	return r.rb.PTTLReentrant(ctx, l.key, l.value, r.hold)
}
