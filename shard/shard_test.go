package shard

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

func TestShardCount(t *testing.T) {
	tests := []struct{ in, want int }{{1, 1}, {2, 2}, {3, 4}, {16, 16}, {17, 32}, {1000, 1024}}
	for _, tt := range tests {
		if got := New[struct{}](tt.in).Shards(); got != tt.want {
			t.Errorf("New(%d).Shards() = %d, want %d", tt.in, got, tt.want)
		}
	}
	want := max(MinShards, roundPow2(8*runtime.GOMAXPROCS(0)))
	if got := New[struct{}](0).Shards(); got != want {
		t.Errorf("New(0).Shards() = %d, want %d", got, want)
	}
}

// shardOf returns key's hash and shard.
func shardOf[A any](m *Map[A], key string) (*Shard[A], uint64) {
	h := m.Hash(key)
	s, _ := m.Shard(h)
	return s, h
}

// put stores key=value in m, inserting or overwriting. It reads without the
// lock and upgrades, acting on the Probe as the engine does; if the shard
// changed meanwhile it locks and probes again.
func put[A any](m *Map[A], key, value string) {
	s, h := shardOf(m, key)
	var p Probe
	if v, ok := s.ReadVersion(); ok {
		if !s.Peek(v, h, key, &p) || !s.Upgrade(v) {
			s.Lock()
			s.ProbeLocked(h, key, &p)
		}
	} else {
		s.Lock()
		s.ProbeLocked(h, key, &p)
	}
	defer s.Unlock()
	if p.Found {
		s.EntryLocked(p.Hd).Value = value
		return
	}
	s.InsertAtLocked(p.Pos, h, key, value, 0)
}

// del deletes key from m and reports whether it was stored.
func del[A any](m *Map[A], key string) bool {
	s, h := shardOf(m, key)
	s.Lock()
	defer s.Unlock()
	hd, pos, ok := s.FindLocked(h, key)
	if ok {
		s.DeleteLocked(hd, pos)
	}
	return ok
}

// TestProbeFreePosition: a Probe of an absent key names a free slot of its
// probe sequence, preferring a deleted one met first, and inserting there
// keeps the table consistent.
func TestProbeFreePosition(t *testing.T) {
	m := New[struct{}](1)
	s := m.ShardAt(0)
	for i := range 40 {
		put(m, "k"+strconv.Itoa(i), "v")
	}
	for i := 0; i < 40; i += 3 {
		del(m, "k"+strconv.Itoa(i))
	}
	for i := range 200 {
		k := "n" + strconv.Itoa(i)
		h := m.Hash(k)
		s.Lock()
		var p Probe
		s.ProbeLocked(h, k, &p)
		if p.Found || p.Pos < 0 || p.Exp != NoExp {
			s.Unlock()
			t.Fatalf("ProbeLocked(%q) = %+v, want not found with a free position", k, p)
		}
		if c := byte(s.groups[p.Pos/groupSlots].ctrl >> (uint(p.Pos%groupSlots) * 8)); c&0x80 == 0 {
			s.Unlock()
			t.Fatalf("ProbeLocked(%q).Pos = %d holds a full slot", k, p.Pos)
		}
		s.InsertAtLocked(p.Pos, h, k, "w", 0)
		err := s.VerifyLocked()
		s.Unlock()
		if err != nil {
			t.Fatalf("after inserting %q at %d: %v", k, p.Pos, err)
		}
	}
}

// peek reads key without locking, retrying torn reads: through Peek, or
// through Lookup if lookup is set. Where reads are not lock-free it locks.
func peek[A any](m *Map[A], key string, lookup bool) (Entry, bool) {
	s, h := shardOf(m, key)
	if !LockFreeReads {
		s.Lock()
		defer s.Unlock()
		var p Probe
		s.ProbeLocked(h, key, &p)
		return Entry{Key: key, Value: p.Value, Exp: p.Exp}, p.Found
	}
	for {
		v, ok := s.ReadVersion()
		if !ok {
			runtime.Gosched()
			continue
		}
		if lookup {
			if value, exp, _, _, found, valid := s.Lookup(v, h, key); valid {
				return Entry{Key: key, Value: value, Exp: exp}, found
			}
			continue
		}
		var p Probe
		if s.Peek(v, h, key, &p) {
			if p.Found {
				return Entry{Key: key, Value: p.Value, Exp: p.Exp}, true
			}
			return Entry{}, false
		}
	}
}

// tb is what verifyAll needs of *testing.T and *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

