package main

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// headlineJobs are the questions the default run answers, in the order it
// answers them. The last two run against env's servers, and are skipped,
// saying why, when those are missing.
func headlineJobs(cfg config, env *environment) []job {
	hc := cfg.forHead()
	return []job{kvJob(hc), lockJob(hc), handoffJob(hc), expiryJob(hc), memoryJob(hc),
		redisLockJob(hc, env.redis(), env.redisWhy), testDoubleJob(hc, env)}
}

// byName indexes peers of any kind by name.
func byName[P any](ps []P, name func(P) string) map[string]P {
	m := make(map[string]P, len(ps))
	for _, p := range ps {
		m[name(p)] = p
	}
	return m
}

// mapContestants are the engine and the maps and caches an embedding
// program would use instead.
func mapContestants() []contestant {
	return []contestant{
		{Name: peerEngine, Role: subject},
		{Name: peerMapMutex, Desc: "a map+Mutex", Role: alternative},
		{Name: peerSyncMap, Desc: "sync.Map", Role: alternative},
		{Name: peerXsync, Desc: "xsync.Map", Role: alternative},
		{Name: peerOtter, Desc: "otter", Role: alternative},
	}
}

// kvJob: the six Redis string operations on a hot key set, one goroutine,
// against the maps and caches an embedding program would use instead.
func kvJob(cfg config) job {
	ops := rawOps()
	j := job{
		ID:          "raw",
		Title:       "embedded KV operation",
		Metric:      fmt.Sprintf("time per operation, %d hot keys, 1 goroutine", cfg.HotKeys),
		Words:       timeWords,
		Unit:        nanoseconds,
		Rounds:      cfg.Reps,
		Contestants: mapContestants(),
	}
	for _, op := range ops {
		j.Parts = append(j.Parts, op.Name)
	}
	peers := byName(inprocKVPeers(), func(p kvPeer) string { return p.Name })
	j.measure = func(cs []contestant, tick func()) ([][][]float64, map[string]string, error) {
		keys := makeKeys(cfg.HotKeys)
		shares := partition(keys, 1)
		stores := make([]kvStore, len(cs))
		defer func() {
			for _, s := range stores {
				if s != nil {
					s.Close()
				}
			}
		}()
		for i, c := range cs {
			s, err := peers[c.Name].New()
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", c.Name, err)
			}
			s.setMany(keys, value)
			stores[i] = s
		}
		var costs [][][]float64
		for _, op := range ops {
			ms := make([]*rawMeasurement, len(cs))
			for i := range cs {
				ms[i] = measureRaw(cfg, stores[i], op, shares, false)
				ms[i].warm()
			}
			costs = append(costs, interleave(len(cs), cfg.Reps, tick, func(i int) float64 {
				return perSecToNs(ms[i].rep())
			}))
			for _, m := range ms {
				m.row() // returns the keys to their base state for the next op
			}
		}
		return costs, nil, nil
	}
	return j
}

func perSecToNs(perSec float64) float64 {
	if perSec <= 0 {
		return 0
	}
	return 1e9 / perSec
}

// lockContestants sets up lock peers, runs measure on each, and closes
// them.
func measureLocks(cs []contestant, peers map[string]lockPeer, tick func(), rounds int,
	mk func(env *lockEnv, p lockPeer, tag string) *measurement, cost func(repCost) float64) ([][][]float64, map[string]string, error) {
	envs := make([]*lockEnv, 0, len(cs))
	defer func() {
		for _, e := range envs {
			e.close()
		}
	}()
	ms := make([]*measurement, len(cs))
	for i, c := range cs {
		p := peers[c.Name]
		env, err := p.Setup()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", c.Name, err)
		}
		envs = append(envs, env)
		ms[i] = mk(env, p, fmt.Sprintf("h%d", i))
		ms[i].warm()
	}
	costs := interleave(len(cs), rounds, tick, func(i int) float64 { return cost(ms[i].rep()) })
	notes := map[string]string{}
	for i, m := range ms {
		r := m.row()
		var ns []string
		if r.Violations > 0 || r.Errors > 0 {
			ns = append(ns, fmt.Sprintf("%d mutual exclusion violations, %d errors", r.Violations, r.Errors))
		}
		if r.Untimed > 0 {
			ns = append(ns, untimedNote(r))
		}
		notes[cs[i].Name] = strings.Join(ns, "; ")
	}
	return [][][]float64{costs}, notes, nil
}

