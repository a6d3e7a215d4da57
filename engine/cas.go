package engine

import (
	"time"

	"github.com/nxkv/nxkv/shard"
)

// This file holds the compare-and-... commands a lock is built from:
// release (compare-and-delete), refresh (compare-and-pexpire) and
// compare-and-swap.

// CompareAndDelete deletes key only if it holds value, as Redis 8.4 DELEX
// key IFEQ value (the lock release), and reports whether it deleted. An
// absent or expired key, or one holding an Object, returns false. It reports KindDel when it deletes.
// It is safe for concurrent use; finding another value takes no lock.
func (e *Engine) CompareAndDelete(key, value string) bool {
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	// Another value fails whether the key is alive or expired, so the
	// lookup reads no time; a match is decided under the lock.
	var p shard.Probe
	st, v := peekFailed, uint64(0)
	if rv, ok := s.ReadVersion(); ok {
		var valid bool
		p.Value, p.Exp, p.Hd, p.Pos, p.Found, valid = s.Lookup(rv, h, key)
		if valid {
			if !p.Found || p.Value != value || isObject(p.Value) {
				return false
			}
			// The lock release: the key holds value and has no deadline
			// to check, so if the shard is still as the lookup saw it,
			// delete. This path takes no call it can avoid.
			if p.Exp != noDeadline {
				st, v = peekLive, rv
			} else if afterLookup(); s.Upgrade(rv) {
				e.removeLocked(s, p.Hd, p.Pos, KindDel, nil)
				s.Unlock()
				return true
			}
		}
	}
	if st == peekFailed {
		st, v = e.peek(s, h, key, nil, false, &p)
		if st == peekAbsent || st == peekLive && (p.Value != value || isObject(p.Value)) {
			return false
		}
	}
	known := e.lockAfter(s, st, v, &c)
	ok := e.compareAndDeleteLocked(s, h, key, value, &p, known, &c)
	s.Unlock()
	return ok
}

func (e *Engine) compareAndDeleteLocked(s *shardT, h uint64, key, value string, p *shard.Probe, known bool, c *opState) bool {
	if !e.liveLocked(s, h, key, p, known, c) || p.Value != value || isObject(p.Value) {
		return false
	}
	e.removeLocked(s, p.Hd, p.Pos, KindDel, c)
	return true
}

// CompareAndSwap stores value under key only if it holds old, keeping its
// TTL (Redis 8.4 SET key value IFEQ old KEEPTTL), and reports whether it
// did. An absent or expired key, or one holding an Object, returns false.
// It reports KindSet when it writes. It returns ErrOOM as Set does. It is safe for concurrent use.
func (e *Engine) CompareAndSwap(key, old, value string) (bool, error) {
	if e.full() {
		if err := e.admit(); err != nil {
			return false, err
		}
	}
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	s.Lock()
	ok := e.compareAndSwapLocked(s, h, key, old, value, &c)
	s.Unlock()
	return ok, nil
}

func (e *Engine) compareAndSwapLocked(s *shardT, h uint64, key, old, value string, c *opState) bool {
	var p shard.Probe
	if !e.liveLocked(s, h, key, &p, false, c) || p.Value != old || isObject(p.Value) {
		return false
	}
	e.updateLocked(s, &p, value, p.Exp)
	e.eventLocked(s, key, KindSet, c)
	return true
}

// CompareAndPExpire sets key's TTL only if it holds value (the lock refresh,
// as Redis 8.4 SET key value IFEQ value PX ttl without the write), and
// reports whether it did. An absent or expired key, or one holding an
// Object, returns false. It returns ErrInvalidTTL, changing nothing, if ttl <= 0 or the deadline overflows. It
// reports KindExpire when it sets the TTL. A memory bound never refuses it
// (see "Memory bound"). It is safe for concurrent use.
func (e *Engine) CompareAndPExpire(key, value string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, ErrInvalidTTL
	}
	if e.full() {
		e.evictFirst()
	}
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	s.Lock()
	ok, err := e.compareAndPExpireLocked(s, h, key, value, ttl, &c)
	s.Unlock()
	return ok, err
}

func (e *Engine) compareAndPExpireLocked(s *shardT, h uint64, key, value string, ttl time.Duration, c *opState) (bool, error) {
	exp, ok := deadline(e.at(c), ttl)
	if !ok {
		return false, ErrInvalidTTL
	}
	var p shard.Probe
	if !e.liveLocked(s, h, key, &p, false, c) || p.Value != value || isObject(p.Value) {
		return false, nil
	}
	e.retimeLocked(s, &p, exp)
	e.eventLocked(s, key, KindExpire, c)
	return true, nil
}
