package main

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

func TestBusyFromSnapshots(t *testing.T) {
	m := &loadMonitor{}
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	a := cpuSnapshot{at: t0, total: 10000, idle: 5000, steal: 100, self: 10 * time.Second, ok: true}
	// Over 10 s on 2 cores (2000 ticks): 600 idle, 100 stolen, 1300 busy,
	// of which 4 s = 400 ticks were this process: others used 900 = 45%.
	b := cpuSnapshot{at: t0.Add(10 * time.Second), total: 12000, idle: 5600, steal: 200, self: 14 * time.Second, ok: true}
	got := m.between(a, b)
	if !got.Known || got.OtherPct != 45 || got.StealPct != 5 || !got.busy() {
		t.Errorf("between = %+v, want 45%% other, 5%% steal, busy", got)
	}
	quiet := cpuSnapshot{at: b.at, total: 12000, idle: 6500, steal: 100, self: 14 * time.Second, ok: true}
	if got := m.between(a, quiet); got.busy() {
		t.Errorf("between(quiet) = %+v, want not busy", got)
	}
	if got := m.between(a, cpuSnapshot{at: b.at}); got.Known || got.busy() {
		t.Errorf("between without /proc/stat = %+v, want unknown, not busy", got)
	}
}

const burnEnv = "NXKV_BENCH_BURN"

// TestBurnHelper burns one core for the time in its environment variable;
// it does something only as the child of TestLoadMonitorSeesOtherProcess.
func TestBurnHelper(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv(burnEnv))
	if err != nil {
		t.Skip("runs only as a child of TestLoadMonitorSeesOtherProcess")
	}
	// Burn d of CPU time, not of wall time, so that a loaded machine
	// stretches the burn instead of shrinking it (with a wall-time cap in
	// case the CPU time cannot be read).
	start := cpuTime()
	for deadline := time.Now().Add(20 * d); cpuTime()-start < d && time.Now().Before(deadline); {
	}
}

// burn runs cmd (a burner: this test binary on TestBurnHelper, burning 0.5 s of CPU)
// under a load monitor and returns the CPU snapshots around it and the
// monitor's view of the stretch.
func burn(t *testing.T, cmd *exec.Cmd) (a, b cpuSnapshot, got Busy) {
	t.Helper()
	if !readCPU().ok {
		t.Skip("no /proc/stat")
	}
	m := startLoadMonitor()
	defer m.Close()
	a = readCPU()
	cmd.Env = append(os.Environ(), burnEnv+"=500ms")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("burner: %v\n%s", err, out)
	}
	b = readCPU()
	return a, b, m.between(a, b)
}

// TestLoadMonitorSeesOtherProcess burns a core in another process and
// requires the monitor to count it as other processes' CPU. The burner is
// orphaned at once: the suite's own descendants count as its own work.
func TestLoadMonitorSeesOtherProcess(t *testing.T) {
	// The shell exits at once, so the burner is not this process's
	// descendant when it ends (getrusage would count a reaped grandchild
	// as ours); its inherited output pipe tells us when it is done.
	_, _, got := burn(t, exec.Command("sh", "-c", `"$0" -test.run='^TestBurnHelper$' -test.count=1 &`, os.Args[0]))
	// 0.5 s of one core over the window (process start-up included), with
	// some slack for the burner's scheduling.
	if want := 0.6 * 0.5 / (got.Seconds * float64(runtime.NumCPU())) * 100; got.OtherPct < want {
		t.Errorf("with a core burning for 0.5 s of %.2f s: %+v, want other processes at %.0f%% or more", got.Seconds, got, want)
	}
}

// TestLoadMonitorCountsChildrenAsOwn burns a core in a direct child, as the
// suite's redis-server or redis-benchmark would: that is the suite's own
// work, not a busy machine.
func TestLoadMonitorCountsChildrenAsOwn(t *testing.T) {
	a, b, _ := burn(t, exec.Command(os.Args[0], "-test.run=^TestBurnHelper$", "-test.count=1"))
	if own := b.self - a.self; own < 300*time.Millisecond {
		t.Errorf("a child burned a core for 0.5 s, but the suite's own CPU grew by %v", own)
	}
}
