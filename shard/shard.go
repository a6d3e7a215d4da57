// Package shard is a hash-sharded map from string keys to values, with one
// mutex per shard.
//
// A key belongs to exactly one shard, chosen by the xxhash of the key masked
// to a power-of-two shard count. Callers lock that shard and use the Locked
// accessors, so any read-modify-write of one key is a single critical section
// on one shard: that is what lets a caller such as the engine make each
// single-key operation linearizable while operations on keys in other shards
// run in parallel.
//
// Each shard also carries an Aux value of the caller's type (for example a
// timer wheel and a watcher list) guarded by the same mutex, so per-shard
// bookkeeping needs no second lock.
//
// Shards are padded so that two shards' mutexes never share a cache line
// (nor an adjacent-line prefetch pair), which keeps goroutines working on
// different shards from slowing each other down.
//
// Memory: Go maps never shrink. A shard records the peak length of its map
// and, when a deletion leaves it at or below a quarter of that peak (and the
// peak is at least ShrinkFloor), it rebuilds the map by copying the remaining
// entries into a fresh one, but only when at most MaxShrinkCopy entries
// remain, so that the copy keeps the lock hold well under a millisecond. An
// emptied shard whose peak was at least EmptyFloor simply gets a fresh map.
// The limitation: a shard that stays above MaxShrinkCopy entries after a
// large peak keeps the peak's memory until it drains further.
package shard

import (
	"math/bits"
	"runtime"
	"sync"

	"github.com/cespare/xxhash/v2"
)

const (
	// ShrinkFloor is the smallest peak length at which a shard considers
	// rebuilding its map: below it the memory a Go map keeps is too small to
	// be worth a copy.
	ShrinkFloor = 1024
	// EmptyFloor is the smallest peak length at which an emptied shard gets
	// a fresh map (no copy needed); smaller maps are kept for reuse.
	EmptyFloor = 128
	// MaxShrinkCopy is the largest number of live entries a shard copies into
	// a fresh map while holding its lock: BenchmarkShrink measures that copy,
	// well under a millisecond on an unloaded core.
	MaxShrinkCopy = 4096
	// MinShards is the smallest default shard count.
	MinShards = 16
)

// padding separates the fields of neighbouring shards by at least 128 bytes:
// two cache lines, because x86 prefetches lines in adjacent pairs.
const padding = 128

// Shard is one partition of a Map: a Go map and the caller's Aux state, both
// guarded by the shard's mutex. A Shard must not be copied. Its methods whose
// names end in Locked require the caller to hold the lock (Lock/Unlock).
type Shard[V, A any] struct {
	mu sync.Mutex
	m  map[string]V // guarded by mu
	// peak is the largest len(m) since m was last allocated; guarded by mu.
	peak int
	// Aux is the caller's per-shard state, guarded by the shard's mutex: read
	// or write it only between Lock and Unlock.
	Aux A

	_ [padding]byte
}

// Lock locks the shard.
func (s *Shard[V, A]) Lock() { s.mu.Lock() }

// Unlock unlocks the shard.
func (s *Shard[V, A]) Unlock() { s.mu.Unlock() }

// GetLocked returns the value stored under key and whether it is present.
// The caller must hold the lock.
func (s *Shard[V, A]) GetLocked(key string) (V, bool) {
	v, ok := s.m[key]
	return v, ok
}

// LoadLocked returns the value stored under key, or the zero V if key is
// absent: for pointer values, a one-result GetLocked. The caller must hold
// the lock.
func (s *Shard[V, A]) LoadLocked(key string) V {
	return s.m[key]
}

// SetLocked stores v under key, inserting or overwriting it. The caller must
// hold the lock.
func (s *Shard[V, A]) SetLocked(key string, v V) {
	s.m[key] = v
	if n := len(s.m); n > s.peak {
		s.peak = n
	}
}

// DeleteLocked removes key if present (doing nothing otherwise) and may
// rebuild the shard's map to return memory, see the package doc. The caller
// must hold the lock.
func (s *Shard[V, A]) DeleteLocked(key string) {
	delete(s.m, key)
	if len(s.m) <= s.peak/4 && (s.peak >= ShrinkFloor || len(s.m) == 0 && s.peak >= EmptyFloor) {
		s.shrinkLocked()
	}
}

