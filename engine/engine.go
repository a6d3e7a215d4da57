// Package engine is an in-process key-value engine with Redis string and TTL
// semantics, built for locks: SET NX PX, compare-and-delete and
// compare-and-pexpire are single calls that cost tens of nanoseconds.
//
// # Model
//
// Keys are spread over a power-of-two number of shards by their xxhash (see
// package shard); each shard is a Go map guarded by one mutex. Every
// single-key operation is one critical section on one shard: it locks the
// shard, reads the clock if it needs the time, looks the key up, decides and
// writes, and unlocks. Each single-key operation is therefore linearizable,
// and operations on keys in different shards run in parallel. Del of several
// keys locks all their shards (in shard order) and is atomic as well. Len
// and Reap visit the shards one at a time and are not atomic snapshots.
//
// # Semantics
//
// The rules are Redis's (src/t_string.c, src/expire.c, src/db.c) with Go
// types: durations instead of milliseconds (nanosecond precision), (value,
// ok) instead of nil replies, sentinel errors instead of error replies. A key
// with deadline D is alive while now <= D and gone once now > D: PTTL is 0
// at now == D. An expired key is absent for every operation, reads and writes
// alike, whether or not it has been reclaimed yet. Empty keys and values are
// valid. Invalid arguments return ErrInvalidTTL or ErrSyntax and change
// nothing.
//
// # Clock
//
// Each operation reads the clock at most once, inside its critical section,
// and only when it needs the time: Get, SetNX, GetSet, CompareAndDelete and
// the like read it only for keys that have a deadline, Set never reads it,
// and the operations that compute a deadline (SetPX, SetNXPX, PExpire...)
// always do. With Options.Clock nil the engine uses a fast real clock: it
// records time.Now() at New and afterwards adds the monotonic time elapsed
// since then, which costs one monotonic clock read instead of time.Now's
// wall and monotonic reads, and is immune to wall-clock steps after New.
// Deadlines are Unix nanoseconds on that time line. An injected clock (for
// example a github.com/benbjohnson/clock Mock) is read with Now. The reaper
// sleeps on timers of the same clock, so advancing a Mock fires them.
//
// # Expiry and reclamation
//
// Expiry is lazy and active. Lazy: every access checks the key's deadline
// and deletes an expired key it finds. Active: each shard has a hierarchical
// timer wheel (package ttl), guarded by the shard lock, holding every key
// with a deadline; one reaper goroutine per engine sleeps on a timer of the
// engine's clock until the earliest deadline of any wheel (an idle engine
// burns no CPU), then advances the wheels and deletes the keys that fired,
// at most a bounded batch per lock hold so that no shard lock is held for
// long. Keys are reclaimed within about two wheel ticks of their deadline,
// with work proportional to the number of keys expiring, not to the number
// held. Reap does the same synchronously, for tests with a mock clock.
//
// Go maps never shrink; a shard whose map falls to a quarter of its peak
// rebuilds it (see package shard), so memory returns after a mass expiry or
// delete.
//
// # Watch
//
// Watch gives a channel closed at the next change of a key: any write
// (including a TTL change), a delete, or an expiry (active or lazy). A lock
// client uses it to wake waiters the instant a lock is released or expires.
//
// # Lifetime
//
// New starts the reaper goroutine; Close stops it. An engine that is not
// closed leaks that goroutine. After Close the engine still serves every
// call, with lazy expiry only: expired keys stay in memory (and in Len)
// until accessed or reclaimed by Reap.
package engine

import (
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/clock"

	"github.com/nxkv/nxkv/shard"
	"github.com/nxkv/nxkv/ttl"
)

// item is one stored key.
//
// Invariants, under the owning shard's lock: a node in the shard map under
// key has Value.key == key (the same string, so the bytes are shared); it is
// scheduled in the shard's wheel iff Value.exp != 0, at Value.exp+1 (the
// wheel fires at deadline <= now, a key expires once now > exp); a node that
// left the map is never in the wheel. The one exception: a node the wheel
// fired is unscheduled, expired and still in the map until the reaper (or
// Reap) deletes it, possibly after dropping and retaking the lock between
// batches; any operation that meets it in between sees it expired.
type item struct {
	key   string
	value string
	exp   int64 // deadline in Unix nanoseconds; 0: no deadline
}

// node is the heap cell of a key: 64 bytes, one size class, so overwrites
// and TTL changes update it in place without allocating. A deleted node is
// recycled by its shard (see recycleLocked); the reaper, which looks nodes
// up again after dropping the lock, therefore re-checks that a node is still
// stored under its key and still expired before deleting it.
type node = ttl.Node[item]

