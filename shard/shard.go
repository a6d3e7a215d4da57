// Package shard is the engine's storage: a hash-sharded table from string
// keys to entries (key, value, deadline), with one writer lock per shard and
// reads that take no lock.
//
// # Model
//
// A Map hashes each key once, with the Go runtime's seeded memory hash and
// a per-Map random seed, so no one can choose keys that collide on purpose.
// The top bits of the hash pick the shard; the rest place the key in the
// shard's table. Callers keep the hash and pass it to every call on that
// key.
//
// A shard's table is an open-addressing index in the style of Swiss tables:
// groups of eight slots, each group a control word holding a 7-bit tag per
// slot (or empty, or deleted) and eight 32-bit handles. A lookup compares a
// group's eight tags in a few word operations and only follows handles
// whose tag matches. Handles index the shard's entries, one array, so a
// lookup follows two arrays and the key's bytes, no more; a handle stays
// the name of its entry while the array grows (it is copied, by a quarter
// at a time), so a timer wheel can link entries by handle (see package
// ttl). Deleted entries go on a free list and are reused first.
//
// # Concurrency
//
// A shard's lock is a sequence word: even while no writer holds the shard,
// odd while one does; every write section advances it by two. Writers lock
// it (Lock, Unlock) and use the ...Locked methods. Readers call Peek (or
// Lookup), which takes no lock and writes nothing shared: it reads the
// sequence word, the table's arrays, the word again (so the arrays it
// follows belong together), probes and copies the entry, and reads the
// word again; if a writer was inside or intervened, the copy may be torn
// and is thrown away (valid is false), and the caller retries or locks. A
// valid Peek is a consistent snapshot of one instant, so reads are
// linearizable, and cores reading the same keys share cache lines instead
// of bouncing a lock's line between them. Peek's own memory accesses are
// invisible to the race detector (the sequence check is what makes them
// safe); the sequence word is atomic, so the race detector still sees
// every write ordered before the reads that follow a valid Peek, such as
// the bytes of a returned value.
//
// That holds on x86, whose processors keep loads in order with loads and
// stores with stores. On arm64 and other weakly ordered processors the
// check would need fences Go offers only in assembly, so there readers
// take the lock instead (LockFreeReads is false).
//
// Contended writers spin briefly and then sleep until an unlock wakes
// them (see lock.go), so that on a busy shard one writer at a time runs
// with the shard's cache lines local instead of every writer pulling them
// across cores.
//
// # Memory
//
// An entry is 40 bytes plus its strings, which are the caller's own (never
// copied); the entry array grows by a quarter when full, so it is 80-100%
// used. A shard that keeps eviction metadata (Meta) adds 8 bytes per entry
// in an array beside it. The index costs 5 bytes per slot at a load of 7/16 to 7/8. When a
// shard's live entries fall to a quarter of its capacity (and to at most
// MaxCompact), both the index and the entry store are rebuilt at the right
// size, returning memory after a mass delete or expiry; handles change then,
// which DeleteLocked reports.
package shard

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// Entry is one stored key. Exp is the caller's: the engine keeps the key's
// deadline in it; a free entry's Exp links the free list.
type Entry struct {
	Key   string
	Value string
	Exp   int64
}

// Handle names an entry of a shard; it is stable until a DeleteLocked that
// reports a compaction.
type Handle = int32

// Meta is an entry's eviction metadata, kept beside the entries only by a
// shard that keeps it (EnableMetaLocked): when the entry was last used,
// how often, and whether it may be evicted at all. Readers write Stamp and
// Freq without the lock (through MetaAt), so those are approximate: a
// write may be lost, or land on an entry reused meanwhile. Pinned is
// written only under the lock. A freed entry's Meta is reset.
type Meta struct {
	Stamp  uint32 // the shard's clock (Clock) at the entry's last use
	Freq   uint8  // an access count, the caller's to interpret
	Pinned bool   // the caller's mark: never evict
	_      [2]byte
}