// shrinkLocked replaces m with a right-sized copy when that is cheap enough.
func (s *Shard[V, A]) shrinkLocked() {
	n := len(s.m)
	switch {
	case n == 0:
		s.m = make(map[string]V)
	case n <= MaxShrinkCopy:
		m := make(map[string]V, n)
		for k, v := range s.m {
			m[k] = v
		}
		s.m = m
	default:
		return
	}
	s.peak = n
}

// LenLocked returns the number of entries in the shard. The caller must hold
// the lock.
func (s *Shard[V, A]) LenLocked() int { return len(s.m) }

// RangeLocked calls f for each entry until f returns false. f must not add
// or delete entries. The caller must hold the lock.
func (s *Shard[V, A]) RangeLocked(f func(key string, v V) bool) {
	for k, v := range s.m {
		if !f(k, v) {
			return
		}
	}
}

// Map is a hash-sharded map. It is safe for concurrent use through its shards'
// locks; it must be created by New and not copied.
type Map[V, A any] struct {
	shards []Shard[V, A]
	mask   uint64
}

// DefaultShards returns the default shard count: the next power of two at or
// above 8*GOMAXPROCS, and at least MinShards.
func DefaultShards() int {
	return roundPow2(max(8*runtime.GOMAXPROCS(0), MinShards))
}

// roundPow2 returns the smallest power of two >= n (n >= 1).
func roundPow2(n int) int {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(n-1))
}

// New returns a map with n shards rounded up to a power of two; n <= 0
// selects DefaultShards. Each shard's Aux starts as the zero A; callers
// initialise it through Shards before sharing the map.
func New[V, A any](n int) *Map[V, A] {
	if n <= 0 {
		n = DefaultShards()
	}
	n = roundPow2(n)
	m := &Map[V, A]{shards: make([]Shard[V, A], n), mask: uint64(n - 1)}
	for i := range m.shards {
		m.shards[i].m = make(map[string]V)
	}
	return m
}

// Shard returns the shard that owns key. It is safe for concurrent use.
func (m *Map[V, A]) Shard(key string) *Shard[V, A] {
	return &m.shards[xxhash.Sum64String(key)&m.mask]
}

// ShardIndex returns the index of the shard that owns key, for callers that
// lock several shards in index order to avoid deadlock.
func (m *Map[V, A]) ShardIndex(key string) int {
	return int(xxhash.Sum64String(key) & m.mask)
}

// Shards returns the number of shards, a power of two.
func (m *Map[V, A]) Shards() int { return len(m.shards) }

// ShardAt returns shard i, 0 <= i < Shards(), for callers that visit every
// shard (a reaper, a length count).
func (m *Map[V, A]) ShardAt(i int) *Shard[V, A] { return &m.shards[i] }

// Len returns the total number of entries, locking each shard in turn; it is
// safe for concurrent use but is not an atomic snapshot across shards.
func (m *Map[V, A]) Len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += len(s.m)
		s.mu.Unlock()
	}
	return n
}

// Get returns the value stored under key, locking its shard. It is safe for
// concurrent use.
func (m *Map[V, A]) Get(key string) (V, bool) {
	s := m.Shard(key)
	s.mu.Lock()
	v, ok := s.m[key]
	s.mu.Unlock()
	return v, ok
}

// Set stores v under key, locking its shard. It is safe for concurrent use.
func (m *Map[V, A]) Set(key string, v V) {
	s := m.Shard(key)
	s.mu.Lock()
	s.SetLocked(key, v)
	s.mu.Unlock()
}

// Delete removes key if present, locking its shard. It is safe for
// concurrent use.
func (m *Map[V, A]) Delete(key string) {
	s := m.Shard(key)
	s.mu.Lock()
	s.DeleteLocked(key)
	s.mu.Unlock()
}

// ClearLocked removes every entry and gives the shard a fresh, empty map.
// The caller must hold the lock.
func (s *Shard[V, A]) ClearLocked() {
	s.m = make(map[string]V)
	s.peak = 0
}
