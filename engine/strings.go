package engine

import (
	"math"
	"strconv"
	"time"

	"github.com/nxkv/nxkv/shard"
)

// This file holds the string commands: GET, SET and its variants, GETSET,
// GETDEL and INCRBY. Each is a ...Locked core that Engine methods run in a
// one-shard critical section and Tx methods run inside Update.

// Get returns the value of key, as Redis GET. ok is false if key is absent or
// expired (an expired key is deleted), or holds an Object rather than a
// string (Type tells these apart; Redis's GET replies WRONGTYPE there). It is safe for concurrent use, takes
// no lock unless the key has expired or a writer is busy on its shard, and
// reads the clock only if key has a deadline.
func (e *Engine) Get(key string) (value string, ok bool) {
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	if v, ok := s.ReadVersion(); ok {
		// The common case, a key without a deadline or no key: no clock.
		if value, exp, hd, _, found, valid := s.Lookup(v, h, key); valid && exp == noDeadline {
			if found && e.mem != nil {
				e.touch(s, v, hd)
			}
			if isObject(value) {
				return "", false
			}
			return value, found
		}
	}
	var p shard.Probe
	var c opState
	e.begin(&c)
	st, v := e.peek(s, h, key, &c, false, &p)
	switch st {
	case peekAbsent:
		return "", false
	case peekLive:
		if isObject(p.Value) {
			return "", false
		}
		return p.Value, true
	}
	known := e.lockAfter(s, st, v, &c)
	value, ok = e.getLocked(s, h, key, &p, known, &c)
	s.Unlock()
	return value, ok
}

func (e *Engine) getLocked(s *shardT, h uint64, key string, p *shard.Probe, known bool, c *opState) (string, bool) {
	if !e.liveLocked(s, h, key, p, known, c) || isObject(p.Value) {
		return "", false
	}
	return p.Value, true
}

// Set stores value under key and clears any TTL, as Redis SET without
// options, and reports KindSet (after KindNew if it creates the key). It
// fails only with ErrOOM, changing nothing, when the engine is over its
// memory bound and may evict nothing (see "Memory bound" in the package
// doc); without a bound it never fails. It is safe for concurrent use. It
// never reads the clock while no listener is registered: the result is the
// same whether a stored key had expired or not; listeners are told, as
// Redis tells them, that an expired key was reclaimed (KindExpired) and
// created anew.
func (e *Engine) Set(key, value string) error {
	if e.full() {
		if err := e.admit(); err != nil {
			return err
		}
	}
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c *opState // the time is rarely needed: see swapLocked
	if e.user && e.listening.Load() {
		c = new(opState)
		e.begin(c)
	}
	s.Lock()
	e.swapLocked(s, h, key, value, c)
	s.Unlock()
	return nil
}

// swapLocked stores value under key with no deadline, in the key's entry
// if it has one, whether alive or expired (overwriting an expired entry
// with no deadline is exactly deleting it and storing a new key), reports
// KindSet, and returns the entry's previous value and deadline (found
// false: there was no entry). Listeners of an overwritten expired entry
// are told KindExpired and KindNew first, so only then is the time read.
// c is the operation's state, or nil for Set outside a section when no
// clock reading was taken before the lock (the real clock's time is then
// read here; an injected clock's is the latest time any operation used).
func (e *Engine) swapLocked(s *shardT, h uint64, key, value string, c *opState) (old string, exp int64, found bool) {
	hd, old, exp, pos, found := s.SwapValueLocked(h, key, value)
	if found && isObject(old) {
		e.dropObjectLocked(s, key)
	}
	if !found {
		e.insertLocked(s, h, key, value, noDeadline, pos, c)
		e.eventLocked(s, key, KindSet, c)
		return "", noDeadline, false
	}
	if m := e.mem; m != nil {
		// Inline, not a call: Set is the commonest write. An overwrite of
		// a value of the same length without a deadline, the commonest,
		// changes no count.
		if len(value) != len(old) || exp != noDeadline {
			d := strCost(value) - strCost(old)
			if exp != noDeadline {
				d -= ttlCost
			}
			if d != 0 {
				e.accountLocked(s, d)
			}
		}
		md := s.KeptMetaLocked(hd)
		md.Pinned = false // a lock overwritten is a lock no more
		if m.lfu.Load() {
			e.use(md, s.ClockLocked())
		} else {
			md.Stamp = s.ClockLocked()
		}
	}
	if exp != noDeadline {
		s.Aux.wheel.Cancel(hd)
		s.EntryLocked(hd).Exp = noDeadline
		if s.Aux.obs.listened() {
			if c == nil {
				c = new(opState)
			}
			if exp < e.at(c) {
				e.eventLocked(s, key, KindExpired, c)
				e.eventLocked(s, key, KindNew, c)
			}
		}
	}
	e.eventLocked(s, key, KindSet, c)
	return old, exp, true
}

