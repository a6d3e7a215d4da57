package shard

import (
	"strconv"
	"sync"
	"testing"
)

const hot = 1024

func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "key:" + strconv.Itoa(100000+i)
	}
	return keys
}

var (
	sinkI  int
	sinkOK bool
)

func BenchmarkGet(b *testing.B) {
	keys := benchKeys(hot)
	m := New[int, struct{}](0)
	for i, k := range keys {
		m.Set(k, i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sinkI, sinkOK = m.Get(keys[i&(hot-1)])
	}
}

func BenchmarkSet(b *testing.B) {
	keys := benchKeys(hot)
	m := New[int, struct{}](0)
	for i, k := range keys {
		m.Set(k, i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Set(keys[i&(hot-1)], i)
	}
}

// BenchmarkLockedReadModifyWrite is the engine's pattern: one critical
// section that reads and writes a key and the shard's Aux.
func BenchmarkLockedReadModifyWrite(b *testing.B) {
	keys := benchKeys(hot)
	m := New[int, int](0)
	for i, k := range keys {
		m.Set(k, i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := keys[i&(hot-1)]
		s := m.Shard(k)
		s.Lock()
		v, _ := s.GetLocked(k)
		s.SetLocked(k, v+1)
		s.Aux++
		s.Unlock()
	}
}

// BenchmarkBaselineMutexMapGet is one map behind one mutex.
func BenchmarkBaselineMutexMapGet(b *testing.B) {
	keys := benchKeys(hot)
	var mu sync.Mutex
	m := map[string]int{}
	for i, k := range keys {
		m[k] = i
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		mu.Lock()
		sinkI, sinkOK = m[keys[i&(hot-1)]]
		mu.Unlock()
	}
}

// BenchmarkParallelSet runs g goroutines on disjoint keys; ns/op is wall
// time per operation of the group, so a perfect 2x speed-up halves it.
func BenchmarkParallelSet(b *testing.B) {
	for _, g := range []int{1, 2} {
		b.Run("goroutines="+strconv.Itoa(g), func(b *testing.B) {
			keys := benchKeys(g * hot)
			m := New[int, struct{}](0)
			for i, k := range keys {
				m.Set(k, i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := range g {
				wg.Add(1)
				go func() {
					defer wg.Done()
					mine := keys[w*hot : (w+1)*hot]
					for i := 0; i < b.N/g; i++ {
						m.Set(mine[i&(hot-1)], i)
					}
				}()
			}
			wg.Wait()
		})
	}
}

func BenchmarkParallelBaselineMutexMapSet(b *testing.B) {
	for _, g := range []int{1, 2} {
		b.Run("goroutines="+strconv.Itoa(g), func(b *testing.B) {
			keys := benchKeys(g * hot)
			var mu sync.Mutex
			m := map[string]int{}
			for i, k := range keys {
				m[k] = i
			}
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := range g {
				wg.Add(1)
				go func() {
					defer wg.Done()
					mine := keys[w*hot : (w+1)*hot]
					for i := 0; i < b.N/g; i++ {
						mu.Lock()
						m[mine[i&(hot-1)]] = i
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
		})
	}
}

// BenchmarkShrink measures the worst shrink: copying MaxShrinkCopy entries
// into a fresh map, the longest a Delete holds the shard lock.
func BenchmarkShrink(b *testing.B) {
	m := New[int, struct{}](1)
	s := m.ShardAt(0)
	for j, k := range benchKeys(MaxShrinkCopy) {
		m.Set(k, j)
	}
	s.Lock()
	defer s.Unlock()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.peak = 4 * MaxShrinkCopy
		s.shrinkLocked()
	}
}
