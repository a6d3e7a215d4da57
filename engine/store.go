package engine

import (
	"math"

	"github.com/nxkv/nxkv/shard"
	"github.com/nxkv/nxkv/ttl"
)

// This file holds the storage primitives every command is built from: the
// per-shard state, the lookups (with and without the lock) and the writes
// that keep the index, the timer wheel and the watchers in step.
//
// Invariants, under the owning shard's lock: a stored entry's Key is the
// key it is filed under; it is scheduled in the shard's wheel iff its Exp
// != noDeadline, at Exp+1 (the wheel fires at deadline <= now, a key
// expires once now > Exp), except that a handle the wheel fired is
// unscheduled, expired and still stored until the reaper (or Reap) deletes
// it, possibly after dropping and retaking the lock between batches; any
// operation that meets it in between sees it expired. A free entry is in no
// wheel.

// shardState is the engine's per-shard state, guarded by the shard lock.
type shardState struct {
	// wheel files the shard's entries that have a deadline, by handle; nil
	// until the shard first stores a deadline, so shards without TTLs cost
	// nothing for it.
	wheel *ttl.Wheel
	// watchers holds the pending watchers of each watched key; nil or empty
	// when nothing is watched, so unwatched writes pay one length check.
	watchers map[string][]*watcher
	// fence is the last fencing token SetNXPXFenced handed out for a key of
	// this shard; it only grows, so the tokens of any one key strictly
	// increase for the engine's lifetime.
	fence int64
}

type shardT = shard.Shard[shardState]

// ref is a stored key found under the lock: its handle, its index position
// (for a delete) and its entry, valid until the lock is released or the
// shard changes.
type ref struct {
	hd  shard.Handle
	pos int
	e   *shard.Entry
}

// peekTries is how many lock-free reads a lookup attempts before it locks:
// a read fails only while a writer holds or changes the shard.
const peekTries = 3

// What a lock-free lookup found.
const (
	peekFailed  = iota // no consistent read: lock and look again
	peekAbsent         // the key is not stored
	peekLive           // the key is stored and alive
	peekExpired        // the key is stored but expired: lock to delete it
)

// peek looks key up without locking and returns what it found, the entry
// when the key is stored, and the shard version the answer holds at. For a
// key with a deadline, or any stored key when timed is set, it reads the
// clock (through c) between the version loads, so the time lies inside the
// snapshot's interval: times used along one key's history never decrease,
// as when read under the lock.
func (e *Engine) peek(s *shardT, h uint64, key string, c *opClock, timed bool) (value string, exp int64, state int, v uint64) {
	for range peekTries {
		var ok bool
		if v, ok = s.ReadVersion(); !ok {
			continue
		}
		value, exp, found, valid := s.Peek(v, h, key)
		switch {
		case !valid:
			continue
		case !found:
			return "", noDeadline, peekAbsent, v
		case exp == noDeadline && !timed:
			return value, exp, peekLive, v
		}
		now := e.at(c)
		if !s.Unchanged(v) {
			e.stale(c)
			continue
		}
		if exp < now {
			return value, exp, peekExpired, v
		}
		return value, exp, peekLive, v
	}
	return "", noDeadline, peekFailed, 0
}

// lockAfter locks s for an operation whose lock-free lookup (peek) returned
// state at version v. If the shard is unchanged since v, what peek saw
// (and the time it read) still holds under the lock; otherwise the
// operation's time is read again inside the lock.
func (e *Engine) lockAfter(s *shardT, state int, v uint64, c *opClock) {
	if state != peekFailed && s.Upgrade(v) {
		return
	}
	s.Lock()
	e.stale(c)
}

// liveLocked returns key's entry if key exists and has not expired,
// deleting it if it has. It reads the clock (through c) only for a key with
// a deadline.
func (e *Engine) liveLocked(s *shardT, h uint64, key string, c *opClock) (ref, bool) {
	hd, pos, ok := s.FindLocked(h, key)
	if !ok {
		return ref{}, false
	}
	r := ref{hd: hd, pos: pos, e: s.EntryLocked(hd)}
	if r.e.Exp != noDeadline && r.e.Exp < e.at(c) {
		e.removeLocked(s, r)
		return ref{}, false
	}
	return r, true
}

// removeLocked deletes r's key from s and wakes its watchers.
func (e *Engine) removeLocked(s *shardT, r ref) {
	if r.e.Exp != noDeadline {
		s.Aux.wheel.Cancel(r.hd)
	}
	key := r.e.Key
	if s.DeleteLocked(r.hd, r.pos) {
		e.rewheelLocked(s)
	}
	if len(s.Aux.watchers) != 0 {
		e.notifyLocked(s, key)
	}
}

// rewheelLocked rebuilds s's wheel after the shard renumbered its entries
// (a compaction after a mass delete), filing every entry with a deadline
// again. Entries already due fire at the next Advance.
func (e *Engine) rewheelLocked(s *shardT) {
	old := s.Aux.wheel
	if old == nil {
		return
	}
	s.Aux.wheel = nil
	if old.Len() == 0 && s.LenLocked() == 0 {
		return
	}
	w := ttl.New(old.Now(), e.tick)
	s.RangeLocked(func(hd shard.Handle, ent *shard.Entry) bool {
		if ent.Exp != noDeadline {
			w.Schedule(hd, fireAt(ent.Exp))
		}
		return true
	})
	s.Aux.wheel = w
}

// insertLocked stores a new key (known absent) with deadline exp
// (noDeadline: none) and wakes its watchers.
func (e *Engine) insertLocked(s *shardT, h uint64, key, value string, exp int64) {
	hd := s.InsertLocked(h, key, value, exp)
	if exp != noDeadline {
		e.scheduleLocked(s, hd, exp)
	}
	if len(s.Aux.watchers) != 0 {
		e.notifyLocked(s, key)
	}
}

// updateLocked overwrites a live entry in place with value and deadline exp
// and wakes its watchers.
func (e *Engine) updateLocked(s *shardT, r ref, value string, exp int64) {
	r.e.Value = value
	e.retimeLocked(s, r, exp)
}

// retimeLocked gives live entry r the deadline exp (noDeadline: none) and
// wakes its watchers: the one path for a change that keeps the key.
func (e *Engine) retimeLocked(s *shardT, r ref, exp int64) {
	if exp != r.e.Exp {
		if exp == noDeadline {
			s.Aux.wheel.Cancel(r.hd)
		} else {
			e.scheduleLocked(s, r.hd, exp)
		}
		r.e.Exp = exp
	}
	if len(s.Aux.watchers) != 0 {
		e.notifyLocked(s, r.e.Key)
	}
}

// fireAt is when the wheel fires a key with deadline exp: one nanosecond
// after it, since the key is alive while now <= exp.
func fireAt(exp int64) int64 {
	if exp == math.MaxInt64 {
		return exp
	}
	return exp + 1
}

// scheduleLocked files hd in the wheel for deadline exp != noDeadline,
// creating the shard's wheel on first use, and kicks the reaper if that is
// earlier than its next wake.
func (e *Engine) scheduleLocked(s *shardT, hd shard.Handle, exp int64) {
	w := s.Aux.wheel
	if w == nil {
		w = ttl.New(e.start, e.tick)
		s.Aux.wheel = w
	}
	fire := fireAt(exp)
	w.Schedule(hd, fire)
	if fire < e.nextWake.Load() {
		select {
		case e.kick <- struct{}{}:
		default:
		}
	}
}
