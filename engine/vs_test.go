package engine

// BenchmarkVs runs every hot operation on the engine and on the obvious
// alternative, one map of (value, deadline) behind one sync.Mutex with
// time.Now for deadlines, with the same loop, in alternating timed chunks,
// and reports each one's median ns/op over the chunks and the speed-up
// (map ns / nxkv ns; above 1 the engine is faster):
//
//	go test -run='^$' -bench='^BenchmarkVs$' -count=6 ./engine/ > vs.txt
//	benchstat vs.txt
//
// Sub-benchmarks are BenchmarkVs/op=<op>/keys=<n>, for 1,024, 65,536 and
// 1,048,576 keys (the last takes a while to fill: select it with
// -bench='BenchmarkVs/.*/keys=1048576' or leave it out with keys=(1024|65536)$).

import (
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// store is the surface the paired benchmarks drive.
type store interface {
	Get(k string) (string, bool)
	Set(k, v string) error
	GetSet(k, v string) (string, bool, error)
	SetNX(k, v string) (bool, error)
	SetNXPX(k, v string, ttl time.Duration) (bool, error)
	CompareAndDelete(k, v string) bool
}

var _ store = (*Engine)(nil)

// lockedMap is the baseline: a Go map of value and deadline behind one
// mutex, time.Now for deadlines, Redis's expiry rule (alive while now <=
// deadline).
type lockedMap struct {
	mu sync.Mutex
	m  map[string]lmEntry
}

type lmEntry struct {
	v   string
	exp int64 // 0: none
}

func newLockedMap() *lockedMap { return &lockedMap{m: make(map[string]lmEntry)} }

func (m *lockedMap) Get(k string) (string, bool) {
	m.mu.Lock()
	e, ok := m.m[k]
	if ok && e.exp != 0 && time.Now().UnixNano() > e.exp {
		delete(m.m, k)
		ok = false
	}
	m.mu.Unlock()
	return e.v, ok
}

func (m *lockedMap) Set(k, v string) error {
	m.mu.Lock()
	m.m[k] = lmEntry{v: v}
	m.mu.Unlock()
	return nil
}

func (m *lockedMap) GetSet(k, v string) (string, bool, error) {
	m.mu.Lock()
	e, ok := m.m[k]
	if ok && e.exp != 0 && time.Now().UnixNano() > e.exp {
		ok = false
	}
	m.m[k] = lmEntry{v: v}
	m.mu.Unlock()
	return e.v, ok, nil
}

func (m *lockedMap) SetNX(k, v string) (bool, error) {
	m.mu.Lock()
	e, ok := m.m[k]
	if ok && (e.exp == 0 || time.Now().UnixNano() <= e.exp) {
		m.mu.Unlock()
		return false, nil
	}
	m.m[k] = lmEntry{v: v}
	m.mu.Unlock()
	return true, nil
}

func (m *lockedMap) SetNXPX(k, v string, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	now := time.Now().UnixNano()
	if e, ok := m.m[k]; ok && (e.exp == 0 || now <= e.exp) {
		m.mu.Unlock()
		return false, nil
	}
	m.m[k] = lmEntry{v: v, exp: now + int64(ttl)}
	m.mu.Unlock()
	return true, nil
}

func (m *lockedMap) CompareAndDelete(k, v string) bool {
	m.mu.Lock()
	e, ok := m.m[k]
	if !ok || e.v != v || e.exp != 0 && time.Now().UnixNano() > e.exp {
		m.mu.Unlock()
		return false
	}
	delete(m.m, k)
	m.mu.Unlock()
	return true
}

// vsOp is one paired operation: setup fills the store, run does one
// iteration on key k (some iterations are two operations: a write and the
// one that restores the key).
type vsOp struct {
	name  string
	setup func(s store, keys []string)
	run   func(s store, k string)
}

var vsOps = []vsOp{
	{"Get", setAll(0), func(s store, k string) { sinkS, sinkB = s.Get(k) }},
	{"GetTTL", setAll(time.Hour), func(s store, k string) { sinkS, sinkB = s.Get(k) }},
	{"Set", setAll(0), func(s store, k string) { s.Set(k, "w") }},
	{"GetSet", setAll(0), func(s store, k string) { sinkS, sinkB, _ = s.GetSet(k, "w") }},
	{"SetNX-held", setAll(0), func(s store, k string) { sinkB, _ = s.SetNX(k, "w") }},
	{"SetNX-free+CAD", setAll(-1), func(s store, k string) { sinkB, _ = s.SetNX(k, "w"); s.CompareAndDelete(k, "w") }},
	{"SetNXPX-held", setAll(time.Hour), func(s store, k string) { sinkB, _ = s.SetNXPX(k, "w", 30*time.Second) }},
	{"CompareAndDelete-other", setAll(0), func(s store, k string) { sinkB = s.CompareAndDelete(k, "other") }},
	{"LockCycle", setAll(-1), func(s store, k string) {
		sinkB, _ = s.SetNXPX(k, "tok", 30*time.Second)
		sinkB = s.CompareAndDelete(k, "tok")
	}},
}

// setAll stores "v" under every key, with a TTL when ttl > 0; ttl < 0
// stores nothing.
func setAll(ttl time.Duration) func(s store, keys []string) {
	return func(s store, keys []string) {
		if ttl < 0 {
			return
		}
		for _, k := range keys {
			if ttl > 0 {
				s.SetNXPX(k, "v", ttl)
			} else {
				s.Set(k, "v")
			}
		}
	}
}

func BenchmarkVs(b *testing.B) {
	for _, op := range vsOps {
		for _, n := range []int{hotKeys, 1 << 16, 1 << 20} {
			b.Run("op="+op.name+"/keys="+strconv.Itoa(n), func(b *testing.B) {
				e := New(Options{})
				b.Cleanup(func() { e.Close() })
				nx, mm := paired(b, op, n, [2]store{e, newLockedMap()})
				b.ReportMetric(nx, "nxkv-ns/op")
				b.ReportMetric(mm, "map-ns/op")
				b.ReportMetric(mm/nx, "speedup")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
}

// paired fills each of impls with its own copy of n keys, so neither warms
// the caches for the other, and runs op on both (alternate).
func paired(b *testing.B, op vsOp, n int, impls [2]store) (ns0, ns1 float64) {
	var keys [2][]string
	for j, s := range impls {
		keys[j] = benchKeys(n)
		op.setup(s, keys[j])
	}
	mask := n - 1
	return alternate(b, func(j, i int) {
		// A stride that visits every key but not in memory order, so the
		// large set misses caches.
		op.run(impls[j], keys[j][(i*7919)&mask])
	})
}

// alternate runs b.N iterations of run(0, i) and of run(1, i), i counting
// from 0 for each, in alternating chunks of 256 iterations, each chunk
// timed, taking turns to go first: both meet the same load from the rest
// of the machine, and the medians over chunks (in ns per iteration, which
// alternate returns) shrug off bursts.
func alternate(b *testing.B, run func(j, i int)) (ns0, ns1 float64) {
	const chunk = 256
	var ns [2][]float64
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; done += chunk {
		for turn := range 2 {
			j := (turn + done/chunk) % 2
			start := time.Now()
			for i := done; i < done+chunk; i++ {
				run(j, i)
			}
			ns[j] = append(ns[j], float64(time.Since(start))/chunk)
		}
	}
	b.StopTimer()
	return median(ns[0]), median(ns[1])
}

// median returns the median of xs (which it sorts).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// BenchmarkBoundCost runs every hot operation on an engine without a bound
// and on one with a bound it never reaches (1 TiB, allkeys-lru: the
// accounting and the keys' recency, no eviction), with the same loop in
// alternating timed chunks, and reports each one's median ns/op and the
// cost of the bound (bounded ns / unbounded ns; 1.10 is 10% slower):
//
//	go test -run='^$' -bench='^BenchmarkBoundCost$' -count=6 ./engine/
func BenchmarkBoundCost(b *testing.B) {
	ops := append(slices.Clip(vsOps), vsOp{"SetPX", setAll(time.Hour), func(s store, k string) {
		s.(*Engine).SetPX(k, "w", time.Hour)
	}})
	for _, op := range ops {
		b.Run("op="+op.name+"/keys="+strconv.Itoa(hotKeys), func(b *testing.B) {
			free := New(Options{})
			bound := New(Options{MaxMemory: 1 << 40, Policy: AllKeysLRU})
			b.Cleanup(func() { free.Close(); bound.Close() })
			un, bd := paired(b, op, hotKeys, [2]store{free, bound})
			b.ReportMetric(un, "unbounded-ns/op")
			b.ReportMetric(bd, "bounded-ns/op")
			b.ReportMetric(bd/un, "cost")
			b.ReportMetric(0, "ns/op")
		})
	}
}