func verifyAll[A any](t tb, m *Map[A]) {
	t.Helper()
	for i := range m.Shards() {
		s := m.ShardAt(i)
		s.Lock()
		err := s.VerifyLocked()
		s.Unlock()
		if err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
	}
}

// TestModel drives one small Map (so that shards grow, shrink, fill with
// deleted slots and compact) with random inserts, overwrites and deletes
// over a key space, checking every read against a plain map and the
// shard's invariants after every step.
func TestModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := New[struct{}](2)
		model := map[string]string{}
		nkeys := rapid.IntRange(1, 3000).Draw(t, "keys")
		key := func() string { return "k" + strconv.Itoa(rapid.IntRange(0, nkeys-1).Draw(t, "key")) }
		for step := rapid.IntRange(1, 400).Draw(t, "steps"); step > 0; step-- {
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0, 1: // write a run of keys: grows the shards
				for n := rapid.IntRange(1, 200).Draw(t, "run"); n > 0; n-- {
					k := key()
					v := k + ":" + strconv.Itoa(step)
					put(m, k, v)
					model[k] = v
				}
			case 2: // delete a run of keys: shrinks and compacts
				for n := rapid.IntRange(1, 400).Draw(t, "run"); n > 0; n-- {
					k := key()
					_, want := model[k]
					if got := del(m, k); got != want {
						t.Fatalf("delete(%q) = %v, want %v", k, got, want)
					}
					delete(model, k)
				}
			case 3: // read through Peek, Lookup and FindLocked
				k := key()
				want, wok := model[k]
				if e, ok := peek(m, k, false); ok != wok || e.Value != want {
					t.Fatalf("Peek(%q) = %q, %v, want %q, %v", k, e.Value, ok, want, wok)
				}
				if e, ok := peek(m, k, true); ok != wok || e.Value != want {
					t.Fatalf("Lookup(%q) = %q, %v, want %q, %v", k, e.Value, ok, want, wok)
				}
				s, h := shardOf(m, k)
				s.Lock()
				hd, _, ok := s.FindLocked(h, k)
				if ok != wok || ok && s.EntryLocked(hd).Value != want {
					s.Unlock()
					t.Fatalf("FindLocked(%q) = %v, want %v", k, ok, wok)
				}
				s.Unlock()
			case 5: // overwrite or insert through SwapValueLocked
				k := key()
				v := k + ":swap" + strconv.Itoa(step)
				want, wok := model[k]
				s, h := shardOf(m, k)
				s.Lock()
				_, old, _, pos, found := s.SwapValueLocked(h, k, v)
				if !found {
					s.InsertAtLocked(pos, h, k, v, 0)
				}
				s.Unlock()
				if found != wok || old != want {
					t.Fatalf("SwapValueLocked(%q) = %q, %v, want %q, %v", k, old, found, want, wok)
				}
				model[k] = v
			case 4: // everything at once
				if n := m.Len(); n != len(model) {
					t.Fatalf("Len() = %d, want %d", n, len(model))
				}
				seen := 0
				for i := range m.Shards() {
					s := m.ShardAt(i)
					s.Lock()
					s.RangeLocked(func(hd Handle, e *Entry) bool {
						if model[e.Key] != e.Value {
							t.Fatalf("RangeLocked: %q = %q, want %q", e.Key, e.Value, model[e.Key])
						}
						seen++
						return true
					})
					s.Unlock()
				}
				if seen != len(model) {
					t.Fatalf("RangeLocked saw %d entries, want %d", seen, len(model))
				}
			}
			verifyAll(t, m)
		}
	})
}

