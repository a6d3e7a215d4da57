// Command bench is nxkv's comparison suite: it runs the same work on nxkv
// and on what a user would otherwise choose, in one process and one run,
// and says how they compare.
//
//	go run ./bench                  # the headline, one to two minutes, no server needed
//	go run ./bench -full            # every workload and peer, about 10 minutes
//	go run ./bench -full -json r.json -svg charts/ -md BENCHMARKS.md
//
// The default run answers one question per job first (an embedded KV
// operation; a lock cycle in process, uncontended, with 8 goroutines on one
// key and on 64 keys, and handing off to a waiter; expiry reclaim; memory per
// key; the same lock jobs over Redis when a redis-server binary is on PATH;
// and a redislock cycle on nxkv-server, nxkv's Redis-protocol server,
// against miniredis): nxkv's median cost against an alternative's, measured
// in interleaved rounds, with a 95% confidence interval, and a verdict that
// states a direction only when the interval supports one. A job whose
// verdict is not settled adds rounds, up to a bound; the run lists the jobs
// it could not settle. The details of each job follow. -full then runs the
// whole suite: raw operations on a hot and a large key set at 1 and
// GOMAXPROCS goroutines, the lock cycle uncontended, contended and handing
// off, redis-benchmark against redis-server and nxkv-server, expiry
// (reclamation, reaper CPU, idle cost), memory per key, and a service's
// test double (a job runner with a lock, a hash record and a list queue,
// over go-redis against miniredis, nxkv-server and redis-server), and the
// engine as a bounded cache (hit ratio on a Zipf trace beside an exact LRU
// and otter, live heap under a bound, get-or-load's thundering herd beside
// singleflight), with
// Redis, miniredis and nxkv-server peers; the cells a headline job
// measured keep its figures.
//
// Results go to stdout section by section as they are measured; a status
// line goes to stderr. The run watches the machine (load average, CPU used
// by other processes, CPU steal) and says when it was too busy for the
// figures to be trusted.
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
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command's flags beyond the sizes in config.
type options struct {
	full      bool
	jsonOut   string
	svgDir    string
	mdOut     string
	label     string
	readme    string
	redisAddr string
	noRedis   bool
	want      map[string]bool // workloads selected by -only
}

// workloads are the names -only accepts; each headline job belongs to one.
var workloads = []string{"raw", "locks", "resp", "expiry", "memory", "doubles", "push", "cache"}

