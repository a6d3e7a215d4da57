package main

import (
	"fmt"
	"io"
	"strings"
)

// Goal is a performance goal nxkv sets itself, checked against a full
// run's medians. Status is "met", "missed", or "n/a" when the run lacks a
// figure it needs (a peer not available, a workload not run).
type Goal struct {
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

// lockRow finds peer's row of a scenario with g goroutines (0: any) on
// one key, or on each its own when uncontended.
func lockRow(r *Results, peer, scenario string, g int) (LockRow, bool) {
	for _, row := range r.Locks {
		if row.Peer == peer && row.Scenario == scenario && (g == 0 || row.Goroutines == g) && row.Keys == 0 {
			return row, true
		}
	}
	return LockRow{}, false
}

// evaluateGoals checks nxkv's goals against the full suite's figures.
func evaluateGoals(r *Results) []Goal {
	var gs []Goal
	// add records a goal; needs says what it needs when have is false.
	add := func(name, needs string, ok, have bool, detail string) {
		st := "missed"
		switch {
		case !have:
			st, detail = "n/a", "not measured in this run: it needs "+needs
		case ok:
			st = "met"
		}
		gs = append(gs, Goal{Name: name, Status: st, Detail: detail})
	}
	const (
		needsMaps  = "the engine, map+Mutex, xsync.Map and otter on the raw operations"
		needsLocks = "nxkv's in-process lock in the lock workload"
		needsRedis = "the lock clients over Redis (a redis-server on PATH, or -redis ADDR)"
	)
	hot := r.Config.HotKeys

	if len(r.Raw) > 0 {
		// All four maps keep deadlines for SetNXPX; otter has expiry on
		// every operation.
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
					misses = append(misses, fmt.Sprintf("%s: %s %s vs nxkv %s", op.Name, rv, fmtNs(x.NsPerOp), fmtNs(n.NsPerOp)))
				}
			}
		}
		detail := "nxkv faster than otter on every op, and than every peer on SetNXPX (hot keys, 1 goroutine)"
		if len(misses) > 0 {
			detail += "; slower: " + strings.Join(misses, "; ")
		}
		add("KV operations: faster than every in-process peer that expires keys", needsMaps, len(misses) == 0, have, detail)

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
			parts = append(parts, fmt.Sprintf("%s %s", op, fmtTimes(ratio, timeWords)))
		}
		add("KV operations without TTL: at most 1.5x slower than xsync.Map", needsMaps, okAll, have,
			"nxkv vs xsync.Map (hot keys, 1 goroutine): "+strings.Join(parts, ", "))

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
		add("engine operations ≤ 30 ns, SetNXPX ≤ 35 ns", needsMaps, ok2, have2, strings.Join(e2, ", ")+
			fmt.Sprintf(" (repetition medians, each including the suite's loop, %.1f ns/op; the typ ns/op column is steadier)", r.HarnessNs))

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
				e3 = append(e3, fmt.Sprintf("%s %s", op.Name, fmtTimes(m.OpsPerSec.Median/n.OpsPerSec.Median, timeWords)))
			}
		}
		d3 := "every op at least as fast as map+Mutex"
		if len(e3) > 0 {
			d3 = "slower on: " + strings.Join(e3, ", ")
		}
		add(fmt.Sprintf("engine with %d keys no slower than map+Mutex (1 goroutine)", r.Config.BigKeys), needsMaps, ok3, have3, d3)
	}

	if len(r.Locks) > 0 {
		n, ok1 := lockRow(r, "nxkv lockapi (in-process)", "uncontended", 1)
		b, ok2 := lockRow(r, baselineLockPeer, "uncontended", 1)
		ratio := 0.0
		if ok1 && ok2 && n.CyclesPS.Median > 0 {
			ratio = b.CyclesPS.Median / n.CyclesPS.Median // cost ratio nxkv ÷ Redis
		}
		add("lock cycle in process at least 1000x faster than a lock on Redis through go-redis", needsRedis, ratio > 0 && ratio <= 1.0/1000, ok1 && ok2,
			fmt.Sprintf("%s (%s vs %s per cycle, uncontended, 1 goroutine; typical stretches %s vs %s)", fmtTimes(ratio, timeWords),
				fmtNs(n.NsPerCycle), fmtNs(b.NsPerCycle), fmtNs(n.TypicalNs), fmtNs(b.TypicalNs)))

		nr, ok3 := lockRow(r, "Redis nxkv lockapi", "uncontended", 1)
		rl, ok4 := lockRow(r, "Redis redislock", "uncontended", 1)
		rs, ok5 := lockRow(r, "Redis redsync", "uncontended", 1)
		add("lock cycle over Redis no slower than redislock and redsync", needsRedis,
			nr.CyclesPS.Median >= rl.CyclesPS.Median && nr.CyclesPS.Median >= rs.CyclesPS.Median, ok3 && ok4 && ok5,
			fmt.Sprintf("per cycle: nxkv %s (±%.0f%%, typical %s), redislock %s (±%.0f%%, typical %s), redsync %s (±%.0f%%, typical %s) (uncontended, 1 goroutine; nxkv also increments a fencing counter)",
				fmtNs(nr.NsPerCycle), nr.CyclesPS.spreadPct(), fmtNs(nr.TypicalNs), fmtNs(rl.NsPerCycle), rl.CyclesPS.spreadPct(), fmtNs(rl.TypicalNs),
				fmtNs(rs.NsPerCycle), rs.CyclesPS.spreadPct(), fmtNs(rs.TypicalNs)))

		h, ok6 := lockRow(r, "nxkv lockapi (in-process)", "handoff", 0)
		add(fmt.Sprintf("hand-off to one of %d waiters in process: p99 ≤ 100 µs", r.Config.Waiters), needsLocks, ok6 && h.Latency.P99 <= 100e3, ok6,
			fmt.Sprintf("p50 %s, p99 %s, p999 %s over %d hand-offs", fmtNs(h.Latency.P50), fmtNs(h.Latency.P99), fmtNs(h.Latency.P999), h.Latency.N))
		add("hand-off in process: p50 ≤ 10 µs", needsLocks, ok6 && h.Latency.P50 <= 10e3, ok6, fmt.Sprintf("p50 %s", fmtNs(h.Latency.P50)))
		add("lock cycle in process ≤ 150 ns, ≤ 2 allocations", needsLocks, ok1 && n.NsPerCycle <= 150 && n.Allocs <= 2, ok1,
			fmt.Sprintf("%s, %.2f allocations per cycle (includes the suite's locker wrapper; default options, fencing on)", fmtNs(n.NsPerCycle), n.Allocs))
	}

	// nxkv-server, nxkv over the Redis protocol, as a test double and a
	// lock server.
	const needsServer = "redislock over nxkv-server, miniredis and redis-server in the lock workload"
	ns, okN := lockRow(r, nxkvServerName+" redislock", "uncontended", 1)
	mr, okM := lockRow(r, "miniredis redislock", "uncontended", 1)
	rr, okR := lockRow(r, "Redis redislock", "uncontended", 1)
	if okN || okM || okR {
		add("redislock cycle on nxkv-server at least 10x faster than on miniredis", needsServer,
			okN && okM && safeDiv(ns.NsPerCycle, mr.NsPerCycle) <= 0.1, okN && okM,
			fmt.Sprintf("%s (%s vs %s per Obtain + Release)", fmtTimes(safeDiv(ns.NsPerCycle, mr.NsPerCycle), timeWords), fmtNs(ns.NsPerCycle), fmtNs(mr.NsPerCycle)))
		add("redislock cycle on nxkv-server at most 1.2x slower than on redis-server", needsServer,
			okN && okR && safeDiv(ns.NsPerCycle, rr.NsPerCycle) <= 1.2, okN && okR,
			fmt.Sprintf("%s (%s vs %s per Obtain + Release)", fmtTimes(safeDiv(ns.NsPerCycle, rr.NsPerCycle), timeWords), fmtNs(ns.NsPerCycle), fmtNs(rr.NsPerCycle)))
	}
	if len(r.RESP) > 0 {
		var misses, all []string
		for _, row := range r.RESP {
			if row.Server != nxkvServerName {
				continue
			}
			d := fmt.Sprintf("%s -P %d %s", row.Test, row.Pipeline, fmtVs(row.VsRedis, false))
			all = append(all, d)
			if row.VsRedis < 1 {
				misses = append(misses, d)
			}
		}
		add("redis-benchmark: nxkv-server's throughput at least redis-server's", "redis-benchmark, redis-server and nxkv-server",
			len(misses) == 0, len(all) > 0, strings.Join(all, ", "))
	}

	for _, row := range r.Doubles {
		if iv := row.VsMiniredis; iv != nil {
			v := doublesVerdict(*iv)
			add("test double: the job runner runs faster on nxkv-server than on miniredis", "", strings.HasSuffix(v, "faster"), true,
				fmt.Sprintf("%s per job than miniredis (95%% interval %s)", v, fmtTimesCI(iv.Lo, iv.Hi, timeWords)))
		}
	}
	lru, exact := -1.0, -1.0
	for _, h := range r.HitRatio {
		switch h.Peer {
		case peerEngine + " allkeys-lru":
			lru = h.HitRatio
		case "exact LRU":
			exact = h.HitRatio
		}
	}
	if lru >= 0 && exact >= 0 {
		add("bounded cache: allkeys-lru's hit ratio within 5 points of an exact LRU's", "", lru >= exact-0.05, true,
			fmt.Sprintf("%.1f%% against %.1f%% (Zipf 0.99, 10%% of the keys held)", 100*lru, 100*exact))
	}
	for _, h := range r.Held {
		add("bounded cache: live heap within 5% of the bound", "", h.OverPct <= 5, true,
			fmt.Sprintf("%s held under a bound of %s (%+.1f%%)", fmtBytes(h.Heap), fmtBytes(h.Bound), h.OverPct))
	}
	for _, h := range r.Herd {
		if h.Peer == peerEngine {
			add("get-or-load: one load per herd of 1,000 misses", "", h.LoadsPerHrd == 1, true,
				fmt.Sprintf("%.2f loads a herd over %d herds", h.LoadsPerHrd, h.Herds))
		}
	}
	for _, m := range r.Memory {
		if m.Peer == peerEngine && m.WithTTL {
			add("memory ≤ 130 B/key with a TTL", "", m.BytesPerKy <= 130, true, fmt.Sprintf("%.1f B/key (%d keys)", m.BytesPerKy, m.Keys))
		}
	}
	for _, e := range r.Expiry {
		if e.Peer == peerEngine && e.Scenario == "together" {
			add("heap back within 10% of its size before the keys, after they all expire", "", e.HeapDropMs >= 0, true,
				fmt.Sprintf("%.0f%% of the keys' heap live when the last key was gone; ≤10%% after %s", e.HeapRetainedPct, neverOr(e.HeapDropMs)))
		}
		if e.Peer == peerEngine && e.Scenario == "idle" {
			add("idle cost does not grow with keys that are not expiring", "", e.IdleCPULarge <= e.IdleCPUSmall+1, true,
				fmt.Sprintf("%.2f ms/s with 1,000 keys, %.2f ms/s with %d (process floor %.2f)", e.IdleCPUSmall, e.IdleCPULarge, e.Keys, r.IdleFloor))
		}
	}
	return gs
}

func neverOr(x float64) string {
	if x < 0 {
		return "never (within the timeout)"
	}
	return fmtNs(x * 1e6)
}

func printGoals(w io.Writer, r *Results) {
	if len(r.Goals) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Goals nxkv sets itself, checked on this run's medians\n\n")
	for _, g := range r.Goals {
		fmt.Fprintf(w, "- [%s] %s: %s\n", g.Status, g.Name, g.Detail)
	}
}

func safeDiv(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}
