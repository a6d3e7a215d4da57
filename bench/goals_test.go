package main

import (
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
