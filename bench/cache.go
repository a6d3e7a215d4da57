package main

// The cache workload: the engine used as a bounded cache. Three
// measurements, each beside its peers in one run:
//
//   - hit ratio: a Zipf(0.99) trace of 1M requests over 100k keys (a get,
//     and a set on a miss), with room for 10% of the keys: the engine
//     under allkeys-lru and allkeys-lfu (Options.MaxMemory at 10% of what
//     the engine counts for every key), an exact LRU list of 10% of the
//     keys, and otter (W-TinyLFU) bounded to 10% of the keys;
//   - memory held: the Go runtime's live heap, after a GC, of an engine
//     bounded to 32 MiB after writing ten times the bound, against the
//     bound;
//   - thundering herd: 1,000 goroutines miss one key at once, through
//     GetOrLoad and through golang.org/x/sync/singleflight over a map (the
//     herd of BenchmarkHerd, with a 100 µs load): loads per herd, and the
//     callers' latency from the release.

import (
	"container/list"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/maypok86/otter/v2"
	"golang.org/x/sync/singleflight"

	"github.com/nxkv/nxkv/engine"
)

// The hit-ratio trace.
const (
	zipfKeys     = 100_000
	zipfRequests = 1_000_000
	zipfTheta    = 0.99
	cacheShare   = 10 // the cache holds 1/cacheShare of the keys
	zipfValue    = 64 // bytes a value
)

// HitRow is one cache's hit ratio on the Zipf trace.
type HitRow struct {
	Peer     string  `json:"peer"`
	HitRatio float64 `json:"hit_ratio"` // hits / requests, 0 to 1
}

// HeldRow is the memory an engine held under its bound.
type HeldRow struct {
	Bound   int64   `json:"bound_bytes"`
	Written int64   `json:"written_bytes"` // as the engine counts them
	Heap    int64   `json:"live_heap_bytes"`
	OverPct float64 `json:"over_bound_pct"` // (Heap - Bound) / Bound, in %
}

// HerdRow is one get-or-load's thundering herd.
type HerdRow struct {
	Peer        string  `json:"peer"`
	Herds       int     `json:"herds"`
	LoadsPerHrd float64 `json:"loads_per_herd"`
	P50Ns       float64 `json:"p50_ns"`
	P99Ns       float64 `json:"p99_ns"`
}

// zipf draws ranks 0..n-1 with P(i) proportional to 1/(i+1)^theta, for
// theta < 1 (math/rand's Zipf needs s > 1), by the method of Gray et al.,
// "Quickly generating billion-record synthetic databases" (SIGMOD 1994),
// as YCSB draws its Zipfian requests.
type zipf struct {
	r                        *rand.Rand
	n                        float64
	theta, alpha, zetan, eta float64
	halfPowTheta             float64
}

func newZipf(r *rand.Rand, n int, theta float64) *zipf {
	zeta := func(m int) float64 {
		s := 0.0
		for i := 1; i <= m; i++ {
			s += 1 / math.Pow(float64(i), theta)
		}
		return s
	}
	z := &zipf{r: r, n: float64(n), theta: theta, alpha: 1 / (1 - theta), zetan: zeta(n)}
	z.eta = (1 - math.Pow(2/z.n, 1-theta)) / (1 - zeta(2)/z.zetan)
	z.halfPowTheta = 1 + math.Pow(0.5, theta)
	return z
}

func (z *zipf) next() int {
	u := z.r.Float64()
	uz := u * z.zetan
	switch {
	case uz < 1:
		return 0
	case uz < z.halfPowTheta:
		return 1
	}
	return min(int(z.n*math.Pow(z.eta*u-z.eta+1, z.alpha)), int(z.n)-1)
}

// zipfTrace returns the trace's keys, the same for every cache.
func zipfTrace() []string {
	keys := make([]string, zipfKeys)
	for i := range keys {
		keys[i] = "user:" + strconv.Itoa(i)
	}
	z := newZipf(rand.New(rand.NewPCG(1, 2)), zipfKeys, zipfTheta)
	trace := make([]string, zipfRequests)
	for i := range trace {
		trace[i] = keys[z.next()]
	}
	return trace
}

// hitCache is a cache the trace drives: get reports a hit; set stores.
type hitCache struct {
	name string
	get  func(k string) bool
	set  func(k, v string)
}

