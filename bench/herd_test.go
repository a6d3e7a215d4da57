package main

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/nxkv/nxkv/engine"
)

// BenchmarkHerd is the thundering herd: 1,000 goroutines miss one key at
// the same instant and each asks for it with a load function that takes
// herdLoad (a database query), once through the engine's GetOrLoad and
// once through golang.org/x/sync/singleflight over a map behind a mutex
// (what a program without GetOrLoad writes). One op is one herd on a fresh
// key. It reports loads/op, which must be 1 for both, and the herd's
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
				lat = herd(b, get, "user:"+strconv.Itoa(i), load, lat)
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

const (
	herdSize = 1000
	herdLoad = 100 * time.Microsecond
)

// herdPeers are the get-or-loads the herd compares, each with its close.
var herdPeers = []struct {
	name string
	new  func() (herdStore, func())
}{
	{"nxkv", func() (herdStore, func()) {
		e := engine.New(engine.Options{})
		return e.GetOrLoad, func() { e.Close() }
	}},
	{"singleflight", func() (herdStore, func()) { return newFlightMap().get, func() {} }},
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
			herd(t, get, "user:"+strconv.Itoa(i), load, nil)
		}
		closeStore()
		if n := loads.Load(); n != 3 {
			t.Errorf("%s: 3 herds of %d misses ran %d loads, want 3", p.name, herdSize, n)
		}
	}
}

// herdStore is a get-or-load: the value of key, loaded by load on a miss.
type herdStore func(ctx context.Context, key string, ttl time.Duration, load engine.LoadFunc) (string, error)

// herd releases herdSize goroutines at once on key and appends each one's
// latency from the release to lat.
func herd(tb testing.TB, get herdStore, key string, load engine.LoadFunc, lat []time.Duration) []time.Duration {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	var t0 time.Time
	times := make([]time.Duration, herdSize)
	for i := range herdSize {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			v, err := get(context.Background(), key, time.Minute, load)
			times[i] = time.Since(t0)
			if v != "value" || err != nil {
				tb.Errorf("get(%q) = %q, %v", key, v, err)
			}
		}()
	}
	ready.Wait()
	t0 = time.Now()
	close(start)
	done.Wait()
	return append(lat, times...)
}

// flightMap is the peer: a map behind a mutex, filled through a
// singleflight.Group, looking again inside the flight so that a caller
// that missed just before another flight stored the value does not load
// it again.
type flightMap struct {
	mu sync.RWMutex
	m  map[string]string
	g  singleflight.Group
}

func newFlightMap() *flightMap { return &flightMap{m: map[string]string{}} }

func (f *flightMap) lookup(key string) (string, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	v, ok := f.m[key]
	return v, ok
}

func (f *flightMap) get(ctx context.Context, key string, _ time.Duration, load engine.LoadFunc) (string, error) {
	if v, ok := f.lookup(key); ok {
		return v, nil
	}
	v, err, _ := f.g.Do(key, func() (any, error) {
		if v, ok := f.lookup(key); ok {
			return v, nil
		}
		v, err := load(ctx, key)
		if err != nil {
			return nil, err
		}
		f.mu.Lock()
		f.m[key] = v
		f.mu.Unlock()
		return v, nil
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}
