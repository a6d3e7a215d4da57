package engine

import (
	"math"
	"sync"

	"github.com/nxkv/nxkv/shard"
	"github.com/nxkv/nxkv/ttl"
)

// This file holds the storage primitives every command is built from: the
// per-shard state, the lookups (with and without the lock) and the writes
// that keep the index and the timer wheel in step. A primitive that creates
// or deletes a key reports it (KindNew, or the delete's kind) through
// eventLocked; the commands report their own changes after it.
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
	// obs is who observes the shard's changes: its watchers and the
	// engine's listeners (feed.go); nil while no one does, so that an
	// unobserved change pays one nil check.
	obs *observers
	// fence is the last fencing token SetNXPXFenced handed out for a key of
	// this shard; it only grows, so the tokens of any one key strictly
	// increase for the engine's lifetime.
	fence int64
	// counters is the largest value IncrBy gave a reserved key of this
	// shard (ReservedPrefix), where an absent reserved key starts: it only
	// grows, so the values of any one reserved counter strictly increase
	// for the engine's lifetime, whatever deletes it.
	counters int64
	// reserved is the number of stored keys under ReservedPrefix, which
	// Len leaves out.
	reserved int
	// used is the bytes the shard's keys cost (entryCost), and pending
	// the part of its changes not yet added to the engine's total (see
	// memory.quantum); both kept only when the engine is bounded.
	used, pending int64
	// loadMu guards loads. It is not the shard lock, so that callers
	// joining a load do not queue with the shard's writers; it may be
	// held while taking the shard lock, never the other way round.
	loadMu sync.Mutex
	// loads holds the GetOrLoad loads in progress of the shard's keys,
	// each with at least one waiter; nil when there are none. Guarded by
	// loadMu.
	loads map[string]*flight
	// objects holds the Objects of the shard's keys whose value is the
	// marker, keyed by the entry's key (object.go); nil while the shard
	// holds none, so a shard of strings costs nothing for it.
	objects map[string]objSlot
}

type shardT = shard.Shard[shardState]

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

// peek looks key up without locking, fills p, and returns what it found
// and the shard version the answer holds at. For a key with a deadline, or
// any stored key when timed is set, it reads the clock (through c) between
// the version loads, so the time lies inside the snapshot's interval: times
// used along one key's history never decrease, as when read under the lock.
// With c nil it reads no clock and reports a stored key peekLive, expired
// or not, for a caller that decides a stored key under the lock: a time
// read before the lock would predate the times of readers that run before
// the lock is upgraded.
func (e *Engine) peek(s *shardT, h uint64, key string, c *opState, timed bool, p *shard.Probe) (state int, v uint64) {
	if !shard.LockFreeReads {
		return peekFailed, 0
	}
	for range peekTries {
		var ok bool
		if v, ok = s.ReadVersion(); !ok {
			continue
		}
		switch {
		case !s.Peek(v, h, key, p):
			continue
		case !p.Found:
			return peekAbsent, v
		case c == nil, p.Exp == noDeadline && !timed:
			if e.mem != nil {
				e.touch(s, v, p.Hd)
			}
			return peekLive, v
		}
		now := e.at(c)
		if !s.Unchanged(v) {
			e.stale(c)
			continue
		}
		if p.Exp != noDeadline && p.Exp < now {
			return peekExpired, v
		}
		if e.mem != nil {
			e.touch(s, v, p.Hd)
		}
		return peekLive, v
	}
	return peekFailed, 0
}

// lockAfter locks s for an operation whose lock-free lookup (peek) returned
// state at version v, and reports whether that lookup still holds under the
// lock: it does if the shard is unchanged since v (then the time peek read
// holds too); otherwise the operation looks again, and reads the time again,
// inside the lock.
func (e *Engine) lockAfter(s *shardT, state int, v uint64, c *opState) (known bool) {
	afterLookup()
	if state != peekFailed && s.Upgrade(v) {
		return true
	}
	s.Lock()
	e.stale(c)
	return false
}

