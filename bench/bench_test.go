package main

import (
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nxkv/nxkv/internal/redistest"
)

// tinyConfig runs every workload in well under a second per peer.
func tinyConfig() config {
	return config{
		Reps:           2,
		RepDur:         2 * time.Millisecond,
		Warmup:         time.Millisecond,
		HotKeys:        64,
		BigKeys:        512,
		LockDur:        5 * time.Millisecond,
		Contenders:     []int{2, 4},
		Waiters:        3,
		ExpiryKeys:     2048,
		ExpiryLead:     50 * time.Millisecond,
		Spread:         50 * time.Millisecond,
		IdleWindow:     20 * time.Millisecond,
		SweepEvery:     10 * time.Millisecond,
		MemKeys:        1 << 13,
		ReclaimTimeout: 3 * time.Second,
		Head: headConfig{
			Rounds:          7,
			NetRounds:       7,
			MaxRounds:       7,
			RepDur:          2 * time.Millisecond,
			LockDur:         20 * time.Millisecond,
			HandoffDur:      20 * time.Millisecond,
			Warmup:          time.Millisecond,
			Contenders:      4,
			ContendedKeys:   8,
			ExpiryKeys:      2048,
			ExpiryRounds:    3,
			ExpiryMaxRounds: 3,
			ExpiryLead:      50 * time.Millisecond,
			ExpirySpread:    20 * time.Millisecond,
			MemKeys:         1 << 12,
			MemRounds:       7,
		},
	}
}

// checkKVSemantics runs a fixed script of Redis string operations on s and
// returns every reply that differs from what Redis gives. TTLs are an hour,
// so no time passes that matters.
func checkKVSemantics(s kvStore) []string {
	var bad []string
	expect := func(what string, got, want any) {
		if got != want {
			bad = append(bad, fmt.Sprintf("%s = %v, want %v", what, got, want))
		}
	}
	get := func(k string) string {
		v, ok := s.Get(k)
		if !ok {
			return "<absent>"
		}
		return v
	}
	s.delMany([]string{"sa", "sb", "sc"})
	expect("Get(sa) on absent", get("sa"), "<absent>")
	expect("SetNX(sa, 1) on absent", s.SetNX("sa", "1"), true)
	expect("SetNX(sa, 2) on present", s.SetNX("sa", "2"), false)
	expect("Get(sa)", get("sa"), "1")
	old, ok := s.GetSet("sa", "3")
	expect("GetSet(sa, 3)", fmt.Sprintf("%q %v", old, ok), `"1" true`)
	old, ok = s.GetSet("sb", "x")
	expect("GetSet(sb, x) on absent", fmt.Sprintf("%q %v", old, ok), `"" false`)
	expect("CompareAndDelete(sa, 1) with a stale value", s.CompareAndDelete("sa", "1"), false)
	expect("Get(sa) after a failed CompareAndDelete", get("sa"), "3")
	expect("CompareAndDelete(sa, 3)", s.CompareAndDelete("sa", "3"), true)
	expect("Get(sa) after CompareAndDelete", get("sa"), "<absent>")
	expect("CompareAndDelete(sa, 3) on absent", s.CompareAndDelete("sa", "3"), false)
	expect("SetNXPX(sc, t) on absent", s.SetNXPX("sc", "t", time.Hour), true)
	expect("SetNXPX(sc, u) on present", s.SetNXPX("sc", "u", time.Hour), false)
	expect("SetNX(sc, u) on a key with a TTL", s.SetNX("sc", "u"), false)
	s.Set("sc", "v")
	expect("Get(sc) after Set", get("sc"), "v")
	s.setMany([]string{"sa", "sb"}, "m")
	expect("Get(sa) after setMany", get("sa"), "m")
	s.delMany([]string{"sa", "sb", "sc"})
	expect("Get(sb) after delMany", get("sb"), "<absent>")
	if err := s.Err(); err != nil {
		bad = append(bad, "Err() = "+err.Error())
	}
	return bad
}

func TestPeersHaveRedisSemantics(t *testing.T) {
	for _, p := range inprocKVPeers() {
		t.Run(p.Name, func(t *testing.T) {
			s, err := p.New()
			if err != nil {
				t.Skipf("%s not available: %v", p.Name, err)
			}
			defer s.Close()
			for _, b := range checkKVSemantics(s) {
				t.Error(b)
			}
		})
	}
}

// brokenCAD is a planted bug: a map+Mutex whose CompareAndDelete ignores
// the value (a plain DEL), the classic unsafe lock release.
type brokenCAD struct{ *mapMutexKV }

func (b brokenCAD) CompareAndDelete(k, _ string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.m[k]
	delete(b.m, k)
	return ok
}