// shardState is the engine's per-shard state, guarded by the shard lock.
type shardState struct {
	wheel *ttl.Wheel[item]
	// watchers holds the pending watchers of each watched key; nil or empty
	// when nothing is watched, so unwatched writes pay one length check.
	watchers map[string][]*watcher
	// free[:nfree] are recycled nodes, out of the map and the wheel, with
	// zero Values.
	free  [freeNodes]*node
	nfree int
}

// freeNodes bounds the recycled nodes kept per shard (1 KiB).
const freeNodes = 16

type shardT = shard.Shard[*node, shardState]

// watcher is one Watch call; done is guarded by the shard lock.
type watcher struct {
	ch   chan struct{}
	done bool // fired or stopped
}

// reapBatch bounds the deletions per lock hold in the reaper (about 100 µs).
const reapBatch = 1024

// Engine is a sharded, linearizable key-value store with Redis string and
// TTL semantics. It is safe for concurrent use by any number of goroutines.
// Create it with New and release its reaper goroutine with Close; an Engine
// must not be copied.
type Engine struct {
	m *shard.Map[*node, shardState]

	clk   clock.Clock // nil: the fast real clock (wall0 + monotonic since mono0)
	wall0 int64
	mono0 time.Time
	timer clock.Clock // the clock whose timers the reaper sleeps on

	// nowHook, if set, is called on the caller's goroutine right after every
	// clock read of an operation with the time used. Set before concurrent
	// use (tests only, via export_test.go).
	nowHook func(now int64)

	// nextWake is the time the reaper will next wake at (MaxInt64: asleep
	// without a timer, or scanning). A write that schedules an earlier
	// deadline kicks the reaper.
	nextWake atomic.Int64
	kick     chan struct{} // buffered 1
	stop     chan struct{} // closed by Close
	done     chan struct{} // closed when the reaper exits
	once     sync.Once
	wakes    atomic.Int64 // reaper loop iterations, for tests
}