const (
	groupSlots = 8

	ctrlEmpty   = 0x80
	ctrlDeleted = 0xFE
	lsb         = 0x0101010101010101
	msb         = 0x8080808080808080

	// minGroups is the smallest index: 8 groups, 64 slots.
	minGroups = 8
	// minEntries is the smallest entry array.
	minEntries = 64
	// MaxCompact is the most live entries a shard rebuilds while holding
	// its lock when it shrinks (about 100 µs of work), so a shrink never
	// stalls its shard for long; a shard that stays above it keeps its
	// capacity until it drains further.
	MaxCompact = 4096
	// MinShards is the smallest default shard count.
	MinShards = 16
)

// group is eight index slots: ctrl holds one byte per slot (empty, deleted,
// or the 7-bit tag of a full slot), h the handles of the full ones.
type group struct {
	ctrl uint64
	h    [groupSlots]Handle
}

// Table is a shard's storage and its lock: everything of a Shard but the
// caller's Aux. Its fields are guarded by its lock (Lock/Unlock) except seq,
// state and gate, which synchronize themselves (see lock.go), and groups,
// mask and entries, which writers replace only under the lock and Peek also
// reads without it (see Peek). A Table must not be copied.
type Table struct {
	// seq is even while the shard is free and odd while a writer holds it;
	// accessed atomically, except by its holder's Unlock on x86 (see
	// unlock_amd64.go). It is a plain uint64, not an
	// atomic.Uint64, so that Lock stays within the inliner's budget; align
	// (below) makes every Table (and Shard) 8-byte aligned, as 64-bit
	// atomics need on 32-bit platforms.
	seq uint64
	// state is the contention word (see lock.go), next to seq because every
	// Unlock reads it: contendedBit while unlocks must be atomic and wake
	// sleepers, plus oneSleeper for each writer asleep on gate or about to
	// be.
	state atomic.Int32

	groups  []group // the index; len a power of two
	mask    uint64  // len(groups)-1
	entries []Entry // indexed by handle
	meta    []Meta  // indexed by handle, as long as entries; nil unless kept

	live int    // full index slots
	dead int    // deleted index slots
	used Handle // entries ever handed out (entries[used:] are unused)
	free Handle // head of the free entries (-1: none)

	seed uint64 // the Map's hash seed, to rehash keys when the index is rebuilt

	calm  uint32        // unlocks in a row that found no sleeper (see lock.go)
	gate  gate          // where contended writers sleep (see lock.go)
	align atomic.Uint64 // never used: it aligns the Table (see seq)
}

// Shard is one partition of a Map: a Table and the caller's per-shard
// state. A Shard must not be copied.
type Shard[A any] struct {
	Table

	// Aux is the caller's per-shard state, guarded by the shard's lock.
	Aux A

	// padding keeps neighbouring shards' lock words two cache lines apart
	// (x86 prefetches lines in adjacent pairs), so writers of one shard do
	// not slow readers of the next.
	_ [128]byte
}

// init readies an empty shard.
func (s *Table) init(seed uint64) {
	s.seed = seed
	s.free = -1
	s.groups, s.mask = newGroups(minGroups), minGroups-1
	s.entries = make([]Entry, minEntries)
}

func newGroups(n int) []group {
	g := make([]group, n)
	for i := range g {
		g[i].ctrl = lsb * ctrlEmpty
	}
	return g
}

// matchTag returns a word with the high bit set in each byte of ctrl equal
// to tag (and, rarely, in a byte just above one: callers compare keys).
func matchTag(ctrl uint64, tag uint8) uint64 {
	x := ctrl ^ (lsb * uint64(tag))
	return (x - lsb) &^ x & msb
}

// matchEmpty returns the empty bytes of ctrl (0x80: high bit set, bit 1
// clear; deleted is 0xFE).
func matchEmpty(ctrl uint64) uint64 { return ctrl &^ (ctrl << 6) & msb }

// matchFree returns the empty and deleted bytes of ctrl.
func matchFree(ctrl uint64) uint64 { return ctrl & msb }

// tagOf and groupOf split a hash: the low 7 bits are the tag, the bits
// above them pick the first group; the Map's shard choice uses the top bits.
func tagOf(h uint64) uint8                 { return uint8(h & 0x7f) }
func groupOf(h uint64, mask uint64) uint64 { return (h >> 7) & mask }

