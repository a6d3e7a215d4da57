package main

import (
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/nxkv/nxkv/engine"
)

// expStore is a store whose keys expire on their own.
type expStore interface {
	SetPX(key, value string, ttl time.Duration)
	Len() int
	Close()
}

// starter is implemented by stores whose background expiry work begins
// only once the keys are in (the full-scan sweeper: scanning a growing map
// during insertion would only slow the insertion down).
type starter interface{ start() }

type expPeer struct {
	Name string
	New  func(capacity int) (expStore, error)
	// MaxStall, when set, reports the longest time the peer held its lock
	// in one pass of expiry work.
	MaxStall func(expStore) time.Duration
}

// ExpiryRow is one expiry scenario on one peer.
type ExpiryRow struct {
	Peer     string  `json:"peer"`
	Scenario string  `json:"scenario"` // together, spread, idle
	Keys     int     `json:"keys"`
	InsertMs float64 `json:"insert_ms,omitempty"`
	// ReclaimMs is how long after the (last) deadline Len reached 0; -1 if
	// not within the timeout.
	ReclaimMs float64 `json:"reclaim_after_deadline_ms,omitempty"`
	// LagP50Ms and LagMaxMs (spread): how far Len trailed the number of
	// keys still alive, expressed as time.
	LagP50Ms float64 `json:"lag_p50_ms,omitempty"`
	LagMaxMs float64 `json:"lag_max_ms,omitempty"`
	// MeanDelayMs (spread) is how long after its deadline a key was gone,
	// on average over the keys: the area between Len and the number of
	// keys still alive, over time, divided by the keys.
	MeanDelayMs float64 `json:"mean_reclaim_delay_ms,omitempty"`
	// CPUPerKeyNs is process CPU time (user+system) from the first deadline
	// until Len reached 0, divided by the keys expired.
	CPUPerKeyNs float64 `json:"cpu_per_expired_key_ns,omitempty"`
	// HeapRetainedPct is the part of the heap the keys added that is still
	// live (after GC) when Len reaches 0; HeapDropMs is when (after the
	// deadline) it first fell to 10% or less, -1 if not within the timeout.
	HeapRetainedPct float64 `json:"heap_retained_pct,omitempty"`
	HeapDropMs      float64 `json:"heap_drop_after_deadline_ms,omitempty"`
	// Idle: CPU per second of wall time with 1,000 keys and with Keys keys
	// whose TTL (1 h) does not expire during the window.
	IdleCPUSmall float64 `json:"idle_cpu_ms_per_s_1k,omitempty"`
	IdleCPULarge float64 `json:"idle_cpu_ms_per_s_all,omitempty"`
	MaxStallMs   float64 `json:"max_lock_hold_ms,omitempty"`
	Note         string  `json:"note,omitempty"`
}

// ---- peers ----

type engineExp struct{ e *engine.Engine }

func (p engineExp) SetPX(k, v string, ttl time.Duration) { _ = p.e.SetPX(k, v, ttl) }
func (p engineExp) Len() int                             { return p.e.Len() }
func (p engineExp) Close()                               { _ = p.e.Close() }

type otterExp struct{ *otterKV }

func (p otterExp) SetPX(k, v string, ttl time.Duration) { p.c.Set(k, otterVal{v: v, ttl: ttl}) }
func (p otterExp) Len() int                             { return p.c.EstimatedSize() }

// sweepExp is map+Mutex with a goroutine that scans the whole map every
// period and deletes expired keys: the obvious active expiry.
type sweepExp struct {
	mu       sync.Mutex
	m        map[string]mmEntry // guarded by mu
	maxStall time.Duration      // guarded by mu
	period   time.Duration
	started  bool // set by start, read by Close on the same goroutine
	stop     chan struct{}
	done     chan struct{}
}

func newSweepExp(period time.Duration, capacity int) *sweepExp {
	return &sweepExp{m: make(map[string]mmEntry, capacity), period: period, stop: make(chan struct{}), done: make(chan struct{})}
}

// start launches the sweeper; Close stops it.
func (s *sweepExp) start() {
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.period)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.sweep()
			}
		}
	}()
	s.started = true
}

func (s *sweepExp) sweep() {
	s.mu.Lock()
	defer s.mu.Unlock()
	t0 := time.Now()
	now := t0.UnixNano()
	for k, e := range s.m {
		if e.dl != 0 && now > e.dl {
			delete(s.m, k)
		}
	}
	s.maxStall = max(s.maxStall, time.Since(t0))
}

