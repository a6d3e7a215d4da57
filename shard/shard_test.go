package shard

import (
	"runtime"
	"strconv"
	"sync"
	"testing"
	"unsafe"
)

func TestShardCount(t *testing.T) {
	tests := []struct{ in, want int }{{1, 1}, {2, 2}, {3, 4}, {16, 16}, {17, 32}, {1000, 1024}}
	for _, tt := range tests {
		if got := New[int, struct{}](tt.in).Shards(); got != tt.want {
			t.Errorf("New(%d).Shards() = %d, want %d", tt.in, got, tt.want)
		}
	}
	want := max(MinShards, roundPow2(8*runtime.GOMAXPROCS(0)))
	if got := New[int, struct{}](0).Shards(); got != want {
		t.Errorf("New(0).Shards() = %d, want %d", got, want)
	}
}

func TestMapOps(t *testing.T) {
	m := New[int, int](4)
	if _, ok := m.Get("a"); ok {
		t.Fatal("Get(absent) ok = true")
	}
	m.Set("a", 1)
	m.Set("", 2) // empty key is valid
	m.Set("a", 3)
	if v, ok := m.Get("a"); v != 3 || !ok {
		t.Fatalf("Get(a) = %d, %v, want 3, true", v, ok)
	}
	if v, ok := m.Get(""); v != 2 || !ok {
		t.Fatalf("Get(\"\") = %d, %v, want 2, true", v, ok)
	}
	if n := m.Len(); n != 2 {
		t.Fatalf("Len() = %d, want 2", n)
	}
	m.Delete("a")
	m.Delete("missing")
	if n := m.Len(); n != 1 {
		t.Fatalf("Len() after Delete = %d, want 1", n)
	}
	s := m.Shard("x")
	if m.ShardAt(m.ShardIndex("x")) != s {
		t.Fatal("ShardAt(ShardIndex(x)) != Shard(x)")
	}
	s.Lock()
	s.Aux = 7
	s.SetLocked("x", 1)
	seen := 0
	s.RangeLocked(func(k string, v int) bool { seen++; return true })
	if s.LenLocked() != seen {
		t.Fatalf("RangeLocked saw %d entries, LenLocked = %d", seen, s.LenLocked())
	}
	s.Unlock()
}

// TestShrink checks that a shard rebuilds its map once it falls to a
// quarter of its peak, and keeps every remaining entry.
func TestShrink(t *testing.T) {
	m := New[int, struct{}](1)
	s := m.ShardAt(0)
	const n = 4 * ShrinkFloor
	for i := range n {
		m.Set(strconv.Itoa(i), i)
	}
	s.Lock()
	if s.peak != n {
		t.Fatalf("peak = %d, want %d", s.peak, n)
	}
	old := s.m
	s.Unlock()
	for i := range n - n/4 {
		m.Delete(strconv.Itoa(i))
	}
	s.Lock()
	defer s.Unlock()
	if sameMap(old, s.m) {
		t.Fatal("map not rebuilt after falling to a quarter of its peak")
	}
	if s.peak != n/4 {
		t.Fatalf("peak after shrink = %d, want %d", s.peak, n/4)
	}
	for i := n - n/4; i < n; i++ {
		if v, ok := s.GetLocked(strconv.Itoa(i)); !ok || v != i {
			t.Fatalf("GetLocked(%d) after shrink = %d, %v, want %d, true", i, v, ok, i)
		}
	}
}

// TestNoShrinkLarge checks the documented limitation: a shard with more than
// MaxShrinkCopy entries left is not copied under its lock.
func TestNoShrinkLarge(t *testing.T) {
	m := New[int, struct{}](1)
	s := m.ShardAt(0)
	n := 8 * MaxShrinkCopy
	for i := range n {
		m.Set(strconv.Itoa(i), i)
	}
	s.Lock()
	old := s.m
	s.Unlock()
	for i := range n - MaxShrinkCopy - 1 {
		m.Delete(strconv.Itoa(i))
	}
	s.Lock()
	if !sameMap(old, s.m) {
		t.Fatal("map with more than MaxShrinkCopy entries was rebuilt")
	}
	s.Unlock()
	m.Delete(strconv.Itoa(n - MaxShrinkCopy - 1)) // now MaxShrinkCopy left
	s.Lock()
	defer s.Unlock()
	if sameMap(old, s.m) || len(s.m) != MaxShrinkCopy {
		t.Fatalf("map not rebuilt at MaxShrinkCopy entries (len %d)", len(s.m))
	}
}

func sameMap(a, b map[string]int) bool {
	// Maps are reference types: a write through one shows in the other.
	const probe = "\x00probe"
	a[probe] = 1
	_, ok := b[probe]
	delete(a, probe)
	return ok
}

func TestConcurrent(t *testing.T) {
	m := New[int, int](0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				k := strconv.Itoa(g*1000 + i)
				m.Set(k, i)
				s := m.Shard(k)
				s.Lock()
				s.Aux++
				s.Unlock()
				if v, ok := m.Get(k); !ok || v != i {
					t.Errorf("Get(%s) = %d, %v, want %d, true", k, v, ok, i)
				}
				if i%2 == 0 {
					m.Delete(k)
				}
			}
		}()
	}
	wg.Wait()
	if n := m.Len(); n != 4000 {
		t.Fatalf("Len() = %d, want 4000", n)
	}
	aux := 0
	for i := range m.Shards() {
		aux += m.ShardAt(i).Aux
	}
	if aux != 8000 {
		t.Fatalf("sum of Aux = %d, want 8000", aux)
	}
}

// TestEmptyShardFreshMap checks that an emptied shard whose peak was at
// least EmptyFloor drops its map, and a smaller one keeps it for reuse.
func TestEmptyShardFreshMap(t *testing.T) {
	for _, tt := range []struct {
		n     int
		fresh bool
	}{{EmptyFloor - 1, false}, {EmptyFloor, true}, {3 * ShrinkFloor, true}} {
		m := New[int, struct{}](1)
		s := m.ShardAt(0)
		for i := range tt.n {
			m.Set(strconv.Itoa(i), i)
		}
		s.Lock()
		old := s.m
		s.Unlock()
		for i := range tt.n {
			m.Delete(strconv.Itoa(i))
		}
		s.Lock()
		if got := !sameMap(old, s.m); got != tt.fresh {
			t.Errorf("emptied shard with peak %d: fresh map = %v, want %v", tt.n, got, tt.fresh)
		}
		s.Unlock()
	}
}

// TestPadding checks that neighbouring shards' fields are at least 128
// bytes apart, so their mutexes never share a cache line pair.
func TestPadding(t *testing.T) {
	m := New[int, int](2)
	a := uintptr(unsafe.Pointer(&m.ShardAt(0).mu))
	endA := uintptr(unsafe.Pointer(&m.ShardAt(0).Aux)) + unsafe.Sizeof(m.ShardAt(0).Aux)
	b := uintptr(unsafe.Pointer(&m.ShardAt(1).mu))
	if b-endA < padding || b-a < 2*64 {
		t.Fatalf("shard 1 starts %d bytes after shard 0's fields end, want >= %d", b-endA, padding)
	}
}
