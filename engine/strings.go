package engine

import (
	"math"
	"strconv"
	"time"
)

// This file holds the string commands: GET, SET and its variants, GETSET,
// GETDEL and INCRBY. Each is a ...Locked core that Engine methods run in a
// one-shard critical section and Tx methods run inside Update.

// Get returns the value of key, as Redis GET. ok is false if key is absent or
// expired (an expired key is deleted). It is safe for concurrent use and
// reads the clock only if key has a deadline.
func (e *Engine) Get(key string) (value string, ok bool) {
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	value, ok = e.getLocked(s, key, &c)
	s.Unlock()
	return value, ok
}

func (e *Engine) getLocked(s *shardT, key string, c *opClock) (string, bool) {
	n := s.LoadLocked(key)
	if n != nil && n.Value.exp != noDeadline {
		n = e.checkLocked(s, n, c)
	}
	if n == nil {
		return "", false
	}
	return n.Value.value, true
}

// Set stores value under key and clears any TTL, as Redis SET without
// options. It never fails, is safe for concurrent use and never reads the
// clock: the result is the same whether a stored key had expired or not.
func (e *Engine) Set(key, value string) {
	s := e.m.Shard(key)
	s.Lock()
	e.setLocked(s, key, value)
	s.Unlock()
}

func (e *Engine) setLocked(s *shardT, key, value string) {
	// An expired node is reused as is: overwriting it with no deadline is
	// exactly deleting it and storing a new key (watchers fire either way).
	if n := s.LoadLocked(key); n != nil {
		e.updateLocked(s, n, value, noDeadline)
	} else {
		e.insertLocked(s, key, value, noDeadline)
	}
}

// SetPX stores value under key with a TTL, as Redis SET key value PX ttl. It
// returns ErrInvalidTTL, changing nothing, if ttl <= 0 or the deadline
// overflows. It is safe for concurrent use.
func (e *Engine) SetPX(key, value string, ttl time.Duration) error {
	if ttl <= 0 {
		return ErrInvalidTTL
	}
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	err := e.setPXLocked(s, key, value, ttl, &c)
	s.Unlock()
	return err
}

func (e *Engine) setPXLocked(s *shardT, key, value string, ttl time.Duration, c *opClock) error {
	exp, ok := deadline(e.at(c), ttl)
	if !ok {
		return ErrInvalidTTL
	}
	if n := e.liveLocked(s, key, c); n != nil {
		e.updateLocked(s, n, value, exp)
	} else {
		e.insertLocked(s, key, value, exp)
	}
	return nil
}

// SetNX stores value under key only if key is absent (or expired), as Redis
// SETNX, and reports whether it did. It never touches a TTL: a key it creates
// has none. It is safe for concurrent use.
func (e *Engine) SetNX(key, value string) bool {
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	ok := e.setNXLocked(s, key, value, &c)
	s.Unlock()
	return ok
}

func (e *Engine) setNXLocked(s *shardT, key, value string, c *opClock) bool {
	n := s.LoadLocked(key)
	if n != nil && n.Value.exp != noDeadline {
		n = e.checkLocked(s, n, c)
	}
	if n != nil {
		return false
	}
	e.insertLocked(s, key, value, noDeadline)
	return true
}

// SetNXPX stores value under key with a TTL only if key is absent (or
// expired), as Redis SET key value NX PX ttl: the lock acquisition. It
// reports whether it wrote; it returns ErrInvalidTTL, changing nothing, if
// ttl <= 0 or the deadline overflows (checked before the key, as Redis
// does). It is safe for concurrent use.
func (e *Engine) SetNXPX(key, value string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, ErrInvalidTTL
	}
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	ok, err := e.setNXPXLocked(s, key, value, ttl, &c)
	s.Unlock()
	return ok, err
}