// lostWrites is a planted bug: a SetNX that never writes.
type lostWrites struct{ *mapMutexKV }

func (l lostWrites) SetNX(string, string) bool { return false }

func TestSemanticCheckCatchesPlantedBugs(t *testing.T) {
	if bad := checkKVSemantics(brokenCAD{&mapMutexKV{m: map[string]mmEntry{}}}); len(bad) == 0 {
		t.Error("checkKVSemantics(brokenCAD) found nothing, want a stale CompareAndDelete reported")
	}
	if bad := checkKVSemantics(lostWrites{&mapMutexKV{m: map[string]mmEntry{}}}); len(bad) == 0 {
		t.Error("checkKVSemantics(lostWrites) found nothing, want SetNX on absent reported")
	}
}

// checkRawRows returns what is not sane about raw-op rows: every op must
// run, take its success path every time (the workload keeps the key state
// stationary), and report a latency.
func checkRawRows(rows []RawRow) []string {
	var bad []string
	for _, r := range rows {
		id := fmt.Sprintf("%s %s %dk/%dg", r.Peer, r.Op, r.Keys, r.Goroutines)
		switch {
		case r.OpsPerSec.Median <= 0 || r.NsPerOp <= 0:
			bad = append(bad, id+": no throughput")
		case r.OKRate != 1:
			bad = append(bad, fmt.Sprintf("%s: success rate %.4f, want 1", id, r.OKRate))
		case r.Latency.N == 0 || r.Latency.P50 <= 0 || r.Latency.P99 < r.Latency.P50 || r.Latency.P999 < r.Latency.P99:
			bad = append(bad, fmt.Sprintf("%s: latency %+v", id, r.Latency))
		case r.Goroutines == 1 && r.AllocsPerOp < 0:
			bad = append(bad, id+": allocs not measured")
		case r.Note != "":
			bad = append(bad, id+": "+r.Note)
		}
	}
	return bad
}

func TestRawWorkloadTiny(t *testing.T) {
	res := fullRun(t).res
	for _, b := range checkRawRows(res.Raw) {
		t.Error(b)
	}
	peers := map[string]int{}
	for _, r := range res.Raw {
		peers[r.Peer]++
		if r.Peer == peerMapMutex && r.VsBaseline != 1 {
			t.Errorf("map+Mutex %s VsBaseline = %v, want 1", rawCell(r), r.VsBaseline)
		}
	}
	cells := len(rawOps()) * 2 * len(gsFor())
	for _, p := range inprocKVPeers() {
		if peers[p.Name] != cells && !skipped(res, p.Name) {
			t.Errorf("%s: %d rows, want %d (or a skip line)", p.Name, peers[p.Name], cells)
		}
	}
}

func gsFor() []int {
	if n := runtime.GOMAXPROCS(0); n > 1 {
		return []int{1, n}
	}
	return []int{1}
}

func skipped(res *Results, peer string) bool {
	for _, s := range res.Skipped {
		if s.Peer == peer {
			return true
		}
	}
	return false
}

// flakySetNX is a planted bug for the harness: SetNX fails on every other
// call, as a store that loses writes would. The success-rate check must
// report it.
type flakySetNX struct {
	*mapMutexKV
	n int
}

func (f *flakySetNX) SetNX(k, v string) bool {
	f.n++
	if f.n%2 == 0 {
		return false
	}
	return f.mapMutexKV.SetNX(k, v)
}

func TestRawCheckCatchesLostWrites(t *testing.T) {
	cfg := tinyConfig()
	res := &Results{Config: cfg}
	peer := kvPeer{Name: "planted", New: func() (kvStore, error) { return &flakySetNX{mapMutexKV: &mapMutexKV{m: map[string]mmEntry{}}}, nil }}
	s, _ := peer.New()
	keys := makeKeys(cfg.HotKeys)
	s.setMany(keys, value)
	var setnx rawOp
	for _, op := range rawOps() {
		if op.Name == "SetNX" {
			setnx = op
		}
	}
	m := measureRaw(cfg, s, setnx, partition(keys, 1), false)
	m.warm()
	for range cfg.Reps {
		m.rep()
	}
	row := m.row()
	row.Peer = peer.Name
	res.Raw = append(res.Raw, row)
	if bad := checkRawRows(res.Raw); len(bad) == 0 {
		t.Errorf("checkRawRows found nothing for a SetNX that drops half its writes (ok rate %.2f)", row.OKRate)
	}
}