// EmptyBytes is what a table's index and entry array hold however few
// entries it stores (its first, smallest ones), with each entry's Meta if
// meta is set: the memory a shard costs whatever it holds, beside its own
// struct.
func EmptyBytes(meta bool) int64 {
	n := int64(minGroups*unsafe.Sizeof(group{}) + minEntries*unsafe.Sizeof(Entry{}))
	if meta {
		n += int64(minEntries * unsafe.Sizeof(Meta{}))
	}
	return n
}

// EnableMetaLocked makes the shard keep a Meta per entry from now on
// (zero for the entries it holds). The caller must hold the lock.
func (s *Table) EnableMetaLocked() {
	if s.meta == nil {
		s.meta = make([]Meta, len(s.entries))
	}
}

// MetaLocked returns the Meta of entry hd, or nil if the shard keeps none.
// The pointer stays valid as EntryLocked's does. The caller must hold the
// lock.
func (s *Table) MetaLocked(hd Handle) *Meta {
	if s.meta == nil {
		return nil
	}
	return &s.meta[hd]
}

// KeptMetaLocked is MetaLocked for a shard known to keep Meta (since
// EnableMetaLocked), without the check: a write of a bounded engine takes
// it on its hot path. The caller must hold the lock.
func (s *Table) KeptMetaLocked(hd Handle) *Meta { return &s.meta[hd] }

// MetaAt returns the Meta of entry hd for a reader that found hd at
// version v, without the lock; nil if the shard keeps none or changed
// since v. The reader may then write Stamp and Freq through it, racily:
// the entry may have been freed or reused meanwhile (the write is then
// misplaced, harmlessly), and a write after the shard grew lands in the
// old array and is lost. Its accesses, like Lookup's, are invisible to the
// race detector.
//
//go:norace
func (s *Table) MetaAt(v uint64, hd Handle) *Meta {
	m := s.meta
	if m == nil || atomic.LoadUint64(&s.seq) != v || uint32(hd) >= uint32(len(m)) {
		return nil
	}
	return &m[hd]
}

// Stamp sets the Stamp of entry hd to Clock(v) for a reader that found hd
// at version v, without the lock, as a write through MetaAt would, unless
// it holds that already (so a hot entry's line is written once per write
// section of the shard). It does nothing if the shard keeps no Meta or
// changed since v.
//
//go:norace
func (s *Table) Stamp(v uint64, hd Handle) {
	m := s.meta
	if m == nil || atomic.LoadUint64(&s.seq) != v || uint32(hd) >= uint32(len(m)) {
		return
	}
	if now := Clock(v); m[hd].Stamp != now {
		m[hd].Stamp = now
	}
}

// Clock returns the shard's clock at version v: the number of write
// sections completed before it. It only grows (wrapping at 2^32), so it
// orders the uses of the shard's entries that a write separates.
func Clock(v uint64) uint32 { return uint32(v >> 1) }

// ClockLocked is Clock for the holder of the lock: the sections completed
// before the current one. The caller must hold the lock.
func (s *Table) ClockLocked() uint32 { return Clock(atomic.LoadUint64(&s.seq)) }

// SampleLocked calls f with up to n stored entries, with their index
// position and Meta (nil if the shard keeps none), visiting the index from
// position start (taken modulo its size) onwards and wrapping around, until
// f returns false; it visits each entry at most once, and all of them if n
// is at least LenLocked. f must not insert or delete. The caller must hold
// the lock.
func (s *Table) SampleLocked(start uint64, n int, f func(hd Handle, pos int, e *Entry, m *Meta) bool) {
	slots := uint64(len(s.groups)) * groupSlots
	pos := start % slots
	for range slots {
		if n <= 0 {
			return
		}
		gr := &s.groups[pos/groupSlots]
		if gr.ctrl>>(uint(pos%groupSlots)*8)&0x80 == 0 {
			hd := gr.h[pos%groupSlots]
			n--
			if !f(hd, int(pos), &s.entries[hd], s.MetaLocked(hd)) {
				return
			}
		}
		if pos++; pos == slots {
			pos = 0
		}
	}
}