// New returns an engine with its reaper started. Call Close to stop the
// reaper. The zero Options select the defaults.
func New(opts Options) *Engine {
	e := &Engine{
		m:    shard.New[*node, shardState](opts.Shards),
		clk:  opts.Clock,
		kick: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	if e.clk == nil {
		e.mono0 = time.Now()
		e.wall0 = e.mono0.UnixNano()
		e.timer = clock.New()
	} else {
		e.timer = e.clk
	}
	start := e.readClock()
	for i := range e.m.Shards() {
		s := e.m.ShardAt(i)
		s.Lock()
		s.Aux.wheel = ttl.New[item](start, opts.Tick)
		s.Unlock()
	}
	e.nextWake.Store(math.MaxInt64)
	go e.reaper()
	return e
}

// Close stops the reaper goroutine and waits for it to exit. It is safe to
// call more than once and concurrently with other calls, and always returns
// nil. The engine keeps serving every call after Close, but expired keys are
// then reclaimed only when accessed or by Reap.
func (e *Engine) Close() error {
	e.once.Do(func() { close(e.stop) })
	<-e.done
	return nil
}

// readClock returns the current time in Unix nanoseconds without calling the
// hook (the reaper's reads).
func (e *Engine) readClock() int64 {
	if e.clk == nil {
		return e.wall0 + int64(time.Since(e.mono0))
	}
	return e.clk.Now().UnixNano()
}

// now returns the current time for an operation and reports it to the hook.
func (e *Engine) now() int64 {
	var t int64
	if e.clk == nil { // readClock, inlined by hand: one call less per read
		t = e.wall0 + int64(time.Since(e.mono0))
	} else {
		t = e.clk.Now().UnixNano()
	}
	if e.nowHook != nil {
		e.nowHook(t)
	}
	return t
}

// opClock reads the clock at most once per operation, on first use.
type opClock struct {
	t    int64
	read bool
}

func (e *Engine) at(c *opClock) int64 {
	if !c.read {
		c.t = e.now()
		c.read = true
	}
	return c.t
}

// liveLocked returns key's node if key exists and has not expired, deleting
// it if it has. It reads the clock (through c) only for a key with a deadline.
func (e *Engine) liveLocked(s *shardT, key string, c *opClock) *node {
	n := s.LoadLocked(key)
	if n != nil && n.Value.exp != 0 {
		n = e.checkLocked(s, n, c)
	}
	return n
}

// checkLocked returns n (a stored node with a deadline), or nil after
// deleting it if it has expired.
func (e *Engine) checkLocked(s *shardT, n *node, c *opClock) *node {
	if n.Value.exp < e.at(c) {
		e.removeLocked(s, n)
		return nil
	}
	return n
}

// removeLocked deletes n's key from s, wakes its watchers and recycles n.
func (e *Engine) removeLocked(s *shardT, n *node) {
	if n.Value.exp != 0 {
		s.Aux.wheel.Cancel(n)
	}
	key := n.Value.key
	s.DeleteLocked(key)
	if len(s.Aux.watchers) != 0 {
		e.notifyLocked(s, key)
	}
	recycleLocked(s, n)
}

// recycleLocked keeps n, which has left the map and the wheel, for reuse
// by the shard's next insert, so that lock acquire/release cycles do not
// allocate. It clears n's strings so that they can be collected.
func recycleLocked(s *shardT, n *node) {
	n.Value = item{}
	if s.Aux.nfree < len(s.Aux.free) {
		s.Aux.free[s.Aux.nfree] = n
		s.Aux.nfree++
	}
}

// insertLocked stores a new key (known absent) with deadline exp (0: none).
func (e *Engine) insertLocked(s *shardT, key, value string, exp int64) {
	var n *node
	if k := s.Aux.nfree; k > 0 {
		n = s.Aux.free[k-1]
		s.Aux.free[k-1] = nil
		s.Aux.nfree = k - 1
		n.Value = item{key: key, value: value}
	} else {
		n = &node{Value: item{key: key, value: value}}
	}
	s.SetLocked(key, n)
	if exp != 0 {
		e.scheduleLocked(s, n, exp)
	}
	if len(s.Aux.watchers) != 0 {
		e.notifyLocked(s, key)
	}
}

// updateLocked overwrites a live node in place with value and deadline exp.
func (e *Engine) updateLocked(s *shardT, n *node, value string, exp int64) {
	n.Value.value = value
	e.setExpLocked(s, n, exp)
	if len(s.Aux.watchers) != 0 {
		e.notifyLocked(s, n.Value.key)
	}
}

// setExpLocked changes n's deadline to exp (0: none), keeping the wheel in
// step. It does not notify watchers.
func (e *Engine) setExpLocked(s *shardT, n *node, exp int64) {
	if exp == n.Value.exp {
		return
	}
	if exp == 0 {
		if n.Value.exp != 0 {
			s.Aux.wheel.Cancel(n)
			n.Value.exp = 0
		}
		return
	}
	e.scheduleLocked(s, n, exp)
}

// scheduleLocked sets n's deadline to exp != 0 and files it in the wheel at
// exp+1, kicking the reaper if that is earlier than its next wake.
func (e *Engine) scheduleLocked(s *shardT, n *node, exp int64) {
	n.Value.exp = exp
	fire := exp + 1
	if exp == math.MaxInt64 {
		fire = exp
	}
	s.Aux.wheel.Schedule(n, fire)
	if fire < e.nextWake.Load() {
		select {
		case e.kick <- struct{}{}:
		default:
		}
	}
}

// notifyLocked closes and forgets every watcher of key.
func (e *Engine) notifyLocked(s *shardT, key string) {
	ws, ok := s.Aux.watchers[key]
	if !ok {
		return
	}
	for _, w := range ws {
		w.done = true
		close(w.ch)
	}
	delete(s.Aux.watchers, key)
	if len(s.Aux.watchers) == 0 {
		s.Aux.watchers = nil
	}
}

// deadline returns now+ttl, or false if that overflows int64 nanoseconds
// (a negative ttl that underflows clamps to the earliest time).
func deadline(now int64, ttl time.Duration) (int64, bool) {
	d := int64(ttl)
	if d > 0 && now > math.MaxInt64-d {
		return 0, false
	}
	if d < 0 && now < math.MinInt64-d {
		return math.MinInt64, true // far in the past
	}
	return now + d, true
}

// Bounds of the times whose UnixNano is defined (years 1678 to 2262).
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// unixNano converts t to Unix nanoseconds; ok is false when t is after year
// 2262. Times before 1678 clamp to the earliest representable time.
func unixNano(t time.Time) (ns int64, ok bool) {
	if t.After(maxTime) {
		return 0, false
	}
	if t.Before(minTime) {
		return math.MinInt64, true
	}
	return t.UnixNano(), true
}

// Get returns the value of key, as Redis GET. ok is false if key is absent or
// expired (an expired key is deleted). It is safe for concurrent use and
// reads the clock only if key has a deadline.
func (e *Engine) Get(key string) (value string, ok bool) {
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	n := s.LoadLocked(key) // liveLocked, inlined by hand on hot paths
	if n != nil && n.Value.exp != 0 {
		n = e.checkLocked(s, n, &c)
	}
	if n == nil {
		s.Unlock()
		return "", false
	}
	value = n.Value.value
	s.Unlock()
	return value, true
}

// Set stores value under key and clears any TTL, as Redis SET without
// options. It never fails, is safe for concurrent use and never reads the
// clock: the result is the same whether a stored key had expired or not.
func (e *Engine) Set(key, value string) {
	s := e.m.Shard(key)
	s.Lock()
	// An expired node is reused as is: overwriting it with no deadline is
	// exactly deleting it and storing a new key (watchers fire either way).
	if n := s.LoadLocked(key); n != nil {
		e.updateLocked(s, n, value, 0)
	} else {
		e.insertLocked(s, key, value, 0)
	}
	s.Unlock()
}

// SetPX stores value under key with a TTL, as Redis SET key value PX ttl. It
// returns ErrInvalidTTL, changing nothing, if ttl <= 0 or the deadline
// overflows. It is safe for concurrent use.
func (e *Engine) SetPX(key, value string, ttl time.Duration) error {
	if ttl <= 0 {
		return ErrInvalidTTL
	}
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	exp, ok := deadline(e.at(&c), ttl)
	if !ok {
		s.Unlock()
		return ErrInvalidTTL
	}
	if n := e.liveLocked(s, key, &c); n != nil {
		e.updateLocked(s, n, value, exp)
	} else {
		e.insertLocked(s, key, value, exp)
	}
	s.Unlock()
	return nil
}

// SetNX stores value under key only if key is absent (or expired), as Redis
// SETNX, and reports whether it did. It never touches a TTL: a key it creates
// has none. It is safe for concurrent use.
func (e *Engine) SetNX(key, value string) bool {
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	n := s.LoadLocked(key)
	if n != nil && n.Value.exp != 0 {
		n = e.checkLocked(s, n, &c)
	}
	if n != nil {
		s.Unlock()
		return false
	}
	e.insertLocked(s, key, value, 0)
	s.Unlock()
	return true
}

// SetNXPX stores value under key with a TTL only if key is absent (or
// expired), as Redis SET key value NX PX ttl: the lock acquisition. It
// reports whether it wrote; it returns ErrInvalidTTL, changing nothing, if
// ttl <= 0 or the deadline overflows (checked before the key, as Redis
// does). It is safe for concurrent use.
func (e *Engine) SetNXPX(key, value string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, ErrInvalidTTL
	}
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	exp, ok := deadline(e.at(&c), ttl)
	if !ok {
		s.Unlock()
		return false, ErrInvalidTTL
	}
	n := s.LoadLocked(key)
	if n != nil && n.Value.exp != 0 {
		n = e.checkLocked(s, n, &c)
	}
	if n != nil {
		s.Unlock()
		return false, nil
	}
	e.insertLocked(s, key, value, exp)
	s.Unlock()
	return true, nil
}