func TestPlanChunks(t *testing.T) {
	tests := []struct {
		n       int
		network bool
		want    chunkPlan
	}{
		{n: 512, want: chunkPlan{n: 512, chunk: 128, lag: 256}},
		{n: 1 << 20, want: chunkPlan{n: 1 << 20, chunk: 1024, lag: 1 << 18}},
		{n: 1000, want: chunkPlan{n: 896, chunk: 128, lag: 384}},
		{n: 1 << 20, network: true, want: chunkPlan{n: 1 << 20, chunk: 16, lag: 16}},
	}
	for _, tt := range tests {
		got := planChunks(tt.n, tt.network)
		if got != tt.want {
			t.Errorf("planChunks(%d, %v) = %+v, want %+v", tt.n, tt.network, got, tt.want)
		}
		// The preparation window must never reach the chunk being timed.
		if got.lag < got.chunk || got.lag+got.chunk > got.n || got.n%got.chunk != 0 {
			t.Errorf("planChunks(%d, %v) = %+v: window overlaps the timed chunk", tt.n, tt.network, got)
		}
	}
}

func TestQuantiles(t *testing.T) {
	xs := make([]int64, 1000)
	for i := range xs {
		xs[i] = int64(1000 - i) // 1..1000, reversed
	}
	got := quantiles(xs)
	want := percentiles{P50: 500, P99: 990, P999: 999, N: 1000}
	if got != want {
		t.Errorf("quantiles(1..1000) = %+v, want %+v", got, want)
	}
	if s := summarize([]float64{3, 1, 2, 10}); s != (summary{Median: 2.5, Min: 1, Max: 10}) {
		t.Errorf("summarize = %+v, want median 2.5 min 1 max 10", s)
	}
}

func TestExclusionCheck(t *testing.T) {
	var c exclusionCheck
	c.enter()
	c.leave()
	c.enter()
	c.leave()
	if got := c.violations.Load(); got != 0 {
		t.Errorf("sequential holders: violations = %d, want 0", got)
	}
	c.enter()
	c.enter() // a second holder while the first is inside: the planted overlap
	c.leave()
	c.leave()
	if got := c.violations.Load(); got != 1 {
		t.Errorf("overlapping holders: violations = %d, want 1", got)
	}
}

func checkLockRows(rows []LockRow) []string {
	var bad []string
	for _, r := range rows {
		id := fmt.Sprintf("%s %s %dg", r.Peer, r.Scenario, r.Goroutines)
		switch {
		case r.CyclesPS.Median <= 0:
			bad = append(bad, id+": no cycles")
		case r.Violations != 0:
			bad = append(bad, fmt.Sprintf("%s: %d mutual exclusion violations", id, r.Violations))
		case r.Errors != 0:
			bad = append(bad, fmt.Sprintf("%s: %d errors", id, r.Errors))
		case r.Scenario == "uncontended" && r.Latency.N == 0:
			bad = append(bad, id+": no latency samples")
		case r.Scenario == "contended" && r.Wait.N == 0:
			bad = append(bad, id+": no wait samples")
		case r.Scenario == "handoff" && r.Latency.N == 0 && r.Untimed == 0:
			// On a busy machine every hand-off of a tiny run may be disturbed
			// (counted, not timed); none at all would be a broken workload.
			bad = append(bad, id+": no hand-offs")
		case r.Scenario == "handoff" && r.Latency.N > 0 && r.Latency.P50 <= 0:
			bad = append(bad, id+": hand-off samples with no duration")
		}
	}
	return bad
}

func TestLockWorkloadTiny(t *testing.T) {
	res := fullRun(t).res
	if len(res.Locks) == 0 {
		t.Fatal("no lock rows")
	}
	for _, b := range checkLockRows(res.Locks) {
		t.Error(b)
	}
}

func TestExpiryWorkloadTiny(t *testing.T) {
	res := fullRun(t).res
	cfg := res.Config
	seen := map[string]int{}
	for _, r := range res.Expiry {
		seen[r.Peer]++
		id := r.Peer + " " + r.Scenario
		switch r.Scenario {
		case "together", "spread":
			if r.InsertMs <= 0 || r.HeapRetainedPct < 0 || r.CPUPerKeyNs < 0 {
				t.Errorf("%s: %+v", id, r)
			}
			if r.ReclaimMs < 0 && !strings.Contains(r.Peer, "otter") {
				t.Errorf("%s: Len never reached 0", id)
			}
		case "idle":
			if r.IdleCPUSmall < 0 || r.IdleCPULarge < 0 {
				t.Errorf("%s: negative idle CPU %+v", id, r)
			}
		}
	}
	for _, p := range expPeers(cfg) {
		if seen[p.Name] != 3 && !skipped(res, p.Name) {
			t.Errorf("%s: %d expiry rows, want 3 (or a skip line)", p.Name, seen[p.Name])
		}
	}
}