// lockJob: Obtain + Release on one key, one goroutine, in process.
func lockJob(cfg config) job {
	return inprocLockJob(cfg, "lock cycle in process", "time per Obtain + Release, uncontended, 1 goroutine",
		"nofence", "a map+Mutex lock",
		func(env *lockEnv, p lockPeer, tag string) *measurement {
			return measureUncontended(cfg, env, 1, p.Network, tag)
		},
		func(r repCost) float64 { return perSecToNs(r.perSec) })
}

// handoffJob: the time from a holder's Release to a blocked waiter holding
// the lock, with cfg.Waiters waiters.
func handoffJob(cfg config) job {
	return inprocLockJob(cfg, "hand-off to a waiter",
		fmt.Sprintf("median time from Release to the next holder's Obtain returning, %d waiters", cfg.Waiters),
		"fifo", fmt.Sprintf("a map+Mutex lock polling every %v", pollDelay),
		func(env *lockEnv, p lockPeer, tag string) *measurement {
			return measureHandoff(cfg, env, cfg.Waiters, p.Network, tag)
		},
		func(r repCost) float64 { return r.p50 })
}

// inprocLockJob is a job over the in-process locks: nxkv's default lock,
// the map+Mutex lock (the alternative, described as altDesc), nxkv with
// option variant, and sync.Mutex (the reference), each repetition made by
// mk and costed by cost.
func inprocLockJob(cfg config, title, metric, variantName, altDesc string,
	mk func(env *lockEnv, p lockPeer, tag string) *measurement, cost func(repCost) float64) job {
	ps := []lockPeer{nxkvInprocLockPeer(""), mapMutexLockPeer(), nxkvInprocLockPeer(variantName), mutexPeer()}
	peers := byName(ps, func(p lockPeer) string { return p.Name })
	return job{
		ID:     "locks",
		Title:  title,
		Metric: metric,
		Words:  timeWords,
		Unit:   nanoseconds,
		Rounds: cfg.Reps,
		Contestants: []contestant{
			{Name: ps[0].Name, Role: subject},
			{Name: ps[1].Name, Desc: altDesc, Role: alternative},
			{Name: ps[2].Name, Role: variant},
			{Name: ps[3].Name, Role: reference},
		},
		measure: func(cs []contestant, tick func()) ([][][]float64, map[string]string, error) {
			return measureLocks(cs, peers, tick, cfg.Reps, mk, cost)
		},
	}
}

// expiryJob: keys inserted with one common deadline; the cost is how long
// after the deadline the store's key count reaches 0.
func expiryJob(cfg config) job {
	ps := expPeers(cfg)
	peers := byName(ps, func(p expPeer) string { return p.Name })
	j := job{
		ID:     "expiry",
		Title:  "reclaiming expired keys",
		Metric: fmt.Sprintf("time from a common deadline until all %d keys are gone", cfg.ExpiryKeys),
		Words:  timeWords,
		Unit:   nanoseconds,
		Rounds: cfg.Head.ExpiryRounds,
		Contestants: []contestant{
			{Name: ps[0].Name, Role: subject},
			{Name: ps[1].Name, Desc: "otter (1 s clean-up tick)", Role: alternative},
			{Name: ps[2].Name, Desc: fmt.Sprintf("a map+Mutex scanned every %v", cfg.SweepEvery), Role: alternative},
		},
	}
	j.measure = func(cs []contestant, tick func()) ([][][]float64, map[string]string, error) {
		keys := makeKeys(cfg.ExpiryKeys)
		notes := map[string]string{}
		var failed error
		costs := interleave(len(cs), j.Rounds, tick, func(i int) float64 {
			row, err := together(cfg, peers[cs[i].Name], keys, false)
			runtime.GC()
			if err != nil {
				failed = fmt.Errorf("%s: %w", cs[i].Name, err)
				return 0
			}
			if row.Note != "" {
				notes[cs[i].Name] = row.Note
			}
			if row.ReclaimMs < 0 {
				// Censored at the timeout: the cost is at least that.
				return float64(cfg.ReclaimTimeout)
			}
			return max(row.ReclaimMs*1e6, float64(time.Microsecond))
		})
		return [][][]float64{costs}, notes, failed
	}
	return j
}

