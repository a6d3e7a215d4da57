// Command bench is nxkv's comparison suite: it runs the same logical work on
// nxkv and on the peers a user would otherwise choose, in one process and
// one run, and prints a table per workload.
//
//	go run ./bench                 # the default run (a few minutes on 2 cores)
//	go run ./bench -quick          # under a minute, smaller key sets
//	go run ./bench -json out.json -svg out.svg
//
// Workloads: raw operations (SetNX, SetNXPX, GetSet, CompareAndDelete, Get,
// Set on a hot and a large key set, at 1 and GOMAXPROCS goroutines), the
// lock cycle (uncontended and contended, with the hand-off latency), expiry
// (reclamation delay, reaper CPU per key, idle cost) and memory per key.
//
// In-process peers always run. Redis peers (go-redis against a real
// redis-server, and against miniredis) run when a redis-server binary is on
// PATH (the suite starts one on a free loopback port and kills it at exit) or
// when -redis ADDR names a server; otherwise a line says they were skipped.
// Each measurement is warmed up, repeated, and reported as the median with
// the spread of the repetitions, because the machine may be shared.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) (code int) {
	if addr := os.Getenv(serveEnv); addr != "" {
		return serveRESP(addr) // the suite's own nxkv-server process
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	quick := fs.Bool("quick", false, "smaller key sets and shorter repetitions: finishes in under a minute")
	jsonOut := fs.String("json", "", "write machine-readable results to `FILE`")
	svgOut := fs.String("svg", "", "write a bar chart of the headline ratios to `FILE`")
	redisAddr := fs.String("redis", "", "use the Redis server at `ADDR` instead of starting one (keys nxb*, nxblock* and nxkv:fence:* are written and deleted; use a scratch server)")
	noRedis := fs.Bool("no-redis", false, "skip the Redis peers")
	only := fs.String("only", "raw,locks,resp,expiry,memory", "comma-separated `workloads` to run")
	reps := fs.Int("reps", 0, "repetitions per measurement (0: mode default)")
	peers := fs.String("peers", "", "run only the peers whose name matches `REGEXP` (e.g. 'nxkv|map')")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `FILE` (go tool pprof)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, mode := defaultConfig(), "default"
	if *quick {
		cfg, mode = quickConfig(), "quick"
	}
	if *reps > 0 {
		cfg.Reps = *reps
	}
	if *peers != "" {
		re, err := regexp.Compile(*peers)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: -peers: %v\n", err)
			return 2
		}
		cfg.Peers = re
	}
	want := map[string]bool{}
	for _, w := range strings.Split(*only, ",") {
		w = strings.TrimSpace(w)
		switch w {
		case "raw", "locks", "resp", "expiry", "memory":
			want[w] = true
		case "":
		default:
			fmt.Fprintf(os.Stderr, "bench: unknown workload %q (want raw, locks, resp, expiry, memory)\n", w)
			return 2
		}
	}

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}

	env := &environment{}
	defer env.close()
	// Ctrl-C and SIGTERM must not leave a redis-server behind.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		if s, ok := <-sigs; ok {
			fmt.Fprintf(os.Stderr, "bench: %v: stopping\n", s)
			env.close()
			os.Exit(130)
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			env.close()
			panic(p)
		}
	}()

	res := &Results{Started: time.Now().UTC(), Mode: mode, Machine: describeMachine(), Versions: peerVersions(), Config: cfg}
	res.TimerFloor = float64(timerFloor())
	env.setupRedis(res, *redisAddr, *noRedis, want["raw"] || want["locks"] || want["resp"])

	if want["raw"] {
		res.HarnessNs = harnessFloor(cfg)
		progress("raw operations (the loop itself costs %.1f ns/op)", res.HarnessNs)
		runRawWorkload(cfg, append(inprocKVPeers(), env.kvPeers()...), res)
	}
	if want["locks"] {
		progress("lock cycle")
		runLockWorkload(cfg, env, res)
	}
	if want["resp"] {
		progress("redis-benchmark against redis-server and nxkv-server")
		runRedisBenchmark(cfg, env, res)
	}
	if want["expiry"] {
		progress("expiry")
		runExpiryWorkload(cfg, res)
	}
	if want["memory"] {
		progress("memory per key")
		runMemoryWorkload(cfg, res)
	}
	res.Elapsed = time.Since(res.Started).Round(time.Second).String()
	res.Targets = evaluateTargets(res)
	printReport(os.Stdout, res)
	if *jsonOut != "" {
		if err := writeJSON(*jsonOut, res); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			return 1
		}
	}
	if *svgOut != "" {
		if err := os.WriteFile(*svgOut, renderSVG(res), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %v\n", err)
			return 1
		}
	}
	return 0
}

