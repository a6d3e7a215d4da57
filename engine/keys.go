package engine

import (
	"slices"

	"github.com/nxkv/nxkv/shard"
)

// This file holds the key-space commands: DEL, EXISTS, DBSIZE (Len),
// iteration (Range, Scan) and FLUSHDB (Flush). Len, Range, Scan and Flush
// leave the keys under ReservedPrefix alone; their ...All forms include
// them.

// Del deletes the given keys, as Redis DEL, and returns how many of them
// existed (expired keys do not count; a key named twice counts once). Keys
// in several shards are deleted atomically: Del locks all their shards, in
// shard order. It is safe for concurrent use.
func (e *Engine) Del(keys ...string) int {
	switch len(keys) {
	case 0:
		return 0
	case 1:
		h := e.m.Hash(keys[0])
		s, _ := e.m.Shard(h)
		var c opState
		e.begin(&c)
		s.Lock()
		ok := e.delLocked(s, h, keys[0], &c)
		s.Unlock()
		if ok {
			return 1
		}
		return 0
	}
	deleted := 0
	e.Update(keys, func(tx *Tx) { deleted = tx.Del(keys...) })
	return deleted
}

func (e *Engine) delLocked(s *shardT, h uint64, key string, c *opState) bool {
	var p shard.Probe
	held := e.liveLocked(s, h, key, &p, false, c)
	if held {
		e.removeLocked(s, p.Hd, p.Pos, KindDel, c)
	}
	return held
}

// Exists reports whether key exists and has not expired, as Redis EXISTS
// with one key. It is safe for concurrent use.
func (e *Engine) Exists(key string) bool {
	h := e.m.Hash(key)
	s, _ := e.m.Shard(h)
	var c opState
	e.begin(&c)
	var p shard.Probe
	st, v := e.peek(s, h, key, &c, false, &p)
	switch st {
	case peekAbsent, peekLive:
		return st == peekLive
	}
	known := e.lockAfter(s, st, v, &c)
	ok := e.liveLocked(s, h, key, &p, known, &c)
	s.Unlock()
	return ok
}

// Len returns the number of keys held outside ReservedPrefix, including
// expired keys not yet reclaimed (as Redis DBSIZE); after Reap it equals
// the number of live keys (absent concurrent writes). LenAll counts the
// reserved keys too. It visits the shards one at a time, so it is safe for
// concurrent use but not an atomic snapshot.
func (e *Engine) Len() int { return e.count(false) }

// LenAll is Len counting the keys under ReservedPrefix too: every key
// held, as Redis DBSIZE counts them.
func (e *Engine) LenAll() int { return e.count(true) }

func (e *Engine) count(all bool) int {
	n := 0
	for i := range e.m.Shards() {
		s := e.m.ShardAt(i)
		s.Lock()
		n += lenLocked(s, all)
		s.Unlock()
	}
	return n
}

// lenLocked returns the number of keys s holds, reserved ones only if all.
func lenLocked(s *shardT, all bool) int {
	if all {
		return s.LenLocked()
	}
	return s.LenLocked() - s.Aux.reserved
}

// Range calls fn with every live key outside ReservedPrefix until fn
// returns false; RangeAll visits the reserved keys too. It visits the
// shards one at a time and calls fn without holding any lock (fn may call
// the engine), so it is safe for concurrent use but not a snapshot: a key
// present for the whole call is visited exactly once, a key written or
// deleted meanwhile may or may not be. Expired keys it meets are deleted.
func (e *Engine) Range(fn func(key string) bool) { e.rangeKeys(false, fn) }

// RangeAll is Range visiting the keys under ReservedPrefix too.
func (e *Engine) RangeAll(fn func(key string) bool) { e.rangeKeys(true, fn) }

func (e *Engine) rangeKeys(all bool, fn func(key string) bool) {
	var buf []string
	for i := range e.m.Shards() {
		buf = e.liveKeys(i, all, buf[:0])
		for _, k := range buf {
			if !fn(k) {
				return
			}
		}
	}
}

// Scan is a cursor over the live keys outside ReservedPrefix, as Redis
// SCAN; ScanAll visits the reserved keys too. Each call visits the live
// keys of one shard (calling fn without holding any lock) and returns the
// cursor of the next call; start at 0, and the scan is complete when Scan
// returns 0. A key present for the whole scan is visited exactly once. A
// cursor the engine did not return is treated modulo the shard count. It
// is safe for concurrent use.
func (e *Engine) Scan(cursor uint64, fn func(key string)) (next uint64) {
	return e.scan(cursor, false, fn)
}

// ScanAll is Scan visiting the keys under ReservedPrefix too.
func (e *Engine) ScanAll(cursor uint64, fn func(key string)) (next uint64) {
	return e.scan(cursor, true, fn)
}

func (e *Engine) scan(cursor uint64, all bool, fn func(key string)) uint64 {
	n := uint64(e.m.Shards())
	i := cursor % n
	for _, k := range e.liveKeys(int(i), all, nil) {
		fn(k)
	}
	return (i + 1) % n
}

