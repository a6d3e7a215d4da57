package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
)

// lockTTL is the TTL of every lock in the lock workload: far longer than any
// hold, so no lock expires during a run.
const lockTTL = 10 * time.Second

// handoffHold and handoffHoldNetwork are how long a holder in the hand-off
// scenario keeps the lock after every other goroutine entered Obtain: long
// enough for their first attempt (a round trip for network clients) to fail.
const (
	handoffHold        = 100 * time.Microsecond
	handoffHoldNetwork = time.Millisecond
)

// pollDelay is the retry delay given to every polling client, so that they
// are compared at the same setting.
const pollDelay = time.Millisecond

// lockRetrySettings documents the retry settings for the report.
const lockRetrySettings = "polling clients retry every 1 ms: go-redis baseline and map+Mutex sleep a random 0.5-1.5 ms, " +
	"redislock LinearBackoff(1ms), redsync WithRetryDelay(1ms) WithTries(MaxInt32), nxkv over Redis LinearBackoff(1ms) " +
	"(library defaults: redislock NoRetry, redsync 32 tries with a random 50-250 ms delay); " +
	"nxkv in process is woken by the engine's Watch, not polled (LinearBackoff(100ms) only bounds each wait window); " +
	"nxkv lockapi keeps its default fencing counter (one extra INCR inside the acquire script on Redis); lock TTL 10 s"

// locker is one goroutine's handle on a lock key: lock blocks until the
// lock is held (or ctx ends), unlock releases it.
type locker interface {
	lock(ctx context.Context) error
	unlock(ctx context.Context) error
}

// lockEnv is a lock peer set up for a run: it makes one locker per goroutine
// and key, clears a key between repetitions, and is closed at the end.
type lockEnv struct {
	newLocker func(key string) locker
	reset     func(key string)
	close     func()
}

// lockPeer is a lock implementation under test.
type lockPeer struct {
	Name    string
	Network bool
	// UncontendedOnly peers (nxkv's semaphores, read-write, multi-key and
	// reentrant locks, measured beside its mutex) run only the uncontended
	// cycle: the contended and hand-off scenarios assume one exclusive
	// holder.
	UncontendedOnly bool
	Setup           func() (*lockEnv, error)
}

// LockRow is one lock measurement.
type LockRow struct {
	Peer       string      `json:"peer"`
	Scenario   string      `json:"scenario"` // "uncontended" or "contended"
	Goroutines int         `json:"goroutines"`
	CyclesPS   summary     `json:"cycles_per_sec"`
	NsPerCycle float64     `json:"ns_per_cycle"`
	TypicalNs  float64     `json:"typical_ns_per_cycle,omitempty"` // uncontended: median over timed chunks (see RawRow.TypicalNs)
	Allocs     float64     `json:"allocs_per_cycle"`               // -1 if not measured
	Latency    percentiles `json:"latency"`                        // uncontended: one cycle; contended: hand-off
	Wait       percentiles `json:"wait,omitempty"`                 // contended: from calling Obtain to holding the lock
	SelfPct    float64     `json:"self_reacquire_pct,omitempty"`
	Violations int64       `json:"mutual_exclusion_violations"`
	Errors     int64       `json:"errors"`
	// Untimed counts hand-offs not timed because the holder was
	// descheduled during its hold (see measureHandoff).
	Untimed int64 `json:"handoffs_not_timed,omitempty"`
	// Keys is how many keys the contended goroutines share (0: one);
	// each cycle locks one drawn at random.
	Keys int `json:"keys,omitempty"`
	// Trimmed (hand-off) summarizes each repetition's mean hand-off with
	// the slowest and fastest tenth left out.
	Trimmed summary `json:"handoff_trimmed_mean_ns,omitzero"`
	VsRedis float64 `json:"vs_redis"`
	Note    string  `json:"note,omitempty"`
	// Source and Reps: see RawRow.
	Source string `json:"source,omitempty"`
	Reps   int    `json:"reps"`
}

// ---- peers ----

// mutexPeer is sync.Mutex, the reference for what an in-process hand-off
// can cost; it has no TTL, token or fencing.
func mutexPeer() lockPeer {
	return lockPeer{Name: "sync.Mutex (reference)", Setup: func() (*lockEnv, error) {
		var mu sync.Mutex
		locks := map[string]*sync.Mutex{} // guarded by mu
		return &lockEnv{
			newLocker: func(key string) locker {
				mu.Lock()
				defer mu.Unlock()
				m := locks[key]
				if m == nil {
					m = new(sync.Mutex)
					locks[key] = m
				}
				return mutexLocker{m}
			},
			reset: func(string) {},
			close: func() {},
		}, nil
	}}
}