// SetPX stores value under key with a TTL, as Redis SET key value PX ttl,
// and reports KindSet then KindExpire (after KindNew if it creates the key).
// It returns ErrInvalidTTL, changing nothing, if ttl <= 0 or the deadline
// overflows, and ErrOOM as Set does. It is safe for concurrent use.
func (e *Engine) SetPX(key, value string, ttl time.Duration) error {
	if ttl <= 0 {
		return ErrInvalidTTL
	}
	if e.full() {
		if err := e.admit(); err != nil {
			return err
		}
	}
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	s.Lock()
	err := e.setPXLocked(s, h, key, value, ttl, &c)
	s.Unlock()
	return err
}

func (e *Engine) setPXLocked(s *shardT, h uint64, key, value string, ttl time.Duration, c *opState) error {
	exp, ok := deadline(e.at(c), ttl)
	if !ok {
		return ErrInvalidTTL
	}
	var p shard.Probe
	if e.liveLocked(s, h, key, &p, false, c) {
		e.updateLocked(s, &p, value, exp)
	} else {
		e.insertLocked(s, h, key, value, exp, p.Pos, c)
	}
	e.eventLocked(s, key, KindSet, c)
	e.eventLocked(s, key, KindExpire, c)
	return nil
}

// SetNX stores value under key only if key is absent (or expired), as Redis
// SETNX, and reports whether it did, and KindNew then KindSet when it did.
// It never touches a TTL: a key it creates has none. It returns ErrOOM as
// Set does (whether or not key is present, as Redis). It is safe for
// concurrent use; finding the key held takes no lock.
func (e *Engine) SetNX(key, value string) (bool, error) {
	m := e.mem // read once: this path is a failed lock attempt's
	if m != nil && m.over() {
		if err := e.admit(); err != nil {
			return false, err
		}
	}
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	var p shard.Probe
	if v, ok := s.ReadVersion(); ok {
		// The common cases, a key without a deadline or no key, need no
		// time: the first lookup decides.
		_, exp, hd, pos, found, valid := s.Lookup(v, h, key)
		if valid && exp == noDeadline {
			if found {
				if m != nil {
					e.touch(s, v, hd)
				}
				return false, nil
			}
			// Absent: insert where the lookup left off, if the shard is
			// still as it saw it. This path is the lock acquisition's, so
			// it takes no call it can avoid.
			afterLookup()
			if s.Upgrade(v) {
				e.insertLocked(s, h, key, value, noDeadline, pos, nil)
				e.eventLocked(s, key, KindSet, nil)
				s.Unlock()
				return true, nil
			}
		}
	}
	st, v := e.peek(s, h, key, &c, false, &p)
	if st == peekLive {
		return false, nil
	}
	known := e.lockAfter(s, st, v, &c)
	ok := e.setNXLocked(s, h, key, value, &p, known, &c)
	s.Unlock()
	return ok, nil
}

func (e *Engine) setNXLocked(s *shardT, h uint64, key, value string, p *shard.Probe, known bool, c *opState) bool {
	if e.liveLocked(s, h, key, p, known, c) {
		return false
	}
	e.insertLocked(s, h, key, value, noDeadline, p.Pos, c)
	e.eventLocked(s, key, KindSet, c)
	return true
}

// SetNXPX stores value under key with a TTL only if key is absent (or
// expired), as Redis SET key value NX PX ttl: the lock acquisition. It
// reports whether it wrote, and KindNew, KindSet and KindExpire when it
// did; it returns ErrInvalidTTL, changing nothing, if
// ttl <= 0 or the deadline overflows (checked before the key, as Redis
// does), and ErrOOM as Set does. It is safe for concurrent use; finding the
// key held takes no lock.
func (e *Engine) SetNXPX(key, value string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, ErrInvalidTTL
	}
	if e.full() {
		if err := e.admit(); err != nil {
			return false, err
		}
	}
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	// The deadline's overflow is checked before the key, as Redis does,
	// so a held key answers with a time read inside the snapshot.
	var p shard.Probe
	st, v := e.peek(s, h, key, &c, true, &p)
	if st == peekLive {
		if _, ok := deadline(e.at(&c), ttl); !ok {
			return false, ErrInvalidTTL
		}
		return false, nil
	}
	known := e.lockAfter(s, st, v, &c)
	ok, err := e.setNXPXLocked(s, h, key, value, ttl, &p, known, &c)
	s.Unlock()
	return ok, err
}

