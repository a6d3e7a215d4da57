package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cpuSnapshot is the machine's CPU counters (/proc/stat, all CPUs, in clock
// ticks) and this process's CPU time, read together.
type cpuSnapshot struct {
	at    time.Time
	total float64       // every state
	idle  float64       // idle + iowait
	steal float64       // taken by the hypervisor for other guests
	self  time.Duration // this process and its children, user+system
	ok    bool          // /proc/stat was readable
}

// clockTick is the kernel's USER_HZ, the unit of /proc/stat: 100 on every
// Linux platform Go supports.
const clockTick = 100

func readCPU() cpuSnapshot {
	s := cpuSnapshot{at: time.Now(), self: cpuTime() + childrenCPU()}
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return s
	}
	for i, x := range f[1:] {
		v, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return s
		}
		// user nice system idle iowait irq softirq steal guest guest_nice;
		// guest time is already counted in user.
		if i >= 8 {
			break
		}
		s.total += v
		switch i {
		case 3, 4:
			s.idle += v
		case 7:
			s.steal += v
		}
	}
	s.ok = true
	return s
}

// childrenCPU is the CPU time of this process's children: those still
// running (the redis-server and nxkv-server it started, a redis-benchmark)
// read from /proc, and those that ended and were waited for, from
// getrusage. They do the suite's own work, not other processes'.
func childrenCPU() time.Duration {
	done := childrenDoneCPU()
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	self := os.Getpid()
	var ticks float64
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ... utime stime ...": comm may hold
		// spaces, so the fields are counted from the last ')'.
		st := string(b)
		end := strings.LastIndexByte(st, ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(st[end+1:])
		if len(f) < 13 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid != self {
			continue
		}
		u, _ := strconv.ParseFloat(f[11], 64)
		k, _ := strconv.ParseFloat(f[12], 64)
		ticks += u + k
	}
	return done + time.Duration(ticks/clockTick*float64(time.Second))
}

// loadAvg reads the 1-minute load average, or -1.
func loadAvg() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}

// Busy is how loaded the machine was over a stretch of the run.
type Busy struct {
	Seconds float64 `json:"seconds"`
	// OtherPct is the CPU used by other processes (every non-idle tick of
	// the machine minus this process's CPU time), in percent of all cores.
	OtherPct float64 `json:"other_cpu_pct"`
	// StealPct is CPU taken by the hypervisor, in percent of all cores.
	StealPct float64 `json:"steal_pct"`
	// LoadMax is the highest 1-minute load average seen (it includes this
	// process's own running threads); -1 if unknown.
	LoadMax float64 `json:"load_avg_max"`
	Known   bool    `json:"known"`
}

// Thresholds beyond which a stretch of the run counts as disturbed: other
// processes took a tenth of the machine, or the hypervisor a fiftieth.
const (
	busyOtherPct = 10
	busyStealPct = 2
)

// busy reports whether the stretch was disturbed.
func (b Busy) busy() bool {
	return b.Known && (b.OtherPct >= busyOtherPct || b.StealPct >= busyStealPct)
}

// String describes the load in words.
func (b Busy) String() string {
	if !b.Known {
		return "machine load unknown (no /proc/stat)"
	}
	s := fmt.Sprintf("other processes used %.0f%% of the CPU, steal %.0f%%", b.OtherPct, b.StealPct)
	if b.LoadMax >= 0 {
		s += fmt.Sprintf(", load average up to %.1f on %d cores", b.LoadMax, runtime.NumCPU())
	}
	return s
}

// loadMonitor watches the machine while the suite runs: it samples the
// load average every 500 ms and turns pairs of CPU snapshots into Busy.
type loadMonitor struct {
	stop chan struct{}
	done chan struct{}

	mu    sync.Mutex
	loads []loadSample // guarded by mu
}

type loadSample struct {
	at  time.Time
	avg float64
}

func startLoadMonitor() *loadMonitor {
	m := &loadMonitor{stop: make(chan struct{}), done: make(chan struct{})}
	m.sample()
	go func() {
		defer close(m.done)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				m.sample()
			}
		}
	}()
	return m
}

func (m *loadMonitor) sample() {
	if v := loadAvg(); v >= 0 {
		m.mu.Lock()
		m.loads = append(m.loads, loadSample{time.Now(), v})
		m.mu.Unlock()
	}
}

// Close stops the sampler; it is idempotent.
func (m *loadMonitor) Close() {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	<-m.done
}

// between describes the stretch from a to b (snapshots from readCPU).
func (m *loadMonitor) between(a, b cpuSnapshot) Busy {
	out := Busy{Seconds: b.at.Sub(a.at).Seconds(), LoadMax: -1}
	m.sample()
	m.mu.Lock()
	for _, s := range m.loads {
		if !s.at.Before(a.at) && !s.at.After(b.at.Add(500*time.Millisecond)) {
			out.LoadMax = max(out.LoadMax, s.avg)
		}
	}
	m.mu.Unlock()
	total := b.total - a.total
	if !a.ok || !b.ok || total <= 0 {
		return out
	}
	busyTicks := total - (b.idle - a.idle) - (b.steal - a.steal)
	selfTicks := (b.self - a.self).Seconds() * clockTick
	out.OtherPct = max(0, busyTicks-selfTicks) / total * 100
	out.StealPct = (b.steal - a.steal) / total * 100
	out.Known = true
	return out
}