// liveKeys appends the live keys of shard i (reserved ones only if all) to
// buf, deleting expired ones.
func (e *Engine) liveKeys(i int, all bool, buf []string) []string {
	s := e.m.ShardAt(i)
	var c opState
	e.begin(&c)
	s.Lock()
	buf = e.appendLiveLocked(s, all, buf, &c)
	s.Unlock()
	return buf
}

// appendLiveLocked appends the live keys of s (reserved ones only if all)
// to buf and deletes the expired keys it meets, as a read of each would
// (their watchers fire). It reads the clock only if a key has a deadline.
// The deletes wait until the ranging is over, because the table must not
// change under it.
func (e *Engine) appendLiveLocked(s *shardT, all bool, buf []string, c *opState) []string {
	var expired []string
	s.RangeLocked(func(_ shard.Handle, ent *shard.Entry) bool {
		switch {
		case ent.Exp != noDeadline && ent.Exp < e.at(c):
			expired = append(expired, ent.Key)
		case all || s.Aux.reserved == 0 || !Reserved(ent.Key):
			buf = append(buf, ent.Key)
		}
		return true
	})
	for _, key := range expired {
		var p shard.Probe
		e.liveLocked(s, e.m.Hash(key), key, &p, false, c)
	}
	return buf
}

// Flush deletes the caller's keys, every key outside ReservedPrefix, as
// Redis FLUSHDB, atomically: it locks every shard. Plain, multi-key and
// reentrant locks go with them, since their keys are the caller's own; the
// lock bookkeeping under ReservedPrefix stays (fencing counters, and the
// leases of semaphores and read-write locks); FlushAll deletes it too.
// Watchers of deleted keys fire; listeners receive one KindFlush event
// (the reserved keys it leaves did not change). Fences still grow across a
// Flush. It is safe for concurrent use.
func (e *Engine) Flush() { e.Update(nil, (*Tx).Flush) }

// FlushAll deletes every key, the reserved ones included, as Redis FLUSHDB,
// atomically: it locks every shard. It ends every lease taken in the
// engine, but fences still grow across it (see "Fencing" in the package
// doc). Watchers of deleted keys fire; listeners receive one KindFlush
// event. It is safe for concurrent use.
func (e *Engine) FlushAll() { e.Update(nil, (*Tx).FlushAll) }

// flushLocked deletes every key of s (reserved ones only if all), waking
// the watchers of those held. With each set (a flush of some shards only,
// which one KindFlush would overstate) it reports every key to listeners
// instead: KindDel for a live key, KindExpired for an expired one.
func (e *Engine) flushLocked(s *shardT, all, each bool, c *opState) {
	if !all && s.Aux.reserved != 0 {
		// Keep the reserved keys: delete the others one by one, reporting
		// each to listeners only with each (else KindFlush covers them).
		var keys []string
		s.RangeLocked(func(_ shard.Handle, ent *shard.Entry) bool {
			if !Reserved(ent.Key) {
				keys = append(keys, ent.Key)
			}
			return true
		})
		was := c.quiet
		c.quiet = was || !each
		for _, key := range keys {
			if hd, pos, ok := s.FindLocked(e.m.Hash(key), key); ok {
				kind := KindDel
				if exp := s.EntryLocked(hd).Exp; each && exp != noDeadline && exp < e.at(c) {
					kind = KindExpired
				}
				e.removeLocked(s, hd, int32(pos), kind, c)
			}
		}
		c.quiet = was
		return
	}
	if each && s.Aux.obs.listened() {
		s.RangeLocked(func(_ shard.Handle, ent *shard.Entry) bool {
			if ent.Exp != noDeadline && ent.Exp < e.at(c) {
				e.eventLocked(s, ent.Key, KindExpired, c)
			} else {
				e.eventLocked(s, ent.Key, KindDel, c)
			}
			return true
		})
	}
	for key := range s.Aux.obs.watched() {
		if _, _, ok := s.FindLocked(e.m.Hash(key), key); ok {
			e.notifyLocked(s, key)
		}
	}
	if e.mem != nil {
		e.accountLocked(s, -s.Aux.used)
		e.flushPendingLocked(s)
	}
	s.ClearLocked()
	s.Aux.wheel = nil
	s.Aux.reserved = 0
	s.Aux.objects = nil
}

// lockShards locks the shards of keys (every shard when keys is empty) in
// ascending order, so that two multi-shard sections never deadlock, and
// returns their indexes.
func (e *Engine) lockShards(keys []string, buf []int) []int {
	var order []int
	if len(keys) == 0 {
		order = buf[:0]
		for i := range e.m.Shards() {
			order = append(order, i)
		}
	} else {
		idx := buf[:0]
		for _, k := range keys {
			_, i := e.m.Shard(e.m.Hash(k))
			idx = append(idx, i)
		}
		order = sortedUnique(idx)
	}
	for _, i := range order {
		e.m.ShardAt(i).Lock()
	}
	return order
}

// sortedUnique sorts idx in place and drops duplicates.
func sortedUnique(idx []int) []int {
	slices.Sort(idx)
	return slices.Compact(idx)
}