func (e *Engine) setNXPXLocked(s *shardT, h uint64, key, value string, ttl time.Duration, p *shard.Probe, known bool, c *opState) (bool, error) {
	exp, ok := deadline(e.at(c), ttl)
	if !ok {
		return false, ErrInvalidTTL
	}
	if e.liveLocked(s, h, key, p, known, c) {
		return false, nil
	}
	e.insertLocked(s, h, key, value, exp, p.Pos, c)
	e.eventLocked(s, key, KindSet, c)
	e.eventLocked(s, key, KindExpire, c)
	return true, nil
}

// SetNXPXFenced is SetNXPX that also returns a fencing token when it writes:
// an integer, at least 1, strictly greater than every token an earlier
// SetNXPXFenced returned for the same key in this engine's lifetime, across
// releases, expiries, deletes and re-creations. The token comes from a
// counter of the key's shard, incremented in the same critical section as
// the write, so tokens follow acquisition order; it costs no key and no
// memory per key, and nothing a caller does to keys can reset it. fence is 0
// when ok is false. Errors and events are SetNXPX's. The key it writes is
// a held lock to a bounded engine: never evicted while it lives, unless
// overwritten (see "Memory bound" in the package doc). It is safe for
// concurrent use.
func (e *Engine) SetNXPXFenced(key, value string, ttl time.Duration) (fence int64, ok bool, err error) {
	if ttl <= 0 {
		return 0, false, ErrInvalidTTL
	}
	if e.full() {
		if err := e.admit(); err != nil {
			return 0, false, err
		}
	}
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	var p shard.Probe
	st, v := e.peek(s, h, key, &c, true, &p)
	if st == peekLive {
		if _, ok := deadline(e.at(&c), ttl); !ok {
			return 0, false, ErrInvalidTTL
		}
		return 0, false, nil
	}
	known := e.lockAfter(s, st, v, &c)
	fence, ok, err = e.setNXPXFencedLocked(s, h, key, value, ttl, &p, known, &c)
	s.Unlock()
	return fence, ok, err
}