// ReadVersion starts an optimistic read: it returns the shard's version,
// and ok false while a writer holds the shard, or always where the
// processor does not support lock-free reads (LockFreeReads). Pass the
// version to Peek, Lookup, Unchanged and Upgrade. It is safe for concurrent
// use.
func (s *Table) ReadVersion() (v uint64, ok bool) {
	v = atomic.LoadUint64(&s.seq)
	return v, LockFreeReads && v&1 == 0
}

// Unchanged reports whether no writer has locked the shard since
// ReadVersion returned v: everything read since is one consistent snapshot.
func (s *Table) Unchanged(v uint64) bool { return atomic.LoadUint64(&s.seq) == v }

// Upgrade locks the shard for writing if it is unchanged since version v,
// so that what a reader saw still holds once it writes; it reports whether
// it did. On false the shard is not locked. An odd v (a version taken
// while a writer held the shard) never upgrades.
func (s *Table) Upgrade(v uint64) bool {
	return v&1 == 0 && atomic.CompareAndSwapUint64(&s.seq, v, v+1)
}

// Probe is what a lookup found: the key's entry and where it is filed, or
// where the key would be filed.
type Probe struct {
	Value string // the entry's value, when Found
	Exp   int64  // the entry's Exp when Found; NoExp otherwise
	Hd    Handle // the entry's handle, when Found
	// Pos is the key's index position when Found; otherwise the first free
	// position of its probe sequence, where InsertAtLocked files it, or -1
	// if unknown.
	Pos   int32
	Found bool
}

// NoExp is the Exp a Probe reports for a key it did not find,
// math.MinInt64: the engine's "no deadline".
const NoExp = math.MinInt64

// Peek looks key up without locking, at version v from ReadVersion, and
// fills p with what it found; valid is false if a writer changed the shard
// since v, and then p means nothing (retry, or lock). After a valid Peek,
// Upgrade(v) locks the shard with p still true, so a writer can act on it
// without looking again. Expired entries are reported like any other:
// deadlines are the caller's. It is safe for concurrent use with
// everything, and writes nothing shared. Lookup is the same returning its
// findings.
func (s *Table) Peek(v, h uint64, key string, p *Probe) (valid bool) {
	p.Value, p.Exp, p.Hd, p.Pos, p.Found, valid = s.Lookup(v, h, key)
	return valid
}

// Lookup is Peek returning what it finds in registers rather than in a
// Probe: key's value, Exp and handle, its index position when found,
// otherwise the free position a Probe reports, and whether it is stored, at
// version v; valid is false if a writer changed the shard since v, and then
// the rest means nothing. It is safe for concurrent use with everything,
// and writes nothing shared.
//
// It reads the table's arrays and mask, which writers replace, without the
// lock: they belong together only if no writer ran while they were read,
// so they are checked before they are followed. A writer that replaces
// them later leaves these intact (the collector keeps them), only stale,
// and the checks of the sequence word catch it. Its own memory accesses
// are invisible to the race detector, as the package doc explains.
//
//go:norace
func (s *Table) Lookup(v, h uint64, key string) (value string, exp int64, hd Handle, pos int32, found, valid bool) {
	groups, mask, entries := s.groups, s.mask, s.entries
	if atomic.LoadUint64(&s.seq) != v || uint64(len(groups)) != mask+1 {
		return "", 0, 0, 0, false, false
	}
	tag := tagOf(h)
	g := groupOf(h, mask)
	free := int32(-1)
	for step := uint64(1); ; step++ {
		gr := &groups[g]
		ctrl := gr.ctrl
		for m := matchTag(ctrl, tag); m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m) >> 3
			hd := uint32(gr.h[i])
			if hd >= uint32(len(entries)) {
				return "", 0, 0, 0, false, false // a stale or torn slot
			}
			e := &entries[hd]
			k, val, x := e.Key, e.Value, e.Exp
			if atomic.LoadUint64(&s.seq) != v {
				return "", 0, 0, 0, false, false
			}
			// The copy is consistent: its key's bytes never change.
			if sameString(k, key) {
				return val, x, Handle(hd), int32(int(g)*groupSlots + i), true, true
			}
		}
		if free < 0 {
			if m := matchFree(ctrl); m != 0 {
				free = int32(int(g)*groupSlots + bits.TrailingZeros64(m)>>3)
			}
		}
		if matchEmpty(ctrl) != 0 || step > mask {
			return "", NoExp, 0, free, false, atomic.LoadUint64(&s.seq) == v
		}
		g = (g + step) & mask
	}
}