func TestMemoryWorkloadTiny(t *testing.T) {
	res := fullRun(t).res
	for _, m := range res.Memory {
		// 32 B/key are the strings alone; anything near or above 10 kB
		// per key means the measurement is broken.
		if m.BytesPerKy < 32 || m.BytesPerKy > 10000 {
			t.Errorf("%s ttl=%v: %.1f B/key, want between 32 and 10000", m.Peer, m.WithTTL, m.BytesPerKy)
		}
	}
	if len(res.Memory) < 2*(len(memPeers())-1) {
		t.Errorf("%d memory rows, want one per peer and TTL mode", len(res.Memory))
	}
}

// requireRedis starts a redis-server for the test the way the suite does,
// or skips the test (fails it under NXKV_REQUIRE_REDIS=1) without one.
func requireRedis(t *testing.T) *redisServer {
	t.Helper()
	redistest.Binary(t)
	s, err := startRedis()
	if err != nil {
		t.Fatalf("startRedis: %v", err)
	}
	t.Cleanup(s.Kill)
	return s
}

func TestRedisPeers(t *testing.T) {
	srv := requireRedis(t)
	mini, err := startMiniredis()
	if err != nil {
		t.Fatal(err)
	}
	defer mini.close()
	env := &environment{targets: []*target{{Name: "Redis", Addr: srv.Addr, close: func() {}}, mini}}

	for _, p := range env.kvPeers() {
		s, err := p.New()
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		for _, b := range checkKVSemantics(s) {
			t.Errorf("%s: %s", p.Name, b)
		}
		s.Close()
	}

	cfg := tinyConfig()
	cfg.HotKeys, cfg.BigKeys = 64, 128
	cfg.RepDur, cfg.LockDur = 3*time.Millisecond, 20*time.Millisecond
	res := &Results{Config: cfg}
	runRawWorkload(cfg, env.kvPeers(), res)
	for _, b := range checkRawRows(res.Raw) {
		t.Error(b)
	}
	if len(res.Raw) == 0 {
		t.Error("no raw rows for the Redis peers")
	}
	runLockWorkload(cfg, env, res)
	for _, b := range checkLockRows(res.Locks) {
		t.Error(b)
	}
	base := 0
	for _, r := range res.Locks {
		if r.Peer == baselineLockPeer && r.VsRedis == 1 {
			base++
		}
	}
	if base == 0 {
		t.Error("no lock row carries the Redis baseline ratio 1")
	}
}

func TestRedisServerKilled(t *testing.T) {
	srv := requireRedis(t)
	addr := srv.Addr
	env := &environment{server: srv}
	env.close()
	env.close() // idempotent
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err == nil {
		c.Close()
		t.Fatalf("redis-server still accepts connections on %s after close", addr)
	}
	if v, err := redisVersion(addr); err == nil {
		t.Fatalf("redisVersion(%s) = %s after close, want an error", addr, v)
	}
}

// baseStateErr reports a key of s that is not in the base state (present,
// holding value, no TTL).
func baseStateErr(s *mapMutexKV, keys []string) error {
	if len(s.m) != len(keys) {
		return fmt.Errorf("%d keys, want %d", len(s.m), len(keys))
	}
	for _, k := range keys {
		if e := s.m[k]; e.v != value || e.dl != 0 {
			return fmt.Errorf("%s = %+v, want %q without TTL", k, e, value)
		}
	}
	return nil
}

// runOnce runs one repetition of op and finishes the cell.
func runOnce(cfg config, s kvStore, op rawOp, keys []string, g int) {
	m := measureRaw(cfg, s, op, partition(keys, g), false)
	m.warm()
	m.rep()
	m.row()
}

// TestRawOpsRestoreBaseState checks the harness's bookkeeping: after every
// operation's repetitions each key is back to the base state, so the next
// operation measures what it claims.
func TestRawOpsRestoreBaseState(t *testing.T) {
	cfg := tinyConfig()
	keys := makeKeys(cfg.HotKeys)
	for _, g := range []int{1, 2} {
		s := &mapMutexKV{m: map[string]mmEntry{}}
		s.setMany(keys, value)
		for _, op := range rawOps() {
			runOnce(cfg, s, op, keys, g)
			if err := baseStateErr(s, keys); err != nil {
				t.Fatalf("%d goroutines, after %s: %v", g, op.Name, err)
			}
		}
	}
	// A planted bug: SetNXPX without its Post and Restore steps leaves keys
	// with a TTL (and some absent); the check must see it.
	var broken rawOp
	for _, op := range rawOps() {
		if op.Name == "SetNXPX" {
			broken = op
		}
	}
	broken.Post, broken.Restore = nil, nil
	s := &mapMutexKV{m: map[string]mmEntry{}}
	s.setMany(keys, value)
	runOnce(cfg, s, broken, keys, 1)
	if baseStateErr(s, keys) == nil {
		t.Error("baseStateErr found nothing after a SetNXPX that does not restore the keys")
	}
}