func (e *Engine) setNXPXFencedLocked(s *shardT, h uint64, key, value string, ttl time.Duration, p *shard.Probe, known bool, c *opState) (int64, bool, error) {
	ok, err := e.setNXPXLocked(s, h, key, value, ttl, p, known, c)
	if !ok {
		return 0, false, err
	}
	if e.mem != nil {
		e.pinLocked(s, h, key)
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
// creates a key. Then ErrOOM as Set returns it, whatever the condition. A
// key holding an Object is replaced like any other (as Redis's SET
// replaces a value of any type), but it has no string value: HadOld is
// false for it, and IfEqual and IfNotEqual, which compare with one, return
// ErrWrongType and change nothing. It is safe for concurrent use.
//
// A write reports KindSet (after KindNew if it creates the key), then
// KindExpire if TTL or At is given, and KindExpired if At has passed: the
// events of Redis's SET, and of the key's reclamation Redis does on its
// next access.
func (e *Engine) SetWith(key, value string, args SetArgs) (SetResult, error) {
	at, err := args.check()
	if err != nil {
		return SetResult{}, err
	}
	if e.full() {
		if err := e.admit(); err != nil {
			return SetResult{}, err
		}
	}
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	s.Lock()
	res, err := e.setWithLocked(s, h, key, value, &args, at, &c)
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

func (e *Engine) setWithLocked(s *shardT, h uint64, key, value string, args *SetArgs, at int64, c *opState) (SetResult, error) {
	exp := at
	if args.TTL > 0 {
		var ok bool
		if exp, ok = deadline(e.at(c), args.TTL); !ok {
			return SetResult{}, ErrInvalidTTL
		}
	}
	var p shard.Probe
	held := e.liveLocked(s, h, key, &p, false, c)
	var res SetResult
	if held && isObject(p.Value) {
		if args.Cond == IfEqual || args.Cond == IfNotEqual {
			return res, ErrWrongType
		}
	} else if held {
		res.Old, res.HadOld = p.Value, true
	}
	switch args.Cond {
	case IfAbsent:
		res.Written = !held
	case IfPresent:
		res.Written = held
	case IfEqual:
		res.Written = held && p.Value == args.Match
	case IfNotEqual:
		res.Written = !held || p.Value != args.Match
	default:
		res.Written = true
	}
	if !res.Written {
		return res, nil
	}
	if args.KeepTTL && held {
		exp = p.Exp
	}
	if at != noDeadline && exp < e.at(c) {
		// A deadline already passed: the write happens and the key is gone.
		if !held {
			e.eventLocked(s, key, KindNew, c)
		}
		e.eventLocked(s, key, KindSet, c)
		e.eventLocked(s, key, KindExpire, c)
		if held {
			e.removeLocked(s, p.Hd, p.Pos, KindExpired, c)
		} else {
			e.eventLocked(s, key, KindExpired, c)
		}
		return res, nil
	}
	if held {
		e.updateLocked(s, &p, value, exp)
	} else {
		e.insertLocked(s, h, key, value, exp, p.Pos, c)
	}
	e.eventLocked(s, key, KindSet, c)
	if args.TTL != 0 || at != noDeadline {
		e.eventLocked(s, key, KindExpire, c)
	}
	return res, nil
}

// GetSet stores value under key, discarding any TTL, and returns the old
// value, as Redis GETSET; ok is false if key was absent or expired, or held
// an Object, which is replaced as Set replaces it (Redis's GETSET replies
// WRONGTYPE there and changes nothing). Its events are Set's. It returns ErrOOM as Set does. It is safe for
// concurrent use.
func (e *Engine) GetSet(key, value string) (old string, ok bool, err error) {
	if e.full() {
		if err := e.admit(); err != nil {
			return "", false, err
		}
	}
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	s.Lock()
	old, ok = e.getSetLocked(s, h, key, value, &c)
	s.Unlock()
	return old, ok, nil
}

func (e *Engine) getSetLocked(s *shardT, h uint64, key, value string, c *opState) (string, bool) {
	// The time is read only for a key with a deadline, still under the lock.
	old, exp, found := e.swapLocked(s, h, key, value, c)
	if !found || exp != noDeadline && exp < e.at(c) || isObject(old) {
		return "", false
	}
	return old, true
}

// GetDel deletes key and returns its value, as Redis GETDEL; ok is false if
// key was absent or expired, or holds an Object, which it leaves in place
// (as Redis's GETDEL, which replies WRONGTYPE). It reports KindDel when it deletes. It is safe
// for concurrent use.
func (e *Engine) GetDel(key string) (value string, ok bool) {
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	s.Lock()
	value, ok = e.getDelLocked(s, h, key, &c)
	s.Unlock()
	return value, ok
}

func (e *Engine) getDelLocked(s *shardT, h uint64, key string, c *opState) (string, bool) {
	var p shard.Probe
	if !e.liveLocked(s, h, key, &p, false, c) || isObject(p.Value) {
		return "", false
	}
	e.removeLocked(s, p.Hd, p.Pos, KindDel, c)
	return p.Value, true
}

// IncrBy adds n to the integer stored under key and returns the result, as
// Redis INCRBY. An absent or expired key counts as 0 and is created without
// a TTL; an existing key keeps its TTL. A key under ReservedPrefix is a
// counter that never goes back: absent, it counts as the largest value
// IncrBy gave any reserved key of its shard instead of 0 (see "Fencing" in
// the package doc). It returns ErrNotInteger if the value is not a base-10
// int64 in Redis's strict form (no spaces, no '+', no leading zeros, "-0"
// rejected), ErrOverflow if the sum overflows, ErrWrongType if key holds
// an Object, and ErrOOM as Set does; then nothing changes. It reports KindIncrBy (after KindNew if it creates the
// key). It is safe for concurrent use.
func (e *Engine) IncrBy(key string, n int64) (int64, error) {
	if e.full() {
		if err := e.admit(); err != nil {
			return 0, err
		}
	}
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	s.Lock()
	v, err := e.incrByLocked(s, h, key, n, &c)
	s.Unlock()
	return v, err
}

func (e *Engine) incrByLocked(s *shardT, h uint64, key string, n int64, c *opState) (int64, error) {
	var p shard.Probe
	held := e.liveLocked(s, h, key, &p, false, c)
	counter := Reserved(key)
	var cur int64
	if held && isObject(p.Value) {
		return 0, ErrWrongType
	}
	if held {
		var ok bool
		if cur, ok = parseInt(p.Value); !ok {
			return 0, ErrNotInteger
		}
	} else if counter {
		cur = s.Aux.counters // a reserved counter resumes above every value it had
	}
	if (n > 0 && cur > math.MaxInt64-n) || (n < 0 && cur < math.MinInt64-n) {
		return 0, ErrOverflow
	}
	sum := cur + n
	if counter && sum > s.Aux.counters {
		s.Aux.counters = sum
	}
	v := strconv.FormatInt(sum, 10)
	if held {
		e.updateLocked(s, &p, v, p.Exp)
	} else {
		e.insertLocked(s, h, key, v, noDeadline, p.Pos, c)
	}
	e.eventLocked(s, key, KindIncrBy, c)
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
