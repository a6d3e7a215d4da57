package main

import (
	"fmt"
	"runtime"
	"sync"
	"time"
)

// value is the 16-byte value every raw operation writes.
const value = "v0123456789abcde"

// pxTTL is the TTL of SetNXPX in the raw-op workload: long enough never to
// expire during a run, so the deadline bookkeeping is measured, not expiry.
const pxTTL = time.Hour

// kvPeer is a raw-operation peer: a name and a constructor.
type kvPeer struct {
	Name    string
	Network bool // talks to a server: smaller chunks, every op sampled
	New     func() (kvStore, error)
}

// rawOp is one measured operation with the untimed steps that keep its
// success path stationary. Every key starts in the base state (present,
// holding value, no TTL) and every op returns it there: pre runs ahead of
// the timed chunk on keys it is about to visit (lagging far enough that the
// preparation does not warm the cache for a large key set), post right after
// the chunk on the keys just visited, and restore at the end on keys that
// pre prepared but the run did not reach.
type rawOp struct {
	Name    string
	Do      func(s kvStore, k string) bool // reports success
	Pre     func(s kvStore, keys []string)
	Post    func(s kvStore, keys []string)
	Restore func(s kvStore, keys []string)
}

func rawOps() []rawOp {
	del := func(s kvStore, ks []string) { s.delMany(ks) }
	set := func(s kvStore, ks []string) { s.setMany(ks, value) }
	return []rawOp{
		{Name: "Get", Do: func(s kvStore, k string) bool { _, ok := s.Get(k); return ok }},
		{Name: "Set", Do: func(s kvStore, k string) bool { s.Set(k, value); return true }},
		{Name: "GetSet", Do: func(s kvStore, k string) bool { _, ok := s.GetSet(k, value); return ok }},
		{Name: "SetNX", Do: func(s kvStore, k string) bool { return s.SetNX(k, value) }, Pre: del, Restore: set},
		{Name: "SetNXPX", Do: func(s kvStore, k string) bool { return s.SetNXPX(k, value, pxTTL) }, Pre: del, Post: set, Restore: set},
		{Name: "CompareAndDelete", Do: func(s kvStore, k string) bool { return s.CompareAndDelete(k, value) }, Post: set},
	}
}

// RawRow is one raw-operation measurement.
type RawRow struct {
	Peer       string  `json:"peer"`
	Op         string  `json:"op"`
	Keys       int     `json:"keys"`
	Goroutines int     `json:"goroutines"`
	OpsPerSec  summary `json:"ops_per_sec"`
	NsPerOp    float64 `json:"ns_per_op"`
	// TypicalNs is the median over every timed chunk (up to 1,024 ops) of
	// one goroutine's ns per op: what an undisturbed stretch costs, less
	// sensitive than NsPerOp to the machine's other load. With several
	// goroutines it is per goroutine, not aggregate.
	TypicalNs   float64     `json:"typical_ns_per_op"`
	AllocsPerOp float64     `json:"allocs_per_op"` // measured with one goroutine; -1 if not measured
	Latency     percentiles `json:"latency"`
	OKRate      float64     `json:"ok_rate"` // fraction of ops that took their success path
	VsBaseline  float64     `json:"vs_baseline"`
	Note        string      `json:"note,omitempty"`
	// Source is sourceHeadline when the row is a headline job's
	// measurement, which the full suite shows instead of measuring the
	// same cell again (one number per fact); Reps is then the rounds.
	Source string `json:"source,omitempty"`
	Reps   int    `json:"reps"`
}

// sourceHeadline marks the rows of the full suite's tables that a headline
// job measured.
const sourceHeadline = "headline"

// rep is what one repetition measured.
type rep struct {
	ops, ok   int64
	perSec    float64 // aggregate throughput: sum over goroutines of ops/timed
	allocs    uint64
	allocsOps int64
	samples   []int64
	chunkNs   []float64 // ns per op of each timed chunk
}

// chunkPlan sizes the timed chunks for one goroutine's share of n keys.
type chunkPlan struct{ n, chunk, lag int }