// sameString is a == b, deciding without a call when both share their bytes
// (a caller passing the string it stored), as Go's own maps do.
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// ProbeLocked is Peek under the lock: it fills p. The caller must hold the
// lock.
func (s *Table) ProbeLocked(h uint64, key string, p *Probe) {
	tag := tagOf(h)
	g := groupOf(h, s.mask)
	free := int32(-1)
	for step := uint64(1); ; step++ {
		gr := &s.groups[g]
		for m := matchTag(gr.ctrl, tag); m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m) >> 3
			hd := gr.h[i]
			if e := &s.entries[hd]; sameString(e.Key, key) {
				p.Value, p.Exp, p.Hd, p.Pos, p.Found = e.Value, e.Exp, hd, int32(int(g)*groupSlots+i), true
				return
			}
		}
		if free < 0 {
			if m := matchFree(gr.ctrl); m != 0 {
				free = int32(int(g)*groupSlots + bits.TrailingZeros64(m)>>3)
			}
		}
		if matchEmpty(gr.ctrl) != 0 || step > s.mask {
			p.Value, p.Exp, p.Hd, p.Pos, p.Found = "", NoExp, 0, free, false
			return
		}
		g = (g + step) & s.mask
	}
}

// SwapValueLocked stores value in key's entry if key is stored, and
// returns the entry's handle, its previous value and its Exp (unchanged)
// with found true; otherwise it stores nothing and returns, as pos, the
// free position a Probe would (see Probe.Pos). It is ProbeLocked and an
// overwrite in one pass, for the commonest writes. The caller must hold
// the lock. (Its loop is ProbeLocked's; sharing one function between them
// cost a tenth of a Set, in the call and a second access to the entry.)
func (s *Table) SwapValueLocked(h uint64, key, value string) (hd Handle, old string, exp int64, pos int32, found bool) {
	tag := tagOf(h)
	g := groupOf(h, s.mask)
	free := int32(-1)
	for step := uint64(1); ; step++ {
		gr := &s.groups[g]
		for m := matchTag(gr.ctrl, tag); m != 0; m &= m - 1 {
			hd := gr.h[bits.TrailingZeros64(m)>>3]
			if e := &s.entries[hd]; sameString(e.Key, key) {
				old := e.Value
				e.Value = value
				return hd, old, e.Exp, 0, true
			}
		}
		if free < 0 {
			if m := matchFree(gr.ctrl); m != 0 {
				free = int32(int(g)*groupSlots + bits.TrailingZeros64(m)>>3)
			}
		}
		if matchEmpty(gr.ctrl) != 0 || step > s.mask {
			return 0, "", NoExp, free, false
		}
		g = (g + step) & s.mask
	}
}

// FindLocked returns the handle of key's entry and its index position, or
// ok false. The caller must hold the lock.
func (s *Table) FindLocked(h uint64, key string) (hd Handle, pos int, ok bool) {
	var p Probe
	s.ProbeLocked(h, key, &p)
	return p.Hd, int(p.Pos), p.Found
}

// EntryLocked returns the entry hd names. The pointer stays valid until the
// lock is released or the shard inserts (which may move the array) or
// compacts. The caller must hold the lock.
func (s *Table) EntryLocked(hd Handle) *Entry { return &s.entries[hd] }

// InsertLocked stores a new entry for key, which must not be stored, and
// returns its handle. It may grow the index or the entry array (handles
// stay valid). The caller must hold the lock.
func (s *Table) InsertLocked(h uint64, key, value string, exp int64) Handle {
	return s.InsertAtLocked(-1, h, key, value, exp)
}

