package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"runtime"
	"runtime/metrics"
	"slices"
	"time"
)

// config sizes one run of the suite: the headline jobs (Head) and the full
// suite (-full, the other fields). Tests use tinyConfig.
type config struct {
	Reps       int           // repetitions per measurement; the median is reported
	RepDur     time.Duration // length of one repetition of a raw-op measurement
	Warmup     time.Duration // untimed run before the repetitions
	HotKeys    int           // the hot key set
	BigKeys    int           // the large key set
	LockDur    time.Duration // length of one repetition of a lock measurement
	Contenders []int         // goroutines contending on one lock key
	Waiters    int           // blocked waiters in the hand-off scenario
	ExpiryKeys int           // keys in each expiry scenario
	ExpiryLead time.Duration // from the start of insertion to the common deadline
	Spread     time.Duration // deadlines spread over this window
	IdleWindow time.Duration // window over which idle CPU is measured
	SweepEvery time.Duration // period of the full-scan peer's sweep
	MemKeys    int           // keys in the memory measurement
	// ReclaimTimeout bounds waiting for a store to reclaim expired keys.
	ReclaimTimeout time.Duration
	// Head sizes the headline jobs.
	Head headConfig
	// Peers, when set, selects the peers whose name it matches (-peers).
	Peers *regexp.Regexp `json:"-"`
}

// headConfig sizes the headline jobs: small key sets and short
// repetitions, but many interleaved rounds, so that the ratios between
// contestants are stable on a busy machine. A job that has not settled
// its verdicts after its first rounds adds Step rounds at a time, up to
// its maximum (see decide).
type headConfig struct {
	Rounds    int           // first rounds of the in-process KV and lock jobs
	NetRounds int           // first rounds of the jobs over Redis
	Step      int           // rounds added at a time to an unsettled job
	MaxRounds int           // the most rounds a KV or lock job runs
	RepDur    time.Duration // one KV repetition
	LockDur   time.Duration // one lock repetition
	// HandoffDur is one hand-off repetition: each hand-off takes about
	// a poll delay, so a repetition needs longer to see a few dozen.
	HandoffDur      time.Duration
	Warmup          time.Duration
	Contenders      int // goroutines of the contended lock jobs
	ContendedKeys   int // keys of the contended jobs' spread variant
	ExpiryKeys      int
	ExpiryRounds    int
	ExpiryStep      int
	ExpiryMaxRounds int
	ExpiryLead      time.Duration
	// ExpirySpread is the window the deadlines are spread over: a whole
	// number of the full-scan sweeper's periods, so that its figure does
	// not depend on where its ticks fall.
	ExpirySpread time.Duration
	MemKeys      int
	MemRounds    int
}

// forHead returns c with the headline's sizes in the fields the workload
// functions read.
func (c config) forHead() config {
	h := c.Head
	c.Reps, c.RepDur, c.LockDur, c.Warmup = h.Rounds, h.RepDur, h.LockDur, h.Warmup
	c.ExpiryKeys, c.ExpiryLead, c.MemKeys, c.Spread = h.ExpiryKeys, h.ExpiryLead, h.MemKeys, h.ExpirySpread
	return c
}

// want reports whether the peer named name runs.
func (c config) want(name string) bool { return c.Peers == nil || c.Peers.MatchString(name) }

func defaultConfig() config {
	return config{
		Reps:           7,
		RepDur:         50 * time.Millisecond,
		Warmup:         30 * time.Millisecond,
		HotKeys:        1 << 10,
		BigKeys:        1 << 20,
		LockDur:        100 * time.Millisecond,
		Contenders:     []int{2, 8, 64},
		Waiters:        8,
		ExpiryKeys:     1 << 20,
		ExpiryLead:     time.Second,
		Spread:         time.Second,
		IdleWindow:     time.Second,
		SweepEvery:     100 * time.Millisecond,
		MemKeys:        1 << 20,
		ReclaimTimeout: 5 * time.Second,
		Head: headConfig{
			Rounds:          15,
			NetRounds:       21,
			Step:            16,
			MaxRounds:       47,
			RepDur:          20 * time.Millisecond,
			LockDur:         40 * time.Millisecond,
			HandoffDur:      80 * time.Millisecond,
			Warmup:          10 * time.Millisecond,
			Contenders:      8,
			ContendedKeys:   64,
			ExpiryKeys:      1 << 16,
			ExpiryRounds:    7,
			ExpiryStep:      8,
			ExpiryMaxRounds: 15,
			ExpiryLead:      150 * time.Millisecond,
			ExpirySpread:    200 * time.Millisecond,
			MemKeys:         1 << 17,
			MemRounds:       7,
		},
	}
}

// summary is the median of the repetitions and their range.
type summary struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// spreadPct is the range of the repetitions as a percentage of the median:
// how noisy the measurement was.
func (s summary) spreadPct() float64 {
	if s.Median == 0 {
		return 0
	}
	return (s.Max - s.Min) / s.Median * 100
}

func summarize(xs []float64) summary {
	if len(xs) == 0 {
		return summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	var med float64
	if n := len(s); n%2 == 1 {
		med = s[n/2]
	} else {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return summary{Median: med, Min: s[0], Max: s[len(s)-1]}
}

// percentiles are latency quantiles in nanoseconds.
type percentiles struct {
	P50  float64 `json:"p50_ns"`
	P99  float64 `json:"p99_ns"`
	P999 float64 `json:"p999_ns"`
	N    int     `json:"samples"`
}

// quantiles computes nearest-rank quantiles of samples (which it sorts).
func quantiles(samples []int64) percentiles {
	if len(samples) == 0 {
		return percentiles{}
	}
	slices.Sort(samples)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(samples)))) - 1
		i = max(0, min(i, len(samples)-1))
		return float64(samples[i])
	}
	return percentiles{P50: at(0.50), P99: at(0.99), P999: at(0.999), N: len(samples)}
}

// allocCounter reads the cumulative count of heap allocations without
// stopping the world (unlike runtime.ReadMemStats, whose Mallocs it equals).
type allocCounter struct{ s []metrics.Sample }

func newAllocCounter() *allocCounter {
	return &allocCounter{s: []metrics.Sample{{Name: "/gc/heap/allocs:objects"}}}
}

func (a *allocCounter) read() uint64 {
	metrics.Read(a.s)
	return a.s[0].Value.Uint64()
}

// heapAfterGC collects garbage (twice, so finalizers and sweeping settle) and
// returns the live heap in bytes.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// timerFloor is the median cost of timing an empty section, which every
// latency sample includes.
func timerFloor() time.Duration {
	xs := make([]int64, 20000)
	for i := range xs {
		t := time.Now()
		xs[i] = int64(time.Since(t))
	}
	return time.Duration(quantiles(xs).P50)
}

// keyName is the key every peer uses for index i: ten bytes, as in the
// memory target ("nxb" and seven digits).
func keyName(i int) string { return fmt.Sprintf("nxb%07d", i) }

// makeKeys returns the key names 0..n-1.
func makeKeys(n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = keyName(i)
	}
	return ks
}

// partition deals keys to g goroutines (key i to goroutine i mod g), so they
// share shards and buckets but never a key, and shuffles each share with a
// fixed seed: every peer sees the same access order.
func partition(keys []string, g int) [][]string {
	out := make([][]string, g)
	for i, k := range keys {
		out[i%g] = append(out[i%g], k)
	}
	for i := range out {
		r := rand.New(rand.NewPCG(uint64(i)+1, 42))
		r.Shuffle(len(out[i]), func(a, b int) { out[i][a], out[i][b] = out[i][b], out[i][a] })
	}
	return out
}
