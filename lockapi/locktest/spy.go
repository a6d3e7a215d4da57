package locktest

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nxkv/nxkv/lockapi"
	"github.com/nxkv/nxkv/lockapi/faultinject"
)

// spy wraps a Backend with the primitive interfaces it implements: it
// counts every call (to show refused input reaches no backend), reports
// each acquisition attempt and each waiting writer's mark on channels (so
// the suite knows when a waiter is waiting), and fails calls on demand (to
// check the error contract). A primitive call on a backend that lacks the
// primitive panics: the suite runs those cases only on backends that have
// it.
type spy struct {
	lockapi.Backend
	calls    atomic.Int64
	attempts chan struct{} // one send per acquisition call returned (dropped when full)
	queued   chan struct{} // one send per AcquireWrite with queue returned

	mu        sync.Mutex
	fails     int  // guarded by mu: how many next calls fail
	lostReply bool // guarded by mu: failing calls are applied first
}

// spyWatcher is a spy over a backend that is also a Watcher.
type spyWatcher struct {
	*spy
	w lockapi.Watcher
}

func (s spyWatcher) Watch(key string) (<-chan struct{}, func()) { return s.w.Watch(key) }

// newSpy wraps b; the returned Backend is a Watcher when b is.
func newSpy(b lockapi.Backend) (lockapi.Backend, *spy) {
	sp := &spy{Backend: b, attempts: make(chan struct{}, 1024), queued: make(chan struct{}, 1024)}
	if w, ok := b.(lockapi.Watcher); ok {
		return spyWatcher{sp, w}, sp
	}
	return sp, sp
}

// failNext makes the next n calls fail with faultinject.ErrInjected; with
// lostReply they are applied at the backend first.
func (s *spy) failNext(n int, lostReply bool) {
	s.mu.Lock()
	s.fails, s.lostReply = n, lostReply
	s.mu.Unlock()
}