// SetWith is the general Redis SET: SET key value [NX|XX|IFEQ m|IFNE m] GET
// [PX ttl|PXAT at|KEEPTTL]. The result always carries the old value (Redis
// GET), whether or not the write happened; Written reports whether it did.
//
// Errors, checked before the condition and changing nothing: ErrSyntax for
// an unknown Cond, TTL together with At, or KeepTTL together with TTL or At;
// ErrInvalidTTL for a negative TTL, an At at or before the Unix epoch (Redis
// rejects PXAT <= 0), or a deadline beyond year 2262. An At in the past is
// accepted: the write happens and the key is at once gone. A successful
// write clears the TTL unless KeepTTL, TTL or At is given. IfEqual never
// creates a key. It is safe for concurrent use.
func (e *Engine) SetWith(key, value string, args SetArgs) (SetResult, error) {
	if args.Cond > IfNotEqual {
		return SetResult{}, ErrSyntax
	}
	hasAt := !args.At.IsZero()
	if (args.TTL != 0 && hasAt) || (args.KeepTTL && (args.TTL != 0 || hasAt)) {
		return SetResult{}, ErrSyntax
	}
	if args.TTL < 0 {
		return SetResult{}, ErrInvalidTTL
	}
	var at int64
	if hasAt {
		var ok bool
		if at, ok = unixNano(args.At); !ok || at <= 0 {
			return SetResult{}, ErrInvalidTTL
		}
	}

	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	defer s.Unlock()
	var exp int64
	switch {
	case args.TTL > 0:
		var ok bool
		if exp, ok = deadline(e.at(&c), args.TTL); !ok {
			return SetResult{}, ErrInvalidTTL
		}
	case hasAt:
		exp = at
	}
	n := e.liveLocked(s, key, &c)
	var res SetResult
	if n != nil {
		res.Old, res.HadOld = n.Value.value, true
	}
	switch args.Cond {
	case IfAbsent:
		res.Written = n == nil
	case IfPresent:
		res.Written = n != nil
	case IfEqual:
		res.Written = n != nil && n.Value.value == args.Match
	case IfNotEqual:
		res.Written = n == nil || n.Value.value != args.Match
	default:
		res.Written = true
	}
	if !res.Written {
		return res, nil
	}
	if args.KeepTTL && n != nil {
		exp = n.Value.exp
	}
	if hasAt && exp < e.at(&c) {
		// A deadline already passed: the write happens and the key is gone.
		if n != nil {
			e.removeLocked(s, n)
		} else if len(s.Aux.watchers) != 0 {
			e.notifyLocked(s, key)
		}
		return res, nil
	}
	if n != nil {
		e.updateLocked(s, n, value, exp)
	} else {
		e.insertLocked(s, key, value, exp)
	}
	return res, nil
}