func run(args []string, stdout, stderr io.Writer) (code int) {
	if addr := os.Getenv(serveEnv); addr != "" {
		return serveRESP(addr) // the suite's own nxkv-server process
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.BoolVar(&o.full, "full", false, "after the headline, run every workload with every peer (about 10 minutes)")
	fs.StringVar(&o.jsonOut, "json", "", "write every figure to `FILE` as JSON")
	fs.StringVar(&o.svgDir, "svg", "", "write bar charts with error bars (headline.svg and one per section) into `DIR`")
	fs.StringVar(&o.mdOut, "md", "", "write the report as Markdown to `FILE` (BENCHMARKS.md), linking the -svg charts")
	fs.StringVar(&o.label, "label", "", "say in the Markdown report what was measured, as `TEXT` (e.g. a commit)")
	fs.StringVar(&o.readme, "readme", "", "rewrite the figures between the bench markers of `FILE` (README.md) from the results")
	from := fs.String("from", "", "measure nothing: read the results of an earlier run from `FILE` (its -json) and write -svg and -md from them")
	fs.StringVar(&o.redisAddr, "redis", "", "use the Redis server at `ADDR` instead of starting one (keys nxb*, nxblock* and nxkv:* are written and deleted; use a scratch server)")
	fs.BoolVar(&o.noRedis, "no-redis", false, "skip the Redis and miniredis peers")
	only := fs.String("only", strings.Join(workloads, ","), "comma-separated `workloads` to run (raw, locks, resp, expiry, memory, doubles, push, cache)")
	rounds := fs.Int("rounds", 0, "first interleaved rounds of the headline's in-process jobs (0: the default, 15); the jobs over Redis run 6 more")
	reps := fs.Int("reps", 0, "repetitions per measurement of the full suite (0: the default, 7)")
	peers := fs.String("peers", "", "run only the peers whose name matches `REGEXP` (e.g. 'nxkv|map')")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to `FILE` (go tool pprof)")
	compare := fs.Bool("compare", false, "measure nothing: compare the verdicts of the runs whose -json files follow, and exit 1 if they disagree")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *compare {
		return compareFiles(fs.Args(), stdout, stderr)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if o.mdOut != "" && o.svgDir == "" {
		fmt.Fprintln(stderr, "bench: -md links the charts: give -svg DIR too")
		return 2
	}
	if *from != "" {
		res, err := readJSON(*from)
		if err == nil {
			err = writeOutputs(res, o)
		}
		if err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
		return 0
	}
	cfg := defaultConfig()
	if *rounds > 0 {
		h := &cfg.Head
		h.NetRounds += *rounds - h.Rounds
		h.MaxRounds += *rounds - h.Rounds
		h.Rounds = *rounds
	}
	if *reps > 0 {
		cfg.Reps = *reps
	}
	if *peers != "" {
		re, err := regexp.Compile(*peers)
		if err != nil {
			fmt.Fprintf(stderr, "bench: -peers: %v\n", err)
			return 2
		}
		cfg.Peers = re
	}
	o.want = map[string]bool{}
	for _, w := range strings.Split(*only, ",") {
		w = strings.TrimSpace(w)
		switch {
		case w == "":
		case contains(workloads, w):
			o.want[w] = true
		default:
			fmt.Fprintf(stderr, "bench: unknown workload %q (want %s)\n", w, strings.Join(workloads, ", "))
			return 2
		}
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}

	con := newConsole(stdout, stderr)
	active.Store(con)
	defer active.Store(nil)
	defer con.done()
	env := &environment{}
	defer env.close()
	// Ctrl-C and SIGTERM must not leave a redis-server behind.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		if s, ok := <-sigs; ok {
			con.note("bench: %v: stopping", s)
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

	res := execute(con, cfg, o, env)
	if err := writeOutputs(res, o); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	return 0
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// execute runs the headline and, with -full, the whole suite, writing the
// report to w as it goes.
func execute(w *console, cfg config, o options, env *environment) *Results {
	mon := startLoadMonitor()
	defer mon.Close()
	start := readCPU()
	mode := "default"
	if o.full {
		mode = "full"
	}
	res := &Results{Started: time.Now().UTC(), Mode: mode, Machine: describeMachine(), Versions: peerVersions(), Config: cfg,
		LoadAtStart: loadAvg()}
	env.setupRedis(res, o, o.want["raw"] || o.want["locks"] || o.want["resp"] || o.want["push"] || (o.full && o.want["doubles"]))
	printHeader(w, res, env)

	var jobs []job
	for _, j := range headlineJobs(cfg, env) {
		var views []view
		for _, v := range j.Views {
			if o.want[v.workload(j)] {
				views = append(views, v)
			}
		}
		if len(views) > 0 {
			j.Views = views
			jobs = append(jobs, j)
		}
	}
	printHeadlineIntro(w, res, jobs)
	for _, j := range jobs {
		rows, jr := runJob(j, cfg, mon)
		res.Headline = append(res.Headline, rows...)
		if o.full {
			// The full suite's tables show these cells from this one
			// measurement instead of measuring them again.
			res.Raw = append(res.Raw, jr.Raw...)
			res.Locks = append(res.Locks, jr.Locks...)
		}
		for _, row := range rows {
			printHeadlineRow(w, row, jobs)
		}
	}
	printUnresolved(w, res)
	printDetails(w, res)

	if o.full {
		runFull(w, cfg, o, env, res, mon)
	} else {
		fmt.Fprintf(w, "\nEvery workload at more sizes, goroutine counts and peers: go run ./bench -full (about 10 minutes).\n")
	}
	res.Busy = mon.between(start, readCPU())
	res.Elapsed = time.Since(res.Started).Round(time.Second).String()
	printSkipped(w, res)
	printLoad(w, res)
	return res
}

// runFull runs every workload -only selects, printing each section as soon
// as it is measured.
func runFull(w *console, cfg config, o options, env *environment, res *Results, mon *loadMonitor) {
	fmt.Fprintf(w, "\n# The full suite\n")
	section := func(name string, measure func(), print func()) {
		a := readCPU()
		measure()
		b := mon.between(a, readCPU())
		res.Sections = append(res.Sections, SectionBusy{Name: name, Busy: b})
		print()
		if b.busy() {
			fmt.Fprintf(w, "\nwarning: the machine was busy during this section (%s); its figures may be off by more than their spread.\n", b)
		}
	}
	if o.want["raw"] {
		section("raw", func() {
			res.HarnessNs = harnessFloor(cfg)
			res.TimerFloor = float64(timerFloor())
			runRawWorkload(cfg, append(inprocKVPeers(), env.kvPeers()...), res)
		}, func() { printRaw(w, res) })
	}
	if o.want["locks"] {
		section("locks", func() { runLockWorkload(cfg, env, res) }, func() { printLocks(w, res) })
	}
	if o.want["resp"] {
		section("resp", func() { runRedisBenchmark(cfg, env, res) }, func() { printRESP(w, res) })
	}
	if o.want["expiry"] {
		section("expiry", func() { runExpiryWorkload(cfg, res) }, func() { printExpiry(w, res) })
	}
	if o.want["memory"] {
		section("memory", func() { runMemoryWorkload(cfg, res) }, func() { printMemory(w, res) })
	}
	if o.want["push"] {
		section("push", func() { runPushWorkload(cfg, env, res) }, func() { printPush(w, res) })
	}
	if o.want["doubles"] {
		section("doubles", func() { runDoublesWorkload(cfg, env, res) }, func() { printDoubles(w, res) })
	}
	if o.want["cache"] {
		section("cache", func() { runCacheWorkload(cfg, res) }, func() { printCache(w, res) })
	}
	res.Goals = evaluateGoals(res)
	printGoals(w, res)
}

// writeOutputs writes the files the flags ask for.
func writeOutputs(res *Results, o options) error {
	if o.label != "" {
		res.Label = o.label
	}
	if o.jsonOut != "" {
		if err := writeJSON(o.jsonOut, res); err != nil {
			return err
		}
	}
	if o.svgDir != "" {
		if err := writeCharts(o.svgDir, res); err != nil {
			return err
		}
	}
	if o.mdOut != "" {
		if err := writeMarkdown(o.mdOut, o.svgDir, res.Label, res); err != nil {
			return err
		}
	}
	if o.readme != "" {
		if err := updateReadme(o.readme, res); err != nil {
			return err
		}
	}
	return nil
}

// environment holds the servers the Redis peers use.
type environment struct {
	server    *redisServer // the redis-server we started, if any
	targets   []*target    // Redis first, then miniredis and nxkv-server
	redisWhy  string       // why there is no Redis target, if there is none
	doubleWhy string       // why miniredis or nxkv-server is missing, if one is
}

// setupRedis decides which Redis targets run: a server at -redis, or one
// started from PATH, and, for the full suite, miniredis (which needs no
// binary).
func (e *environment) setupRedis(res *Results, o options, needed bool) {
	if !needed {
		return
	}
	if o.noRedis {
		e.redisWhy, e.doubleWhy = "disabled by -no-redis", "disabled by -no-redis"
		res.skip("raw+locks", "Redis peers", e.redisWhy)
		return
	}
	switch {
	case o.redisAddr != "":
		v, err := redisVersion(o.redisAddr)
		if err != nil {
			e.redisWhy = fmt.Sprintf("-redis %s: %v", o.redisAddr, err)
			res.skip("raw+locks", "Redis peers", e.redisWhy)
			break
		}
		res.Versions["redis-server"] = v
		res.RedisSource = "at " + o.redisAddr
		e.targets = append(e.targets, &target{Name: "Redis", Addr: o.redisAddr, close: func() {}})
	default:
		s, err := startRedis()
		if err != nil {
			e.redisWhy = err.Error()
			res.skip("raw+locks", "Redis peers", e.redisWhy)
			break
		}
		e.server = s
		res.Versions["redis-server"] = s.Version
		res.RedisSource = "started on " + s.Addr + " for this run"
		e.targets = append(e.targets, &target{Name: "Redis", Addr: s.Addr, close: s.Kill})
	}
	// The test doubles: miniredis (in this process) and nxkv-server
	// (nxkv over the Redis protocol, a process of its own).
	if m, err := startMiniredis(); err != nil {
		e.doubleWhy = "miniredis: " + err.Error()
		res.skip("raw+locks", "miniredis peers", err.Error())
	} else {
		e.targets = append(e.targets, m)
	}
	if n, err := startNxkvTarget(); err != nil {
		e.doubleWhy = "nxkv-server: " + err.Error()
		res.skip("raw+locks", "nxkv-server peers", err.Error())
	} else {
		e.targets = append(e.targets, n)
	}
}

// target returns the target named name, or nil.
func (e *environment) target(name string) *target {
	for _, t := range e.targets {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// redis returns the real Redis target, or nil.
func (e *environment) redis() *target { return e.target("Redis") }

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

func formatVersions(v map[string]string) string {
	var parts []string
	for _, k := range []string{"github.com/puzpuzpuz/xsync/v4", "github.com/maypok86/otter/v2", "github.com/alicebob/miniredis/v2",
		"github.com/redis/go-redis/v9", "github.com/bsm/redislock", "github.com/go-redsync/redsync/v4"} {
		if x, ok := v[k]; ok {
			parts = append(parts, strings.TrimPrefix(k, "github.com/")+" "+x)
		}
	}
	return strings.Join(parts, ", ")
}