// enter counts a call and reports whether it must fail and whether it is
// to be applied anyway.
func (s *spy) enter() (fail, apply bool) {
	s.calls.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fails == 0 {
		return false, true
	}
	s.fails--
	return true, s.lostReply
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// drain empties ch.
func drain(ch chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

// spied runs do unless the call is to fail without being applied, and
// returns its results, or zero results and faultinject.ErrInjected when the
// call fails.
func spied[T any](s *spy, do func() (T, error)) (T, error) {
	fail, apply := s.enter()
	var (
		v   T
		err error
	)
	if apply {
		v, err = do()
	}
	if fail {
		var zero T
		return zero, faultinject.ErrInjected
	}
	return v, err
}

// lease is an acquisition call's results.
type lease struct {
	key   string
	fence int64
	ok    bool
	holds int
}

func (s *spy) Acquire(ctx context.Context, key, value string, ttl time.Duration) (int64, bool, error) {
	defer signal(s.attempts)
	r, err := spied(s, func() (lease, error) {
		f, ok, err := s.Backend.Acquire(ctx, key, value, ttl)
		return lease{fence: f, ok: ok}, err
	})
	return r.fence, r.ok, err
}

func (s *spy) Release(ctx context.Context, key, value string) (bool, error) {
	return spied(s, func() (bool, error) { return s.Backend.Release(ctx, key, value) })
}

func (s *spy) Refresh(ctx context.Context, key, value string, ttl time.Duration) (bool, error) {
	return spied(s, func() (bool, error) { return s.Backend.Refresh(ctx, key, value, ttl) })
}

func (s *spy) PTTL(ctx context.Context, key, value string) (time.Duration, bool, error) {
	r, err := spied(s, func() (lease, error) {
		d, ok, err := s.Backend.PTTL(ctx, key, value)
		return lease{fence: int64(d), ok: ok}, err
	})
	return time.Duration(r.fence), r.ok, err
}

func (s *spy) AcquireSlot(ctx context.Context, name string, limit int, value string, ttl time.Duration) (string, int64, bool, error) {
	defer signal(s.attempts)
	r, err := spied(s, func() (lease, error) {
		k, f, ok, err := s.Backend.(lockapi.SemaphoreBackend).AcquireSlot(ctx, name, limit, value, ttl)
		return lease{key: k, fence: f, ok: ok}, err
	})
	return r.key, r.fence, r.ok, err
}

func (s *spy) SlotKey(name string, i int) string {
	return s.Backend.(lockapi.SemaphoreBackend).SlotKey(name, i)
}

func (s *spy) AcquireRead(ctx context.Context, name, value string, ttl time.Duration) (string, int64, bool, error) {
	defer signal(s.attempts)
	r, err := spied(s, func() (lease, error) {
		k, f, ok, err := s.Backend.(lockapi.RWBackend).AcquireRead(ctx, name, value, ttl)
		return lease{key: k, fence: f, ok: ok}, err
	})
	return r.key, r.fence, r.ok, err
}

func (s *spy) AcquireWrite(ctx context.Context, name, value string, ttl time.Duration, queue bool) (string, int64, bool, error) {
	defer signal(s.attempts)
	if queue {
		defer signal(s.queued)
	}
	r, err := spied(s, func() (lease, error) {
		k, f, ok, err := s.Backend.(lockapi.RWBackend).AcquireWrite(ctx, name, value, ttl, queue)
		return lease{key: k, fence: f, ok: ok}, err
	})
	return r.key, r.fence, r.ok, err
}

func (s *spy) Abandon(ctx context.Context, name, value string) error {
	_, err := spied(s, func() (bool, error) {
		return false, s.Backend.(lockapi.RWBackend).Abandon(ctx, name, value)
	})
	return err
}

func (s *spy) AcquireAll(ctx context.Context, keys []string, value string, ttl time.Duration) ([]int64, int, bool, error) {
	defer signal(s.attempts)
	type all struct {
		fences  []int64
		blocked int
		ok      bool
	}
	r, err := spied(s, func() (all, error) {
		f, b, ok, err := s.Backend.(lockapi.MultiBackend).AcquireAll(ctx, keys, value, ttl)
		return all{f, b, ok}, err
	})
	return r.fences, r.blocked, r.ok, err
}

func (s *spy) ReleaseAll(ctx context.Context, keys []string, value string) (bool, error) {
	return spied(s, func() (bool, error) { return s.Backend.(lockapi.MultiBackend).ReleaseAll(ctx, keys, value) })
}

func (s *spy) RefreshAll(ctx context.Context, keys []string, value string, ttl time.Duration) (bool, error) {
	return spied(s, func() (bool, error) {
		return s.Backend.(lockapi.MultiBackend).RefreshAll(ctx, keys, value, ttl)
	})
}

func (s *spy) PTTLAll(ctx context.Context, keys []string, value string) (time.Duration, bool, error) {
	r, err := spied(s, func() (lease, error) {
		d, ok, err := s.Backend.(lockapi.MultiBackend).PTTLAll(ctx, keys, value)
		return lease{fence: int64(d), ok: ok}, err
	})
	return time.Duration(r.fence), r.ok, err
}

func (s *spy) AcquireReentrant(ctx context.Context, key, value, hold string, ttl time.Duration) (int64, int, bool, error) {
	defer signal(s.attempts)
	r, err := spied(s, func() (lease, error) {
		f, h, ok, err := s.Backend.(lockapi.ReentrantBackend).AcquireReentrant(ctx, key, value, hold, ttl)
		return lease{fence: f, ok: ok, holds: h}, err
	})
	return r.fence, r.holds, r.ok, err
}

func (s *spy) ReleaseReentrant(ctx context.Context, key, value, hold string) (int, bool, error) {
	r, err := spied(s, func() (lease, error) {
		h, ok, err := s.Backend.(lockapi.ReentrantBackend).ReleaseReentrant(ctx, key, value, hold)
		return lease{holds: h, ok: ok}, err
	})
	return r.holds, r.ok, err
}

func (s *spy) RefreshReentrant(ctx context.Context, key, value, hold string, ttl time.Duration) (bool, error) {
	return spied(s, func() (bool, error) {
		return s.Backend.(lockapi.ReentrantBackend).RefreshReentrant(ctx, key, value, hold, ttl)
	})
}

func (s *spy) PTTLReentrant(ctx context.Context, key, value, hold string) (time.Duration, bool, error) {
	r, err := spied(s, func() (lease, error) {
		d, ok, err := s.Backend.(lockapi.ReentrantBackend).PTTLReentrant(ctx, key, value, hold)
		return lease{fence: int64(d), ok: ok}, err
	})
	return time.Duration(r.fence), r.ok, err
}