// InsertAtLocked is InsertLocked given the free position a Probe of key
// under the current lock hold returned (or -1), which spares a second probe.
// The caller must hold the lock.
func (s *Table) InsertAtLocked(pos int32, h uint64, key, value string, exp int64) Handle {
	hd := s.allocLocked()
	e := &s.entries[hd]
	e.Key, e.Value, e.Exp = key, value, exp
	if (s.live+s.dead+1)*8 > len(s.groups)*groupSlots*7 {
		s.rehashLocked(s.live + 1)
		pos = -1
	}
	if pos >= 0 {
		s.fileLocked(s.groups, int(pos), h, hd)
	} else {
		s.placeLocked(s.groups, s.mask, h, hd)
	}
	s.live++
	return hd
}

// fileLocked files hd at free index position pos of groups.
func (s *Table) fileLocked(groups []group, pos int, h uint64, hd Handle) {
	gr := &groups[pos/groupSlots]
	shift := uint(pos%groupSlots) * 8
	if byte(gr.ctrl>>shift) == ctrlDeleted {
		s.dead--
	}
	gr.h[pos%groupSlots] = hd
	gr.ctrl = gr.ctrl&^(0xff<<shift) | uint64(tagOf(h))<<shift
}

// placeLocked files hd in the first free slot of h's probe sequence.
func (s *Table) placeLocked(groups []group, mask, h uint64, hd Handle) {
	g := groupOf(h, mask)
	for step := uint64(1); ; step++ {
		gr := &groups[g]
		if m := matchFree(gr.ctrl); m != 0 {
			s.fileLocked(groups, int(g)*groupSlots+bits.TrailingZeros64(m)>>3, h, hd)
			return
		}
		g = (g + step) & mask
	}
}

// allocLocked hands out a free entry, growing the array by a quarter when
// it is full: the copy happens once per a quarter's worth of inserts, and
// the array stays at least 80% used.
func (s *Table) allocLocked() Handle {
	if hd := s.free; hd >= 0 {
		s.free = Handle(s.entries[hd].Exp)
		return hd
	}
	if int(s.used) == len(s.entries) {
		n := len(s.entries)
		entries := make([]Entry, n+max(n/4, minEntries))
		copy(entries, s.entries)
		if s.meta != nil {
			meta := make([]Meta, len(entries))
			copy(meta, s.meta)
			s.meta = meta
		}
		s.entries = entries
	}
	hd := s.used
	s.used++
	return hd
}

// DeleteLocked removes the entry hd at index position pos (from
// FindLocked) and frees it. It reports whether it then compacted the shard:
// every handle may have changed. The caller must hold the lock.
func (s *Table) DeleteLocked(hd Handle, pos int) (compacted bool) {
	gr := &s.groups[pos/groupSlots]
	shift := uint(pos%groupSlots) * 8
	// A slot may go back to empty if its group has an empty slot: no probe
	// sequence can have passed this group looking for a key beyond it.
	mark := uint64(ctrlDeleted)
	if matchEmpty(gr.ctrl) != 0 {
		mark = ctrlEmpty
	} else {
		s.dead++
	}
	gr.ctrl = gr.ctrl&^(0xff<<shift) | mark<<shift
	s.live--
	s.entries[hd] = Entry{Exp: int64(s.free)}
	if s.meta != nil {
		s.meta[hd] = Meta{}
	}
	s.free = hd
	if s.live*4 <= int(s.used) && s.live <= MaxCompact && len(s.entries) > minEntries {
		s.compactLocked()
		return true
	}
	return false
}

// rehashLocked rebuilds the index for n live entries: twice as large when
// they would fill more than half of it, otherwise the same size without
// deleted slots. Growth happens at a load of 7/8, so a grown index starts
// just under half full.
func (s *Table) rehashLocked(n int) {
	groups := len(s.groups)
	for n*2 > groups*groupSlots {
		groups *= 2
	}
	s.reindexLocked(groups)
}

