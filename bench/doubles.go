package main

// The test-double workload: what a service's tests do to the Redis they
// run against, beyond its locks. An idempotent job runner takes a
// redislock lock per job, writes the job's record as a hash, queues the
// job on a list, and a worker pops it (BRPOP), marks the record done and
// releases the lock: five commands and two Lua scripts per job, over
// go-redis. It runs against the two test doubles a Go service can use,
// miniredis (in this process) and nxkv-server (a process of its own, on
// loopback TCP), and against redis-server for reference, their
// repetitions interleaved so that outside load hits all alike.

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"
)

// jobsPerRep is how many jobs one repetition runs on one server.
const jobsPerRep = 400

// DoubleRow is one server's cost per job in the test-double workload.
type DoubleRow struct {
	Peer string `json:"peer"`
	// NsPerJob is the median time per job with its 95% interval, over the
	// repetitions in Reps (ns per job each).
	NsPerJob interval  `json:"ns_per_job"`
	Reps     []float64 `json:"reps_ns_per_job"`
	// VsMiniredis is this server's time per job over miniredis's, with a
	// 95% paired-bootstrap interval (nxkv-server's row only).
	VsMiniredis *interval `json:"vs_miniredis,omitempty"`
}

// runJobs runs n jobs, numbered from first, against c; each job is
// checked (the popped job is the one queued).
func runJobs(ctx context.Context, c *redis.Client, locker *redislock.Client, first, n int) error {
	for i := first; i < first+n; i++ {
		id := "job:" + strconv.Itoa(i%1024)
		lock, err := locker.Obtain(ctx, "lock:"+id, 10*time.Second, nil)
		if err != nil {
			return fmt.Errorf("obtain: %w", err)
		}
		if err := c.HSet(ctx, id, "state", "queued", "attempt", i, "owner", lock.Token()).Err(); err != nil {
			return err
		}
		if err := c.LPush(ctx, "queue", id).Err(); err != nil {
			return err
		}
		got, err := c.BRPop(ctx, time.Second, "queue").Result()
		if err != nil || got[1] != id {
			return fmt.Errorf("BRPOP: %q %v", got, err)
		}
		if err := c.HSet(ctx, id, "state", "done").Err(); err != nil {
			return err
		}
		if err := lock.Release(ctx); err != nil {
			return fmt.Errorf("release: %w", err)
		}
	}
	return nil
}

// runDoublesWorkload measures the job runner on every Redis target of the
// run (redis-server, miniredis, nxkv-server).
func runDoublesWorkload(cfg config, env *environment, res *Results) {
	ctx := context.Background()
	type peer struct {
		t      *target
		c      *redis.Client
		locker *redislock.Client
		reps   []float64
		failed error
	}
	var peers []*peer
	for _, t := range env.targets {
		if !cfg.want(t.Name) {
			continue
		}
		c := newRedisClient(t.Addr, 4)
		defer c.Close()
		peers = append(peers, &peer{t: t, c: c, locker: redislock.New(c)})
	}
	if len(peers) == 0 {
		res.skip("doubles", "every server", "no Redis target in this run")
		return
	}
	for _, p := range peers { // warm up: connections, scripts loaded
		p.failed = runJobs(ctx, p.c, p.locker, 0, jobsPerRep/4)
	}
	for rep := range cfg.Reps {
		for _, p := range peers {
			if p.failed != nil {
				continue
			}
			start := time.Now()
			if err := runJobs(ctx, p.c, p.locker, rep*jobsPerRep, jobsPerRep); err != nil {
				p.failed = err
				continue
			}
			p.reps = append(p.reps, float64(time.Since(start).Nanoseconds())/jobsPerRep)
		}
	}
	var mini []float64
	for _, p := range peers {
		if p.t.Name == "miniredis" && p.failed == nil {
			mini = p.reps
		}
	}
	for _, p := range peers {
		if p.failed != nil {
			res.skip("doubles", p.t.Name, p.failed.Error())
			continue
		}
		row := DoubleRow{Peer: p.t.Name, NsPerJob: medianCI(p.reps), Reps: p.reps}
		if p.t.Name == nxkvServerName && mini != nil {
			iv := ratioCI(p.reps, mini)
			row.VsMiniredis = &iv
		}
		res.Doubles = append(res.Doubles, row)
	}
}

// printDoubles prints the test-double workload's table.
func printDoubles(w io.Writer, r *Results) {
	if len(r.Doubles) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## A service's test double: a job runner (%d jobs a repetition)\n", jobsPerRep)
	fmt.Fprintf(w, "(per job, over go-redis: a redislock lock, HSET, LPUSH, BRPOP, HSET, release; median of the repetitions, 95%% interval;\n vs miniredis: the time per job against miniredis's, 95%% paired-bootstrap interval)\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "server\tper job\t95% interval\tvs miniredis\t")
	for _, row := range r.Doubles {
		vs := ""
		if iv := row.VsMiniredis; iv != nil {
			vs = doublesVerdict(*iv) + " (95% interval " + fmtTimesCI(iv.Lo, iv.Hi, timeWords) + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s–%s\t%s\t\n", row.Peer, fmtNs(row.NsPerJob.Median), fmtNs(row.NsPerJob.Lo), fmtNs(row.NsPerJob.Hi), vs)
	}
	tw.Flush()
}

// doublesVerdict states nxkv-server's time against miniredis's as the
// headline states its verdicts (decide): a direction only when the whole
// 95% interval lies beyond 5% of equal costs, else "no clear difference".
func doublesVerdict(iv interval) string {
	outcome, _ := decide(iv, iv, timeWords, true)
	return outcome
}
