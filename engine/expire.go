package engine

import (
	"time"

	"github.com/nxkv/nxkv/shard"
)

// This file holds the TTL commands: PEXPIRE and PEXPIREAT with their
// conditions, PTTL, PEXPIRETIME and PERSIST.

// PExpire sets key's TTL, as Redis PEXPIRE, and reports whether key existed.
// A ttl <= 0 deletes the key (and reports true if it existed). It reports
// KindExpire, or KindDel when it deletes. It returns ErrInvalidTTL, changing
// nothing, if the deadline overflows. It is safe for concurrent use.
func (e *Engine) PExpire(key string, ttl time.Duration) (bool, error) {
	return e.PExpireCond(key, ttl, ExpireAlways)
}

// PExpireCond sets key's TTL subject to cond, as Redis PEXPIRE key ttl
// [NX|XX|GT|LT], and reports whether it did: false if key is absent or the
// condition fails. NX applies only to a key without a TTL, XX only to one
// with a TTL, GT only if the new deadline is later (a key without a TTL
// counts as infinite, so GT fails), LT only if it is earlier (a key without
// a TTL accepts it). A new deadline at or before now deletes the key (true).
// It reports KindExpire, or KindDel when it deletes, as PExpire does.
// It returns ErrSyntax for an unknown cond and ErrInvalidTTL if the deadline
// overflows, changing nothing. It is safe for concurrent use.
func (e *Engine) PExpireCond(key string, ttl time.Duration, cond ExpireCond) (bool, error) {
	if cond > ExpireLT {
		return false, ErrSyntax
	}
	if e.full() {
		e.evictFirst()
	}
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	s.Lock()
	ok, err := e.pexpireLocked(s, h, key, ttl, cond, &c)
	s.Unlock()
	return ok, err
}

func (e *Engine) pexpireLocked(s *shardT, h uint64, key string, ttl time.Duration, cond ExpireCond, c *opState) (bool, error) {
	exp, ok := deadline(e.at(c), ttl)
	if !ok {
		return false, ErrInvalidTTL
	}
	return e.expireLocked(s, h, key, exp, cond, c), nil
}

// PExpireAt sets key's deadline to at, as Redis PEXPIREAT, and reports
// whether key existed. A time at or before now deletes the key (true). It
// reports KindExpire, or KindDel when it deletes. It returns ErrInvalidTTL,
// changing nothing, for a time after year 2262, the end of the engine's
// time range. It is safe for concurrent use.
func (e *Engine) PExpireAt(key string, at time.Time) (bool, error) {
	return e.PExpireAtCond(key, at, ExpireAlways)
}