// GetSet stores value under key, discarding any TTL, and returns the old
// value, as Redis GETSET; ok is false if key was absent or expired. It is
// safe for concurrent use.
func (e *Engine) GetSet(key, value string) (old string, ok bool) {
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	n := s.LoadLocked(key)
	if n != nil && n.Value.exp != 0 {
		n = e.checkLocked(s, n, &c)
	}
	if n != nil {
		old, ok = n.Value.value, true
		e.updateLocked(s, n, value, 0)
	} else {
		e.insertLocked(s, key, value, 0)
	}
	s.Unlock()
	return old, ok
}

// GetDel deletes key and returns its value, as Redis GETDEL; ok is false if
// key was absent or expired. It is safe for concurrent use.
func (e *Engine) GetDel(key string) (value string, ok bool) {
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	if n := e.liveLocked(s, key, &c); n != nil {
		value, ok = n.Value.value, true
		e.removeLocked(s, n)
	}
	s.Unlock()
	return value, ok
}

// CompareAndDelete deletes key only if it holds value, as Redis 8.4 DELEX
// key IFEQ value (the lock release), and reports whether it deleted. An
// absent or expired key returns false. It is safe for concurrent use.
func (e *Engine) CompareAndDelete(key, value string) bool {
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	n := s.LoadLocked(key)
	if n != nil && n.Value.exp != 0 {
		n = e.checkLocked(s, n, &c)
	}
	if n == nil || n.Value.value != value {
		s.Unlock()
		return false
	}
	e.removeLocked(s, n)
	s.Unlock()
	return true
}

// CompareAndSwap stores value under key only if it holds old, keeping its
// TTL (Redis 8.4 SET key value IFEQ old KEEPTTL), and reports whether it
// did. An absent or expired key returns false. It is safe for concurrent use.
func (e *Engine) CompareAndSwap(key, old, value string) bool {
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	n := e.liveLocked(s, key, &c)
	if n == nil || n.Value.value != old {
		s.Unlock()
		return false
	}
	e.updateLocked(s, n, value, n.Value.exp)
	s.Unlock()
	return true
}

// CompareAndPExpire sets key's TTL only if it holds value (the lock refresh,
// as Redis 8.4 SET key value IFEQ value PX ttl without the write), and
// reports whether it did. An absent or expired key returns false. It returns
// ErrInvalidTTL, changing nothing, if ttl <= 0 or the deadline overflows. It
// is safe for concurrent use.
func (e *Engine) CompareAndPExpire(key, value string, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, ErrInvalidTTL
	}
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	exp, ok := deadline(e.at(&c), ttl)
	if !ok {
		s.Unlock()
		return false, ErrInvalidTTL
	}
	n := e.liveLocked(s, key, &c)
	if n == nil || n.Value.value != value {
		s.Unlock()
		return false, nil
	}
	e.scheduleLocked(s, n, exp)
	if len(s.Aux.watchers) != 0 {
		e.notifyLocked(s, key)
	}
	s.Unlock()
	return true, nil
}

// Del deletes the given keys, as Redis DEL, and returns how many of them
// existed (expired keys do not count; a key named twice counts once). Keys
// in several shards are deleted atomically: Del locks all their shards, in
// shard order. It is safe for concurrent use.
func (e *Engine) Del(keys ...string) int {
	switch len(keys) {
	case 0:
		return 0
	case 1:
		s := e.m.Shard(keys[0])
		var c opClock
		s.Lock()
		n := e.liveLocked(s, keys[0], &c)
		if n != nil {
			e.removeLocked(s, n)
		}
		s.Unlock()
		if n != nil {
			return 1
		}
		return 0
	}
	var buf [16]int
	idx := buf[:0]
	for _, k := range keys {
		idx = append(idx, e.m.ShardIndex(k))
	}
	order := sortedUnique(idx)
	for _, i := range order {
		e.m.ShardAt(i).Lock()
	}
	var c opClock
	deleted := 0
	for j, k := range keys {
		s := e.m.ShardAt(idx[j])
		if n := e.liveLocked(s, k, &c); n != nil {
			e.removeLocked(s, n)
			deleted++
		}
	}
	for _, i := range order {
		e.m.ShardAt(i).Unlock()
	}
	return deleted
}

// sortedUnique returns the distinct values of idx in ascending order.
func sortedUnique(idx []int) []int {
	out := make([]int, 0, len(idx))
	for _, v := range idx {
		j := len(out)
		dup := false
		for j > 0 && out[j-1] >= v {
			if out[j-1] == v {
				dup = true
				break
			}
			j--
		}
		if dup {
			continue
		}
		out = append(out, 0)
		copy(out[j+1:], out[j:])
		out[j] = v
	}
	return out
}