// memoryJob: heap per key with a TTL, after GC.
func memoryJob(cfg config) job {
	ps := memPeers()
	peers := byName(ps, func(p memPeer) string { return p.Name })
	return job{
		ID:          "memory",
		Title:       "memory per key with a TTL",
		Metric:      fmt.Sprintf("heap bytes per key after GC, %d keys of 10 bytes with 16-byte values", cfg.MemKeys),
		Words:       memoryWords,
		Unit:        bytesUnit,
		Rounds:      cfg.Head.MemRounds,
		Contestants: mapContestants(),
		measure: func(cs []contestant, tick func()) ([][][]float64, map[string]string, error) {
			var failed error
			costs := interleave(len(cs), cfg.Head.MemRounds, tick, func(i int) float64 {
				b, err := heapPerKey(peers[cs[i].Name], cfg.MemKeys, true)
				if err != nil {
					failed = fmt.Errorf("%s: %w", cs[i].Name, err)
				}
				return b
			})
			return [][][]float64{costs}, nil, failed
		},
	}
}

// redisLockJob: Obtain + Release over a real Redis, one goroutine, against
// the Redis lock clients a Go program would use instead.
func redisLockJob(cfg config, t *target, why string) job {
	j := job{
		ID:     "locks",
		Title:  "lock cycle over Redis",
		Metric: "time per Obtain + Release through go-redis on a local redis-server, uncontended, 1 goroutine",
		Words:  timeWords,
		Unit:   nanoseconds,
		Rounds: cfg.Reps,
	}
	if t == nil {
		j.Skip = why
		return j
	}
	ps := []lockPeer{nxkvRedisLockPeer(t), goRedisLockPeer(t), redislockPeer(t), redsyncPeer(t)}
	peers := byName(ps, func(p lockPeer) string { return p.Name })
	j.Contestants = []contestant{
		{Name: ps[0].Name, Role: subject},
		{Name: ps[1].Name, Desc: "a SET NX PX lock on go-redis", Role: alternative},
		{Name: ps[2].Name, Desc: "redislock", Role: alternative},
		{Name: ps[3].Name, Desc: "redsync", Role: alternative},
	}
	j.measure = func(cs []contestant, tick func()) ([][][]float64, map[string]string, error) {
		return measureLocks(cs, peers, tick, cfg.Reps, func(env *lockEnv, p lockPeer, tag string) *measurement {
			return measureUncontended(cfg, env, 1, p.Network, tag)
		}, func(r repCost) float64 { return perSecToNs(r.perSec) })
	}
	return j
}

// untimedNote says how many hand-offs of r were not timed, and why.
func untimedNote(r LockRow) string {
	return fmt.Sprintf("%d of %d hand-offs not timed (the holder was descheduled during its hold)", r.Untimed, r.Untimed+int64(r.Latency.N))
}

// testDoubleJob: a redislock Obtain + Release through go-redis against the
// Redis test doubles: nxkv-server (nxkv over the Redis protocol, a process
// of its own) and miniredis (in this process); real Redis, when present, is
// the reference.
func testDoubleJob(cfg config, env *environment) job {
	j := job{
		ID:     "resp",
		Title:  "redislock cycle on a Redis test double",
		Metric: "time per bsm/redislock Obtain + Release through go-redis, uncontended, 1 goroutine",
		Words:  timeWords,
		Unit:   nanoseconds,
		Rounds: cfg.Reps,
	}
	server, mini := env.target(nxkvServerName), env.target("miniredis")
	if server == nil || mini == nil {
		j.Skip = env.doubleWhy
		if j.Skip == "" {
			j.Skip = "the test doubles were not started"
		}
		return j
	}
	ps := []lockPeer{redislockPeer(server), redislockPeer(mini)}
	j.Contestants = []contestant{{Name: ps[0].Name, Role: subject}, {Name: ps[1].Name, Desc: "miniredis", Role: alternative}}
	if r := env.redis(); r != nil {
		ps = append(ps, redislockPeer(r))
		j.Contestants = append(j.Contestants, contestant{Name: ps[2].Name, Role: reference})
	}
	peers := byName(ps, func(p lockPeer) string { return p.Name })
	j.measure = func(cs []contestant, tick func()) ([][][]float64, map[string]string, error) {
		return measureLocks(cs, peers, tick, cfg.Reps, func(env *lockEnv, p lockPeer, tag string) *measurement {
			return measureUncontended(cfg, env, 1, p.Network, tag)
		}, func(r repCost) float64 { return perSecToNs(r.perSec) })
	}
	return j
}