// TestVerifyCatchesCorruption: the invariant checker can fail.
func TestVerifyCatchesCorruption(t *testing.T) {
	tests := []struct {
		name    string
		corrupt func(s *Table, hd Handle, pos int)
	}{
		{"LiveCount", func(s *Table, hd Handle, pos int) { s.live++ }},
		{"WrongTag", func(s *Table, hd Handle, pos int) {
			gr := &s.groups[pos/groupSlots]
			shift := uint(pos%groupSlots) * 8
			gr.ctrl ^= 1 << shift
		}},
		{"RenamedKey", func(s *Table, hd Handle, pos int) { s.EntryLocked(hd).Key = "other" }},
		{"HandleTwice", func(s *Table, hd Handle, pos int) {
			h := hashOf(s, "twin")
			s.InsertLocked(h, "twin", "v", 0)
			_, tpos, _ := s.FindLocked(h, "twin")
			s.groups[tpos/groupSlots].h[tpos%groupSlots] = hd
		}},
		{"FreeListCycle", func(s *Table, hd Handle, pos int) {
			s.DeleteLocked(hd, pos)
			s.EntryLocked(hd).Exp = int64(hd)
		}},
		{"DirtyFreeEntry", func(s *Table, hd Handle, pos int) {
			s.DeleteLocked(hd, pos)
			s.EntryLocked(hd).Key = "ghost"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New[struct{}](1)
			for i := range 100 {
				put(m, "k"+strconv.Itoa(i), "v")
			}
			verifyAll(t, m)
			s, h := shardOf(m, "k7")
			s.Lock()
			hd, pos, _ := s.FindLocked(h, "k7")
			tt.corrupt(&s.Table, hd, pos)
			err := s.VerifyLocked()
			s.Unlock()
			if err == nil {
				t.Fatalf("VerifyLocked after %s = nil, want an error", tt.name)
			}
			t.Logf("caught: %v", err)
		})
	}
}

func hashOf(s *Table, key string) uint64 { return hashString(s.seed, key) }

// TestHash checks what the tables rely on: equal keys hash equal (also when
// their bytes live in different places), the seed changes the hash, and
// the bits the tables use spread keys that differ in one byte.
func TestHash(t *testing.T) {
	a, b := New[struct{}](16), New[struct{}](16)
	k1 := "lock:invoice:42"
	k2 := string([]byte(k1)) // another copy of the bytes
	if a.Hash(k1) != a.Hash(k2) {
		t.Fatal("Hash of equal keys differs")
	}
	if a.Hash(k1) == b.Hash(k1) {
		t.Fatal("two Maps (two seeds) hash a key alike")
	}
	if a.Hash("") == a.Hash("\x00") {
		t.Fatal(`Hash("") == Hash("\x00")`)
	}
	tags, shards := map[uint8]bool{}, map[int]bool{}
	for i := range 4096 {
		h := a.Hash("key:" + strconv.Itoa(i))
		tags[tagOf(h)] = true
		_, si := a.Shard(h)
		shards[si] = true
	}
	if len(tags) < 120 || len(shards) < 16 {
		t.Fatalf("4096 keys used %d of 128 tags and %d of 16 shards", len(tags), len(shards))
	}
}

// TestCompactReturnsMemory: a shard that drains to a quarter of its
// capacity rebuilds at the right size, and renumbered handles still name
// their keys.
func TestCompactReturnsMemory(t *testing.T) {
	m := New[struct{}](1)
	const n = 4000
	for i := range n {
		put(m, "k"+strconv.Itoa(i), "v"+strconv.Itoa(i))
	}
	s := m.ShardAt(0)
	capBefore := len(s.entries)
	for i := range n - 100 {
		del(m, "k"+strconv.Itoa(i))
	}
	verifyAll(t, m)
	if got := len(s.entries); got > 4*100 {
		t.Fatalf("capacity after draining %d of %d keys = %d entries (was %d), want <= 400", n-100, n, got, capBefore)
	}
	// A shard compacts at a quarter of its capacity, so 100 keys may sit in
	// an index sized for up to 400.
	if got := len(s.groups) * groupSlots; got > 16*100 {
		t.Fatalf("index after draining to 100 keys = %d slots, want <= 1600", got)
	}
	for i := n - 100; i < n; i++ {
		k := "k" + strconv.Itoa(i)
		if e, ok := peek(m, k, false); !ok || e.Value != "v"+strconv.Itoa(i) {
			t.Fatalf("Peek(%q) after compaction = %q, %v", k, e.Value, ok)
		}
	}
}

