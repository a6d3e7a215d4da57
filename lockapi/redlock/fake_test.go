package redlock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/engine"
	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/inproc"
	"github.com/nxkv/nxkv/lockapi/locktest"
)

// fakeNode is one independent lock node, standing for one Redis master:
// a real engine (with its own fake clock) behind lockapi/inproc. It can be
// stopped (every call fails without reaching the engine) and wiped (a
// restart without persistence: the engine is replaced by an empty one on the
// same clock).
type fakeNode struct {
	t     testing.TB
	clock *clock.Mock

	acquires, releases, refreshes atomic.Int32 // calls that reached the node

	mu   sync.Mutex
	eng  *engine.Engine  // guarded by mu
	be   *inproc.Backend // guarded by mu
	down bool            // guarded by mu
}

var errNodeDown = errors.New("node down")

func newFakeNode(t testing.TB) *fakeNode {
	m := clock.NewMock()
	m.Set(locktest.Epoch)
	n := &fakeNode{t: t, clock: m}
	n.mu.Lock()
	n.startLocked()
	n.mu.Unlock()
	t.Cleanup(func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.eng.Close()
	})
	return n
}

func (n *fakeNode) startLocked() {
	n.eng = engine.New(engine.Options{Clock: n.clock})
	n.be = inproc.New(n.eng, inproc.Options{})
}

var _ lockapi.Backend = (*fakeNode)(nil)

// backend returns the node's current Backend, or an error when the node is
// down or ctx has ended.
func (n *fakeNode) backend(ctx context.Context) (*inproc.Backend, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.down {
		return nil, errNodeDown
	}
	return n.be, nil
}

func (n *fakeNode) Acquire(ctx context.Context, key, value string, ttl time.Duration) (int64, bool, error) {
	n.acquires.Add(1)
	be, err := n.backend(ctx)
	if err != nil {
		return 0, false, err
	}
	return be.Acquire(ctx, key, value, ttl)
}

func (n *fakeNode) Release(ctx context.Context, key, value string) (bool, error) {
	n.releases.Add(1)
	be, err := n.backend(ctx)
	if err != nil {
		return false, err
	}
	return be.Release(ctx, key, value)
}

func (n *fakeNode) Refresh(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	n.refreshes.Add(1)
	be, err := n.backend(ctx)
	if err != nil {
		return false, err
	}
	return be.Refresh(ctx, key, value, ttl)
}

func (n *fakeNode) PTTL(ctx context.Context, key, value string) (time.Duration, bool, error) {
	be, err := n.backend(ctx)
	if err != nil {
		return 0, false, err
	}
	return be.PTTL(ctx, key, value)
}

// value returns what key holds on this node now ("" when absent).
func (n *fakeNode) value(key string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	v, _ := n.eng.Get(key)
	return v
}

// wipe forgets every key: a restart without persistence.
func (n *fakeNode) wipe() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.eng.Close()
	n.startLocked()
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

// answered signals done after each Acquire returned.
type answered struct {
	lockapi.Backend
	done chan<- struct{}
}

func (a *answered) Acquire(ctx context.Context, key, value string, ttl time.Duration) (int64, bool, error) {
	fence, ok, err := a.Backend.Acquire(ctx, key, value, ttl)
	a.done <- struct{}{}
	return fence, ok, err
}
