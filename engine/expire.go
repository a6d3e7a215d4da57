package engine

import "time"

// This file holds the TTL commands: PEXPIRE and PEXPIREAT with their
// conditions, PTTL, PEXPIRETIME and PERSIST.

// PExpire sets key's TTL, as Redis PEXPIRE, and reports whether key existed.
// A ttl <= 0 deletes the key (and reports true if it existed). It returns
// ErrInvalidTTL, changing nothing, if the deadline overflows. It is safe for
// concurrent use.
func (e *Engine) PExpire(key string, ttl time.Duration) (bool, error) {
	return e.PExpireCond(key, ttl, ExpireAlways)
}

// PExpireCond sets key's TTL subject to cond, as Redis PEXPIRE key ttl
// [NX|XX|GT|LT], and reports whether it did: false if key is absent or the
// condition fails. NX applies only to a key without a TTL, XX only to one
// with a TTL, GT only if the new deadline is later (a key without a TTL
// counts as infinite, so GT fails), LT only if it is earlier (a key without
// a TTL accepts it). A new deadline at or before now deletes the key (true).
// It returns ErrSyntax for an unknown cond and ErrInvalidTTL if the deadline
// overflows, changing nothing. It is safe for concurrent use.
func (e *Engine) PExpireCond(key string, ttl time.Duration, cond ExpireCond) (bool, error) {
	if cond > ExpireLT {
		return false, ErrSyntax
	}
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	ok, err := e.pexpireLocked(s, key, ttl, cond, &c)
	s.Unlock()
	return ok, err
}

func (e *Engine) pexpireLocked(s *shardT, key string, ttl time.Duration, cond ExpireCond, c *opClock) (bool, error) {
	exp, ok := deadline(e.at(c), ttl)
	if !ok {
		return false, ErrInvalidTTL
	}
	return e.expireLocked(s, key, exp, cond, c), nil
}

// PExpireAt sets key's deadline to at, as Redis PEXPIREAT, and reports
// whether key existed. A time at or before now deletes the key (true). It
// returns ErrInvalidTTL, changing nothing, for a time after year 2262, the
// end of the engine's time range. It is safe for concurrent use.
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
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	done := e.expireLocked(s, key, exp, cond, &c)
	s.Unlock()
	return done, nil
}

// expireLocked applies a new deadline exp to key under cond.
func (e *Engine) expireLocked(s *shardT, key string, exp int64, cond ExpireCond, c *opClock) bool {
	n := e.liveLocked(s, key, c)
	if n == nil {
		return false
	}
	cur := n.Value.exp
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
		e.removeLocked(s, n)
		return true
	}
	e.retimeLocked(s, n, exp)
	return true
}

// PTTL returns key's remaining time to live, as Redis PTTL: ok is false if
// key is absent or expired, ttl is NoExpiry if it has no deadline, and 0 at
// its deadline. It is safe for concurrent use.
func (e *Engine) PTTL(key string) (ttl time.Duration, ok bool) {
	_, ttl, ok = e.GetPTTL(key)
	return ttl, ok
}

// GetPTTL returns key's value and remaining time to live in one critical
// section, as Redis MULTI GET PTTL EXEC (a lock client reads its lock's TTL
// and checks its token at once). ok is false if key is absent or expired;
// ttl is NoExpiry if it has no deadline, and 0 at its deadline. It is safe
// for concurrent use and reads the clock only if key has a deadline. It is
// an addition to the Redis command set.
func (e *Engine) GetPTTL(key string) (value string, ttl time.Duration, ok bool) {
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	value, ttl, ok = e.getPTTLLocked(s, key, &c)
	s.Unlock()
	return value, ttl, ok
}

func (e *Engine) getPTTLLocked(s *shardT, key string, c *opClock) (string, time.Duration, bool) {
	n := e.liveLocked(s, key, c)
	switch {
	case n == nil:
		return "", 0, false
	case n.Value.exp == noDeadline:
		return n.Value.value, NoExpiry, true
	}
	return n.Value.value, time.Duration(n.Value.exp - e.at(c)), true
}

// ExpireTime returns key's deadline, as Redis PEXPIRETIME: ok is false if
// key is absent or expired, and at is the zero Time if key has no deadline.
// It is safe for concurrent use.
func (e *Engine) ExpireTime(key string) (at time.Time, ok bool) {
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	at, ok = e.expireTimeLocked(s, key, &c)
	s.Unlock()
	return at, ok
}

func (e *Engine) expireTimeLocked(s *shardT, key string, c *opClock) (time.Time, bool) {
	n := e.liveLocked(s, key, c)
	switch {
	case n == nil:
		return time.Time{}, false
	case n.Value.exp == noDeadline:
		return time.Time{}, true
	}
	return time.Unix(0, n.Value.exp), true
}

// Persist removes key's TTL, as Redis PERSIST, and reports whether it did:
// false if key is absent, expired or has no TTL. It is safe for concurrent
// use.
func (e *Engine) Persist(key string) bool {
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	ok := e.persistLocked(s, key, &c)
	s.Unlock()
	return ok
}

func (e *Engine) persistLocked(s *shardT, key string, c *opClock) bool {
	n := e.liveLocked(s, key, c)
	if n == nil || n.Value.exp == noDeadline {
		return false
	}
	e.retimeLocked(s, n, noDeadline)
	return true
}
