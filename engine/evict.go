package engine

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"unsafe"

	"github.com/nxkv/nxkv/shard"
)

// This file holds the memory bound (Options.MaxMemory): the accounting of
// what the engine holds, the admission of writes, and eviction, as Redis's
// evict.c does for maxmemory.

// ErrOOM is returned by a write refused because the engine holds more than
// Options.MaxMemory and nothing could be evicted (the policy is
// NoEviction, or every key it may evict is gone). Nothing changes.
var ErrOOM = errors.New("engine: command not allowed when used memory > 'maxmemory'")

// Policy is what the engine does when a write finds it over its memory
// bound: Redis's maxmemory-policy. The zero value is NoEviction.
type Policy uint8

const (
	// NoEviction refuses writes with ErrOOM (Redis's noeviction).
	NoEviction Policy = iota
	// AllKeysLRU evicts the least recently used key (allkeys-lru).
	AllKeysLRU
	// AllKeysLFU evicts the least frequently used key (allkeys-lfu).
	AllKeysLFU
	// VolatileLRU evicts the least recently used key with a TTL
	// (volatile-lru).
	VolatileLRU
	// VolatileLFU evicts the least frequently used key with a TTL
	// (volatile-lfu).
	VolatileLFU
	// VolatileTTL evicts the key with a TTL whose deadline is nearest
	// (volatile-ttl).
	VolatileTTL
	// AllKeysRandom evicts a random key (allkeys-random).
	AllKeysRandom
	// VolatileRandom evicts a random key with a TTL (volatile-random).
	VolatileRandom
)

var policyNames = [...]string{"noeviction", "allkeys-lru", "allkeys-lfu", "volatile-lru", "volatile-lfu", "volatile-ttl", "allkeys-random", "volatile-random"}

// String returns the policy's name in Redis's configuration
// ("allkeys-lru").
func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("Policy(%d)", p)
}

// ParsePolicy returns the policy Redis's configuration names name
// ("volatile-ttl"), or an error.
func ParsePolicy(name string) (Policy, error) {
	for i, n := range policyNames {
		if n == name {
			return Policy(i), nil
		}
	}
	return 0, fmt.Errorf("engine: unknown maxmemory policy %q", name)
}

// volatile reports whether p evicts only keys with a TTL.
func (p Policy) volatile() bool {
	return p == VolatileLRU || p == VolatileLFU || p == VolatileTTL || p == VolatileRandom
}

// lfu reports whether p ranks keys by frequency.
func (p Policy) lfu() bool { return p == AllKeysLFU || p == VolatileLFU }

// What the engine counts for each key (see "Memory bound" in the package
// doc): a key's strings as their lengths rounded up to 8 bytes, plus
// keyCost for its entry, its slot in the index, its eviction metadata and
// the arrays' slack, plus ttlCost for a deadline's link in the timer wheel.
const (
	keyCost = 64
	ttlCost = 16
)

// DefaultSamples is how many keys eviction compares per choice when
// Options.Samples is 0, as Redis's maxmemory-samples.
const DefaultSamples = 5

// strCost is what the engine counts for a string it keeps.
func strCost(s string) int64 { return int64(len(s)+7) &^ 7 }

// entryCost is what the engine counts for a key holding value with
// deadline exp.
func entryCost(key, value string, exp int64) int64 {
	c := keyCost + strCost(key) + strCost(value)
	if exp != noDeadline {
		c += ttlCost
	}
	return c
}

// Redis's LFU: a logarithmic counter that starts at lfuInit, grows by one
// with probability 1/((c-lfuInit)*lfuLogFactor+1), and decays by one per
// lfuDecay writes of its shard (Redis: per minute).
const (
	lfuInit      = 5
	lfuLogFactor = 10
	lfuDecay     = 1 << 12
)

// accountLocked adds delta bytes to s's count, and to the budget's total
// once the shard's pending change passes the quantum.
func (e *Engine) accountLocked(s *shardT, delta int64) {
	st := &s.Aux
	st.used += delta
	st.pending += delta
	if q := e.mem.quantum.Load(); st.pending > q || st.pending < -q {
		e.mem.total.Add(st.pending)
		e.held.Add(st.pending)
		st.pending = 0
	}
}