type mutexLocker struct{ m *sync.Mutex }

func (l mutexLocker) lock(context.Context) error   { l.m.Lock(); return nil }
func (l mutexLocker) unlock(context.Context) error { l.m.Unlock(); return nil }

// newToken returns a random 128-bit lock token, as redislock and redsync
// draw one per acquisition.
func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// jittered returns a random delay between d/2 and 3d/2 (mean d). Waiters
// that all sleep exactly d fall into step: they fail together after an
// acquisition and all poll again d later, so every hand-off would take
// nearly d; a do-it-yourself poller worth comparing with spreads them.
func jittered(d time.Duration) time.Duration { return d/2 + mrand.N(d) }

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, t *time.Timer, d time.Duration) error {
	t.Reset(d)
	select {
	case <-ctx.Done():
		t.Stop()
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// mapMutexLockPeer is the do-it-yourself in-process lock: SET NX PX and
// compare-and-delete on map+Mutex with a random token, polling every 1 ms.
func mapMutexLockPeer() lockPeer {
	return lockPeer{Name: "map+Mutex SETNX lock (poll)", Setup: func() (*lockEnv, error) {
		s := &mapMutexKV{m: map[string]mmEntry{}}
		return &lockEnv{
			newLocker: func(key string) locker {
				return &kvLocker{s: s, key: key, t: stoppedTimer()}
			},
			reset: func(key string) { s.delMany([]string{key}) },
			close: func() {},
		}, nil
	}}
}

func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

type kvLocker struct {
	s     kvStore
	key   string
	token string
	t     *time.Timer
}

func (l *kvLocker) lock(ctx context.Context) error {
	tok := newToken()
	for !l.s.SetNXPX(l.key, tok, lockTTL) {
		if err := l.s.Err(); err != nil {
			return err
		}
		if err := sleepCtx(ctx, l.t, jittered(pollDelay)); err != nil {
			return err
		}
	}
	l.token = tok
	return nil
}

func (l *kvLocker) unlock(context.Context) error {
	if !l.s.CompareAndDelete(l.key, l.token) {
		if err := l.s.Err(); err != nil {
			return err
		}
		return fmt.Errorf("lock %s not held at release", l.key)
	}
	return nil
}

// goRedisLockPeer is the plain Redis lock through go-redis: SET NX PX with a
// random token and a Lua compare-and-delete. It is the baseline of the lock
// tables.
func goRedisLockPeer(t *target) lockPeer {
	return lockPeer{Name: t.Name + " go-redis SETNX lock", Network: true, Setup: func() (*lockEnv, error) {
		s, err := dialRedisKV(t.Addr, 128)
		if err != nil {
			return nil, err
		}
		return &lockEnv{
			newLocker: func(key string) locker { return &kvLocker{s: s, key: key, t: stoppedTimer()} },
			reset:     func(key string) { s.c.Del(context.Background(), key) },
			close:     s.Close,
		}, nil
	}}
}

func redisClientFor(t *target) (*redis.Client, error) {
	c := newRedisClient(t.Addr, 128)
	if err := c.Ping(context.Background()).Err(); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// redislockPeer is github.com/bsm/redislock with a 1 ms linear backoff.
func redislockPeer(t *target) lockPeer {
	return lockPeer{Name: t.Name + " redislock", Network: true, Setup: func() (*lockEnv, error) {
		c, err := redisClientFor(t)
		if err != nil {
			return nil, err
		}
		cl := redislock.New(c)
		opts := &redislock.Options{RetryStrategy: redislock.LinearBackoff(pollDelay)}
		return &lockEnv{
			newLocker: func(key string) locker { return &redislockLocker{c: cl, key: key, opts: opts} },
			reset:     func(key string) { c.Del(context.Background(), key) },
			close:     func() { _ = c.Close() },
		}, nil
	}}
}

type redislockLocker struct {
	c    *redislock.Client
	key  string
	opts *redislock.Options
	l    *redislock.Lock
}

func (l *redislockLocker) lock(ctx context.Context) error {
	lk, err := l.c.Obtain(ctx, l.key, lockTTL, l.opts)
	if err != nil {
		return err
	}
	l.l = lk
	return nil
}

func (l *redislockLocker) unlock(ctx context.Context) error { return l.l.Release(ctx) }

// redsyncPeer is github.com/go-redsync/redsync/v4 over one go-redis pool
// (a single-instance Redlock), retrying every 1 ms without a try limit.
func redsyncPeer(t *target) lockPeer {
	return lockPeer{Name: t.Name + " redsync", Network: true, Setup: func() (*lockEnv, error) {
		c, err := redisClientFor(t)
		if err != nil {
			return nil, err
		}
		rs := redsync.New(redsyncgoredis.NewPool(c))
		return &lockEnv{
			newLocker: func(key string) locker {
				return redsyncLocker{m: rs.NewMutex(key,
					redsync.WithExpiry(lockTTL), redsync.WithTries(math.MaxInt32), redsync.WithRetryDelay(pollDelay))}
			},
			reset: func(key string) { c.Del(context.Background(), key) },
			close: func() { _ = c.Close() },
		}, nil
	}}
}

type redsyncLocker struct{ m *redsync.Mutex }

func (l redsyncLocker) lock(ctx context.Context) error { return l.m.LockContext(ctx) }
func (l redsyncLocker) unlock(ctx context.Context) error {
	ok, err := l.m.UnlockContext(ctx)
	if err == nil && !ok {
		err = fmt.Errorf("redsync: lock not held at release")
	}
	return err
}

// ---- measurement ----

// measurement is one cell of the lock workload for one peer, run in steps
// so that the workload can interleave the peers' repetitions: a burst of
// load from other processes then hits every peer alike.
type measurement struct {
	warm func()         // an untimed run
	rep  func() repCost // one timed repetition
	row  func() LockRow // the summary; called once, after the repetitions
	// renew moves the measurement to a fresh set-up of its peer (a new
	// engine, map or client) for the repetitions that follow; the summary
	// covers them all.
	renew func(env *lockEnv)
}

// repCost is what one repetition of a lock measurement gives the headline:
// its throughput and, for hand-offs, the mean hand-off with the slowest
// and fastest tenth left out.
type repCost struct {
	perSec  float64
	trimmed float64
}

// trimmedMean is the mean of xs without its lowest and highest tenth (0
// for none). Unlike a median it moves smoothly as the mix of a bimodal
// distribution shifts: a poller's hand-off is either at once (its timer
// was already due) or a good part of a poll delay later, and a median of a
// few dozen such hand-offs jumps between the two from one repetition to
// the next.
func trimmedMean(xs []int64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	k := len(s) / 10
	s = s[k : len(s)-k]
	var t float64
	for _, x := range s {
		t += float64(x)
	}
	return t / float64(len(s))
}

// exclusionCheck counts the holders inside a critical section; a holder
// entering while another is inside is a mutual exclusion violation.
type exclusionCheck struct {
	holders    atomic.Int32
	violations atomic.Int64
}

func (c *exclusionCheck) enter() {
	if c.holders.Add(1) != 1 {
		c.violations.Add(1)
	}
}

func (c *exclusionCheck) leave() { c.holders.Add(-1) }

// measureUncontended runs lock/unlock cycles, each goroutine on its own key.
func measureUncontended(cfg config, env *lockEnv, g int, network bool, tag string) *measurement {
	keys := make([]string, g)
	for i := range keys {
		keys[i] = fmt.Sprintf("nxblock:%s:u%d", tag, i)
	}
	var lockers []locker
	bind := func(e *lockEnv) {
		env, lockers = e, make([]locker, g)
		for i := range keys {
			lockers[i] = env.newLocker(keys[i])
		}
	}
	bind(env)
	chunk, sampleEvery := 256, 64
	if network {
		chunk, sampleEvery = 8, 1
	}
	var errs atomic.Int64
	oneRep := func(d time.Duration, countAllocs bool) (perSec float64, allocs uint64, allocOps int64, samples []int64, chunkNs []float64) {
		type result struct {
			ops      int64
			timed    time.Duration
			allocs   uint64
			samples  []int64
			allocOps int64
			chunkNs  []float64
		}
		res := make([]result, g)
		var wg sync.WaitGroup
		ctx := context.Background()
		for i := range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := &res[i]
				r.samples = make([]int64, 0, 1<<15)
				ac := newAllocCounter()
				l := lockers[i]
				end := time.Now().Add(d)
				for time.Now().Before(end) {
					var a0 uint64
					if countAllocs {
						a0 = ac.read()
					}
					t0 := time.Now()
					for j := range chunk {
						var ts time.Time
						sample := j%sampleEvery == 0 && len(r.samples) < cap(r.samples)
						if sample {
							ts = time.Now()
						}
						if err := l.lock(ctx); err != nil {
							errs.Add(1)
							continue
						}
						if err := l.unlock(ctx); err != nil {
							errs.Add(1)
						}
						if sample {
							r.samples = append(r.samples, int64(time.Since(ts)))
						}
					}
					el := time.Since(t0)
					r.timed += el
					r.chunkNs = append(r.chunkNs, float64(el)/float64(chunk))
					if countAllocs {
						r.allocs += ac.read() - a0
						r.allocOps += int64(chunk)
					}
					r.ops += int64(chunk)
				}
			}()
		}
		wg.Wait()
		for _, r := range res {
			if r.timed > 0 {
				perSec += float64(r.ops) / r.timed.Seconds()
			}
			allocs += r.allocs
			allocOps += r.allocOps
			samples = append(samples, r.samples...)
			chunkNs = append(chunkNs, r.chunkNs...)
		}
		return perSec, allocs, allocOps, samples, chunkNs
	}
	var rates, chunkNs []float64
	var all []int64
	var allocs uint64
	var allocOps int64
	return &measurement{
		renew: bind,
		warm:  func() { oneRep(cfg.Warmup, false) },
		rep: func() repCost {
			ps, a, ao, s, cn := oneRep(cfg.LockDur, g == 1)
			rates = append(rates, ps)
			chunkNs = append(chunkNs, cn...)
			allocs += a
			allocOps += ao
			all = append(all, s...)
			return repCost{perSec: ps}
		},
		row: func() LockRow {
			row := LockRow{Scenario: "uncontended", Goroutines: g, CyclesPS: summarize(rates), Latency: quantiles(all), Allocs: -1, Errors: errs.Load(),
				TypicalNs: summarize(chunkNs).Median, Reps: len(rates)}
			if row.CyclesPS.Median > 0 {
				row.NsPerCycle = 1e9 / row.CyclesPS.Median
			}
			if allocOps > 0 {
				row.Allocs = float64(allocs) / float64(allocOps)
			}
			for _, k := range keys {
				env.reset(k)
			}
			return row
		},
	}
}

// maxOvertime bounds how long runAtLeast extends a repetition.
const maxOvertime = 10 * time.Second

// runAtLeast returns once d has passed and enough() holds, or maxOvertime
// after d if it never does. A repetition on a descheduled or heavily loaded
// machine (a race-enabled test run on a busy CI host) may not see a single
// hand-off in d; running on until it does gives a slow figure instead of an
// empty row, and the rate stays honest because it divides by the time
// really spent.
func runAtLeast(d time.Duration, enough func() bool) {
	time.Sleep(d)
	for deadline := time.Now().Add(maxOvertime); !enough() && time.Now().Before(deadline); {
		time.Sleep(max(d/10, 100*time.Microsecond))
	}
}

// measureContended runs g goroutines cycling on nkeys keys (one when
// nkeys <= 1), each cycle on a key drawn at random (with a fixed seed per
// goroutine). The hand-off latency is the time from a holder starting its
// release to the next acquisition of that key by a different goroutine;
// re-acquisitions by the releasing goroutine itself are counted separately
// (SelfPct), as they hand nothing off.
func measureContended(cfg config, env *lockEnv, g, nkeys int, tag string) *measurement {
	nkeys = max(nkeys, 1)
	keys := make([]string, nkeys)
	for k := range keys {
		keys[k] = fmt.Sprintf("nxblock:%s:c%d", tag, g)
		if nkeys > 1 {
			keys[k] = fmt.Sprintf("nxblock:%s:c%dk%d", tag, g, k)
		}
	}
	// lockers[i][k] is goroutine i's locker on key k.
	var lockers [][]locker
	bind := func(e *lockEnv) {
		env, lockers = e, make([][]locker, g)
		for i := range lockers {
			for _, k := range keys {
				lockers[i] = append(lockers[i], env.newLocker(k))
			}
		}
	}
	bind(env)
	excl := make([]exclusionCheck, nkeys)
	var errs atomic.Int64
	reps := 0
	oneRep := func(d time.Duration) (perSec float64, samples, waits []int64, self, total int64) {
		ctx, cancel := context.WithCancel(context.Background())
		base := time.Now()
		lastHolder, lastRelease := make([]atomic.Int64, nkeys), make([]atomic.Int64, nkeys)
		for k := range lastHolder {
			lastHolder[k].Store(-1)
		}
		type result struct {
			cycles, self int64
			samples      []int64
			waits        []int64
		}
		res := make([]result, g)
		var cycles atomic.Int64
		var wg sync.WaitGroup
		reps++
		for i := range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := &res[i]
				r.samples = make([]int64, 0, 1<<12)
				r.waits = make([]int64, 0, 1<<12)
				rng := mrand.New(mrand.NewPCG(uint64(i), uint64(reps)))
				for ctx.Err() == nil {
					k := 0
					if nkeys > 1 {
						k = rng.IntN(nkeys)
					}
					l := lockers[i][k]
					t0 := int64(time.Since(base))
					if err := l.lock(ctx); err != nil {
						if ctx.Err() == nil {
							errs.Add(1)
						}
						continue
					}
					now := int64(time.Since(base))
					excl[k].enter()
					switch lh := lastHolder[k].Load(); {
					case lh == int64(i):
						r.self++
					case lh >= 0 && len(r.samples) < cap(r.samples):
						r.samples = append(r.samples, now-lastRelease[k].Load())
					}
					if len(r.waits) < cap(r.waits) {
						r.waits = append(r.waits, now-t0)
					}
					r.cycles++
					cycles.Add(1)
					lastHolder[k].Store(int64(i))
					excl[k].leave()
					lastRelease[k].Store(int64(time.Since(base)))
					// Release with a live context: a release cut short by the
					// end of the repetition would leave the key held.
					if err := l.unlock(context.Background()); err != nil {
						errs.Add(1)
					}
				}
			}()
		}
		runAtLeast(d, func() bool { return cycles.Load() >= 2 })
		cancel()
		wg.Wait()
		elapsed := time.Since(base)
		for _, r := range res {
			total += r.cycles
			self += r.self
			samples = append(samples, r.samples...)
			waits = append(waits, r.waits...)
		}
		for _, k := range keys {
			env.reset(k)
		}
		return float64(total) / elapsed.Seconds(), samples, waits, self, total
	}
	var rates []float64
	var all, waits []int64
	var self, total int64
	return &measurement{
		renew: bind,
		warm:  func() { oneRep(cfg.Warmup) },
		rep: func() repCost {
			ps, s, w, sf, t := oneRep(cfg.LockDur)
			rates = append(rates, ps)
			all = append(all, s...)
			waits = append(waits, w...)
			self += sf
			total += t
			return repCost{perSec: ps}
		},
		row: func() LockRow {
			var violations int64
			for k := range excl {
				violations += excl[k].violations.Load()
			}
			row := LockRow{Scenario: "contended", Goroutines: g, CyclesPS: summarize(rates), Latency: quantiles(all), Wait: quantiles(waits), Allocs: -1,
				Violations: violations, Errors: errs.Load(), Reps: len(rates)}
			if nkeys > 1 {
				row.Keys = nkeys
			}
			if row.CyclesPS.Median > 0 {
				row.NsPerCycle = 1e9 / row.CyclesPS.Median
			}
			if total > 0 {
				row.SelfPct = float64(self) / float64(total) * 100
			}
			return row
		},
	}
}