// exactLRU is the reference: a list in recency order, evicting the least
// recently used key beyond cap keys.
type exactLRU struct {
	cap int
	ll  *list.List
	m   map[string]*list.Element
}

func (c *exactLRU) get(k string) bool {
	if el, ok := c.m[k]; ok {
		c.ll.MoveToFront(el)
		return true
	}
	return false
}

func (c *exactLRU) set(k, _ string) {
	if el, ok := c.m[k]; ok {
		c.ll.MoveToFront(el)
		return
	}
	c.m[k] = c.ll.PushFront(k)
	if c.ll.Len() > c.cap {
		delete(c.m, c.ll.Remove(c.ll.Back()).(string))
	}
}

// engineCost is what the engine counts for a key of the trace (see
// "Memory bound" in package engine): its entry, key and value.
func engineCost(key string) int64 {
	return 64 + int64(len(key)+7)&^7 + int64(zipfValue+7)&^7
}

// hitCaches returns the caches of the hit-ratio measurement, with a close.
func hitCaches(cfg config) ([]hitCache, func()) {
	var working int64
	for i := range zipfKeys {
		working += engineCost("user:" + strconv.Itoa(i))
	}
	var cs []hitCache
	var closers []func()
	for _, p := range []engine.Policy{engine.AllKeysLRU, engine.AllKeysLFU} {
		name := peerEngine + " " + p.String()
		if !cfg.want(name) {
			continue
		}
		e := engine.New(engine.Options{MaxMemory: working / cacheShare, Policy: p})
		closers = append(closers, func() { e.Close() })
		cs = append(cs, hitCache{name: name,
			get: func(k string) bool { _, ok := e.Get(k); return ok },
			set: func(k, v string) { _ = e.Set(k, v) }})
	}
	if cfg.want("exact LRU") {
		l := &exactLRU{cap: zipfKeys / cacheShare, ll: list.New(), m: map[string]*list.Element{}}
		cs = append(cs, hitCache{name: "exact LRU", get: l.get, set: l.set})
	}
	if cfg.want(peerOtter) {
		o := otter.Must(&otter.Options[string, string]{MaximumSize: zipfKeys / cacheShare})
		cs = append(cs, hitCache{name: peerOtter + " (W-TinyLFU)",
			get: func(k string) bool { _, ok := o.GetIfPresent(k); return ok },
			set: func(k, v string) { o.Set(k, v) }})
	}
	return cs, func() {
		for _, c := range closers {
			c()
		}
	}
}

// hitRatio drives c with trace and returns its hit ratio.
func hitRatio(c hitCache, trace []string) float64 {
	value := strings.Repeat("v", zipfValue)
	hits := 0
	for _, k := range trace {
		if c.get(k) {
			hits++
		} else {
			c.set(k, value)
		}
	}
	return float64(hits) / float64(len(trace))
}

// heldBound is the bound of the memory-held measurement.
const heldBound = 32 << 20

// measureHeld writes ten times heldBound into an allkeys-lru engine
// bounded to it, each key and value a fresh allocation, and returns the
// live heap it then holds.
func measureHeld() HeldRow {
	liveHeap := func() int64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	base := liveHeap()
	e := engine.New(engine.Options{MaxMemory: heldBound, Policy: engine.AllKeysLRU})
	defer e.Close()
	pad := strings.Repeat("x", 100)
	var written int64
	for i := 0; written < 10*heldBound; i++ {
		k := "held:" + strconv.Itoa(i)
		v := strconv.Itoa(i) + pad // a fresh value, freed with its key
		_ = e.Set(k, v)
		written += 64 + int64(len(k)+7)&^7 + int64(len(v)+7)&^7
	}
	heap := liveHeap() - base
	runtime.KeepAlive(e)
	return HeldRow{Bound: heldBound, Written: written, Heap: heap, OverPct: float64(heap-heldBound) / heldBound * 100}
}

// The herd.
const (
	herdSize = 1000
	herdLoad = 100 * time.Microsecond
)

// herdStore is a get-or-load: the value of key, loaded by load on a miss.
type herdStore func(ctx context.Context, key string, ttl time.Duration, load engine.LoadFunc) (string, error)

// herdPeers are the get-or-loads the herd compares, each with its close.
var herdPeers = []struct {
	name string
	new  func() (herdStore, func())
}{
	{peerEngine, func() (herdStore, func()) {
		e := engine.New(engine.Options{})
		return e.GetOrLoad, func() { e.Close() }
	}},
	{"singleflight", func() (herdStore, func()) { return newFlightMap().get, func() {} }},
}

