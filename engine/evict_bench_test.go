package engine

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkBound measures what a memory bound costs each hot operation: the
// same loop over an engine without a bound and one with a bound it never
// reaches (1 GiB, allkeys-lru, the policy whose reads write most), in
// alternating timed chunks as BenchmarkVs, reporting each one's median
// ns/op and the ratio (bounded / unbounded; 1.10 is 10% slower):
//
//	go test -run='^$' -bench='^BenchmarkBound$' -count=6 ./engine/ > bound.txt
//	benchstat bound.txt
//
// op=Set-evicting stores a new key into a bounded engine that is full, so
// each write evicts one key: the cost of eviction itself.
func BenchmarkBound(b *testing.B) {
	for _, op := range vsOps {
		for _, n := range []int{hotKeys, 1 << 16} {
			b.Run("op="+op.name+"/keys="+strconv.Itoa(n), func(b *testing.B) {
				plain, bounded := New(Options{}), New(Options{MaxMemory: 1 << 30, Policy: AllKeysLRU})
				b.Cleanup(func() { plain.Close(); bounded.Close() })
				impls := [2]store{plain, bounded}
				var keys [2][]string // each its own, as in BenchmarkVs
				for j, s := range impls {
					keys[j] = benchKeys(n)
					op.setup(s, keys[j])
				}
				mask := n - 1
				un, bo := alternate(b, func(j, i int) { op.run(impls[j], keys[j][(i*7919)&mask]) })
				b.ReportMetric(un, "unbounded-ns/op")
				b.ReportMetric(bo, "bounded-ns/op")
				b.ReportMetric(bo/un, "ratio")
				b.ReportMetric(0, "ns/op")
			})
		}
	}
	b.Run("op=Set-evicting", func(b *testing.B) {
		const keys = 1 << 16
		e := New(Options{MaxMemory: keys * 64, Policy: AllKeysLRU}) // under 80 bytes a key
		b.Cleanup(func() { e.Close() })
		for _, k := range benchKeys(keys) {
			e.Set(k, "v") // full, and evicting already
		}
		fresh := make([]string, 1<<20)
		for i := range fresh {
			fresh[i] = "new:" + strconv.Itoa(i)
		}
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		for i := range b.N {
			e.Set(fresh[i&(len(fresh)-1)], "v")
		}
		b.ReportMetric(float64(time.Since(start))/float64(b.N), "ns/op")
		if e.MemoryStats().Evicted == 0 {
			b.Fatal("nothing evicted")
		}
	})
}