// generation is a channel closed at the next acquisition: a releasing
// goroutine in the hand-off scenario waits on it so that the lock goes to
// one of the blocked waiters instead of back to itself.
type generation struct {
	mu sync.Mutex
	ch chan struct{} // guarded by mu
}

func (g *generation) current() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ch
}

func (g *generation) advance() {
	g.mu.Lock()
	close(g.ch)
	g.ch = make(chan struct{})
	g.mu.Unlock()
}

// measureHandoff runs waiters+1 goroutines on one key where every release
// hands the lock to a goroutine blocked in Obtain: a holder releases only
// once every other goroutine has entered Obtain, and a releasing goroutine
// does not call Obtain again until someone else has acquired. Every cycle
// is then a hand-off, timed from the holder starting Release to the next
// holder's Obtain returning. For polling clients this depends on where in
// its waiters' sleeps the release falls; so each hold lasts a random extra
// time of up to twice the poll delay, drawn with a fixed seed, and the
// release falls at a random point of every poller's schedule instead of a
// fixed distance after the previous holder's last try.
func measureHandoff(cfg config, env *lockEnv, waiters int, network bool, tag string) *measurement {
	g := waiters + 1
	hold := handoffHold
	if network {
		hold = handoffHoldNetwork
	}
	key := fmt.Sprintf("nxblock:%s:h%d", tag, g)
	var lockers []locker
	bind := func(e *lockEnv) {
		env, lockers = e, make([]locker, g)
		for i := range lockers {
			lockers[i] = env.newLocker(key)
		}
	}
	bind(env)
	var excl exclusionCheck
	var errs, untimed atomic.Int64
	reps := 0
	oneRep := func(d time.Duration) (perSec float64, samples []int64, total int64) {
		reps++
		ctx, cancel := context.WithCancel(context.Background())
		base := time.Now()
		var lastRelease atomic.Int64
		lastRelease.Store(-1)
		var inObtain atomic.Int32
		var cycles atomic.Int64
		gen := &generation{ch: make(chan struct{})}
		type result struct {
			cycles  int64
			samples []int64
		}
		res := make([]result, g)
		var wg sync.WaitGroup
		for i := range g {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := &res[i]
				r.samples = make([]int64, 0, 1<<12)
				l := lockers[i]
				rng := mrand.New(mrand.NewPCG(uint64(i), uint64(reps)))
				for ctx.Err() == nil {
					inObtain.Add(1)
					err := l.lock(ctx)
					inObtain.Add(-1)
					if err != nil {
						if ctx.Err() == nil {
							errs.Add(1)
						}
						continue
					}
					now := int64(time.Since(base))
					excl.enter()
					if lr := lastRelease.Load(); lr >= 0 && len(r.samples) < cap(r.samples) {
						r.samples = append(r.samples, now-lr)
					}
					r.cycles++
					cycles.Add(1)
					// Wake the previous holder and pick the channel the next
					// acquisition will close; no one else can acquire before
					// our release, so it is the right one.
					gen.advance()
					next := gen.current()
					// Hold until every other goroutine has entered Obtain,
					// and then long enough for its first attempt to fail,
					// so that it is really waiting (asleep or watching).
					for inObtain.Load() < int32(g-1) && ctx.Err() == nil {
						runtime.Gosched()
					}
					planned := hold + time.Duration(rng.Int64N(int64(2*pollDelay)))
					holdFrom := time.Now()
					for until := holdFrom.Add(planned); time.Now().Before(until) && ctx.Err() == nil; {
						runtime.Gosched()
					}
					excl.leave()
					// A hold that overran by half its fixed part was
					// descheduled: the waiters' timers kept running
					// meanwhile, so the next hand-off would time the
					// machine's hiccup, not the lock. It is not timed.
					if time.Since(holdFrom) > planned+hold/2 {
						lastRelease.Store(-1)
						untimed.Add(1)
					} else {
						lastRelease.Store(int64(time.Since(base)))
					}
					if err := l.unlock(context.Background()); err != nil {
						errs.Add(1)
					}
					select { // let a waiter have it
					case <-next:
					case <-ctx.Done():
					}
				}
			}()
		}
		// Two acquisitions make one hand-off.
		runAtLeast(d, func() bool { return cycles.Load() >= 2 })
		cancel()
		wg.Wait()
		elapsed := time.Since(base)
		for _, r := range res {
			total += r.cycles
			samples = append(samples, r.samples...)
		}
		env.reset(key)
		return float64(total) / elapsed.Seconds(), samples, total
	}
	var rates, trimmed []float64
	var all []int64
	return &measurement{
		renew: bind,
		warm:  func() { oneRep(cfg.Warmup) },
		rep: func() repCost {
			ps, s, _ := oneRep(cfg.LockDur)
			rates = append(rates, ps)
			all = append(all, s...)
			tm := trimmedMean(s)
			trimmed = append(trimmed, tm)
			return repCost{perSec: ps, trimmed: tm}
		},
		row: func() LockRow {
			row := LockRow{Scenario: "handoff", Goroutines: g, CyclesPS: summarize(rates), Latency: quantiles(all), Allocs: -1,
				Violations: excl.violations.Load(), Errors: errs.Load(), Untimed: untimed.Load(), Trimmed: summarize(trimmed), Reps: len(rates)}
			if row.CyclesPS.Median > 0 {
				row.NsPerCycle = 1e9 / row.CyclesPS.Median
			}
			return row
		},
	}
}

