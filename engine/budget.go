package engine

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
)

// This file holds the Budget: the memory bound's state, which one engine
// keeps for itself (Options.MaxMemory) or several share (Options.Budget),
// its settings, changed at run time, and the admission of writes, which
// evicts from any engine that shares it.

// Budget is a memory bound that one or more engines share, as Redis's
// maxmemory bounds all of a server's databases together: the bytes every
// engine of the budget holds, as each counts them (see "Memory bound" in
// the package doc), plus any charged with Charge, are held under one bound,
// and a write to any of them that finds the budget over its bound evicts
// keys from any of them, by the budget's policy. Create one with NewBudget
// and give it to the engines through Options.Budget; an engine created with
// Options.MaxMemory has a budget of its own, which Engine.Budget returns.
// An engine stays a member of its budget for the budget's life.
//
// Its methods are safe for concurrent use. SetMax, SetPolicy, SetSamples
// and Charge take no lock the engines hold, so they may be called from
// anywhere, inside an Update section too; Evict and the engines' writes
// take the engines' shard locks one at a time, so they must not be called
// from inside a section of a member engine. A Budget must not be copied.
type Budget struct {
	// max is the bound in bytes (0: none). limit is the total past which a
	// write must be admitted: max less what the shards may hold back
	// (MaxInt64 without a bound). quantum is how far each shard's count
	// may drift from total before the shard adds its change.
	max, limit, quantum atomic.Int64
	policy              atomic.Uint32 // a Policy
	samples             atomic.Int32  // keys compared per eviction
	lfu                 atomic.Bool   // the policy counts uses (LFU)
	// total is the bytes the members' shards have added, plus charged.
	total   atomic.Int64
	charged atomic.Int64 // bytes charged with Charge
	evicted atomic.Int64 // keys evicted from any member
	// stale is set while some shard may hold back more than quantum (the
	// quantum shrank): limit then still assumes the holdback before the
	// change, and the next admission adds every shard's change to total.
	stale atomic.Bool

	// members lists the engines of the budget, in the order they joined;
	// replaced (never changed in place) with mu held.
	members atomic.Pointer[[]*Engine]

	// mu serializes joins, settings and the flush of stale shards. It is
	// never held while taking a shard lock (a member may be created inside
	// another member's section), nor taken while holding one.
	mu sync.Mutex
	// shards is the members' shard count, hold the bytes they may hold
	// back at the current quantum, and staleHold what they may still hold
	// back from before it shrank, while stale; gen counts the changes of
	// the quantum. Guarded by mu.
	shards          int
	hold, staleHold int64
	gen             uint64
}

// NewBudget returns a budget of bound bytes (0 or less: no bound, the keys
// only counted) with the given policy and samples per eviction (0 or less
// selects DefaultSamples). It panics if policy is not one of the Policy
// constants.
func NewBudget(bound int64, policy Policy, samples int) *Budget {
	if policy > VolatileRandom {
		panic(fmt.Sprintf("engine: NewBudget with an unknown policy %d", policy))
	}
	b := &Budget{}
	b.members.Store(&[]*Engine{})
	b.max.Store(max(bound, 0))
	b.limit.Store(math.MaxInt64)
	b.setPolicy(policy)
	b.SetSamples(samples)
	return b
}

// SetMax sets the bound to bound bytes (0 or less: no bound), as CONFIG
// SET maxmemory does. A lower bound takes effect at the next write
// admitted (or Evict), which evicts down to it by the policy.
func (b *Budget) SetMax(bound int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.max.Store(max(bound, 0))
	b.retuneLocked()
}

// SetPolicy sets the policy, as CONFIG SET maxmemory-policy does; the next
// eviction follows it. It returns an error, changing nothing, if p is not
// one of the Policy constants.
func (b *Budget) SetPolicy(p Policy) error {
	if p > VolatileRandom {
		return fmt.Errorf("engine: unknown maxmemory policy %d", p)
	}
	b.setPolicy(p)
	return nil
}

func (b *Budget) setPolicy(p Policy) {
	b.lfu.Store(p.lfu())
	b.policy.Store(uint32(p))
}

// SetSamples sets how many keys eviction compares per choice, as CONFIG
// SET maxmemory-samples does; 0 or less selects DefaultSamples.
func (b *Budget) SetSamples(n int) {
	if n <= 0 {
		n = DefaultSamples
	}
	b.samples.Store(int32(min(n, math.MaxInt32)))
}

// Charge adds n bytes (n < 0 removes them) held outside the engines' keys
// to what the bound applies to: a server over engines charges what it
// holds whatever its keys (each database's empty shards), so that a bound
// below that is exceeded before any key is written, as in Redis. Charging
// evicts nothing by itself; the next write admitted (or Evict) does.
func (b *Budget) Charge(n int64) {
	b.charged.Add(n)
	b.total.Add(n)
}

// Evict evicts keys by the policy from the budget's engines until they
// hold no more than the bound, and returns ErrOOM if it cannot
// (NoEviction, or no key left that the policy may evict): what a write
// does before it is admitted, and what Redis does before every command. A
// server that admits each command itself calls it, then runs the command
// in UpdateAdmitted sections. It takes the engines' shard locks one at a
// time: the caller must hold none.
func (b *Budget) Evict() error {
	if !b.over() && !b.stale.Load() {
		return nil
	}
	return b.admit()
}