func (e *Engine) setNXPXLocked(s *shardT, key, value string, ttl time.Duration, c *opClock) (bool, error) {
	exp, ok := deadline(e.at(c), ttl)
	if !ok {
		return false, ErrInvalidTTL
	}
	n := s.LoadLocked(key)
	if n != nil && n.Value.exp != noDeadline {
		n = e.checkLocked(s, n, c)
	}
	if n != nil {
		return false, nil
	}
	e.insertLocked(s, key, value, exp)
	return true, nil
}

// SetNXPXFenced is SetNXPX that also returns a fencing token when it writes:
// an integer, at least 1, strictly greater than every token an earlier
// SetNXPXFenced returned for the same key in this engine's lifetime, across
// releases, expiries, deletes and re-creations. The token comes from a
// counter of the key's shard, incremented in the same critical section as
// the write, so tokens follow acquisition order; it costs no key and no
// memory per key, and nothing a caller does to keys can reset it. fence is 0
// when ok is false. Errors are SetNXPX's. It is safe for concurrent use.
func (e *Engine) SetNXPXFenced(key, value string, ttl time.Duration) (fence int64, ok bool, err error) {
	if ttl <= 0 {
		return 0, false, ErrInvalidTTL
	}
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	fence, ok, err = e.setNXPXFencedLocked(s, key, value, ttl, &c)
	s.Unlock()
	return fence, ok, err
}

func (e *Engine) setNXPXFencedLocked(s *shardT, key, value string, ttl time.Duration, c *opClock) (int64, bool, error) {
	ok, err := e.setNXPXLocked(s, key, value, ttl, c)
	if !ok {
		return 0, false, err
	}
	s.Aux.fence++
	return s.Aux.fence, true, nil
}

// SetWith is the general Redis SET: SET key value [NX|XX|IFEQ m|IFNE m] GET
// [PX ttl|PXAT at|KEEPTTL]. The result always carries the old value (Redis
// GET), whether or not the write happened; Written reports whether it did.
//
// Errors, checked before the condition and changing nothing: ErrSyntax for
// an unknown Cond, TTL together with At, or KeepTTL together with TTL or At;
// ErrInvalidTTL for a negative TTL, an At at or before the Unix epoch (Redis
// rejects PXAT <= 0), or a deadline beyond year 2262. An At in the past is
// accepted: the write happens and the key is at once gone. A successful
// write clears the TTL unless KeepTTL, TTL or At is given. IfEqual never
// creates a key. It is safe for concurrent use.
func (e *Engine) SetWith(key, value string, args SetArgs) (SetResult, error) {
	at, err := args.check()
	if err != nil {
		return SetResult{}, err
	}
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	res, err := e.setWithLocked(s, key, value, &args, at, &c)
	s.Unlock()
	return res, err
}

// check validates args before any lock is taken and returns At as a
// deadline (noDeadline when At is zero).
func (args *SetArgs) check() (int64, error) {
	if args.Cond > IfNotEqual {
		return 0, ErrSyntax
	}
	hasAt := !args.At.IsZero()
	if (args.TTL != 0 && hasAt) || (args.KeepTTL && (args.TTL != 0 || hasAt)) {
		return 0, ErrSyntax
	}
	if args.TTL < 0 {
		return 0, ErrInvalidTTL
	}
	if !hasAt {
		return noDeadline, nil
	}
	at, ok := unixNano(args.At)
	if !ok || at <= 0 {
		return 0, ErrInvalidTTL
	}
	return at, nil
}