// liveLocked looks key up under the lock into p, unless known says p
// already holds a lookup that is still true (the caller upgraded the lock
// from its snapshot). A key found expired is deleted first; live reports a
// live key. When the key is not live, p.Pos is a free position to insert it
// at (-1: unknown). It reads the clock (through c) only for a key with a
// deadline.
func (e *Engine) liveLocked(s *shardT, h uint64, key string, p *shard.Probe, known bool, c *opState) (live bool) {
	if !known {
		s.ProbeLocked(h, key, p)
	}
	if !p.Found {
		return false
	}
	if p.Exp != noDeadline && p.Exp < e.at(c) {
		pos := p.Pos // the slot it frees
		if e.removeLocked(s, p.Hd, p.Pos, KindExpired, c) {
			pos = -1 // the shard was rebuilt
		}
		p.Value, p.Exp, p.Pos, p.Found = "", noDeadline, pos, false
		return false
	}
	if e.mem != nil {
		e.useLocked(s, p.Hd)
	}
	return true
}

// removeLocked deletes the entry hd, filed at index position pos, and
// reports the delete as kind for operation c (nil: not a section's). It
// reports whether the delete rebuilt the shard (every handle and position
// changed).
func (e *Engine) removeLocked(s *shardT, hd shard.Handle, pos int32, kind Kind, c *opState) (rebuilt bool) {
	ent := s.EntryLocked(hd)
	if ent.Exp != noDeadline {
		s.Aux.wheel.Cancel(hd)
	}
	key := ent.Key
	if Reserved(key) {
		s.Aux.reserved--
	}
	if e.mem != nil {
		e.accountLocked(s, -entryCost(key, ent.Value, ent.Exp))
	}
	if isObject(ent.Value) {
		e.dropObjectLocked(s, key)
	}
	if rebuilt = s.DeleteLocked(hd, int(pos)); rebuilt {
		e.rewheelLocked(s)
	}
	e.eventLocked(s, key, kind, c)
	return rebuilt
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
// (noDeadline: none) at free index position pos (-1: search), and reports
// KindNew for operation c (nil: not a section's).
func (e *Engine) insertLocked(s *shardT, h uint64, key, value string, exp int64, pos int32, c *opState) {
	hd := s.InsertAtLocked(pos, h, key, value, exp)
	if Reserved(key) {
		s.Aux.reserved++
	}
	if e.mem != nil {
		e.accountLocked(s, entryCost(key, value, exp))
		md := s.MetaLocked(hd)
		md.Stamp, md.Freq = s.ClockLocked(), lfuInit
	}
	if exp != noDeadline {
		e.scheduleLocked(s, hd, exp)
	}
	e.eventLocked(s, key, KindNew, c)
}

// updateLocked overwrites the live entry p found in place with value and
// deadline exp, dropping the object it held, if any. The caller reports the
// change.
func (e *Engine) updateLocked(s *shardT, p *shard.Probe, value string, exp int64) {
	ent := s.EntryLocked(p.Hd)
	if e.mem != nil {
		d := strCost(value) - strCost(ent.Value)
		if d != 0 {
			e.accountLocked(s, d)
		}
		s.MetaLocked(p.Hd).Pinned = false // a lock overwritten is a lock no more
	}
	if isObject(ent.Value) {
		e.dropObjectLocked(s, ent.Key)
	}
	ent.Value = value
	e.retimeLocked(s, p, exp)
}

// retimeLocked gives the live entry p found the deadline exp (noDeadline:
// none): the one path for a change that keeps the key. The caller reports
// the change.
func (e *Engine) retimeLocked(s *shardT, p *shard.Probe, exp int64) {
	ent := s.EntryLocked(p.Hd)
	if e.mem != nil {
		e.retimeCostLocked(s, p.Hd, ent.Exp, exp)
	}
	if exp != ent.Exp {
		if exp == noDeadline {
			s.Aux.wheel.Cancel(p.Hd)
		} else {
			e.scheduleLocked(s, p.Hd, exp)
		}
		ent.Exp = exp
	}
}

// retimeCostLocked accounts a change of entry hd's deadline from old to
// exp, and records the use. e.mem is set.
func (e *Engine) retimeCostLocked(s *shardT, hd shard.Handle, old, exp int64) {
	switch { // (no change: nothing to count)
	case old == noDeadline && exp != noDeadline:
		e.accountLocked(s, ttlCost)
	case old != noDeadline && exp == noDeadline:
		e.accountLocked(s, -ttlCost)
	}
	e.useLocked(s, hd)
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