// Exists reports whether key exists and has not expired, as Redis EXISTS
// with one key. It is safe for concurrent use.
func (e *Engine) Exists(key string) bool {
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	n := s.LoadLocked(key)
	if n != nil && n.Value.exp != 0 {
		n = e.checkLocked(s, n, &c)
	}
	s.Unlock()
	return n != nil
}

// PExpire sets key's TTL, as Redis PEXPIRE, and reports whether key existed.
// A ttl <= 0 deletes the key (and reports true if it existed). A deadline
// that overflows changes nothing and reports false (Redis replies with an
// error; PExpireCond returns it). It is safe for concurrent use.
func (e *Engine) PExpire(key string, ttl time.Duration) bool {
	ok, _ := e.PExpireCond(key, ttl, ExpireAlways)
	return ok
}

// PExpireCond sets key's TTL subject to cond, as Redis PEXPIRE key ttl
// [NX|XX|GT|LT], and reports whether it did: false if key is absent or the
// condition fails. NX applies only to a key without a TTL, XX only to one
// with a TTL, GT only if the new deadline is later (a key without a TTL
// counts as infinite, so GT fails), LT only if it is earlier (a key without
// a TTL accepts it). A new deadline at or before now deletes the key (true).
// It returns ErrSyntax for an unknown cond and ErrInvalidTTL if the deadline
// overflows, changing nothing. It is safe for concurrent use.
func (e *Engine) PExpireCond(key string, ttl time.Duration, cond ExpireCond) (bool, error) {
	if cond > ExpireLT {
		return false, ErrSyntax
	}
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	defer s.Unlock()
	now := e.at(&c)
	exp, ok := deadline(now, ttl)
	if !ok {
		return false, ErrInvalidTTL
	}
	return e.expireLocked(s, key, exp, cond, &c), nil
}

// PExpireAt sets key's deadline to at, as Redis PEXPIREAT, and reports
// whether key existed. A time at or before now deletes the key (true). A
// time after year 2262 (beyond int64 nanoseconds) changes nothing and
// reports false. It is safe for concurrent use.
func (e *Engine) PExpireAt(key string, at time.Time) bool {
	exp, ok := unixNano(at)
	if !ok {
		return false
	}
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	defer s.Unlock()
	return e.expireLocked(s, key, exp, ExpireAlways, &c)
}

// expireLocked applies a new deadline exp to key under cond.
func (e *Engine) expireLocked(s *shardT, key string, exp int64, cond ExpireCond, c *opClock) bool {
	n := e.liveLocked(s, key, c)
	if n == nil {
		return false
	}
	cur := n.Value.exp
	switch cond {
	case ExpireNX:
		if cur != 0 {
			return false
		}
	case ExpireXX:
		if cur == 0 {
			return false
		}
	case ExpireGT:
		if cur == 0 || exp <= cur {
			return false
		}
	case ExpireLT:
		if cur != 0 && exp >= cur {
			return false
		}
	}
	if exp <= e.at(c) {
		e.removeLocked(s, n)
		return true
	}
	e.scheduleLocked(s, n, exp)
	if len(s.Aux.watchers) != 0 {
		e.notifyLocked(s, key)
	}
	return true
}

// PTTL returns key's remaining time to live, as Redis PTTL: ok is false if
// key is absent or expired, ttl is NoExpiry if it has no deadline, and 0 at
// its deadline. It is safe for concurrent use.
func (e *Engine) PTTL(key string) (ttl time.Duration, ok bool) {
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	n := e.liveLocked(s, key, &c)
	switch {
	case n == nil:
	case n.Value.exp == 0:
		ttl, ok = NoExpiry, true
	default:
		ttl, ok = time.Duration(n.Value.exp-e.at(&c)), true
	}
	s.Unlock()
	return ttl, ok
}

// GetPTTL returns key's value and remaining time to live in one critical
// section, as Redis MULTI GET PTTL EXEC (a lock client reads its lock's TTL
// and checks its token at once). ok is false if key is absent or expired;
// ttl is NoExpiry if it has no deadline, and 0 at its deadline. It is safe
// for concurrent use and reads the clock only if key has a deadline. It is
// an addition to the Redis command set.
func (e *Engine) GetPTTL(key string) (value string, ttl time.Duration, ok bool) {
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	n := e.liveLocked(s, key, &c)
	switch {
	case n == nil:
	case n.Value.exp == 0:
		value, ttl, ok = n.Value.value, NoExpiry, true
	default:
		value, ttl, ok = n.Value.value, time.Duration(n.Value.exp-e.at(&c)), true
	}
	s.Unlock()
	return value, ttl, ok
}

