package main

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestEvaluateGoals(t *testing.T) {
	row := func(peer, op string, ns float64) RawRow {
		return RawRow{Peer: peer, Op: op, Keys: 1024, Goroutines: 1, NsPerOp: ns, OpsPerSec: summary{Median: 1e9 / ns}}
	}
	find := func(gs []Goal, name string) Goal {
		for _, g := range gs {
			if strings.HasPrefix(g.Name, name) {
				return g
			}
		}
		return Goal{}
	}
	tests := []struct {
		name     string
		engineNs float64
		xsyncNs  float64
		want     string
	}{
		{name: "within 1.5x", engineNs: 14, xsyncNs: 10, want: "met"},
		{name: "twice as slow", engineNs: 20, xsyncNs: 10, want: "missed"},
	}
	for _, tt := range tests {
		r := &Results{Config: config{HotKeys: 1024, BigKeys: 1 << 20}}
		for _, op := range rawOps() {
			r.Raw = append(r.Raw, row(peerEngine, op.Name, tt.engineNs), row(peerXsync, op.Name, tt.xsyncNs), row(peerOtter, op.Name, 100))
		}
		got := find(evaluateGoals(r), "KV operations without TTL")
		if got.Status != tt.want {
			t.Errorf("%s: status = %q, want %q (%s)", tt.name, got.Status, tt.want, got.Detail)
		}
	}
	// A missing peer is n/a, never met.
	r := &Results{Config: config{HotKeys: 1024}, Raw: []RawRow{row(peerEngine, "Get", 10)}}
	if got := find(evaluateGoals(r), "KV operations without TTL"); got.Status != "n/a" {
		t.Errorf("without xsync: status = %q, want n/a", got.Status)
	}
	// Lock goal: 500x faster than Redis is a miss, 2000x a hit.
	for _, tt := range []struct {
		redisCycles float64
		want        string
	}{{1e4, "missed"}, {2.5e3, "met"}} {
		r = &Results{Locks: []LockRow{
			{Peer: "nxkv lockapi (in-process)", Scenario: "uncontended", Goroutines: 1, CyclesPS: summary{Median: 5e6}, NsPerCycle: 200},
			{Peer: baselineLockPeer, Scenario: "uncontended", Goroutines: 1, CyclesPS: summary{Median: tt.redisCycles}, NsPerCycle: 1e9 / tt.redisCycles},
		}}
		if got := find(evaluateGoals(r), "lock cycle in process at least 1000x"); got.Status != tt.want {
			t.Errorf("Redis at %v cycles/s: status = %q, want %q (%s)", tt.redisCycles, got.Status, tt.want, got.Detail)
		}
	}
}

// TestDoublesGoal: the test-double goal is met only when the whole 95%
// interval of nxkv-server's time over miniredis's lies beyond 5% faster
// (the headline's rule), and the table prints the verdict the interval
// supports.
func TestDoublesGoal(t *testing.T) {
	for _, tc := range []struct {
		lo, med, hi float64
		status      string
		printed     string
	}{
		{0.3, 0.5, 0.7, "met", "2.0x faster (95% interval 1.4x–3.3x faster)"},
		{0.8, 0.95, 1.1, "missed", "no clear difference (95% interval 1.2x faster to 1.1x slower)"},
		{0.9, 0.93, 0.96, "missed", "no clear difference (95% interval"},
	} {
		r := &Results{Doubles: []DoubleRow{
			{Peer: "miniredis", NsPerJob: interval{Median: 500e3, Lo: 450e3, Hi: 550e3}},
			{Peer: nxkvServerName, NsPerJob: interval{Median: 250e3, Lo: 200e3, Hi: 300e3},
				VsMiniredis: &interval{Median: tc.med, Lo: tc.lo, Hi: tc.hi}},
		}}
		gs := evaluateGoals(r)
		if len(gs) != 1 || gs[0].Status != tc.status {
			t.Fatalf("interval %v–%v: goals %+v, want one %s", tc.lo, tc.hi, gs, tc.status)
		}
		var b strings.Builder
		printDoubles(&b, r)
		if !strings.Contains(b.String(), tc.printed) {
			t.Fatalf("table does not say %q:\n%s", tc.printed, b.String())
		}
	}
}

// TestCacheGoals: the bounded-cache goals are met by figures within their
// limits and missed beyond them, and the table prints every row.
func TestCacheGoals(t *testing.T) {
	for _, tc := range []struct {
		lru, exact, over, loads float64
		status                  [3]string
	}{
		{0.62, 0.64, 3.1, 1, [3]string{"met", "met", "met"}},
		{0.55, 0.64, 7.5, 1.5, [3]string{"missed", "missed", "missed"}},
	} {
		r := &Results{
			HitRatio: []HitRow{{Peer: peerEngine + " allkeys-lru", HitRatio: tc.lru}, {Peer: "exact LRU", HitRatio: tc.exact}},
			Held:     []HeldRow{{Bound: 32 << 20, Heap: int64((1 + tc.over/100) * (32 << 20)), OverPct: tc.over}},
			Herd:     []HerdRow{{Peer: peerEngine, Herds: 10, LoadsPerHrd: tc.loads}, {Peer: "singleflight", Herds: 10, LoadsPerHrd: 1}},
		}
		gs := evaluateGoals(r)
		if len(gs) != 3 {
			t.Fatalf("goals %+v, want 3", gs)
		}
		for i, g := range gs {
			if g.Status != tc.status[i] {
				t.Errorf("%+v: %s, want %s", g, g.Status, tc.status[i])
			}
		}
		var b strings.Builder
		printCache(&b, r)
		for _, want := range []string{"exact LRU", "singleflight", "live heap"} {
			if !strings.Contains(b.String(), want) {
				t.Fatalf("table does not say %q:\n%s", want, b.String())
			}
		}
	}
}

// TestZipf: the generator's ranks follow Zipf(0.99): rank 0 is drawn
// about 1/zeta(n) of the time and rank 1 about 2^-0.99 of rank 0's.
func TestZipf(t *testing.T) {
	const n, draws = 1000, 200_000
	z := newZipf(rand.New(rand.NewPCG(3, 4)), n, 0.99)
	counts := make([]int, n)
	for range draws {
		counts[z.next()]++
	}
	want0 := draws / z.zetan
	if c := float64(counts[0]); c < 0.95*want0 || c > 1.05*want0 {
		t.Fatalf("rank 0 drawn %v times, want about %.0f", c, want0)
	}
	if r := float64(counts[1]) / float64(counts[0]); math.Abs(r-math.Pow(2, -0.99)) > 0.05 {
		t.Fatalf("rank 1 / rank 0 = %.3f, want about %.3f", r, math.Pow(2, -0.99))
	}
}
