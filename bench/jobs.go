package main

import (
	"fmt"
	"runtime"
	"strings"
	"time"
)

// headlineJobs are the questions the default run answers, in the order it
// answers them. The jobs over Redis run against env's servers, and their
// views are skipped, saying why, when those are missing.
func headlineJobs(cfg config, env *environment) []job {
	hc := cfg.forHead()
	return []job{
		kvJob(hc), lockJob(hc),
		contendedJob(hc, 1), contendedJob(hc, hc.Head.ContendedKeys),
		handoffJob(hc), expiryJob(hc), memoryJob(hc),
		redisLockJob(hc, env),
		redisContendedJob(hc, env, 1), redisContendedJob(hc, env, hc.Head.ContendedKeys),
	}
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

// withRounds sets a job's round counts from the headline's configuration:
// net says whether its contestants talk to a server.
func (j job) withRounds(h headConfig, net bool) job {
	j.Rounds, j.Step, j.MaxRounds = h.Rounds, h.Step, h.MaxRounds
	if net {
		j.Rounds = h.NetRounds
	}
	return j
}

// kvJob: the six Redis string operations on a hot key set, one goroutine,
// against the maps and caches an embedding program would use instead.
func kvJob(cfg config) job {
	ops := rawOps()
	j := job{
		ID: "raw", Words: timeWords, Unit: nanoseconds,
		Views: []view{{Title: "embedded KV operation",
			Metric:      fmt.Sprintf("time per operation, %d hot keys, 1 goroutine", cfg.HotKeys),
			Contestants: mapContestants()}},
	}.withRounds(cfg.Head, false)
	for _, op := range ops {
		j.Parts = append(j.Parts, op.Name)
	}
	peers := byName(inprocKVPeers(), func(p kvPeer) string { return p.Name })
	j.open = func(names []string) (*session, error) {
		keys := makeKeys(cfg.HotKeys)
		shares := partition(keys, 1)
		fresh := func(name string) (kvStore, error) {
			s, err := peers[name].New()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			s.setMany(keys, value)
			return s, nil
		}
		// stores[i] is contestant i's current store; ms[op][i] its
		// measurement of op, which persists over the rounds, each on a
		// fresh store.
		stores := make([]kvStore, len(names))
		closeAll := func() {
			for _, s := range stores {
				if s != nil {
					s.Close()
				}
			}
		}
		for i, name := range names {
			s, err := fresh(name)
			if err != nil {
				closeAll()
				return nil, err
			}
			stores[i] = s
		}
		ms := make([][]*rawMeasurement, len(ops))
		for o, op := range ops {
			for i := range names {
				ms[o] = append(ms[o], measureRaw(cfg, stores[i], op, shares, false))
			}
		}
		done := 0
		return &session{
			more: func(n int, tick func()) ([][][]float64, error) {
				var costs [][][]float64
				var failed error
				for o := range ops {
					for i, m := range ms[o] {
						m.renew(stores[i])
						m.warm()
						m.pause()
					}
					costs = append(costs, interleave(len(names), done, n, tick, func(i int) float64 {
						// Each repetition on a fresh store: rounds are
						// then independent draws of the hash seeds and
						// table layouts a store fixes when created.
						s, err := fresh(names[i])
						if err != nil {
							failed = err
							return 0
						}
						stores[i].Close()
						stores[i] = s
						ms[o][i].renew(s)
						runtime.GC() // no repetition pays for another's garbage
						return perSecToNs(ms[o][i].rep())
					}))
				}
				done += n
				return costs, failed
			},
			done: func() (map[string]string, jobRows) {
				var rows jobRows
				for o := range ops {
					for i, m := range ms[o] {
						row := m.row()
						row.Peer, row.Source = names[i], sourceHeadline
						rows.Raw = append(rows.Raw, row)
					}
				}
				closeAll()
				return nil, rows
			},
		}, nil
	}
	return j
}

func perSecToNs(perSec float64) float64 {
	if perSec <= 0 {
		return 0
	}
	return 1e9 / perSec
}

// lockSession sets up the named lock peers, makes each one's measurement
// with mk, and measures rounds of them interleaved, each repetition costed
// by cost.
func lockSession(names []string, peers map[string]lockPeer, mk func(env *lockEnv, p lockPeer, tag string) *measurement,
	cost func(repCost) float64) (*session, error) {
	envs := make([]*lockEnv, 0, len(names))
	closeAll := func() {
		for _, e := range envs {
			e.close()
		}
	}
	ms := make([]*measurement, len(names))
	for i, name := range names {
		p := peers[name]
		env, err := p.Setup()
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		envs = append(envs, env)
		ms[i] = mk(env, p, fmt.Sprintf("h%d", i))
		ms[i].warm()
	}
	done := 0
	return &session{
		more: func(n int, tick func()) ([][][]float64, error) {
			var failed error
			costs := interleave(len(names), done, n, tick, func(i int) float64 {
				// Each repetition on a fresh set-up: rounds are then
				// independent draws of whatever a peer fixes when it is
				// created (hash seeds, table layouts, connections), and
				// the interval covers them.
				env, err := peers[names[i]].Setup()
				if err != nil {
					failed = fmt.Errorf("%s: %w", names[i], err)
					return 0
				}
				ms[i].renew(env)
				envs[i].close()
				envs[i] = env
				runtime.GC() // no repetition pays for another's garbage
				return cost(ms[i].rep())
			})
			done += n
			return [][][]float64{costs}, failed
		},
		done: func() (map[string]string, jobRows) {
			notes := map[string]string{}
			var rows jobRows
			for i, m := range ms {
				r := m.row()
				r.Peer, r.Source = names[i], sourceHeadline
				rows.Locks = append(rows.Locks, r)
				var ns []string
				if r.Violations > 0 || r.Errors > 0 {
					ns = append(ns, fmt.Sprintf("%d mutual exclusion violations, %d errors", r.Violations, r.Errors))
				}
				if r.Untimed > 0 {
					ns = append(ns, untimedNote(r))
				}
				if r.Scenario == "contended" {
					ns = append(ns, fmt.Sprintf("hand-off p50 %s, %.0f%% of cycles re-acquired by the releasing goroutine",
						fmtNs(r.Latency.P50), r.SelfPct))
				}
				notes[names[i]] = strings.Join(ns, "; ")
			}
			closeAll()
			return notes, rows
		},
	}, nil
}

// inprocLockContestants are nxkv's in-process lock with the defaults, the
// map+Mutex lock (described as altDesc), nxkv with option variantName (""
// for none), and sync.Mutex, the reference.
func inprocLockContestants(variantName, altDesc string) ([]lockPeer, []contestant) {
	ps := []lockPeer{nxkvInprocLockPeer(""), mapMutexLockPeer(), mutexPeer()}
	cs := []contestant{{Name: ps[0].Name, Role: subject}, {Name: ps[1].Name, Desc: altDesc, Role: alternative}}
	if variantName != "" {
		v := nxkvInprocLockPeer(variantName)
		ps = append(ps, v)
		cs = append(cs, contestant{Name: v.Name, Role: variant})
	}
	return ps, append(cs, contestant{Name: ps[2].Name, Role: reference})
}

// inprocLockJob is a job over the in-process locks, each repetition made
// by mk and costed by cost.
func inprocLockJob(cfg config, title, metric, variantName, altDesc string,
	mk func(env *lockEnv, p lockPeer, tag string) *measurement, cost func(repCost) float64) job {
	ps, cs := inprocLockContestants(variantName, altDesc)
	peers := byName(ps, func(p lockPeer) string { return p.Name })
	return job{
		ID: "locks", Words: timeWords, Unit: nanoseconds,
		Views: []view{{Title: title, Metric: metric, Contestants: cs}},
		open: func(names []string) (*session, error) {
			return lockSession(names, peers, mk, cost)
		},
	}.withRounds(cfg.Head, false)
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

// contendedTitle names a contended job: "contended lock in process, 8
// goroutines on one key".
func contendedTitle(where string, g, keys int) string {
	on := "one key"
	if keys > 1 {
		on = fmt.Sprintf("%d keys", keys)
	}
	return fmt.Sprintf("contended lock %s, %d goroutines on %s", where, g, on)
}

// contendedMetric says what a contended job's cost is.
func contendedMetric(g, keys int) string {
	if keys <= 1 {
		return fmt.Sprintf("time per Obtain + Release of all %d goroutines together, free for all on one key", g)
	}
	return fmt.Sprintf("time per Obtain + Release of all %d goroutines together, each cycle on a key drawn at random from %d", g, keys)
}

// contendedJob: g goroutines cycling Obtain + Release on keys keys, in
// process; the cost is the time per cycle of all of them together.
func contendedJob(cfg config, keys int) job {
	g := cfg.Head.Contenders
	return inprocLockJob(cfg, contendedTitle("in process", g, keys), contendedMetric(g, keys), "", "a map+Mutex lock",
		func(env *lockEnv, p lockPeer, tag string) *measurement {
			return measureContended(cfg, env, g, keys, tag)
		},
		func(r repCost) float64 { return perSecToNs(r.perSec) })
}

// handoffJob: the time from a holder's Release to a blocked waiter holding
// the lock, with cfg.Waiters waiters.
func handoffJob(cfg config) job {
	c := cfg
	c.LockDur = cfg.Head.HandoffDur
	return inprocLockJob(cfg, "hand-off to a waiter",
		fmt.Sprintf("time from Release to the next holder's Obtain returning, %d waiters (mean of each round's hand-offs, "+
			"the slowest and fastest tenth left out)", cfg.Waiters),
		"fifo", fmt.Sprintf("a map+Mutex lock polling every %v", pollDelay),
		func(env *lockEnv, p lockPeer, tag string) *measurement {
			return measureHandoff(c, env, cfg.Waiters, p.Network, tag)
		},
		func(r repCost) float64 { return r.trimmed })
}

// expiryJob: keys inserted with deadlines spread evenly over a window;
// the cost is how long after its deadline a key is gone, on average over
// the keys.
func expiryJob(cfg config) job {
	ps := expPeers(cfg)
	peers := byName(ps, func(p expPeer) string { return p.Name })
	j := job{
		ID: "expiry", Words: timeWords, Unit: nanoseconds,
		Rounds: cfg.Head.ExpiryRounds, Step: cfg.Head.ExpiryStep, MaxRounds: cfg.Head.ExpiryMaxRounds,
		Views: []view{{Title: "reclaiming expired keys",
			Metric: fmt.Sprintf("mean time from a key's deadline until it is gone, %d keys with deadlines spread over %v",
				cfg.ExpiryKeys, cfg.Spread),
			Contestants: []contestant{
				{Name: ps[0].Name, Role: subject},
				{Name: ps[1].Name, Desc: "otter (1 s clean-up tick)", Role: alternative},
				{Name: ps[2].Name, Desc: fmt.Sprintf("a map+Mutex scanned every %v", cfg.SweepEvery), Role: alternative},
			}}},
	}
	j.open = func(names []string) (*session, error) {
		keys := makeKeys(cfg.ExpiryKeys)
		notes := map[string]string{}
		done := 0
		return &session{
			more: func(n int, tick func()) ([][][]float64, error) {
				var failed error
				costs := interleave(len(names), done, n, tick, func(i int) float64 {
					row, err := expireSpread(cfg, peers[names[i]], keys)
					runtime.GC()
					if err != nil {
						failed = fmt.Errorf("%s: %w", names[i], err)
						return 0
					}
					if row.Note != "" {
						notes[names[i]] = row.Note
					}
					return max(row.MeanDelayMs*1e6, float64(time.Microsecond))
				})
				done += n
				return [][][]float64{costs}, failed
			},
			done: func() (map[string]string, jobRows) { return notes, jobRows{} },
		}, nil
	}
	return j
}

// memoryJob: heap per key with a TTL, after GC.
func memoryJob(cfg config) job {
	ps := memPeers()
	peers := byName(ps, func(p memPeer) string { return p.Name })
	j := job{
		ID: "memory", Words: memoryWords, Unit: bytesUnit,
		Rounds: cfg.Head.MemRounds, MaxRounds: cfg.Head.MemRounds,
		Views: []view{{Title: "memory per key with a TTL",
			Metric:      fmt.Sprintf("heap bytes per key after GC, %d keys of 10 bytes with 16-byte values", cfg.MemKeys),
			Contestants: mapContestants()}},
	}
	j.open = func(names []string) (*session, error) {
		done := 0
		return &session{
			more: func(n int, tick func()) ([][][]float64, error) {
				var failed error
				costs := interleave(len(names), done, n, tick, func(i int) float64 {
					b, err := heapPerKey(peers[names[i]], cfg.MemKeys, true)
					if err != nil {
						failed = fmt.Errorf("%s: %w", names[i], err)
					}
					return b
				})
				done += n
				return [][][]float64{costs}, failed
			},
			done: func() (map[string]string, jobRows) { return nil, jobRows{} },
		}, nil
	}
	return j
}

// redisClientContestants are nxkv's lock client and the Redis lock
// clients a Go program would use instead, on target t: redislock and
// redsync get a verdict each; a bare SET NX PX lock on go-redis (no retry
// strategy, no fencing) is the reference.
func redisClientContestants(t *target) ([]lockPeer, []contestant) {
	ps := []lockPeer{nxkvRedisLockPeer(t), redislockPeer(t), redsyncPeer(t), goRedisLockPeer(t)}
	return ps, []contestant{
		{Name: ps[0].Name, Role: subject},
		{Name: ps[1].Name, Desc: "redislock", Role: alternative},
		{Name: ps[2].Name, Desc: "redsync", Role: alternative},
		{Name: ps[3].Name, Role: reference},
	}
}

// redisLockJob: Obtain + Release through go-redis, one goroutine: nxkv's
// lock client against the Redis lock clients on a real Redis, and
// redislock on the Redis test doubles (nxkv-server, nxkv over the Redis
// protocol in a process of its own, and miniredis, in this process). Both
// questions are answered from one measurement, so redislock on redis-server
// has one figure.
func redisLockJob(cfg config, env *environment) job {
	j := job{ID: "locks", Words: timeWords, Unit: nanoseconds}.withRounds(cfg.Head, true)
	var ps []lockPeer
	clients := view{Title: "lock cycle over Redis", Versus: versusEach, Axis: axisClient,
		Metric: "time per Obtain + Release through go-redis on a local redis-server, uncontended, 1 goroutine"}
	if r := env.redis(); r != nil {
		ps, clients.Contestants = redisClientContestants(r)
	} else {
		clients.Skip = env.redisWhy
	}
	doubles := view{Title: "redislock cycle on a Redis test double", Axis: axisServer,
		Metric: "time per bsm/redislock Obtain + Release through go-redis, uncontended, 1 goroutine"}
	server, mini := env.target(nxkvServerName), env.target("miniredis")
	if server == nil || mini == nil {
		doubles.Skip = env.doubleWhy
		if doubles.Skip == "" {
			doubles.Skip = "the test doubles were not started"
		}
	} else {
		ps = append(ps, redislockPeer(server), redislockPeer(mini))
		doubles.Contestants = []contestant{{Name: redislockPeer(server).Name, Role: subject},
			{Name: redislockPeer(mini).Name, Desc: "miniredis", Role: alternative}}
		if r := env.redis(); r != nil {
			doubles.Contestants = append(doubles.Contestants, contestant{Name: redislockPeer(r).Name, Role: reference})
		}
	}
	doubles.Workload = "resp"
	j.Views = []view{clients, doubles}
	peers := byName(ps, func(p lockPeer) string { return p.Name })
	j.open = func(names []string) (*session, error) {
		return lockSession(names, peers, func(env *lockEnv, p lockPeer, tag string) *measurement {
			return measureUncontended(cfg, env, 1, p.Network, tag)
		}, func(r repCost) float64 { return perSecToNs(r.perSec) })
	}
	return j
}

// redisContendedJob: cfg.Head.Contenders goroutines cycling Obtain +
// Release over a real Redis, on one key or on keys keys.
func redisContendedJob(cfg config, env *environment, keys int) job {
	g := cfg.Head.Contenders
	j := job{ID: "locks", Words: timeWords, Unit: nanoseconds}.withRounds(cfg.Head, true)
	v := view{Title: contendedTitle("over Redis", g, keys), Versus: versusEach, Axis: axisClient,
		Metric: contendedMetric(g, keys) + ", through go-redis on a local redis-server"}
	var ps []lockPeer
	if r := env.redis(); r != nil {
		ps, v.Contestants = redisClientContestants(r)
	} else {
		v.Skip = env.redisWhy
	}
	j.Views = []view{v}
	peers := byName(ps, func(p lockPeer) string { return p.Name })
	j.open = func(names []string) (*session, error) {
		return lockSession(names, peers, func(env *lockEnv, p lockPeer, tag string) *measurement {
			return measureContended(cfg, env, g, keys, tag)
		}, func(r repCost) float64 { return perSecToNs(r.perSec) })
	}
	return j
}

// untimedNote says how many hand-offs of r were not timed, and why.
func untimedNote(r LockRow) string {
	return fmt.Sprintf("%d of %d hand-offs not timed (the holder was descheduled during its hold)", r.Untimed, r.Untimed+int64(r.Latency.N))
}