// reindexLocked builds an index of the given size over the entries, filing
// every live entry, and publishes it.
func (s *Table) reindexLocked(n int) {
	groups, mask := newGroups(n), uint64(n-1)
	for gi := range s.groups {
		gr := &s.groups[gi]
		for i := range groupSlots {
			if gr.ctrl>>(uint(i)*8)&0x80 != 0 {
				continue // empty or deleted
			}
			hd := gr.h[i]
			s.placeLocked(groups, mask, hashString(s.seed, s.entries[hd].Key), hd)
		}
	}
	s.dead = 0
	s.groups, s.mask = groups, mask
}

// compactLocked is what DeleteLocked does when the shard has shrunk: it
// moves the live entries into an array of the right size, numbering them
// 0..Len-1 in index order, and rebuilds the index. Every handle changes; a
// caller that keeps handles (a timer wheel) rebuilds from RangeLocked.
func (s *Table) compactLocked() {
	entries := make([]Entry, max(s.live+s.live/4, minEntries))
	var meta []Meta
	if s.meta != nil {
		meta = make([]Meta, len(entries))
	}
	n := minGroups
	for s.live*2 > n*groupSlots {
		n *= 2
	}
	groups, mask := newGroups(n), uint64(n-1)
	next := Handle(0)
	for gi := range s.groups {
		gr := &s.groups[gi]
		for i := range groupSlots {
			if gr.ctrl>>(uint(i)*8)&0x80 != 0 {
				continue
			}
			entries[next] = s.entries[gr.h[i]]
			if meta != nil {
				meta[next] = s.meta[gr.h[i]]
			}
			s.placeLocked(groups, mask, hashString(s.seed, entries[next].Key), next)
			next++
		}
	}
	s.used, s.free, s.dead = next, -1, 0
	s.groups, s.mask, s.entries, s.meta = groups, mask, entries, meta
}

// LenLocked returns the number of stored entries. The caller must hold the
// lock.
func (s *Table) LenLocked() int { return s.live }

// RangeLocked calls f with the handle and entry of every stored entry
// until f returns false. f must not insert or delete. The caller must hold
// the lock.
func (s *Table) RangeLocked(f func(hd Handle, e *Entry) bool) {
	for gi := range s.groups {
		gr := &s.groups[gi]
		for i := range groupSlots {
			if gr.ctrl>>(uint(i)*8)&0x80 != 0 {
				continue
			}
			hd := gr.h[i]
			if !f(hd, &s.entries[hd]) {
				return
			}
		}
	}
}

// ClearLocked removes every entry and returns the shard to its initial
// size; every handle becomes invalid. The caller must hold the lock.
func (s *Table) ClearLocked() {
	s.live, s.dead, s.used, s.free = 0, 0, 0, -1
	s.groups, s.mask = newGroups(minGroups), minGroups-1
	s.entries = make([]Entry, minEntries)
	if s.meta != nil {
		s.meta = make([]Meta, minEntries)
	}
}

// Map is a hash-sharded table. It is safe for concurrent use through its
// shards' locks and Peek; it must be created by New and not copied.
type Map[A any] struct {
	seed   uint64
	shards []Shard[A]
	shift  uint // 64 - log2(len(shards))
}

// DefaultShards returns the default shard count: the next power of two at
// or above 8*GOMAXPROCS, and at least MinShards.
func DefaultShards() int { return roundPow2(max(8*runtime.GOMAXPROCS(0), MinShards)) }

func roundPow2(n int) int {
	if n <= 1 {
		return 1
	}
	return 1 << bits.Len(uint(n-1))
}

// New returns a Map with n shards rounded up to a power of two; n <= 0
// selects DefaultShards.
func New[A any](n int) *Map[A] {
	if n <= 0 {
		n = DefaultShards()
	}
	n = roundPow2(n)
	m := &Map[A]{seed: newSeed(), shards: make([]Shard[A], n)}
	m.shift = uint(64 - bits.TrailingZeros(uint(n)))
	for i := range m.shards {
		m.shards[i].init(m.seed)
	}
	return m
}

// Hash returns key's hash, which every call about key takes. It is safe
// for concurrent use.
func (m *Map[A]) Hash(key string) uint64 { return hashString(m.seed, key) }