func (s *sweepExp) SetPX(k, v string, ttl time.Duration) {
	s.mu.Lock()
	s.m[k] = mmEntry{v: v, dl: nowNano() + int64(ttl)}
	s.mu.Unlock()
}

func (s *sweepExp) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

func (s *sweepExp) Close() {
	close(s.stop)
	if s.started {
		<-s.done
	}
}

func expPeers(cfg config) []expPeer {
	return []expPeer{
		{Name: peerEngine, New: func(int) (expStore, error) {
			e, err := newEngine()
			if err != nil {
				return nil, err
			}
			return engineExp{e}, nil
		}},
		{Name: peerOtter + " (1 s clean-up tick)", New: func(n int) (expStore, error) {
			return otterExp{&otterKV{c: newOtterCache(true, n)}}, nil
		}},
		{Name: "map+Mutex full scan every " + cfg.SweepEvery.String(), New: func(n int) (expStore, error) {
			return newSweepExp(cfg.SweepEvery, n), nil
		}, MaxStall: func(s expStore) time.Duration {
			x := s.(*sweepExp)
			x.mu.Lock()
			defer x.mu.Unlock()
			return x.maxStall
		}},
	}
}

// ---- scenarios ----

// expiryValue returns a distinct 16-byte value for key i.
func expiryValue(i int) string { return "e" + keyName(i)[3:] + "00000000" }

// insertUntil stores every key with a TTL ending at its deadline. A key
// whose deadline has already passed gets 1 ms (the engine rejects a TTL <=
// 0, as Redis does); the caller reports the overrun.
func insertUntil(s expStore, keys []string, deadline func(i int) time.Time) time.Duration {
	t0 := time.Now()
	now := t0
	for i, k := range keys {
		if i%256 == 0 {
			now = time.Now()
		}
		s.SetPX(k, expiryValue(i), max(deadline(i).Sub(now), time.Millisecond))
	}
	return time.Since(t0)
}

// leadFor returns how far ahead to put the first deadline so that
// inserting every key (and a GC) finishes before it: it times a sixteenth
// of the keys in a throwaway store of the same peer (the machine may be
// loaded, so a fixed lead is not enough).
func leadFor(cfg config, p expPeer, keys []string) time.Duration {
	n := max(len(keys)/16, 1)
	s, err := p.New(n)
	if err != nil {
		return cfg.ExpiryLead
	}
	far := time.Now().Add(time.Hour)
	d := insertUntil(s, keys[:n], func(int) time.Time { return far })
	s.Close()
	runtime.GC()
	margin := min(500*time.Millisecond, cfg.ExpiryLead)
	return max(cfg.ExpiryLead, 4*d*time.Duration(len(keys)/n)+margin)
}

// filled is a store holding every key of a scenario, inserted (and the heap
// measured) before the first deadline.
type filled struct {
	s        expStore
	h0, peak uint64    // heap before creating the store and after filling it
	first    time.Time // the first (for together: the only) deadline
	insert   time.Duration
	note     string
}

// fill creates a store and inserts keys with the deadlines deadlines(first)
// gives. If insertion overruns the first deadline (a loaded machine), it
// starts over with a longer lead, twice at most, then reports the overrun.
func fill(cfg config, p expPeer, keys []string, deadlines func(first time.Time) func(int) time.Time) (*filled, error) {
	lead := leadFor(cfg, p, keys)
	for attempt := 1; ; attempt++ {
		f := &filled{h0: heapAfterGC()}
		s, err := p.New(len(keys))
		if err != nil {
			return nil, err
		}
		start := time.Now()
		f.s, f.first = s, start.Add(lead)
		f.insert = insertUntil(s, keys, deadlines(f.first))
		f.peak = heapAfterGC()
		if time.Now().Before(f.first) || attempt == 3 {
			if time.Now().After(f.first) {
				f.note = "insertion overran the first deadline 3 times; "
			}
			if st, ok := s.(starter); ok {
				st.start()
			}
			return f, nil
		}
		progress("expiry %s: insertion took %v, past the deadline; again with a longer lead", p.Name, time.Since(start).Round(time.Millisecond))
		s.Close()
		lead = 2*time.Since(start) + time.Second
	}
}