// Stats reports the budget as the engines count it: Used is every
// member's keys plus what was charged, as the shards have added them to
// the budget's total (each shard may hold back up to 1/256 of its share of
// the bound, and nothing when the bound is under 64 KiB a shard or unset);
// Evicted counts the keys evicted from every member, and Overhead sums
// theirs. It takes no lock.
func (b *Budget) Stats() MemoryStats {
	shards := 0
	for _, e := range *b.members.Load() {
		shards += e.m.Shards()
	}
	return MemoryStats{
		Overhead: int64(shards) * shardOverhead(true),
		Used:     b.total.Load(),
		Max:      b.max.Load(),
		Policy:   b.Policy(),
		Samples:  int(b.samples.Load()),
		Evicted:  b.evicted.Load(),
		Charged:  b.charged.Load(),
	}
}

// Policy returns the budget's policy.
func (b *Budget) Policy() Policy { return Policy(b.policy.Load()) }

// over reports whether the members hold more than the bound allows: a
// write must then be admitted first.
func (b *Budget) over() bool { return b.total.Load() > b.limit.Load() }

// join makes e, new and empty, a member of b.
func (b *Budget) join(e *Engine) {
	b.mu.Lock()
	defer b.mu.Unlock()
	ms := append(append([]*Engine(nil), *b.members.Load()...), e)
	b.members.Store(&ms)
	b.shards += e.m.Shards()
	b.retuneLocked()
}

// retuneLocked sets the quantum and the limit for the bound and the
// members' shards: the quantum is 1/256 of a shard's share of the bound
// when that share is 64 KiB or more, and 0 (every change added at once)
// otherwise or without a bound, and the limit is the bound less what the
// shards may hold back. If the quantum shrank, shards may hold back more
// until the next admission adds their changes (flushStale): the limit
// keeps assuming the larger holdback until then. b.mu is held.
func (b *Budget) retuneLocked() {
	bound := b.max.Load()
	var q int64
	if per := bound / int64(max(b.shards, 1)); bound > 0 && per >= 1<<16 {
		q = per / 256
	}
	if q < b.quantum.Load() { // stale before the quantum shrinks
		b.staleHold = max(b.staleHold, b.hold)
		b.gen++
		b.stale.Store(true)
	}
	b.quantum.Store(q)
	b.hold = int64(b.shards) * q
	limit := int64(math.MaxInt64)
	if bound > 0 {
		limit = bound - max(b.hold, b.staleHold)
	}
	b.limit.Store(limit)
}

// flushStale adds every shard's held-back change to the total after the
// quantum shrank, so that the limit need assume only the new holdback. It
// takes the shards' locks one at a time, and b.mu only around them.
func (b *Budget) flushStale() {
	b.mu.Lock()
	gen, ms := b.gen, *b.members.Load()
	b.mu.Unlock()
	for _, e := range ms {
		for i := range e.m.Shards() {
			s := e.m.ShardAt(i)
			s.Lock()
			e.flushPendingLocked(s)
			s.Unlock()
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.gen == gen { // no shrink since: every shard is within the quantum
		b.staleHold = 0
		b.stale.Store(false)
		b.retuneLocked()
	}
}

// admit lets a write in: while the members hold more than the bound, it
// evicts keys by the policy, from a shard of a member drawn in proportion
// to what the member holds, or returns ErrOOM if it cannot (NoEviction, or
// nothing left that the policy may evict in any shard of any member). It
// takes shard locks one at a time, so the caller must hold none.
func (b *Budget) admit() error {
	if b.stale.Load() {
		b.flushStale()
	}
	if !b.over() {
		return nil
	}
	if b.Policy() == NoEviction {
		return ErrOOM
	}
	ms := *b.members.Load()
	n := 0
	for _, e := range ms {
		n += e.m.Shards()
	}
	if n == 0 {
		return ErrOOM // only charged bytes, and no engine to evict from
	}
	start := b.pick(ms, n)
	for fruitless := 0; b.over(); {
		e, s := shardOf(ms, (start+fruitless)%n)
		if e.evictFrom(s) {
			fruitless = 0
			start = b.pick(ms, n)
			continue
		}
		if fruitless++; fruitless == n {
			return ErrOOM // no shard holds a key the policy may evict
		}
	}
	return nil
}

// pick returns the index, among the n shards of the members ms in order, of
// a random shard of a member drawn in proportion to the bytes it holds (any
// shard when none holds any).
func (b *Budget) pick(ms []*Engine, n int) int {
	var sum int64
	for _, e := range ms {
		sum += max(e.held.Load(), 0)
	}
	if len(ms) == 1 || sum <= 0 {
		return rand.IntN(n)
	}
	r, base := rand.Int64N(sum), 0
	for _, e := range ms {
		if r -= max(e.held.Load(), 0); r < 0 {
			return base + rand.IntN(e.m.Shards())
		}
		base += e.m.Shards()
	}
	return rand.IntN(n) // the members' counts moved meanwhile
}

// shardOf returns the engine and shard at index g among the shards of the
// members ms in order.
func shardOf(ms []*Engine, g int) (*Engine, *shardT) {
	for _, e := range ms {
		if g < e.m.Shards() {
			return e, e.m.ShardAt(g)
		}
		g -= e.m.Shards()
	}
	panic("engine: shard index out of range")
}