// runLockWorkload measures every lock peer uncontended (1 and GOMAXPROCS
// goroutines on distinct keys), contended (cfg.Contenders goroutines on one
// key) and handing off to cfg.Waiters blocked waiters, then fills in the
// ratio to the go-redis lock on real Redis. Within each scenario the peers'
// repetitions are interleaved (rep 1 of every peer, then rep 2, ...).
func runLockWorkload(cfg config, env *environment, res *Results) {
	res.LockRetries = lockRetrySettings
	type setUp struct {
		p   lockPeer
		env *lockEnv
		tag string
	}
	var peers []setUp
	for pi, p := range append(inprocLockPeers(), env.lockPeers()...) {
		if !cfg.want(p.Name) {
			continue
		}
		le, err := p.Setup()
		if err != nil {
			res.skip("locks", p.Name, err.Error())
			continue
		}
		peers = append(peers, setUp{p: p, env: le, tag: fmt.Sprint(pi)})
	}
	defer func() {
		for _, su := range peers {
			su.env.close()
		}
	}()
	type scenario struct {
		name string
		g    int
		make func(su setUp) *measurement
	}
	var scs []scenario
	ug := []int{1}
	if procs := runtime.GOMAXPROCS(0); procs > 1 {
		ug = append(ug, procs)
	}
	for _, g := range ug {
		scs = append(scs, scenario{"uncontended", g, func(su setUp) *measurement {
			return measureUncontended(cfg, su.env, g, su.p.Network, su.tag)
		}})
	}
	for _, g := range cfg.Contenders {
		scs = append(scs, scenario{"contended", g, func(su setUp) *measurement { return measureContended(cfg, su.env, g, 1, su.tag) }})
	}
	scs = append(scs, scenario{"handoff", cfg.Waiters + 1, func(su setUp) *measurement {
		return measureHandoff(cfg, su.env, cfg.Waiters, su.p.Network, su.tag)
	}})
	for _, sc := range scs {
		// Cells a headline job measured keep its figures.
		var active []setUp
		for _, su := range peers {
			if _, ok := lockRow(res, su.p.Name, sc.name, sc.g); ok || su.p.UncontendedOnly && sc.name != "uncontended" {
				continue
			}
			active = append(active, su)
		}
		progress("locks: %s, %d goroutines, %d peers x %d repetitions", sc.name, sc.g, len(active), cfg.Reps)
		ms := make([]*measurement, len(active))
		for i, su := range active {
			ms[i] = sc.make(su)
			ms[i].warm()
		}
		for range cfg.Reps {
			for _, m := range ms {
				m.rep()
			}
		}
		for i, m := range ms {
			row := m.row()
			row.Peer = active[i].p.Name
			res.Locks = append(res.Locks, row)
			progress("locks %-36s %-11s %2dg %10.0f cycles/s  %s/cycle  latency p50 %s p99 %s",
				row.Peer, sc.name, row.Goroutines, row.CyclesPS.Median, fmtNs(row.NsPerCycle), fmtNs(row.Latency.P50), fmtNs(row.Latency.P99))
		}
		runtime.GC()
	}
	base := map[string]float64{}
	for _, r := range res.Locks {
		if r.Peer == baselineLockPeer {
			base[lockCell(r)] = r.CyclesPS.Median
		}
	}
	for i := range res.Locks {
		if b := base[lockCell(res.Locks[i])]; b > 0 {
			res.Locks[i].VsRedis = res.Locks[i].CyclesPS.Median / b
		}
	}
}

const baselineLockPeer = "Redis go-redis SETNX lock"

func lockCell(r LockRow) string { return fmt.Sprintf("%s/%d", r.Scenario, r.Goroutines) }

func inprocLockPeers() []lockPeer {
	ps := []lockPeer{nxkvInprocLockPeer(""), nxkvInprocLockPeer("nofence"), nxkvInprocLockPeer("fifo"), mapMutexLockPeer(), mutexPeer()}
	return append(ps, nxkvPrimitivePeers()...)
}

func (e *environment) lockPeers() []lockPeer {
	var ps []lockPeer
	for _, t := range e.targets {
		ps = append(ps, goRedisLockPeer(t), nxkvRedisLockPeer(t), redislockPeer(t), redsyncPeer(t))
		ps = append(ps, nxkvRedisPrimitivePeers(t)...)
	}
	return ps
}