// Shard returns the shard of a key with hash h, and its index.
func (m *Map[A]) Shard(h uint64) (*Shard[A], int) {
	i := int(h >> m.shift & uint64(len(m.shards)-1))
	return &m.shards[i], i
}

// Shards returns the number of shards, a power of two.
func (m *Map[A]) Shards() int { return len(m.shards) }

// ShardAt returns shard i, 0 <= i < Shards(), for callers that visit every
// shard.
func (m *Map[A]) ShardAt(i int) *Shard[A] { return &m.shards[i] }

// Len returns the total number of entries, locking each shard in turn; it
// is not an atomic snapshot.
func (m *Map[A]) Len() int {
	n := 0
	for i := range m.shards {
		s := &m.shards[i]
		s.Lock()
		n += s.live
		s.Unlock()
	}
	return n
}

// VerifyLocked checks the shard's invariants and returns the first
// violation: the counts match the control bytes, every full slot's handle
// names an entry in use that hashes to a probe sequence passing through
// that slot's group, handles are distinct, and the free list holds exactly
// the other handed-out entries. It is O(capacity), for tests. The caller
// must hold the lock.
func (s *Table) VerifyLocked() error {
	if len(s.groups) == 0 || uint64(len(s.groups)-1) != s.mask || len(s.groups)&(len(s.groups)-1) != 0 {
		return fmt.Errorf("shard: index of %d groups with mask %d", len(s.groups), s.mask)
	}
	if int(s.used) > len(s.entries) {
		return fmt.Errorf("shard: %d entries handed out, capacity %d", s.used, len(s.entries))
	}
	if s.meta != nil && len(s.meta) != len(s.entries) {
		return fmt.Errorf("shard: %d metadata for %d entries", len(s.meta), len(s.entries))
	}
	inUse := make(map[Handle]bool)
	live, dead := 0, 0
	for gi := range s.groups {
		gr := &s.groups[gi]
		for i := range groupSlots {
			switch c := byte(gr.ctrl >> (uint(i) * 8)); {
			case c == ctrlEmpty:
			case c == ctrlDeleted:
				dead++
			case c&0x80 != 0:
				return fmt.Errorf("shard: group %d slot %d: bad control byte %#x", gi, i, c)
			default:
				live++
				hd := gr.h[i]
				if hd < 0 || hd >= s.used || inUse[hd] {
					return fmt.Errorf("shard: group %d slot %d: handle %d out of range or filed twice", gi, i, hd)
				}
				inUse[hd] = true
				e := s.EntryLocked(hd)
				h := hashString(s.seed, e.Key)
				if tagOf(h) != c {
					return fmt.Errorf("shard: key %q filed with tag %#x, its hash gives %#x", e.Key, c, tagOf(h))
				}
				if got, _, ok := s.FindLocked(h, e.Key); !ok || got != hd {
					return fmt.Errorf("shard: key %q (handle %d) not found by its own hash", e.Key, hd)
				}
			}
		}
	}
	if live != s.live || dead != s.dead {
		return fmt.Errorf("shard: %d full and %d deleted slots, counts say %d and %d", live, dead, s.live, s.dead)
	}
	if (live+dead)*8 > len(s.groups)*groupSlots*7 && live+dead > 0 {
		return fmt.Errorf("shard: %d full or deleted slots of %d: over the 7/8 load", live+dead, len(s.groups)*groupSlots)
	}
	free := 0
	for hd := s.free; hd >= 0; hd = Handle(s.EntryLocked(hd).Exp) {
		if hd >= s.used || inUse[hd] {
			return fmt.Errorf("shard: free handle %d out of range, in use or on the list twice", hd)
		}
		if e := s.EntryLocked(hd); e.Key != "" || e.Value != "" {
			return fmt.Errorf("shard: free handle %d still holds %q", hd, e.Key)
		}
		inUse[hd] = true
		free++
	}
	if live+free != int(s.used) {
		return fmt.Errorf("shard: %d live and %d free entries, %d handed out", live, free, s.used)
	}
	return nil
}