// TestPeekNeverTorn races writers that overwrite, delete, re-insert and
// compact with lock-free readers (Peek and Lookup). Every value is key +
// "=" + a counter, so a reader that returned a value stitched from two
// writes, or another key's value, is caught. It runs under -race (Peek
// itself is invisible to the race detector; the bytes a reader then reads
// are not) and without it, where on x86 writers unlock with a plain store.
func TestPeekNeverTorn(t *testing.T) {
	m := New[struct{}](2)
	const keys = 300
	var stop atomic.Bool
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				k := "key-" + strconv.Itoa((i*7+w)%keys)
				switch i % 5 {
				case 0, 1, 2:
					put(m, k, k+"="+strings.Repeat("x", i%40)+strconv.Itoa(i))
				default:
					del(m, k)
				}
				if i%5000 == 0 { // drain most keys: compactions
					for j := range keys - 10 {
						del(m, "key-"+strconv.Itoa(j))
					}
				}
			}
		}()
	}
	var reads, hits atomic.Int64
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200000; i++ {
				k := "key-" + strconv.Itoa((i*13+r)%keys)
				e, ok := peek(m, k, i%2 == 1)
				reads.Add(1)
				if !ok {
					continue
				}
				hits.Add(1)
				if e.Key != k || !strings.HasPrefix(e.Value, k+"=") {
					t.Errorf("Peek(%q) = {%q, %q}: torn or foreign entry", k, e.Key, e.Value)
					return
				}
			}
		}()
	}
	// Stop the writers once the readers are done.
	for hits.Load() == 0 || reads.Load() < 400000 {
		runtime.Gosched()
		if t.Failed() {
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	verifyAll(t, m)
	t.Logf("%d lock-free reads, %d hits", reads.Load(), hits.Load())
}

func TestClear(t *testing.T) {
	m := New[struct{}](1)
	for i := range 500 {
		put(m, strconv.Itoa(i), "v")
	}
	s := m.ShardAt(0)
	s.Lock()
	s.ClearLocked()
	s.Unlock()
	verifyAll(t, m)
	if n := m.Len(); n != 0 {
		t.Fatalf("Len() after ClearLocked = %d, want 0", n)
	}
	if _, ok := peek(m, "7", false); ok {
		t.Fatal("Peek after ClearLocked found a key")
	}
	put(m, "7", "w")
	if e, ok := peek(m, "7", false); !ok || e.Value != "w" {
		t.Fatalf("Peek(7) = %q, %v, want w, true", e.Value, ok)
	}
}

func TestEmptyKey(t *testing.T) {
	m := New[struct{}](1)
	if _, ok := peek(m, "", false); ok {
		t.Fatal("Peek(\"\") on an empty map found a key")
	}
	put(m, "", "empty")
	put(m, "a", "x")
	del(m, "a") // a free entry has Key "": it must never match
	if e, ok := peek(m, "", false); !ok || e.Value != "empty" {
		t.Fatalf("Peek(\"\") = %q, %v, want empty, true", e.Value, ok)
	}
	del(m, "")
	if _, ok := peek(m, "", false); ok {
		t.Fatal("Peek(\"\") after delete found a key")
	}
	verifyAll(t, m)
}

// TestPadding: neighbouring shards' lock words are at least a cache line
// apart.
func TestPadding(t *testing.T) {
	var s [2]Shard[struct{}]
	d := uintptr(unsafe.Pointer(&s[1].seq)) - uintptr(unsafe.Pointer(&s[0].seq))
	if d < 128 {
		t.Fatalf("shards' lock words %d bytes apart, want >= 128", d)
	}
}

func TestLockContended(t *testing.T) {
	m := New[struct{}](1)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				put(m, fmt.Sprintf("w%d-%d", w, i%50), "v")
			}
		}()
	}
	wg.Wait()
	if n := m.Len(); n != 200 {
		t.Fatalf("Len() = %d, want 200", n)
	}
	verifyAll(t, m)
}

// TestSameString: the comparison that skips the byte compare for strings
// sharing their bytes must still tell apart strings that share a start.
func TestSameString(t *testing.T) {
	s := "abcdef"
	tests := []struct {
		a, b string
		want bool
	}{
		{s, s, true},
		{s[:3], s, false},
		{s, s[:3], false},
		{s[:3], "abc", true},
		{s[1:4], "bcd", true},
		{s[:3], s[3:], false},
		{"", s[:0], true},
		{"", "x", false},
		{strings.Clone(s), s, true},
	}
	for _, tt := range tests {
		if got := sameString(tt.a, tt.b); got != tt.want {
			t.Errorf("sameString(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// TestUpgradeOddVersion: a version read while a writer held the shard
// never upgrades (a compare-and-swap from it would release the holder's
// lock).
func TestUpgradeOddVersion(t *testing.T) {
	m := New[struct{}](1)
	s := m.ShardAt(0)
	s.Lock()
	v := atomic.LoadUint64(&s.seq)
	if s.Upgrade(v) {
		t.Fatalf("Upgrade(%d) while locked = true, want false", v)
	}
	s.Unlock()
	if w := atomic.LoadUint64(&s.seq); !s.Upgrade(w) {
		t.Fatalf("Upgrade(%d) after Unlock = false, want true", w)
	}
	s.Unlock()
}