// PExpireAtCond sets key's deadline to at subject to cond, as Redis
// PEXPIREAT key at [NX|XX|GT|LT] (see PExpireCond for the conditions), and
// reports whether it did. A time at or before now deletes the key (true). It
// returns ErrSyntax for an unknown cond and ErrInvalidTTL for a time after
// year 2262, changing nothing. It is safe for concurrent use.
func (e *Engine) PExpireAtCond(key string, at time.Time, cond ExpireCond) (bool, error) {
	if cond > ExpireLT {
		return false, ErrSyntax
	}
	exp, ok := unixNano(at)
	if !ok {
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
	done := e.expireLocked(s, h, key, exp, cond, &c)
	s.Unlock()
	return done, nil
}

// expireLocked applies a new deadline exp to key under cond.
func (e *Engine) expireLocked(s *shardT, h uint64, key string, exp int64, cond ExpireCond, c *opState) bool {
	var p shard.Probe
	if !e.liveLocked(s, h, key, &p, false, c) {
		return false
	}
	cur := p.Exp
	switch cond {
	case ExpireNX:
		if cur != noDeadline {
			return false
		}
	case ExpireXX:
		if cur == noDeadline {
			return false
		}
	case ExpireGT:
		if cur == noDeadline || exp <= cur {
			return false
		}
	case ExpireLT:
		if cur != noDeadline && exp >= cur {
			return false
		}
	}
	if exp <= e.at(c) {
		e.removeLocked(s, p.Hd, p.Pos, KindDel, c)
		return true
	}
	e.retimeLocked(s, &p, exp)
	e.eventLocked(s, key, KindExpire, c)
	return true
}

// PTTL returns key's remaining time to live, as Redis PTTL: ok is false if
// key is absent or expired, ttl is NoExpiry if it has no deadline, and 0 at
// its deadline. It is safe for concurrent use.
func (e *Engine) PTTL(key string) (ttl time.Duration, ok bool) {
	_, ttl, ok = e.getPTTL(key)
	return ttl, ok
}

// GetPTTL returns key's value and remaining time to live in one critical
// section, as Redis MULTI GET PTTL EXEC (a lock client reads its lock's TTL
// and checks its token at once). ok is false if key is absent or expired;
// ttl is NoExpiry if it has no deadline, and 0 at its deadline. It is safe
// for concurrent use, takes no lock unless the key has expired or a writer
// is busy on its shard, and reads the clock only if key has a deadline. A
// key that holds an Object has no string value: ok is false for it (PTTL
// and Type report it). It is an addition to the Redis command set.
func (e *Engine) GetPTTL(key string) (value string, ttl time.Duration, ok bool) {
	value, ttl, ok = e.getPTTL(key)
	if isObject(value) {
		return "", 0, false
	}
	return value, ttl, ok
}

// getPTTL is GetPTTL of a key of any type: value is the marker for an
// Object.
func (e *Engine) getPTTL(key string) (value string, ttl time.Duration, ok bool) {
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	var p shard.Probe
	st, v := e.peek(s, h, key, &c, false, &p)
	switch st {
	case peekAbsent:
		return "", 0, false
	case peekLive:
		return p.Value, e.remaining(p.Exp, &c), true
	}
	known := e.lockAfter(s, st, v, &c)
	value, ttl, ok = e.getPTTLLocked(s, h, key, &p, known, &c)
	s.Unlock()
	return value, ttl, ok
}

// remaining is the TTL of a live key with deadline exp at the operation's
// time.
func (e *Engine) remaining(exp int64, c *opState) time.Duration {
	if exp == noDeadline {
		return NoExpiry
	}
	return time.Duration(exp - e.at(c))
}

func (e *Engine) getPTTLLocked(s *shardT, h uint64, key string, p *shard.Probe, known bool, c *opState) (string, time.Duration, bool) {
	if !e.liveLocked(s, h, key, p, known, c) {
		return "", 0, false
	}
	return p.Value, e.remaining(p.Exp, c), true
}

// ExpireTime returns key's deadline, as Redis PEXPIRETIME: ok is false if
// key is absent or expired, and at is the zero Time if key has no deadline.
// It is safe for concurrent use.
func (e *Engine) ExpireTime(key string) (at time.Time, ok bool) {
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	var p shard.Probe
	st, v := e.peek(s, h, key, &c, false, &p)
	switch st {
	case peekAbsent, peekLive:
		return expireTime(p.Exp, st == peekLive)
	}
	known := e.lockAfter(s, st, v, &c)
	at, ok = e.expireTimeLocked(s, h, key, &p, known, &c)
	s.Unlock()
	return at, ok
}

func expireTime(exp int64, live bool) (time.Time, bool) {
	if !live || exp == noDeadline {
		return time.Time{}, live
	}
	return time.Unix(0, exp), true
}

func (e *Engine) expireTimeLocked(s *shardT, h uint64, key string, p *shard.Probe, known bool, c *opState) (time.Time, bool) {
	held := e.liveLocked(s, h, key, p, known, c)
	return expireTime(p.Exp, held)
}

// Persist removes key's TTL, as Redis PERSIST, and reports whether it did:
// false if key is absent, expired or has no TTL. It reports KindPersist when
// it removes one. It is safe for concurrent use.
func (e *Engine) Persist(key string) bool {
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	s.Lock()
	ok := e.persistLocked(s, h, key, &c)
	s.Unlock()
	return ok
}

func (e *Engine) persistLocked(s *shardT, h uint64, key string, c *opState) bool {
	var p shard.Probe
	if !e.liveLocked(s, h, key, &p, false, c) || p.Exp == noDeadline {
		return false
	}
	e.retimeLocked(s, &p, noDeadline)
	e.eventLocked(s, key, KindPersist, c)
	return true
}
