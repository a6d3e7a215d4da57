package main

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkHerd is the thundering herd: 1,000 goroutines miss one key at
// the same instant and each asks for it with a load function that takes
// herdLoad (a database query), once through the engine's GetOrLoad and
// once through golang.org/x/sync/singleflight over a map behind a mutex
// (what a program without GetOrLoad writes). One op is one herd on a fresh
// key (the herd of the -full cache workload). It reports loads/op, which must be 1 for both, and the herd's
// callers' latency from the release, median and 99th percentile:
//
//	go test -run='^$' -bench='^BenchmarkHerd$' -count=6 ./bench/ > herd.txt
//	benchstat -col /peer herd.txt
func BenchmarkHerd(b *testing.B) {
	for _, p := range herdPeers {
		b.Run("peer="+p.name, func(b *testing.B) {
			get, closeStore := p.new()
			defer closeStore()
			var loads atomic.Int64
			load := func(context.Context, string) (string, error) {
				loads.Add(1)
				time.Sleep(herdLoad)
				return "value", nil
			}
			lat := make([]time.Duration, 0, b.N*herdSize)
			b.ResetTimer()
			for i := range b.N {
				var err error
				if lat, err = herd(get, "user:"+strconv.Itoa(i), load, lat); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(loads.Load())/float64(b.N), "loads/op")
			b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns")
			b.ReportMetric(float64(lat[len(lat)*99/100]), "p99-ns")
			if n := loads.Load(); n != int64(b.N) {
				b.Fatalf("%d herds of %d misses ran %d loads, want one each", b.N, herdSize, n)
			}
		})
	}
}

// TestHerd runs a few herds on each peer: one load per herd, even with a
// load that returns at once, so that late callers miss just as the value
// is stored.
func TestHerd(t *testing.T) {
	for _, p := range herdPeers {
		get, closeStore := p.new()
		var loads atomic.Int64
		load := func(context.Context, string) (string, error) {
			loads.Add(1)
			return "value", nil
		}
		for i := range 3 {
			if _, err := herd(get, "user:"+strconv.Itoa(i), load, nil); err != nil {
				t.Fatal(err)
			}
		}
		closeStore()
		if n := loads.Load(); n != 3 {
			t.Errorf("%s: 3 herds of %d misses ran %d loads, want 3", p.name, herdSize, n)
		}
	}
}