// herd releases herdSize goroutines at once on key and appends each one's
// latency from the release to lat; it returns an error if a caller got
// another value or an error.
func herd(get herdStore, key string, load engine.LoadFunc, lat []time.Duration) ([]time.Duration, error) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	var t0 time.Time
	times := make([]time.Duration, herdSize)
	var bad atomic.Value
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
				bad.CompareAndSwap(nil, fmt.Errorf("get(%q) = %q, %v", key, v, err))
			}
		}()
	}
	ready.Wait()
	t0 = time.Now()
	close(start)
	done.Wait()
	if err, _ := bad.Load().(error); err != nil {
		return lat, err
	}
	return append(lat, times...), nil
}

// flightMap is the herd's peer: a map behind a mutex, filled through a
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
			return "", err
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

// runCacheWorkload measures the hit ratios, the memory held and the herd.
func runCacheWorkload(cfg config, res *Results) {
	trace := zipfTrace()
	caches, closeCaches := hitCaches(cfg)
	for _, c := range caches {
		res.HitRatio = append(res.HitRatio, HitRow{Peer: c.name, HitRatio: hitRatio(c, trace)})
	}
	closeCaches()
	if cfg.want(peerEngine) {
		res.Held = append(res.Held, measureHeld())
	}

	type peer struct {
		name   string
		get    herdStore
		close  func()
		loads  atomic.Int64
		lat    []time.Duration
		failed error
	}
	var peers []*peer
	for _, p := range herdPeers {
		if cfg.want(p.name) {
			get, closeStore := p.new()
			peers = append(peers, &peer{name: p.name, get: get, close: closeStore})
		}
	}
	herds := 10 * cfg.Reps
	for i := range herds { // interleaved, so outside load hits both alike
		for _, p := range peers {
			if p.failed != nil {
				continue
			}
			load := func(context.Context, string) (string, error) {
				p.loads.Add(1)
				time.Sleep(herdLoad)
				return "value", nil
			}
			p.lat, p.failed = herd(p.get, "user:"+strconv.Itoa(i), load, p.lat)
		}
	}
	for _, p := range peers {
		p.close()
		if p.failed != nil {
			res.skip("cache", p.name, p.failed.Error())
			continue
		}
		slices.Sort(p.lat)
		res.Herd = append(res.Herd, HerdRow{Peer: p.name, Herds: herds, LoadsPerHrd: float64(p.loads.Load()) / float64(herds),
			P50Ns: float64(p.lat[len(p.lat)/2]), P99Ns: float64(p.lat[len(p.lat)*99/100])})
	}
}

// printCache prints the cache workload's tables.
func printCache(w io.Writer, r *Results) {
	if len(r.HitRatio) == 0 && len(r.Held) == 0 && len(r.Herd) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## A bounded cache\n")
	if len(r.HitRatio) > 0 {
		fmt.Fprintf(w, "\nHit ratio: a Zipf(%.2f) trace of %d requests over %d keys (a get, and a set on a miss), each cache holding %d%% of the keys:\n\n",
			zipfTheta, zipfRequests, zipfKeys, 100/cacheShare)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "cache\thit ratio\t")
		for _, row := range r.HitRatio {
			fmt.Fprintf(tw, "%s\t%.1f%%\t\n", row.Peer, 100*row.HitRatio)
		}
		tw.Flush()
	}
	for _, h := range r.Held {
		fmt.Fprintf(w, "\nMemory held: an allkeys-lru engine bounded to %s, after %s written: live heap %s (%+.1f%% of the bound).\n",
			fmtBytes(h.Bound), fmtBytes(h.Written), fmtBytes(h.Heap), h.OverPct)
	}
	if len(r.Herd) > 0 {
		fmt.Fprintf(w, "\nThundering herd: %d goroutines miss one key at once, a %v load (latency from the release, over every caller of every herd):\n\n",
			herdSize, herdLoad)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "get-or-load\therds\tloads a herd\tp50\tp99\t")
		for _, row := range r.Herd {
			fmt.Fprintf(tw, "%s\t%d\t%.2f\t%s\t%s\t\n", row.Peer, row.Herds, row.LoadsPerHrd, fmtNs(row.P50Ns), fmtNs(row.P99Ns))
		}
		tw.Flush()
	}
}

// fmtBytes formats n bytes in MiB.
func fmtBytes(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
