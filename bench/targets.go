package main

import (
	"fmt"
	"io"
	"strings"
)

// Target is one performance target of the issues, checked against this
// run's medians. Status is "met", "MISSED", or "n/a" when the run lacks a
// figure it needs (a peer not available, a workload not run).
type Target struct {
	Issue  string `json:"issue"`
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
}

func rawRow(r *Results, peer, op string, keys, g int) (RawRow, bool) {
	for _, row := range r.Raw {
		if row.Peer == peer && row.Op == op && row.Keys == keys && row.Goroutines == g {
			return row, true
		}
	}
	return RawRow{}, false
}

func lockRow(r *Results, peer, scenario string, g int) (LockRow, bool) {
	for _, row := range r.Locks {
		if row.Peer == peer && row.Scenario == scenario && (g == 0 || row.Goroutines == g) {
			return row, true
		}
	}
	return LockRow{}, false
}

func status(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// evaluateTargets checks the targets of issue 5 (and the figures of issues
// 2 and 3 that this suite measures too).
func evaluateTargets(r *Results) []Target {
	var ts []Target
	add := func(issue, name string, ok, have bool, detail string) {
		st := status(ok)
		if !have {
			st = "n/a"
		}
		ts = append(ts, Target{Issue: issue, Name: name, Status: st, Detail: detail})
	}
	hot := r.Config.HotKeys

	// Issue 5: nxkv beats every in-process peer that provides expiry.
	// All four keep deadlines for SetNXPX; otter has expiry on every op.
	if len(r.Raw) > 0 {
		var misses []string
		have := true
		for _, op := range rawOps() {
			n, ok := rawRow(r, peerEngine, op.Name, hot, 1)
			if !ok {
				have = false
				continue
			}
			rivals := []string{peerOtter}
			if op.Name == "SetNXPX" {
				rivals = []string{peerMapMutex, peerSyncMap, peerXsync, peerOtter}
			}
			for _, rv := range rivals {
				if x, ok := rawRow(r, rv, op.Name, hot, 1); ok && x.OpsPerSec.Median >= n.OpsPerSec.Median {
					misses = append(misses, fmt.Sprintf("%s: %s %.0f ns vs nxkv %.0f ns", op.Name, rv, x.NsPerOp, n.NsPerOp))
				}
			}
		}
		detail := "nxkv faster than otter on every op, and than every peer on SetNXPX (hot keys, 1 goroutine)"
		if len(misses) > 0 {
			detail += "; slower: " + strings.Join(misses, "; ")
		}
		add("5", "raw ops: beat every in-process peer with expiry", len(misses) == 0, have, detail)

		var parts []string
		okAll := true
		have = true
		for _, op := range []string{"Get", "Set", "GetSet", "SetNX", "CompareAndDelete"} {
			n, ok1 := rawRow(r, peerEngine, op, hot, 1)
			x, ok2 := rawRow(r, peerXsync, op, hot, 1)
			if !ok1 || !ok2 {
				have = false
				continue
			}
			ratio := n.NsPerOp / x.NsPerOp
			if ratio > 1.5 {
				okAll = false
			}
			parts = append(parts, fmt.Sprintf("%s %.2fx", op, ratio))
		}
		add("5", "raw ops without TTL: within 1.5x of xsync", okAll, have,
			"nxkv ns/op ÷ xsync ns/op (hot keys, 1 goroutine): "+strings.Join(parts, ", "))

		// Issue 2: engine latency targets (hot keys, 1 goroutine).
		var e2 []string
		ok2, have2 := true, true
		for _, c := range []struct {
			op    string
			limit float64
		}{{"Get", 30}, {"SetNX", 30}, {"CompareAndDelete", 30}, {"GetSet", 30}, {"SetNXPX", 35}} {
			n, ok := rawRow(r, peerEngine, c.op, hot, 1)
			if !ok {
				have2 = false
				continue
			}
			if n.NsPerOp > c.limit {
				ok2 = false
			}
			e2 = append(e2, fmt.Sprintf("%s %.0f ns, typ %.0f (≤%.0f)", c.op, n.NsPerOp, n.TypicalNs, c.limit))
		}
		add("2", "engine ops ≤ 30 ns, SetNXPX ≤ 35 ns", ok2, have2, strings.Join(e2, ", ")+
			fmt.Sprintf(" (repetition medians, each including the suite's loop, %.1f ns/op; the typ ns/op column is steadier)", r.HarnessNs))

		// Issue 2: with 1M keys no worse than map+Mutex.
		var e3 []string
		ok3, have3 := true, true
		for _, op := range rawOps() {
			n, ok1 := rawRow(r, peerEngine, op.Name, r.Config.BigKeys, 1)
			m, ok2 := rawRow(r, peerMapMutex, op.Name, r.Config.BigKeys, 1)
			if !ok1 || !ok2 {
				have3 = false
				continue
			}
			if n.OpsPerSec.Median < m.OpsPerSec.Median {
				ok3 = false
				e3 = append(e3, fmt.Sprintf("%s %.2fx", op.Name, n.OpsPerSec.Median/m.OpsPerSec.Median))
			}
		}
		d3 := "every op at least as fast as map+Mutex"
		if len(e3) > 0 {
			d3 = "slower on: " + strings.Join(e3, ", ")
		}
		add("2", fmt.Sprintf("engine with %d keys no worse than map+Mutex (1 goroutine)", r.Config.BigKeys), ok3, have3, d3)
	}

	// Issue 5: lock cycle.
	if len(r.Locks) > 0 {
		n, ok1 := lockRow(r, "nxkv lockapi (in-process)", "uncontended", 1)
		b, ok2 := lockRow(r, baselineLockPeer, "uncontended", 1)
		ratio := 0.0
		if ok1 && ok2 && b.CyclesPS.Median > 0 {
			ratio = n.CyclesPS.Median / b.CyclesPS.Median
		}
		add("5", "lock cycle: nxkv in process ≥ 1000x Redis via go-redis", ratio >= 1000, ok1 && ok2,
			fmt.Sprintf("%.0fx (%s vs %s per cycle, uncontended, 1 goroutine; typical stretches %s vs %s, %.0fx)", ratio, fmtNs(n.NsPerCycle), fmtNs(b.NsPerCycle),
				fmtNs(n.TypicalNs), fmtNs(b.TypicalNs), safeDiv(b.TypicalNs, n.TypicalNs)))

		nr, ok3 := lockRow(r, "Redis nxkv lockapi", "uncontended", 1)
		rl, ok4 := lockRow(r, "Redis redislock", "uncontended", 1)
		rs, ok5 := lockRow(r, "Redis redsync", "uncontended", 1)
		add("5", "lock cycle: nxkv over Redis no slower than redislock and redsync",
			nr.CyclesPS.Median >= rl.CyclesPS.Median && nr.CyclesPS.Median >= rs.CyclesPS.Median, ok3 && ok4 && ok5,
			fmt.Sprintf("per cycle: nxkv %s (±%.0f%%, typical %s), redislock %s (±%.0f%%, typical %s), redsync %s (±%.0f%%, typical %s) (uncontended, 1 goroutine; nxkv also increments a fencing counter)",
				fmtNs(nr.NsPerCycle), nr.CyclesPS.spreadPct(), fmtNs(nr.TypicalNs), fmtNs(rl.NsPerCycle), rl.CyclesPS.spreadPct(), fmtNs(rl.TypicalNs),
				fmtNs(rs.NsPerCycle), rs.CyclesPS.spreadPct(), fmtNs(rs.TypicalNs)))

		h, ok6 := lockRow(r, "nxkv lockapi (in-process)", "handoff", 0)
		add("5", fmt.Sprintf("hand-off with %d waiters: nxkv in process p99 ≤ 100 µs", r.Config.Waiters), ok6 && h.Latency.P99 <= 100e3, ok6,
			fmt.Sprintf("p50 %s, p99 %s, p999 %s over %d hand-offs", fmtNs(h.Latency.P50), fmtNs(h.Latency.P99), fmtNs(h.Latency.P999), h.Latency.N))
		add("3", "hand-off p50 ≤ 10 µs", ok6 && h.Latency.P50 <= 10e3, ok6, fmt.Sprintf("p50 %s", fmtNs(h.Latency.P50)))
		add("3", "lockapi in process ≤ 150 ns per cycle, ≤ 2 allocs", ok1 && n.NsPerCycle <= 150 && n.Allocs <= 2, ok1,
			fmt.Sprintf("%s, %.2f allocs per cycle (includes the suite's locker wrapper; default options, fencing on)", fmtNs(n.NsPerCycle), n.Allocs))
	}

	// Issue 9: nxkv-server, nxkv over the Redis protocol.
	if ns, ok := lockRow(r, nxkvServerName+" redislock", "uncontended", 1); ok {
		if mr, ok := lockRow(r, "miniredis redislock", "uncontended", 1); ok {
			ratio := safeDiv(mr.NsPerCycle, ns.NsPerCycle)
			add("9", "redislock cycle: nxkv-server ≥ 10x faster than miniredis", ratio >= 10, true,
				fmt.Sprintf("%s vs %s per Obtain+Release (%.1fx)", fmtNs(ns.NsPerCycle), fmtNs(mr.NsPerCycle), ratio))
		}
		if rr, ok := lockRow(r, "Redis redislock", "uncontended", 1); ok {
			ratio := safeDiv(ns.NsPerCycle, rr.NsPerCycle)
			add("9", "redislock cycle: nxkv-server within 1.2x of redis-server", ratio <= 1.2, true,
				fmt.Sprintf("%s vs %s per Obtain+Release (%.2fx the time)", fmtNs(ns.NsPerCycle), fmtNs(rr.NsPerCycle), ratio))
		}
	}
	if len(r.RESP) > 0 {
		var misses, all []string
		for _, row := range r.RESP {
			if row.Server != nxkvServerName {
				continue
			}
			d := fmt.Sprintf("%s P%d %.2fx", row.Test, row.Pipeline, row.VsRedis)
			all = append(all, d)
			if row.VsRedis < 1 {
				misses = append(misses, d)
			}
		}
		add("9", "redis-benchmark: nxkv-server throughput ≥ redis-server", len(misses) == 0, len(all) > 0, strings.Join(all, ", "))
	}

	// Issue 2: memory and reclamation.
	for _, m := range r.Memory {
		if m.Peer == peerEngine && m.WithTTL {
			add("2", "memory ≤ 130 B/key with TTL", m.BytesPerKy <= 130, true, fmt.Sprintf("%.1f B/key (%d keys)", m.BytesPerKy, m.Keys))
		}
	}
	for _, e := range r.Expiry {
		if e.Peer == peerEngine && e.Scenario == "together" {
			add("2", "heap within 10% of baseline after mass expiry", e.HeapDropMs >= 0, true,
				fmt.Sprintf("%.0f%% of the keys' heap live at Len 0; ≤10%% after %s", e.HeapRetainedPct, neverOr(e.HeapDropMs)))
		}
		if e.Peer == peerEngine && e.Scenario == "idle" {
			add("5", "idle cost does not grow with non-expiring keys", e.IdleCPULarge <= e.IdleCPUSmall+1, true,
				fmt.Sprintf("%.2f ms/s with 1,000 keys, %.2f ms/s with %d (process floor %.2f)", e.IdleCPUSmall, e.IdleCPULarge, e.Keys, r.IdleFloor))
		}
	}
	return ts
}

func neverOr(x float64) string {
	if x < 0 {
		return "never (within the timeout)"
	}
	return fmtNs(x * 1e6)
}

func printTargets(w io.Writer, r *Results) {
	if len(r.Targets) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Targets (issues 5, 2 and 3), from this run's medians\n\n")
	for _, t := range r.Targets {
		fmt.Fprintf(w, "- [%s] issue %s: %s — %s\n", t.Status, t.Issue, t.Name, t.Detail)
	}
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
