package lockapi

import (
	"context"
	"fmt"
	"time"
)

// MaxLimit is the largest limit of a Semaphore.
const MaxLimit = 1024

// Semaphore is a counting semaphore over the Client's backend: up to Limit
// holders of one name at a time, each with a lease of its own (a *Lock of
// Kind KindSemaphore, with its own TTL, token and fence). Create it with
// Client.Semaphore; it is a handle, holding no state, safe for concurrent
// use.
//
// The name's N slots are N lock keys; a lease is the lowest free slot below
// the Obtain's limit, taken in one atomic step, and behaves from then on
// exactly like a mutex lock on that slot: Release frees it, Refresh
// extends it, it expires after its TTL if its holder crashed, and Lost
// reports its loss. Waiters (on a Watcher backend) watch every slot below
// their limit and retry when any of them frees.
//
// The limit belongs to the Obtain call, not to the name: Semaphore values
// with different limits for one name share its slots. An Obtain with limit
// N succeeds when one of slots 0..N-1 is free, so at any moment the number
// of holders is at most the largest limit among the current holders' own
// Obtain calls, and never more than N when all use N. Raising N takes
// effect at once; lowering it revokes no lease: holders in slots at or
// above the new limit keep them until they release or expire, and no new
// lease is granted above it, so the number of holders falls to the new
// limit as they go.
type Semaphore struct {
	c     *Client
	name  string
	limit int
}

// Semaphore returns the semaphore called name with the given limit. It
// does no I/O and checks nothing: Obtain reports a bad name or limit.
func (c *Client) Semaphore(name string, limit int) *Semaphore {
	return &Semaphore{c: c, name: name, limit: limit}
}

// Name returns the semaphore's name.
func (s *Semaphore) Name() string { return s.name }

// Limit returns the semaphore's limit, as given to Client.Semaphore.
func (s *Semaphore) Limit() int { return s.limit }

// Obtain takes one of the semaphore's Limit leases for ttl and returns it;
// opts may be nil. It waits and fails as Client.Obtain does (ErrNotObtained
// when every slot below the limit stayed held), and refuses, before any
// backend call, an empty or reserved name (ErrInvalidKey), a limit outside
// [1, MaxLimit] or ObtainOptions.Reentrant (ErrInvalidOption), a ttl
// outside [MinTTL, MaxTTL] (ErrInvalidTTL), and a backend without
// semaphores (errors.ErrUnsupported: Redlock, whose quorum cannot bound the
// number of holders; see its package doc). The lease's fence strictly
// increases across all the semaphore's leases. Obtain is safe for
// concurrent use.
func (s *Semaphore) Obtain(ctx context.Context, ttl time.Duration, opts *ObtainOptions) (*Lock, error) {
	c := s.c
	if err := checkKey(s.name); err != nil {
		return nil, err
	}
	if s.limit < 1 || s.limit > MaxLimit {
		return nil, newError("obtain", s.name, ErrInvalidOption, fmt.Sprintf("semaphore limit %d outside [1, %d]", s.limit, MaxLimit), nil)
	}
	cfg, err := primitiveConfig(ctx, s.name, ttl, opts)
	if err != nil {
		return nil, err
	}
	sb, ok := c.b.(SemaphoreBackend)
	if !ok {
		return nil, unsupported(s.name, c.b, "semaphores")
	}
	l := c.newLock(s.name, &cfg)
	l.kind = KindSemaphore
	l.p = &semLease{sb: sb, name: s.name, limit: s.limit}
	return c.obtain(ctx, l, ttl, &cfg)
}

// semLease is the prim of a semaphore lease.
type semLease struct {
	keyLease
	sb    SemaphoreBackend
	name  string
	limit int
	slots []string // the keys of slots 0..limit-1, built on the first failure
}

var _ prim = (*semLease)(nil)

func (s *semLease) try(ctx context.Context, l *Lock, ttl time.Duration, _ bool) (bool, error) {
	key, fence, ok, err := s.sb.AcquireSlot(ctx, s.name, s.limit, l.value, ttl)
	switch {
	case err != nil:
		return false, err
	case !ok:
		if s.slots == nil {
			s.slots = make([]string, s.limit)
			for i := range s.slots {
				s.slots[i] = s.sb.SlotKey(s.name, i)
			}
		}
		s.watch = s.slots
		return false, nil
	}
	l.fence = fence
	s.acquired(key)
	return true, nil
}

// cleanup, after a failed call, frees the slot a lost reply may have
// stored value in: value is unique to this acquisition, so a
// compare-and-delete of each slot is safe.
func (s *semLease) cleanup(ctx context.Context, l *Lock, failed bool) {
	if !failed {
		return
	}
	for i := range s.limit {
		if ok, err := s.sb.Release(ctx, s.sb.SlotKey(s.name, i), l.value); ok || err != nil {
			return
		}
	}
}

func (s *semLease) queueKey() string { return primQueue(KindSemaphore, s.name) }

// primitiveConfig checks, in the order of the input contract, what every
// primitive's Obtain checks after its name or keys: the ttl, the options
// (Reentrant is the mutex's), and then that ctx has not ended.
func primitiveConfig(ctx context.Context, name string, ttl time.Duration, opts *ObtainOptions) (obtainConfig, error) {
	if err := checkTTL("obtain", name, ttl); err != nil {
		return obtainConfig{}, err
	}
	cfg, err := config(name, ttl, opts)
	if err != nil {
		return cfg, err
	}
	if cfg.reentrant {
		return cfg, newError("obtain", name, ErrInvalidOption, "Reentrant applies to Client.Obtain only", nil)
	}
	if err := ctx.Err(); err != nil {
		return cfg, newError("obtain", name, nil, "", err)
	}
	return cfg, nil
}