// useLocked records a use of the entry hd (a read or a write): its stamp
// becomes the shard's clock, and an LFU counter may grow. The caller
// holds the lock; e.mem is set.
func (e *Engine) useLocked(s *shardT, hd shard.Handle) {
	md, now := s.MetaLocked(hd), s.ClockLocked()
	if e.mem.lfu.Load() {
		e.use(md, now)
	} else if md.Stamp != now {
		md.Stamp = now
	}
}

// use is useLocked for a reader without the lock (m from MetaAt, possibly
// nil): its writes race with the shard's writers, harmlessly (see
// shard.MetaAt).
//
//go:norace
func (e *Engine) use(m *shard.Meta, now uint32) {
	if m == nil {
		return
	}
	if e.mem.lfu.Load() {
		f := decayed(m, now)
		if f < 255 && (f < lfuInit || rand.Uint32N(uint32(f-lfuInit)*lfuLogFactor+1) == 0) {
			f++
		}
		if m.Freq != f {
			m.Freq = f
		}
	}
	if m.Stamp != now { // a hot key's line is written once per shard write
		m.Stamp = now
	}
}

// decayed is m's LFU counter at shard clock now, less one per lfuDecay
// shard writes since its last use.
//
//go:norace
func decayed(m *shard.Meta, now uint32) uint8 {
	periods := (now - m.Stamp) / lfuDecay
	if uint32(m.Freq) <= periods {
		return 0
	}
	return m.Freq - uint8(periods)
}

// touch records a lock-free reader's use of entry hd, found at version v.
func (e *Engine) touch(s *shardT, v uint64, hd shard.Handle) {
	if e.mem.lfu.Load() {
		e.use(s.MetaAt(v, hd), shard.Clock(v))
	} else {
		s.Stamp(v, hd)
	}
}

// full reports whether the engine is bounded and its budget over its
// bound: then a write must be admitted (admit) first.
func (e *Engine) full() bool {
	m := e.mem
	return m != nil && m.over()
}

// admit lets a write in (see Budget.admit); e.mem is set.
func (e *Engine) admit() error { return e.mem.admit() }

// evictFirst evicts by the policy before an operation that a memory bound
// never refuses but that may add a few bytes (a deadline's link), as Redis
// evicts before every command, EXPIRE included; under NoEviction, or with
// nothing the policy may evict, the operation runs over the bound. e.mem
// is set.
func (e *Engine) evictFirst() { _ = e.mem.admit() }

// evictFrom evicts one key of s chosen by the policy among a sample (or
// deletes an expired one it meets), and reports whether it freed anything.
//
// The sample is the first Samples keys the policy may evict, met from a
// random slot on: keys it may not evict (locks, reserved keys, and under a
// volatile policy keys without a TTL) are passed over, so the policy
// compares as many keys as Redis's does, which samples a volatile policy's
// keys among those with a TTL alone; a shard is passed over only if it
// holds none. Under a volatile policy a shard with no deadline scheduled
// is passed over at once, and one with few costs about Samples times its
// keys over its keys with a TTL.
func (e *Engine) evictFrom(s *shardT) bool {
	var c opState
	e.begin(&c)
	s.Lock()
	defer s.Unlock()
	policy, now := e.mem.Policy(), s.ClockLocked()
	if policy.volatile() && (s.Aux.wheel == nil || s.Aux.wheel.Len() == 0) {
		return false // no key with a TTL (an expired one the wheel fired is the reaper's)
	}
	var (
		victim     shard.Handle
		victimPos  = -1
		best       uint64
		expiredKey string
		eligible   int
		samples    = int(e.mem.samples.Load())
	)
	pick := func(hd shard.Handle, pos int, ent *shard.Entry, md *shard.Meta) bool {
		if ent.Exp != noDeadline && ent.Exp < e.at(&c) {
			expiredKey = ent.Key // free to reclaim: no eviction needed
			return false
		}
		if (md != nil && md.Pinned) || Reserved(ent.Key) || (policy.volatile() && ent.Exp == noDeadline) {
			return true
		}
		eligible++
		// score: the larger, the better a victim.
		var score uint64
		switch policy {
		case AllKeysLRU, VolatileLRU:
			score = uint64(now - md.Stamp)
		case AllKeysLFU, VolatileLFU:
			score = 255 - uint64(decayed(md, now))
		case VolatileTTL:
			score = ^uint64(ent.Exp - noDeadline) // the nearest deadline scores most
		default: // random: the first eligible key sampled
			victim, victimPos = hd, pos
			return false
		}
		if victimPos < 0 || score > best {
			victim, victimPos, best = hd, pos, score
		}
		return eligible < samples
	}
	s.SampleLocked(rand.Uint64(), s.LenLocked(), pick)
	if expiredKey != "" {
		var p shard.Probe
		e.liveLocked(s, e.m.Hash(expiredKey), expiredKey, &p, false, &c)
		e.flushPendingLocked(s)
		return true
	}
	if victimPos < 0 {
		return false
	}
	e.evictLocked(s, victim, int32(victimPos))
	return true
}

