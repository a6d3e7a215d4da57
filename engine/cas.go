package engine

import "time"

// This file holds the compare-and-... commands a lock is built from:
// release (compare-and-delete), refresh (compare-and-pexpire) and
// compare-and-swap.

// CompareAndDelete deletes key only if it holds value, as Redis 8.4 DELEX
// key IFEQ value (the lock release), and reports whether it deleted. An
// absent or expired key returns false. It is safe for concurrent use.
func (e *Engine) CompareAndDelete(key, value string) bool {
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	ok := e.compareAndDeleteLocked(s, key, value, &c)
	s.Unlock()
	return ok
}

func (e *Engine) compareAndDeleteLocked(s *shardT, key, value string, c *opClock) bool {
	n := s.LoadLocked(key)
	if n != nil && n.Value.exp != noDeadline {
		n = e.checkLocked(s, n, c)
	}
	if n == nil || n.Value.value != value {
		return false
	}
	e.removeLocked(s, n)
	return true
}

// CompareAndSwap stores value under key only if it holds old, keeping its
// TTL (Redis 8.4 SET key value IFEQ old KEEPTTL), and reports whether it
// did. An absent or expired key returns false. It is safe for concurrent use.
func (e *Engine) CompareAndSwap(key, old, value string) bool {
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	ok := e.compareAndSwapLocked(s, key, old, value, &c)
	s.Unlock()
	return ok
}

func (e *Engine) compareAndSwapLocked(s *shardT, key, old, value string, c *opClock) bool {
	n := e.liveLocked(s, key, c)
	if n == nil || n.Value.value != old {
		return false
	}
	e.updateLocked(s, n, value, n.Value.exp)
	return true
}

// CompareAndPExpire sets key's TTL only if it holds value (the lock refresh,
// as Redis 8.4 SET key value IFEQ value PX ttl without the write), and
// reports whether it did. An absent or expired key returns false. It returns
// ErrInvalidTTL, changing nothing, if ttl <= 0 or the deadline overflows. It
// is safe for concurrent use.
func (e *Engine) CompareAndPExpire(key, value string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, ErrInvalidTTL
	}
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	ok, err := e.compareAndPExpireLocked(s, key, value, ttl, &c)
	s.Unlock()
	return ok, err
}

func (e *Engine) compareAndPExpireLocked(s *shardT, key, value string, ttl time.Duration, c *opClock) (bool, error) {
	exp, ok := deadline(e.at(c), ttl)
	if !ok {
		return false, ErrInvalidTTL
	}
	n := e.liveLocked(s, key, c)
	if n == nil || n.Value.value != value {
		return false, nil
	}
	e.retimeLocked(s, n, exp)
	return true, nil
}
