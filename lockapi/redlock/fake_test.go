package redlock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/locktest"
)

// fakeNode is an in-memory lock node with its own fake clock, standing for
// one independent Redis master: keys are alive while now <= deadline, as in
// Redis. It can be stopped (every call fails) and wiped (a restart without
// persistence).
type fakeNode struct {
	clock *clock.Mock

	acquires, releases atomic.Int32 // calls that reached the node

	mu   sync.Mutex
	data map[string]fakeEntry // guarded by mu
	down bool                 // guarded by mu
}

type fakeEntry struct {
	value    string
	deadline time.Time
}

var errNodeDown = errors.New("node down")

func newFakeNode() *fakeNode {
	m := clock.NewMock()
	m.Set(locktest.Epoch)
	return &fakeNode{clock: m, data: make(map[string]fakeEntry)}
}

var _ lockapi.Backend = (*fakeNode)(nil)

// holdsLocked returns key's entry if it is alive.
func (n *fakeNode) holdsLocked(key string) (fakeEntry, bool) {
	e, ok := n.data[key]
	if !ok {
		return e, false
	}
	if n.clock.Now().After(e.deadline) {
		delete(n.data, key)
		return e, false
	}
	return e, true
}

func (n *fakeNode) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if n.down {
		return errNodeDown
	}
	return nil
}

func (n *fakeNode) Acquire(ctx context.Context, key, value string, ttl time.Duration) (int64, bool, error) {
	n.acquires.Add(1)
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.enter(ctx); err != nil {
		return 0, false, err
	}
	if ttl <= 0 {
		return 0, false, lockapi.ErrInvalidTTL
	}
	if _, ok := n.holdsLocked(key); ok {
		return 0, false, nil
	}
	n.data[key] = fakeEntry{value: value, deadline: n.clock.Now().Add(ttl)}
	return 0, true, nil
}

func (n *fakeNode) Release(ctx context.Context, key, value string) (bool, error) {
	n.releases.Add(1)
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.enter(ctx); err != nil {
		return false, err
	}
	if e, ok := n.holdsLocked(key); !ok || e.value != value {
		return false, nil
	}
	delete(n.data, key)
	return true, nil
}

func (n *fakeNode) Refresh(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.enter(ctx); err != nil {
		return false, err
	}
	if ttl <= 0 {
		return false, lockapi.ErrInvalidTTL
	}
	if e, ok := n.holdsLocked(key); !ok || e.value != value {
		return false, nil
	}
	n.data[key] = fakeEntry{value: value, deadline: n.clock.Now().Add(ttl)}
	return true, nil
}

func (n *fakeNode) PTTL(ctx context.Context, key, value string) (time.Duration, bool, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.enter(ctx); err != nil {
		return 0, false, err
	}
	e, ok := n.holdsLocked(key)
	if !ok || e.value != value {
		return 0, false, nil
	}
	return e.deadline.Sub(n.clock.Now()), true, nil
}

// value returns what key holds on this node now ("" when absent).
func (n *fakeNode) value(key string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	e, _ := n.holdsLocked(key)
	return e.value
}

// wipe forgets every key: a restart without persistence.
func (n *fakeNode) wipe() {
	n.mu.Lock()
	n.data = make(map[string]fakeEntry)
	n.mu.Unlock()
}

func (n *fakeNode) setDown(down bool) {
	n.mu.Lock()
	n.down = down
	n.mu.Unlock()
}

// link is one client's network path to one node: cut, every call fails
// without reaching the node (a partition).
type link struct {
	lockapi.Backend
	cut atomic.Bool
}

var errPartition = errors.New("partitioned")

func (l *link) Acquire(ctx context.Context, key, value string, ttl time.Duration) (int64, bool, error) {
	if l.cut.Load() {
		return 0, false, errPartition
	}
	return l.Backend.Acquire(ctx, key, value, ttl)
}

func (l *link) Release(ctx context.Context, key, value string) (bool, error) {
	if l.cut.Load() {
		return false, errPartition
	}
	return l.Backend.Release(ctx, key, value)
}

func (l *link) Refresh(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	if l.cut.Load() {
		return false, errPartition
	}
	return l.Backend.Refresh(ctx, key, value, ttl)
}

func (l *link) PTTL(ctx context.Context, key, value string) (time.Duration, bool, error) {
	if l.cut.Load() {
		return 0, false, errPartition
	}
	return l.Backend.PTTL(ctx, key, value)
}

// slowReplies delays the reply of Acquire by delay on a fake clock (the
// client's): the request reaches the node at once, the answer arrives late
// or, if ctx ends first, never. waiting receives one value per call that
// started waiting, so a test knows when to advance the clock.
type slowReplies struct {
	lockapi.Backend
	clock   *clock.Mock
	delay   time.Duration
	waiting chan struct{}
}

func (s *slowReplies) Acquire(ctx context.Context, key, value string, ttl time.Duration) (int64, bool, error) {
	fence, ok, err := s.Backend.Acquire(ctx, key, value, ttl)
	t := s.clock.Timer(s.delay)
	defer t.Stop()
	s.waiting <- struct{}{}
	select {
	case <-t.C:
		return fence, ok, err
	case <-ctx.Done():
		return 0, false, ctx.Err()
	}
}
