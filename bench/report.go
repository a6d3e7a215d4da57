package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Results is everything one run measured; -json writes it as is.
type Results struct {
	Started time.Time `json:"started"`
	Elapsed string    `json:"elapsed"`
	Mode    string    `json:"mode"` // "default" or "full"
	// Label says what was measured ("from a clean checkout of commit
	// ab9452a"), for the reports rendered from these results.
	Label       string            `json:"label,omitempty"`
	Machine     machine           `json:"machine"`
	Versions    map[string]string `json:"versions"`
	RedisSource string            `json:"redis_server,omitempty"`
	LoadAtStart float64           `json:"load_avg_at_start"`
	// Busy is the machine's load over the whole run, Sections over each
	// section of the full suite (each headline job carries its own).
	Busy     Busy          `json:"machine_load"`
	Sections []SectionBusy `json:"sections_machine_load,omitempty"`
	Config   config        `json:"config"`
	Headline []HeadlineRow `json:"headline"`

	// The full suite (-full).
	TimerFloor  float64     `json:"timer_floor_ns,omitempty"`
	IdleFloor   float64     `json:"idle_floor_cpu_ms_per_s,omitempty"`
	HarnessNs   float64     `json:"harness_ns_per_op,omitempty"` // a no-op store through the raw-op loop
	Raw         []RawRow    `json:"raw,omitempty"`
	Locks       []LockRow   `json:"locks,omitempty"`
	RESP        []BenchRow  `json:"resp,omitempty"` // redis-benchmark: nxkv-server vs redis-server
	Expiry      []ExpiryRow `json:"expiry,omitempty"`
	Memory      []MemRow    `json:"memory,omitempty"`
	Push        []PushRow   `json:"push,omitempty"` // pub/sub, invalidations, rueidislock: nxkv-server vs redis-server
	Doubles     []DoubleRow `json:"test_double,omitempty"`
	HitRatio    []HitRow    `json:"hit_ratio,omitempty"`   // a bounded cache on a Zipf trace
	Held        []HeldRow   `json:"memory_held,omitempty"` // live heap under a bound
	Herd        []HerdRow   `json:"herd,omitempty"`        // get-or-load's thundering herd
	LockRetries string      `json:"lock_retry_settings,omitempty"`
	Goals       []Goal      `json:"goals,omitempty"`
	Skipped     []Skip      `json:"skipped,omitempty"`
}

// SectionBusy is the machine's load during one section of the full suite.
type SectionBusy struct {
	Name string `json:"section"`
	Busy Busy   `json:"machine_load"`
}

// Skip records a peer or workload left out of the run, and why.
type Skip struct {
	Workload string `json:"workload"`
	Peer     string `json:"peer"`
	Reason   string `json:"reason"`
}

func (r *Results) skip(workload, peer, reason string) {
	for _, s := range r.Skipped {
		if s.Workload == workload && s.Peer == peer {
			return
		}
	}
	r.Skipped = append(r.Skipped, Skip{Workload: workload, Peer: peer, Reason: reason})
}

type machine struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Go         string `json:"go"`
	OS         string `json:"os"`
}