// watchReclaim polls Len until it is 0 or timeout passes; sample is called
// on every poll with the time and Len.
func watchReclaim(s expStore, timeout time.Duration, sample func(t time.Time, n int)) (doneAt time.Time, ok bool) {
	end := time.Now().Add(timeout)
	for {
		n := s.Len()
		now := time.Now()
		if sample != nil {
			sample(now, n)
		}
		if n == 0 {
			return now, true
		}
		if now.After(end) {
			return now, false
		}
		time.Sleep(time.Millisecond)
	}
}

// heapDrop polls the heap after GC every 50 ms until at most 10% of what the
// keys added is live, or timeout; it returns when that happened.
func heapDrop(h0, peak uint64, timeout time.Duration) (at time.Time, ok bool) {
	end := time.Now().Add(timeout)
	for {
		h := heapAfterGC()
		now := time.Now()
		if h <= h0 || float64(h-h0) <= 0.10*float64(peak-h0) {
			return now, true
		}
		if now.After(end) {
			return now, false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func retainedPct(h0, peak, h uint64) float64 {
	if peak <= h0 || h <= h0 {
		return 0
	}
	return float64(h-h0) / float64(peak-h0) * 100
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// expireTogether inserts every key with one common deadline and measures
// reclamation.
func expireTogether(cfg config, p expPeer, keys []string) (ExpiryRow, error) {
	return together(cfg, p, keys, true)
}

// together is expireTogether; without withHeap it skips the heap figures
// (and the wait for the heap to drop, which for a map that never shrinks
// lasts the whole timeout).
func together(cfg config, p expPeer, keys []string, withHeap bool) (ExpiryRow, error) {
	row := ExpiryRow{Peer: p.Name, Scenario: "together", Keys: len(keys)}
	f, err := fill(cfg, p, keys, func(first time.Time) func(int) time.Time {
		return func(int) time.Time { return first }
	})
	if err != nil {
		return row, err
	}
	defer f.s.Close()
	row.InsertMs, row.Note = ms(f.insert), f.note
	deadline := f.first
	time.Sleep(time.Until(deadline))
	c0 := cpuTime()
	doneAt, ok := watchReclaim(f.s, cfg.ReclaimTimeout, nil)
	c1 := cpuTime()
	row.ReclaimMs = ms(doneAt.Sub(deadline))
	if !ok {
		row.ReclaimMs = -1
		row.Note += "Len did not reach 0 within " + cfg.ReclaimTimeout.String()
	}
	row.CPUPerKeyNs = float64(c1-c0) / float64(len(keys))
	if !withHeap {
		return row, nil
	}
	row.HeapRetainedPct = retainedPct(f.h0, f.peak, heapAfterGC())
	if at, ok := heapDrop(f.h0, f.peak, cfg.ReclaimTimeout/2); ok {
		row.HeapDropMs = ms(at.Sub(deadline))
	} else {
		row.HeapDropMs = -1
	}
	if p.MaxStall != nil {
		row.MaxStallMs = ms(p.MaxStall(f.s))
	}
	return row, nil
}

// expireSpread inserts keys (in random order) with deadlines spread evenly
// over cfg.Spread and measures how far reclamation trails them.
func expireSpread(cfg config, p expPeer, keys []string) (ExpiryRow, error) {
	row := ExpiryRow{Peer: p.Name, Scenario: "spread", Keys: len(keys)}
	n := len(keys)
	order := rand.New(rand.NewPCG(7, 7)).Perm(n)
	f, err := fill(cfg, p, keys, func(first time.Time) func(int) time.Time {
		return func(i int) time.Time { return first.Add(time.Duration(int64(cfg.Spread) * int64(order[i]) / int64(n))) }
	})
	if err != nil {
		return row, err
	}
	defer f.s.Close()
	row.InsertMs, row.Note = ms(f.insert), f.note
	first := f.first
	last := first.Add(cfg.Spread)
	time.Sleep(time.Until(first))
	c0 := cpuTime()
	var lags []int64
	var lagMax time.Duration
	// area is the integral of Len - alive over time (trapezoids between
	// polls): each key adds the time it stayed after its deadline.
	alive := func(t time.Time) int {
		if !t.After(first) {
			return n
		}
		return max(0, n-int(int64(n)*int64(t.Sub(first))/int64(cfg.Spread)))
	}
	var area float64
	prevT, prevL := first, n
	doneAt, ok := watchReclaim(f.s, cfg.Spread+cfg.ReclaimTimeout, func(t time.Time, l int) {
		area += float64(prevL-alive(prevT)+l-alive(t)) / 2 * float64(t.Sub(prevT))
		prevT, prevL = t, l
		if t.After(last) {
			return
		}
		if a := alive(t); l > a {
			lag := time.Duration(int64(l-a) * int64(cfg.Spread) / int64(n))
			lags = append(lags, int64(lag))
			lagMax = max(lagMax, lag)
		} else {
			lags = append(lags, 0)
		}
	})
	c1 := cpuTime()
	row.ReclaimMs = ms(doneAt.Sub(last))
	if !ok {
		row.ReclaimMs = -1
		row.Note += "Len did not reach 0 within the timeout (the mean delay counts the keys left as gone then)"
	}
	row.MeanDelayMs = area / float64(n) / 1e6
	row.LagP50Ms = quantiles(lags).P50 / 1e6
	row.LagMaxMs = ms(lagMax)
	row.CPUPerKeyNs = float64(c1-c0) / float64(n)
	row.HeapRetainedPct = retainedPct(f.h0, f.peak, heapAfterGC())
	if p.MaxStall != nil {
		row.MaxStallMs = ms(p.MaxStall(f.s))
	}
	return row, nil
}

// idleCost measures process CPU over a quiet window with keys whose TTL
// does not end in it, for a small and a large key count: the cost of
// expiry bookkeeping must not grow with keys that are not expiring.
func idleCost(cfg config, p expPeer, keys []string) (ExpiryRow, error) {
	row := ExpiryRow{Peer: p.Name, Scenario: "idle", Keys: len(keys)}
	measure := func(ks []string) (float64, error) {
		s, err := p.New(len(ks))
		if err != nil {
			return 0, err
		}
		defer s.Close()
		far := time.Now().Add(time.Hour)
		insertUntil(s, ks, func(int) time.Time { return far })
		if st, ok := s.(starter); ok {
			st.start()
		}
		// Return freed memory to the OS now, so that the scavenger's
		// background work (left over from earlier scenarios) does not
		// land in the window.
		debug.FreeOSMemory()
		time.Sleep(50 * time.Millisecond)
		c0, t0 := cpuTime(), time.Now()
		time.Sleep(cfg.IdleWindow)
		c1, t1 := cpuTime(), time.Now()
		return ms(c1-c0) / t1.Sub(t0).Seconds(), nil
	}
	var err error
	if row.IdleCPUSmall, err = measure(keys[:min(1000, len(keys))]); err != nil {
		return row, err
	}
	runtime.GC()
	if row.IdleCPULarge, err = measure(keys); err != nil {
		return row, err
	}
	return row, nil
}

// idleFloor is the process's own idle CPU (runtime, progress output) with
// no store at all, so the idle figures can be read against it.
func idleFloor(cfg config) float64 {
	debug.FreeOSMemory()
	c0, t0 := cpuTime(), time.Now()
	time.Sleep(cfg.IdleWindow)
	return ms(cpuTime()-c0) / time.Since(t0).Seconds()
}

func runExpiryWorkload(cfg config, res *Results) {
	keys := makeKeys(cfg.ExpiryKeys)
	res.IdleFloor = idleFloor(cfg)
	for _, p := range expPeers(cfg) {
		if !cfg.want(p.Name) {
			continue
		}
		for _, sc := range []struct {
			name string
			f    func(config, expPeer, []string) (ExpiryRow, error)
		}{{"together", expireTogether}, {"spread", expireSpread}, {"idle", idleCost}} {
			row, err := sc.f(cfg, p, keys)
			if err != nil {
				res.skip("expiry", p.Name, err.Error())
				break
			}
			res.Expiry = append(res.Expiry, row)
			progress("expiry %-34s %-8s reclaim %.0fms lag max %.0fms cpu/key %.0fns heap kept %.0f%% idle %.2f/%.2f ms/s",
				p.Name, sc.name, row.ReclaimMs, row.LagMaxMs, row.CPUPerKeyNs, row.HeapRetainedPct, row.IdleCPUSmall, row.IdleCPULarge)
			runtime.GC()
		}
	}
}