func (e *Engine) setWithLocked(s *shardT, key, value string, args *SetArgs, at int64, c *opClock) (SetResult, error) {
	exp := at
	if args.TTL > 0 {
		var ok bool
		if exp, ok = deadline(e.at(c), args.TTL); !ok {
			return SetResult{}, ErrInvalidTTL
		}
	}
	n := e.liveLocked(s, key, c)
	var res SetResult
	if n != nil {
		res.Old, res.HadOld = n.Value.value, true
	}
	switch args.Cond {
	case IfAbsent:
		res.Written = n == nil
	case IfPresent:
		res.Written = n != nil
	case IfEqual:
		res.Written = n != nil && n.Value.value == args.Match
	case IfNotEqual:
		res.Written = n == nil || n.Value.value != args.Match
	default:
		res.Written = true
	}
	if !res.Written {
		return res, nil
	}
	if args.KeepTTL && n != nil {
		exp = n.Value.exp
	}
	if at != noDeadline && exp < e.at(c) {
		// A deadline already passed: the write happens and the key is gone.
		if n != nil {
			e.removeLocked(s, n)
		} else if len(s.Aux.watchers) != 0 {
			e.notifyLocked(s, key)
		}
		return res, nil
	}
	if n != nil {
		e.updateLocked(s, n, value, exp)
	} else {
		e.insertLocked(s, key, value, exp)
	}
	return res, nil
}

// GetSet stores value under key, discarding any TTL, and returns the old
// value, as Redis GETSET; ok is false if key was absent or expired. It is
// safe for concurrent use.
func (e *Engine) GetSet(key, value string) (old string, ok bool) {
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	old, ok = e.getSetLocked(s, key, value, &c)
	s.Unlock()
	return old, ok
}

func (e *Engine) getSetLocked(s *shardT, key, value string, c *opClock) (string, bool) {
	n := s.LoadLocked(key)
	if n != nil && n.Value.exp != noDeadline {
		n = e.checkLocked(s, n, c)
	}
	if n == nil {
		e.insertLocked(s, key, value, noDeadline)
		return "", false
	}
	old := n.Value.value
	e.updateLocked(s, n, value, noDeadline)
	return old, true
}

// GetDel deletes key and returns its value, as Redis GETDEL; ok is false if
// key was absent or expired. It is safe for concurrent use.
func (e *Engine) GetDel(key string) (value string, ok bool) {
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	value, ok = e.getDelLocked(s, key, &c)
	s.Unlock()
	return value, ok
}

func (e *Engine) getDelLocked(s *shardT, key string, c *opClock) (string, bool) {
	n := e.liveLocked(s, key, c)
	if n == nil {
		return "", false
	}
	v := n.Value.value
	e.removeLocked(s, n)
	return v, true
}

// IncrBy adds n to the integer stored under key and returns the result, as
// Redis INCRBY. An absent or expired key counts as 0 and is created without
// a TTL; an existing key keeps its TTL. It returns ErrNotInteger if the
// value is not a base-10 int64 in Redis's strict form (no spaces, no '+',
// no leading zeros, "-0" rejected), and ErrOverflow if the sum overflows;
// then nothing changes. It is safe for concurrent use.
func (e *Engine) IncrBy(key string, n int64) (int64, error) {
	s := e.m.Shard(key)
	var c opClock
	e.begin(&c)
	s.Lock()
	v, err := e.incrByLocked(s, key, n, &c)
	s.Unlock()
	return v, err
}

func (e *Engine) incrByLocked(s *shardT, key string, n int64, c *opClock) (int64, error) {
	nd := e.liveLocked(s, key, c)
	var cur int64
	if nd != nil {
		var ok bool
		if cur, ok = parseInt(nd.Value.value); !ok {
			return 0, ErrNotInteger
		}
	}
	if (n > 0 && cur > math.MaxInt64-n) || (n < 0 && cur < math.MinInt64-n) {
		return 0, ErrOverflow
	}
	sum := cur + n
	v := strconv.FormatInt(sum, 10)
	if nd != nil {
		e.updateLocked(s, nd, v, nd.Value.exp)
	} else {
		e.insertLocked(s, key, v, noDeadline)
	}
	return sum, nil
}

// parseInt parses s as Redis's string2ll does: an optional '-', then "0" or
// a digit 1-9 followed by digits, within int64; nothing else.
func parseInt(s string) (int64, bool) {
	if s == "0" {
		return 0, true
	}
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || d[0] < '1' || d[0] > '9' {
		return 0, false
	}
	for i := 1; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}