func describeMachine() machine {
	m := machine{Cores: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				m.CPU = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	return m
}

// peerVersions reads the versions of the peers from the build information.
func peerVersions() map[string]string {
	v := map[string]string{}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	for _, d := range bi.Deps {
		switch d.Path {
		case "github.com/puzpuzpuz/xsync/v4", "github.com/maypok86/otter/v2", "github.com/alicebob/miniredis/v2",
			"github.com/bsm/redislock", "github.com/go-redsync/redsync/v4", "github.com/redis/go-redis/v9":
			v[d.Path] = d.Version
		}
	}
	return v
}

func writeJSON(path string, r *Results) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// readJSON reads the results of an earlier run written by writeJSON.
func readJSON(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &Results{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i := range r.Headline {
		h := &r.Headline[i]
		if h.Words == ([2]string{}) { // written before the field was
			h.Words, h.Unit = timeWords, nanoseconds
			if h.Job == "memory" {
				h.Words, h.Unit = memoryWords, bytesUnit
			}
		}
	}
	return r, nil
}

// fmtNs prints a duration given in nanoseconds with a readable unit.
func fmtNs(ns float64) string {
	switch {
	case ns <= 0:
		return "-"
	case ns < 1e3:
		return fmt.Sprintf("%.0fns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.1fµs", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.1fms", ns/1e6)
	default:
		return fmt.Sprintf("%.2fs", ns/1e9)
	}
}

func fmtRate(x float64) string {
	switch {
	case x <= 0:
		return "-"
	case x >= 1e6:
		return fmt.Sprintf("%.2fM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%.1fk", x/1e3)
	default:
		return fmt.Sprintf("%.0f", x)
	}
}

// fmtVs formats a speed ratio (this ÷ the baseline, in operations per
// second) in the report's one ratio format, from this one's side.
func fmtVs(speed float64, isBaseline bool) string {
	if isBaseline {
		return "baseline"
	}
	if speed <= 0 {
		return "-"
	}
	return fmtTimes(1/speed, timeWords)
}

func fmtAllocs(x float64) string {
	if x < 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}

// printRaw prints one table per (key set, goroutines) cell group.
func printRaw(w io.Writer, r *Results) {
	if len(r.Raw) == 0 {
		return
	}
	type group struct{ keys, g int }
	var order []group
	seen := map[group]bool{}
	for _, row := range r.Raw {
		k := group{row.Keys, row.Goroutines}
		if !seen[k] {
			seen[k] = true
			order = append(order, k)
		}
	}
	for _, gr := range order {
		fmt.Fprintf(w, "\n## Raw operations: %d keys, %d goroutine(s)\n", gr.keys, gr.g)
		fmt.Fprintf(w, "(ops/s median of %d reps, spread = (max-min)/median; latency = single sampled ops incl. ~%.0fns timer cost;\n typ ns/op = median over timed chunks of one goroutine's ns/op, robust to other load; every figure includes the loop's\n own ~%.1f ns/op (a no-op store); allocs/op measured with 1 goroutine; vs map+Mutex compares ops/s with map+Mutex's in the same cell)\n\n",
			r.Config.Reps, r.TimerFloor, r.HarnessNs)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "op\tpeer\tops/s\tns/op\tspread\ttyp ns/op\tallocs/op\tp50\tp99\tp999\tvs map+Mutex\tnote\t")
		for _, op := range rawOps() {
			for _, row := range r.Raw {
				if row.Keys != gr.keys || row.Goroutines != gr.g || row.Op != op.Name {
					continue
				}
				note := sourceNote(row.Source, row.Reps) + row.Note
				if row.OKRate < 0.999 && row.Note == "" {
					note = fmt.Sprintf("only %.1f%% took the success path", row.OKRate*100)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f\t±%.0f%%\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
					row.Op, row.Peer, fmtRate(row.OpsPerSec.Median), row.NsPerOp, row.OpsPerSec.spreadPct(), row.TypicalNs,
					fmtAllocs(row.AllocsPerOp), fmtNs(row.Latency.P50), fmtNs(row.Latency.P99), fmtNs(row.Latency.P999),
					fmtVs(row.VsBaseline, row.Peer == peerMapMutex), note)
			}
		}
		tw.Flush()
	}
}

func printLocks(w io.Writer, r *Results) {
	if len(r.Locks) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Lock cycle (Obtain + Release)\n")
	fmt.Fprintf(w, "(cycles/s median of %d reps; uncontended: each goroutine its own key, latency = one sampled cycle,\n typ/cycle = median over timed chunks of one goroutine's time per cycle;\n contended: all goroutines on one key, latency = hand-off from a holder starting Release to the next\n acquisition by another goroutine (n = hand-offs seen), self = cycles where the releasing goroutine\n re-acquired first, wait = from calling Obtain to holding the lock;\n vs Redis SETNX lock compares cycles/s with the go-redis SET NX PX lock's on Redis in the same cell)\n", r.Config.Reps)
	fmt.Fprintf(w, "retry settings: %s\n", r.LockRetries)
	for _, sc := range []string{"uncontended", "contended", "handoff"} {
		if sc == "handoff" {
			fmt.Fprintf(w, "\n### hand-off to a blocked waiter (%d waiters)\n", r.Config.Waiters)
			fmt.Fprintf(w, "(%d goroutines on one key; a holder releases only after every other goroutine entered Obtain and %v (%v for\n network peers) and a random 0-%v more passed, and a releasing goroutine calls Obtain again only after another acquired,\n so every cycle hands the lock to a goroutine blocked in Obtain; hand-off = Release start to the next Obtain return:\n the median over the repetitions of each one's mean hand-off without its slowest and fastest tenth, then percentiles\n over every hand-off; hand-offs/s includes the hold)\n\n",
				r.Config.Waiters+1, handoffHold, handoffHoldNetwork, 2*pollDelay)
		} else {
			fmt.Fprintf(w, "\n### %s\n\n", sc)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		switch sc {
		case "uncontended":
			fmt.Fprintln(tw, "goroutines\tpeer\tcycles/s\tper cycle\tspread\ttyp/cycle\tallocs/cycle\tp50\tp99\tp999\tvs Redis SETNX lock\tnote\t")
		case "handoff":
			fmt.Fprintln(tw, "goroutines\tpeer\thand-offs/s\tper hand-off\tspread\thand-off\tp50\tp99\tp999\t(n)\tvs Redis SETNX lock\tnote\t")
		default:
			fmt.Fprintln(tw, "goroutines\tpeer\tcycles/s\tper cycle\tspread\thand-off p50\tp99\tp999\t(n)\tself\twait p50\twait p99\tvs Redis SETNX lock\tnote\t")
		}
		type cell struct{ g, keys int }
		var cells []cell
		seen := map[cell]bool{}
		for _, row := range r.Locks {
			if c := (cell{row.Goroutines, row.Keys}); row.Scenario == sc && !seen[c] {
				seen[c] = true
				cells = append(cells, c)
			}
		}
		slices.SortStableFunc(cells, func(a, b cell) int { return cmp.Or(cmp.Compare(a.g, b.g), cmp.Compare(a.keys, b.keys)) })
		for _, c := range cells {
			for _, row := range r.Locks {
				if row.Scenario != sc || row.Goroutines != c.g || row.Keys != c.keys {
					continue
				}
				g := fmt.Sprint(c.g)
				if c.keys > 1 {
					g = fmt.Sprintf("%d on %d keys", c.g, c.keys)
				}
				note := sourceNote(row.Source, row.Reps)
				if row.Violations > 0 {
					note += fmt.Sprintf("MUTUAL EXCLUSION VIOLATED %d times; ", row.Violations)
				}
				if row.Errors > 0 {
					note += fmt.Sprintf("%d errors; ", row.Errors)
				}
				if row.Untimed > 0 {
					note += untimedNote(row) + "; "
				}
				if sc == "handoff" {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t±%.0f%%\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t\n", g, row.Peer, fmtRate(row.CyclesPS.Median),
						fmtNs(row.NsPerCycle), row.CyclesPS.spreadPct(), fmtNs(row.Trimmed.Median),
						fmtNs(row.Latency.P50), fmtNs(row.Latency.P99), fmtNs(row.Latency.P999), row.Latency.N, fmtVs(row.VsRedis, row.Peer == baselineLockPeer), note)
				} else if sc == "uncontended" {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t±%.0f%%\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", g, row.Peer, fmtRate(row.CyclesPS.Median),
						fmtNs(row.NsPerCycle), row.CyclesPS.spreadPct(), fmtNs(row.TypicalNs), fmtAllocs(row.Allocs),
						fmtNs(row.Latency.P50), fmtNs(row.Latency.P99), fmtNs(row.Latency.P999), fmtVs(row.VsRedis, row.Peer == baselineLockPeer), note)
				} else {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t±%.0f%%\t%s\t%s\t%s\t%d\t%.0f%%\t%s\t%s\t%s\t%s\t\n", g, row.Peer, fmtRate(row.CyclesPS.Median),
						fmtNs(row.NsPerCycle), row.CyclesPS.spreadPct(),
						fmtNs(row.Latency.P50), fmtNs(row.Latency.P99), fmtNs(row.Latency.P999), row.Latency.N, row.SelfPct,
						fmtNs(row.Wait.P50), fmtNs(row.Wait.P99), fmtVs(row.VsRedis, row.Peer == baselineLockPeer), note)
				}
			}
		}
		tw.Flush()
	}
}