// Persist removes key's TTL, as Redis PERSIST, and reports whether it did:
// false if key is absent, expired or has no TTL. It is safe for concurrent
// use.
func (e *Engine) Persist(key string) bool {
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	n := e.liveLocked(s, key, &c)
	if n == nil || n.Value.exp == 0 {
		s.Unlock()
		return false
	}
	e.setExpLocked(s, n, 0)
	if len(s.Aux.watchers) != 0 {
		e.notifyLocked(s, key)
	}
	s.Unlock()
	return true
}

// IncrBy adds n to the integer stored under key and returns the result, as
// Redis INCRBY. An absent or expired key counts as 0 and is created without
// a TTL; an existing key keeps its TTL. It returns ErrNotInteger if the
// value is not a base-10 int64 in Redis's strict form (no spaces, no '+',
// no leading zeros, "-0" rejected), and ErrOverflow if the sum overflows;
// then nothing changes. It is safe for concurrent use.
func (e *Engine) IncrBy(key string, n int64) (int64, error) {
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	defer s.Unlock()
	nd := e.liveLocked(s, key, &c)
	var cur int64
	if nd != nil {
		var ok bool
		if cur, ok = parseInt(nd.Value.value); !ok {
			return 0, ErrNotInteger
		}
	}
	if (n > 0 && cur > math.MaxInt64-n) || (n < 0 && cur < math.MinInt64-n) {
		return 0, ErrOverflow
	}
	sum := cur + n
	v := strconv.FormatInt(sum, 10)
	if nd != nil {
		e.updateLocked(s, nd, v, nd.Value.exp)
	} else {
		e.insertLocked(s, key, v, 0)
	}
	return sum, nil
}