func planChunks(n int, network bool) chunkPlan {
	limit := 1024
	if network {
		limit = 16
	}
	chunk := 1
	for chunk*2 <= min(limit, n/4) {
		chunk *= 2
	}
	n -= n % chunk
	lag := chunk
	if !network {
		lag = max(chunk, min(n/2, 1<<18)/chunk*chunk)
	}
	return chunkPlan{n: n, chunk: chunk, lag: lag}
}

// wrap returns keys[from : from+cnt] modulo len(keys) (one or two slices).
func wrap(keys []string, from, cnt int) [][]string {
	n := len(keys)
	from %= n
	if from+cnt <= n {
		return [][]string{keys[from : from+cnt]}
	}
	return [][]string{keys[from:], keys[:from+cnt-n]}
}

// cursor is one goroutine's position in its share of keys. It persists over
// the warm-up and the repetitions of one measurement, so the lagged
// preparation is primed once and restored once.
type cursor struct {
	keys   []string
	plan   chunkPlan
	pos    int
	primed bool
}

func newCursors(shares [][]string, network bool) []*cursor {
	cs := make([]*cursor, len(shares))
	for i, sh := range shares {
		plan := planChunks(len(sh), network)
		cs[i] = &cursor{keys: sh[:plan.n], plan: plan}
	}
	return cs
}

// finish returns the keys prepared but not visited to the base state.
func (c *cursor) finish(s kvStore, op rawOp) {
	if op.Restore != nil && c.primed {
		for _, part := range wrap(c.keys, c.pos, c.plan.lag) {
			op.Restore(s, part)
		}
	}
	c.primed = false
}

// runRep runs op on every goroutine's cursor for about d and measures it.
func runRep(s kvStore, op rawOp, cursors []*cursor, d time.Duration, network, countAllocs bool) rep {
	sampleEvery := 64
	if network {
		sampleEvery = 1
	}
	type result struct {
		ops, ok   int64
		timed     time.Duration
		allocs    uint64
		allocsOps int64
		samples   []int64
		chunkNs   []float64
	}
	res := make([]result, len(cursors))
	var wg sync.WaitGroup
	var start sync.WaitGroup
	start.Add(1)
	for g, c := range cursors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			plan, keys := c.plan, c.keys
			r := &res[g]
			r.samples = make([]int64, 0, 1<<14)
			ac := newAllocCounter()
			if op.Pre != nil && !c.primed {
				for _, part := range wrap(keys, c.pos, plan.lag) {
					op.Pre(s, part)
				}
			}
			c.primed = true
			start.Wait()
			end := time.Now().Add(d)
			for time.Now().Before(end) {
				chunk := keys[c.pos : c.pos+plan.chunk]
				if op.Pre != nil {
					for _, part := range wrap(keys, c.pos+plan.lag, plan.chunk) {
						op.Pre(s, part)
					}
				}
				var a0 uint64
				if countAllocs {
					a0 = ac.read()
				}
				ok := int64(0)
				t0 := time.Now()
				for i, k := range chunk {
					if i%sampleEvery == 0 && len(r.samples) < cap(r.samples) {
						ts := time.Now()
						if op.Do(s, k) {
							ok++
						}
						r.samples = append(r.samples, int64(time.Since(ts)))
						continue
					}
					if op.Do(s, k) {
						ok++
					}
				}
				el := time.Since(t0)
				r.timed += el
				r.chunkNs = append(r.chunkNs, float64(el)/float64(len(chunk)))
				if countAllocs {
					r.allocs += ac.read() - a0
					r.allocsOps += int64(len(chunk))
				}
				r.ops += int64(len(chunk))
				r.ok += ok
				if op.Post != nil {
					op.Post(s, chunk)
				}
				c.pos = (c.pos + plan.chunk) % plan.n
			}
		}()
	}
	start.Done()
	wg.Wait()
	var out rep
	for _, r := range res {
		out.ops += r.ops
		out.ok += r.ok
		out.allocs += r.allocs
		out.allocsOps += r.allocsOps
		out.samples = append(out.samples, r.samples...)
		out.chunkNs = append(out.chunkNs, r.chunkNs...)
		if r.timed > 0 {
			out.perSec += float64(r.ops) / r.timed.Seconds()
		}
	}
	return out
}