func printExpiry(w io.Writer, r *Results) {
	if len(r.Expiry) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Expiry (%d keys)\n", r.Config.ExpiryKeys)
	fmt.Fprintf(w, "(together: one common deadline; spread: deadlines evenly over %v; reclaim = Len reaches 0, after the (last) deadline;\n lag = how far Len trailed the keys still alive, as time; CPU/key = process CPU from the first deadline to Len 0 ÷ keys;\n heap kept = share of the keys' heap still live after GC at Len 0; heap ≤10%% = when it first fell to 10%% or less;\n idle = process CPU ms per second with 1,000 / all keys holding a 1 h TTL; process floor with no store: %.2f ms/s)\n\n",
		r.Config.Spread, r.IdleFloor)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tpeer\tinsert\treclaim\tlag p50\tlag max\tCPU/key\theap kept\theap ≤10%\tidle 1k\tidle all\tmax lock hold\tnote\t")
	msOrNever := func(x float64) string {
		if x < 0 {
			return "never"
		}
		return fmtNs(x * 1e6)
	}
	for _, sc := range []string{"together", "spread", "idle"} {
		for _, row := range r.Expiry {
			if row.Scenario != sc {
				continue
			}
			var cells []string
			switch sc {
			case "together":
				cells = []string{fmtNs(row.InsertMs * 1e6), msOrNever(row.ReclaimMs), "", "", fmtNs(row.CPUPerKeyNs),
					fmt.Sprintf("%.0f%%", row.HeapRetainedPct), msOrNever(row.HeapDropMs), "", ""}
			case "spread":
				cells = []string{fmtNs(row.InsertMs * 1e6), msOrNever(row.ReclaimMs), fmt.Sprintf("%.1fms", row.LagP50Ms),
					fmt.Sprintf("%.1fms", row.LagMaxMs), fmtNs(row.CPUPerKeyNs), fmt.Sprintf("%.0f%%", row.HeapRetainedPct), "", "", ""}
			case "idle":
				cells = []string{"", "", "", "", "", "", "", fmt.Sprintf("%.2f", row.IdleCPUSmall), fmt.Sprintf("%.2f", row.IdleCPULarge)}
			}
			stall := ""
			if row.MaxStallMs > 0 {
				stall = fmt.Sprintf("%.1fms", row.MaxStallMs)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", sc, row.Peer, strings.Join(cells, "\t"), stall, row.Note)
		}
	}
	tw.Flush()
}

func printMemory(w io.Writer, r *Results) {
	if len(r.Memory) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Memory per key (%d keys of 10 bytes, distinct 16-byte values; HeapAlloc after GC minus the baseline;\n 32 B/key of it are the key and value strings themselves)\n\n", r.Config.MemKeys)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "peer\tno TTL B/key\twith TTL B/key\t")
	var names []string
	seen := map[string]bool{}
	for _, m := range r.Memory {
		if !seen[m.Peer] {
			seen[m.Peer] = true
			names = append(names, m.Peer)
		}
	}
	for _, n := range names {
		cells := []string{"-", "-"}
		for _, m := range r.Memory {
			if m.Peer == n {
				i := 0
				if m.WithTTL {
					i = 1
				}
				cells[i] = fmt.Sprintf("%.1f", m.BytesPerKy)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", n, cells[0], cells[1])
	}
	tw.Flush()
}

// sourceNote says, for a row a headline job measured, where its figures
// come from.
func sourceNote(source string, reps int) string {
	if source != sourceHeadline {
		return ""
	}
	return fmt.Sprintf("the headline's measurement, %d rounds; ", reps)
}