// parseInt parses s as Redis's string2ll does: an optional '-', then "0" or
// a digit 1-9 followed by digits, within int64; nothing else.
func parseInt(s string) (int64, bool) {
	if s == "0" {
		return 0, true
	}
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || d[0] < '1' || d[0] > '9' {
		return 0, false
	}
	for i := 1; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// Len returns the number of keys held, including expired keys not yet
// reclaimed (as Redis DBSIZE); after Reap it equals the number of live keys
// (absent concurrent writes). It visits the shards one at a time, so it is
// safe for concurrent use but not an atomic snapshot.
func (e *Engine) Len() int { return e.m.Len() }

// Watch returns a channel that is closed at the next change of key: any
// write (including a TTL change), a delete, or an expiry, active or lazy.
// Failed conditional writes and reads are not changes. key need not exist.
// To wait for a change without missing one, call Watch before checking the
// key's state. stop releases the watch (its channel then never closes); it
// is idempotent and safe to call after the channel closed. After Close, an
// expiry is seen only when the key is next accessed or Reap runs. Watch is safe for
// concurrent use; an expired key found by Watch is deleted (a change, so
// earlier watchers fire) before the new watch starts.
func (e *Engine) Watch(key string) (changed <-chan struct{}, stop func()) {
	w := &watcher{ch: make(chan struct{})}
	s := e.m.Shard(key)
	var c opClock
	s.Lock()
	e.liveLocked(s, key, &c)
	if s.Aux.watchers == nil {
		s.Aux.watchers = make(map[string][]*watcher)
	}
	s.Aux.watchers[key] = append(s.Aux.watchers[key], w)
	s.Unlock()
	return w.ch, func() {
		s.Lock()
		defer s.Unlock()
		if w.done {
			return
		}
		w.done = true
		ws := s.Aux.watchers[key]
		for i, x := range ws {
			if x == w {
				ws[i] = ws[len(ws)-1]
				ws[len(ws)-1] = nil
				ws = ws[:len(ws)-1]
				break
			}
		}
		if len(ws) == 0 {
			delete(s.Aux.watchers, key)
			if len(s.Aux.watchers) == 0 {
				s.Aux.watchers = nil
			}
		} else {
			s.Aux.watchers[key] = ws
		}
	}
}

// Reap synchronously reclaims every key expired at the clock's current time
// on all shards and returns how many it deleted. The reaper does this on its
// own; Reap is for deterministic tests with a mock clock and for engines
// after Close. It reads the clock once, is safe for concurrent use, and
// visits the shards one at a time.
func (e *Engine) Reap() int {
	now := e.now()
	total := 0
	var buf []*node
	for i := range e.m.Shards() {
		var n int
		n, _, buf = e.reapShard(e.m.ShardAt(i), now, buf)
		total += n
	}
	return total
}

// reapShard advances s's wheel to now and deletes the keys that fired and
// are still expired, at most reapBatch per lock hold. It returns the number
// deleted, the wheel's next deadline (math.MaxInt64 if none) and buf for
// reuse.
func (e *Engine) reapShard(s *shardT, now int64, buf []*node) (int, int64, []*node) {
	buf = buf[:0]
	s.Lock()
	s.Aux.wheel.Advance(now, func(n *node) { buf = append(buf, n) })
	next, ok := s.Aux.wheel.NextDeadline()
	if !ok {
		next = math.MaxInt64
	}
	deleted := 0
	for i, n := range buf {
		if i > 0 && i%reapBatch == 0 {
			s.Unlock()
			s.Lock()
		}
		// A fired node was unlinked from the wheel but is still in the map,
		// unless a writer deleted it or gave it a new deadline after an
		// unlock above; delete it only if it is still stored and expired.
		cur, ok := s.GetLocked(n.Value.key)
		if !ok || cur != n || n.Value.exp == 0 || n.Value.exp >= now {
			continue
		}
		key := n.Value.key
		s.DeleteLocked(key)
		if len(s.Aux.watchers) != 0 {
			e.notifyLocked(s, key)
		}
		recycleLocked(s, n)
		deleted++
	}
	s.Unlock()
	clear(buf)
	if cap(buf) > 4*reapBatch { // keep at most 32 KiB between wakes
		buf = nil
	}
	return deleted, next, buf
}

// reaper is the engine's goroutine: it sleeps until the earliest deadline of
// any shard, reclaims what expired, and repeats until Close.
func (e *Engine) reaper() {
	defer close(e.done)
	var t *clock.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	var buf []*node
	for {
		e.wakes.Add(1)
		// While scanning, every schedule kicks (nextWake is MaxInt64), so a
		// deadline filed into an already scanned shard is not missed.
		e.nextWake.Store(math.MaxInt64)
		now := e.readClock()
		next := int64(math.MaxInt64)
		for i := range e.m.Shards() {
			var nx int64
			_, nx, buf = e.reapShard(e.m.ShardAt(i), now, buf)
			next = min(next, nx)
		}
		var wake <-chan time.Time
		if next != math.MaxInt64 {
			e.nextWake.Store(next)
			if t == nil {
				t = e.timer.Timer(time.Duration(next - now))
			} else {
				t.Stop()
				select {
				case <-t.C:
				default:
				}
				t.Reset(time.Duration(next - now))
			}
			// A mock clock may have moved between reading now and filing
			// the timer (which a mock files relative to its new time).
			if e.readClock() >= next {
				continue
			}
			wake = t.C
		}
		select {
		case <-wake:
		case <-e.kick:
		case <-e.stop:
			return
		}
	}
}

// verify checks the invariants documented on item and shardState on every
// shard and returns the first violation. Tests call it (through Verify in
// export_test.go) after operations; it locks each shard in turn.
func (e *Engine) verify() error {
	for i := range e.m.Shards() {
		s := e.m.ShardAt(i)
		s.Lock()
		err := e.verifyLocked(s, i)
		s.Unlock()
		if err != nil {
			return err
		}
	}
	return nil
}

func (e *Engine) verifyLocked(s *shardT, i int) error {
	scheduled := 0
	var err error
	s.RangeLocked(func(key string, n *node) bool {
		d, sched := n.Deadline()
		switch {
		case n.Value.key != key:
			err = fmt.Errorf("engine: shard %d: node under %q holds key %q", i, key, n.Value.key)
		case e.m.ShardIndex(key) != i:
			err = fmt.Errorf("engine: key %q in shard %d, belongs in %d", key, i, e.m.ShardIndex(key))
		case n.Value.exp == 0 && sched:
			err = fmt.Errorf("engine: key %q without deadline is scheduled", key)
		case n.Value.exp != 0 && !sched:
			// Only a fired node awaiting the reaper may be unscheduled, and
			// it is expired (the wheel fired it at exp+1 or later).
			if n.Value.exp >= s.Aux.wheel.Now() {
				err = fmt.Errorf("engine: key %q with deadline %d is not scheduled (wheel at %d)", key, n.Value.exp, s.Aux.wheel.Now())
			}
		case sched && d != n.Value.exp+1 && !(n.Value.exp == math.MaxInt64 && d == n.Value.exp):
			err = fmt.Errorf("engine: key %q with deadline %d scheduled at %d, want deadline+1", key, n.Value.exp, d)
		}
		if sched {
			scheduled++
		}
		return err == nil
	})
	if err != nil {
		return err
	}
	if w := s.Aux.wheel.Len(); w != scheduled {
		return fmt.Errorf("engine: shard %d: wheel holds %d nodes, map holds %d scheduled", i, w, scheduled)
	}
	for _, n := range s.Aux.free[:s.Aux.nfree] {
		if n.Value != (item{}) || n.Scheduled() {
			return fmt.Errorf("engine: shard %d: recycled node not clean: %+v", i, n.Value)
		}
	}
	for key, ws := range s.Aux.watchers {
		if len(ws) == 0 {
			return fmt.Errorf("engine: shard %d: empty watcher list for %q", i, key)
		}
		for _, w := range ws {
			if w.done {
				return fmt.Errorf("engine: shard %d: finished watcher still listed for %q", i, key)
			}
		}
	}
	return nil
}