// rawMeasurement is one (peer, op, key set, goroutines) cell, run in steps
// so that the workload can interleave the peers' repetitions.
type rawMeasurement struct {
	warm func()
	rep  func() float64 // one repetition; returns its ops/s
	// pause returns the keys to their base state; rep and warm may
	// follow, preparing them again.
	pause func()
	row   func() RawRow // after the repetitions; restores the key state
	// renew moves the measurement to a fresh store holding every key in
	// its base state, for the repetitions that follow.
	renew func(s kvStore)
}

// measureRaw prepares one cell; shares are the goroutines' keys (see
// partition).
func measureRaw(cfg config, s kvStore, op rawOp, shares [][]string, network bool) *rawMeasurement {
	g := len(shares)
	cursors := newCursors(shares, network)
	var rates, chunkNs []float64
	var samples []int64
	var ops, ok int64
	var allocs uint64
	var allocsOps int64
	pause := func() {
		for _, c := range cursors {
			c.finish(s, op)
		}
	}
	return &rawMeasurement{
		warm:  func() { runRep(s, op, cursors, cfg.Warmup, network, false) },
		pause: pause,
		renew: func(fresh kvStore) {
			s = fresh
			for _, c := range cursors {
				c.primed = false
			}
		},
		rep: func() float64 {
			r := runRep(s, op, cursors, cfg.RepDur, network, g == 1)
			rates = append(rates, r.perSec)
			samples = append(samples, r.samples...)
			chunkNs = append(chunkNs, r.chunkNs...)
			ops += r.ops
			ok += r.ok
			allocs += r.allocs
			allocsOps += r.allocsOps
			return r.perSec
		},
		row: func() RawRow {
			pause()
			n := 0
			for _, sh := range shares {
				n += len(sh)
			}
			row := RawRow{Op: op.Name, Keys: n, Goroutines: g, OpsPerSec: summarize(rates), Latency: quantiles(samples), AllocsPerOp: -1,
				TypicalNs: summarize(chunkNs).Median, Reps: len(rates)}
			if row.OpsPerSec.Median > 0 {
				row.NsPerOp = 1e9 / row.OpsPerSec.Median
			}
			if allocsOps > 0 {
				row.AllocsPerOp = float64(allocs) / float64(allocsOps)
			}
			if ops > 0 {
				row.OKRate = float64(ok) / float64(ops)
			}
			if err := s.Err(); err != nil {
				row.Note = "error: " + err.Error()
			}
			return row
		},
	}
}