// evictLocked evicts the entry hd, filed at index position pos: the one
// place a key is evicted. It is a change of the key: its watchers fire and
// listeners receive KindEvicted (removeLocked); and it is counted. The
// caller holds s's lock.
func (e *Engine) evictLocked(s *shardT, hd shard.Handle, pos int32) {
	e.removeLocked(s, hd, pos, KindEvicted, nil)
	e.evicted.Add(1)
	e.mem.evicted.Add(1)
	e.flushPendingLocked(s)
}

// flushPendingLocked adds s's pending change to the budget's total, so an
// eviction shows at once.
func (e *Engine) flushPendingLocked(s *shardT) {
	if p := s.Aux.pending; p != 0 {
		e.mem.total.Add(p)
		e.held.Add(p)
		s.Aux.pending = 0
	}
}

// pinLocked marks the live key key of s as a held lock, never evicted
// until it is deleted or overwritten. The caller holds the lock; e.mem is
// set.
func (e *Engine) pinLocked(s *shardT, h uint64, key string) {
	if hd, _, ok := s.FindLocked(h, key); ok {
		s.MetaLocked(hd).Pinned = true
	}
}

// MemoryStats is what MemoryStats and Budget.Stats report.
type MemoryStats struct {
	// Used is the bytes held, as the engine counts them (see "Memory
	// bound" in the package doc): an engine's keys, or a budget's members'
	// keys plus Charged.
	Used int64
	// Max is the bound (0: none): Options.MaxMemory, or the budget's.
	Max int64
	// Policy is the policy at the bound.
	Policy Policy
	// Samples is how many keys eviction compares per choice.
	Samples int
	// Evicted is the number of keys evicted: from the engine, or from
	// every member of the budget.
	Evicted int64
	// Charged is what Budget.Charge added to a budget's Used (0 for an
	// engine's own stats).
	Charged int64
	// Overhead is the memory the engine's shards hold whatever they store,
	// their first index and entry arrays (about 3 KB a shard), which Used
	// leaves out; for a budget, its members' together.
	Overhead int64
}

// shardOverhead is what a shard holds whatever it stores, with (bounded)
// and without eviction metadata.
func shardOverhead(bounded bool) int64 {
	return int64(unsafe.Sizeof(shardT{})) + shard.EmptyBytes(bounded)
}

// MemoryStats reports the engine's memory as it counts it, and its
// budget's settings. With a bound (a budget) the count is kept as keys
// change, and this sums the shards; without one it is not kept, and this
// counts every key (in time proportional to their number). It locks each
// shard in turn, so it is safe for concurrent use but not an atomic
// snapshot, and must not be called inside an Update section.
func (e *Engine) MemoryStats() MemoryStats {
	st := MemoryStats{Overhead: int64(e.m.Shards()) * shardOverhead(e.mem != nil)}
	if m := e.mem; m != nil {
		st.Max, st.Policy, st.Samples, st.Evicted = m.max.Load(), m.Policy(), int(m.samples.Load()), e.evicted.Load()
	}
	for i := range e.m.Shards() {
		s := e.m.ShardAt(i)
		s.Lock()
		if e.mem != nil {
			st.Used += s.Aux.used
		} else {
			s.RangeLocked(func(_ shard.Handle, ent *shard.Entry) bool {
				st.Used += entryCost(ent.Key, ent.Value, ent.Exp)
				return true
			})
		}
		s.Unlock()
	}
	return st
}

// Budget returns the engine's budget: Options.Budget, or the one it made
// for Options.MaxMemory; nil for an engine without a bound, whose writes
// count nothing.
func (e *Engine) Budget() *Budget { return e.mem }
