package main

// This file adds nxkv-server (nxkv's Redis-protocol server) as a Redis
// target, run as a separate process like redis-server, and the
// redis-benchmark workload that compares the two servers' throughput.

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/nxkv/nxkv/resp"
)

// serveEnv, when set to an address, makes the bench binary serve nxkv over
// RESP there instead of benchmarking: the suite re-executes itself this way
// to run nxkv-server as a process of its own.
const serveEnv = "NXKV_BENCH_SERVE_RESP"

// serveRESP runs the nxkv RESP server on addr until the parent dies or
// sends SIGTERM; it prints "ready" once listening.
func serveRESP(addr string) int {
	s := resp.New(resp.Options{})
	defer s.Close()
	if _, err := s.Listen("tcp", addr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("ready")
	sigs := make(chan os.Signal, 1)
	signalNotify(sigs)
	<-sigs
	return 0
}

// nxkvServer is the suite's nxkv-server process.
type nxkvServer struct {
	Addr string
	mu   sync.Mutex
	cmd  *exec.Cmd // guarded by mu; nil once stopped
}

// startNxkvServer runs this binary as an nxkv-server on a free loopback
// port and waits until it listens.
func startNxkvServer() (*nxkvServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), serveEnv+"="+addr)
	dieWithParent(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &nxkvServer{Addr: addr, cmd: cmd}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "ready" {
		s.Kill()
		return nil, fmt.Errorf("nxkv-server did not start: %q %v", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return s, nil
}

// Kill stops the server; it is idempotent and safe for concurrent use.
func (s *nxkvServer) Kill() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	_ = s.cmd.Wait()
	s.cmd = nil
}

// BenchRow is one redis-benchmark measurement.
type BenchRow struct {
	Server     string    `json:"server"`
	Test       string    `json:"test"` // SET, GET, INCR
	Pipeline   int       `json:"pipeline"`
	RPS        summary   `json:"requests_per_sec"`
	VsRedis    float64   `json:"vs_redis"`
	Command    string    `json:"command"`
	RunsRPS    []float64 `json:"runs_rps"`
	Clients    int       `json:"clients"`
	Requests   int       `json:"requests"`
	Interleave bool      `json:"interleaved"`
}

// runRedisBenchmark runs redis-benchmark -t set,get,incr -c 50 -n N, with
// and without -P 16, against redis-server and nxkv-server alternately, reps
// times each, and records the median requests per second.
func runRedisBenchmark(cfg config, env *environment, res *Results) {
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		res.skip("resp", "redis-benchmark", "no redis-benchmark on PATH (it ships with redis-server)")
		return
	}
	var servers []*target
	for _, t := range env.targets {
		if t.Name == "Redis" || t.Name == nxkvServerName {
			servers = append(servers, t)
		}
	}
	if len(servers) < 2 {
		res.skip("resp", "redis-benchmark", "needs both redis-server and nxkv-server")
		return
	}
	n := 200000
	if cfg.Reps <= 3 {
		n = 50000 // quick mode
	}
	reps := min(max(cfg.Reps, 3), 5)
	for _, pipe := range []int{1, 16} {
		runs := map[string]map[string][]float64{}
		for range reps {
			for _, t := range servers {
				host, port, _ := net.SplitHostPort(t.Addr)
				args := []string{"-h", host, "-p", port, "-t", "set,get,incr", "-c", "50", "-n", strconv.Itoa(n), "--csv", "-q"}
				if pipe > 1 {
					args = append(args, "-P", strconv.Itoa(pipe))
				}
				out, err := exec.Command(bin, args...).Output()
				if err != nil {
					res.skip("resp", "redis-benchmark", fmt.Sprintf("%s: %v", t.Name, err))
					return
				}
				got, err := parseBenchCSV(out)
				if err != nil {
					res.skip("resp", "redis-benchmark", err.Error())
					return
				}
				for test, rps := range got {
					if runs[t.Name] == nil {
						runs[t.Name] = map[string][]float64{}
					}
					runs[t.Name][test] = append(runs[t.Name][test], rps)
				}
			}
		}
		for _, test := range []string{"SET", "GET", "INCR"} {
			redisMedian := summarize(runs["Redis"][test]).Median
			for _, t := range servers {
				row := BenchRow{Server: t.Name, Test: test, Pipeline: pipe, RPS: summarize(runs[t.Name][test]),
					RunsRPS: runs[t.Name][test], Clients: 50, Requests: n, Interleave: true,
					Command: fmt.Sprintf("redis-benchmark -t set,get,incr -c 50 -n %d%s", n, map[bool]string{true: " -P 16", false: ""}[pipe > 1])}
				if redisMedian > 0 {
					row.VsRedis = row.RPS.Median / redisMedian
				}
				res.RESP = append(res.RESP, row)
			}
		}
	}
}

// parseBenchCSV reads redis-benchmark --csv output: "test","rps",...
func parseBenchCSV(out []byte) (map[string]float64, error) {
	recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil {
		return nil, err
	}
	got := map[string]float64{}
	for _, r := range recs {
		if len(r) < 2 || r[0] == "test" {
			continue
		}
		rps, err := strconv.ParseFloat(r[1], 64)
		if err != nil {
			continue
		}
		got[strings.Fields(r[0])[0]] = rps
	}
	if len(got) == 0 {
		return nil, errors.New("redis-benchmark printed no results")
	}
	return got, nil
}

// printRESP prints the redis-benchmark table.
func printRESP(w io.Writer, r *Results) {
	if len(r.RESP) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## redis-benchmark: nxkv-server vs redis-server (50 clients, median of %d interleaved runs)\n\n", len(r.RESP[0].RunsRPS))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "command\tserver\ttest\trequests/s (median)\trange\tvs redis-server")
	for _, row := range r.RESP {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s–%s\t%s\n", row.Command, row.Server, row.Test, fmtRate(row.RPS.Median),
			fmtRate(row.RPS.Min), fmtRate(row.RPS.Max), fmtVs(row.VsRedis, row.Server == "Redis"))
	}
	tw.Flush()
}

// nxkvServerName is the target name of nxkv-server.
const nxkvServerName = "nxkv-server"

// startNxkvTarget starts nxkv-server as a Redis target.
func startNxkvTarget() (*target, error) {
	s, err := startNxkvServer()
	if err != nil {
		return nil, err
	}
	// Check it answers like a Redis before measuring it.
	c := newRedisClient(s.Addr, 1)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		s.Kill()
		return nil, err
	}
	return &target{Name: nxkvServerName, Addr: s.Addr, close: s.Kill}, nil
}

// signalNotify delivers SIGTERM and SIGINT to c.
func signalNotify(c chan os.Signal) { signal.Notify(c, syscall.SIGTERM, os.Interrupt) }