// runRawWorkload measures every peer on both key sets at 1 and GOMAXPROCS
// goroutines, then fills in the ratio to the map+Mutex baseline. For each
// key set every peer is loaded first; then, cell by cell, the peers'
// repetitions are interleaved (rep 1 of every peer, then rep 2, ...), so a
// burst of load from other processes hits every peer alike. (A larger live
// heap does not raise the amortized GC cost per allocation: the collector
// runs when the heap has grown by GOGC% of the live heap.)
func runRawWorkload(cfg config, peers []kvPeer, res *Results) {
	procs := runtime.GOMAXPROCS(0)
	gs := []int{1}
	if procs > 1 {
		gs = append(gs, procs)
	}
	type loaded struct {
		p kvPeer
		s kvStore
	}
	for _, n := range []int{cfg.HotKeys, cfg.BigKeys} {
		keys := makeKeys(n)
		shares := map[int][][]string{}
		for _, g := range gs {
			shares[g] = partition(keys, g)
		}
		var stores []loaded
		for _, p := range peers {
			if !cfg.want(p.Name) {
				continue
			}
			s, err := p.New()
			if err != nil {
				res.skip("raw", p.Name, err.Error())
				continue
			}
			t0 := time.Now()
			s.setMany(keys, value)
			if err := s.Err(); err != nil {
				res.skip("raw", p.Name, err.Error())
				s.Close()
				continue
			}
			progress("raw %s: %d keys loaded in %v", p.Name, n, time.Since(t0).Round(time.Millisecond))
			stores = append(stores, loaded{p, s})
		}
		for _, op := range rawOps() {
			for _, g := range gs {
				// Cells a headline job measured keep its figures.
				var cell []loaded
				for _, st := range stores {
					if _, ok := rawRow(res, st.p.Name, op.Name, n, g); !ok {
						cell = append(cell, st)
					}
				}
				ms := make([]*rawMeasurement, len(cell))
				for i, st := range cell {
					ms[i] = measureRaw(cfg, st.s, op, shares[g], st.p.Network)
					ms[i].warm()
				}
				for range cfg.Reps {
					for _, m := range ms {
						m.rep()
					}
				}
				for i, m := range ms {
					row := m.row()
					row.Peer = cell[i].p.Name
					res.Raw = append(res.Raw, row)
					progress("raw %-22s %-16s %7d keys %2dg  %12.0f ops/s  %9.1f ns/op  ±%.0f%%",
						row.Peer, op.Name, n, g, row.OpsPerSec.Median, row.NsPerOp, row.OpsPerSec.spreadPct())
				}
			}
		}
		for _, st := range stores {
			if st.p.Network {
				st.s.delMany(keys)
			}
			st.s.Close()
		}
		runtime.GC()
	}
	// Ratios: throughput relative to map+Mutex in the same cell.
	base := map[string]float64{}
	for _, r := range res.Raw {
		if r.Peer == peerMapMutex {
			base[rawCell(r)] = r.OpsPerSec.Median
		}
	}
	for i := range res.Raw {
		if b := base[rawCell(res.Raw[i])]; b > 0 {
			res.Raw[i].VsBaseline = res.Raw[i].OpsPerSec.Median / b
		}
	}
}

func rawCell(r RawRow) string { return fmt.Sprintf("%s/%d/%d", r.Op, r.Keys, r.Goroutines) }

// Peer names used in tables and ratios.
const (
	peerEngine   = "nxkv engine"
	peerMapMutex = "map+Mutex"
	peerSyncMap  = "sync.Map"
	peerXsync    = "xsync.Map"
	peerOtter    = "otter"
)

// inprocKVPeers are the raw-op peers that need no server.
func inprocKVPeers() []kvPeer {
	return []kvPeer{
		{Name: peerEngine, New: newEngineKV},
		{Name: peerMapMutex, New: newMapMutexKV},
		{Name: peerSyncMap, New: newSyncMapKV},
		{Name: peerXsync, New: newXsyncKV},
		{Name: peerOtter, New: newOtterKV},
	}
}

// nopKV does nothing: run through the raw-op loop it measures the harness's
// own cost per operation (the interface call, the loop, the sampling).
type nopKV struct{}

var _ kvStore = nopKV{}

func (nopKV) Get(string) (string, bool)                  { return value, true }
func (nopKV) Set(string, string)                         {}
func (nopKV) GetSet(string, string) (string, bool)       { return value, true }
func (nopKV) SetNX(string, string) bool                  { return true }
func (nopKV) SetNXPX(string, string, time.Duration) bool { return true }
func (nopKV) CompareAndDelete(string, string) bool       { return true }
func (nopKV) setMany([]string, string)                   {}
func (nopKV) delMany([]string)                           {}
func (nopKV) Err() error                                 { return nil }
func (nopKV) Close()                                     {}

// harnessFloor is the typical ns per Get of nopKV over the hot keys.
func harnessFloor(cfg config) float64 {
	m := measureRaw(cfg, nopKV{}, rawOps()[0], partition(makeKeys(cfg.HotKeys), 1), false)
	m.warm()
	for range 3 {
		m.rep()
	}
	return m.row().TypicalNs
}