// environment holds the servers the Redis peers use.
type environment struct {
	server  *redisServer // the redis-server we started, if any
	targets []*target    // Redis first, then miniredis, then nxkv-server
}

// setupRedis decides which Redis targets run: a server at addr, one started
// from PATH, and miniredis (which needs no binary but is a Redis peer).
func (e *environment) setupRedis(res *Results, addr string, disabled, needed bool) {
	if !needed {
		return
	}
	if disabled {
		res.skip("raw+locks", "Redis and miniredis peers", "disabled by -no-redis")
		return
	}
	switch {
	case addr != "":
		v, err := redisVersion(addr)
		if err != nil {
			res.skip("raw+locks", "Redis peers", fmt.Sprintf("-redis %s: %v", addr, err))
			break
		}
		res.Versions["redis-server"] = v
		e.targets = append(e.targets, &target{Name: "Redis", Addr: addr, close: func() {}})
	default:
		s, err := startRedis()
		if err != nil {
			res.skip("raw+locks", "Redis peers", err.Error())
			break
		}
		e.server = s
		res.Versions["redis-server"] = s.Version
		progress("started redis-server %s on %s", s.Version, s.Addr)
		e.targets = append(e.targets, &target{Name: "Redis", Addr: s.Addr, close: s.Kill})
	}
	m, err := startMiniredis()
	if err != nil {
		res.skip("raw+locks", "miniredis peers", err.Error())
	} else {
		e.targets = append(e.targets, m)
	}
	n, err := startNxkvTarget()
	if err != nil {
		res.skip("raw+locks", "nxkv-server peers", err.Error())
		return
	}
	progress("started nxkv-server (nxkv over the Redis protocol, its own process) on %s", n.Addr)
	e.targets = append(e.targets, n)
}

func (e *environment) kvPeers() []kvPeer {
	var ps []kvPeer
	for _, t := range e.targets {
		ps = append(ps, kvPeer{Name: t.Name + " (go-redis)", Network: true, New: newRedisKV(t.Addr)})
	}
	return ps
}

// close stops every server; it is idempotent.
func (e *environment) close() {
	for _, t := range e.targets {
		t.close()
	}
	e.server.Kill()
}

func printReport(w io.Writer, r *Results) {
	fmt.Fprintf(w, "# nxkv bench (%s mode): %s, %d cores (GOMAXPROCS %d), %s, %s; took %s\n",
		r.Mode, r.Machine.CPU, r.Machine.Cores, r.Machine.GOMAXPROCS, r.Machine.Go, r.Machine.OS, r.Elapsed)
	fmt.Fprintf(w, "peers: %s\n", formatVersions(r.Versions))
	printRaw(w, r)
	printLocks(w, r)
	printRESP(w, r)
	printExpiry(w, r)
	printMemory(w, r)
	printTargets(w, r)
	printSkipped(w, r)
}

func formatVersions(v map[string]string) string {
	var parts []string
	for _, k := range []string{"github.com/puzpuzpuz/xsync/v4", "github.com/maypok86/otter/v2", "github.com/alicebob/miniredis/v2",
		"github.com/redis/go-redis/v9", "github.com/bsm/redislock", "github.com/go-redsync/redsync/v4", "redis-server"} {
		if x, ok := v[k]; ok {
			parts = append(parts, k+" "+x)
		}
	}
	return strings.Join(parts, ", ")
}
