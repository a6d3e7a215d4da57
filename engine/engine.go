package engine

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nxkv/nxkv/clock"
	"github.com/nxkv/nxkv/shard"
)

// Engine is a sharded, linearizable key-value store with Redis string and
// TTL semantics. It is safe for concurrent use by any number of goroutines.
// Create it with New and release its reaper goroutine with Close; an Engine
// must not be copied.
type Engine struct {
	m *shard.Map[shardState]

	// mem is the memory budget the engine counts its keys against (its own
	// for Options.MaxMemory, or Options.Budget, shared), nil without one,
	// so an unbounded engine's writes pay one nil check for it. held is
	// what the engine's shards have added to mem's total, by which
	// eviction draws the engine to evict from; evicted counts the keys
	// evicted from this engine. Both kept only with mem.
	mem           *Budget
	held, evicted atomic.Int64

	// tm is the engine's time line; user is true when the clock was
	// injected, so that operations read it before taking a shard lock
	// (never while holding one) and pass the reading through tm.Monotonic
	// inside the critical section.
	tm    *clock.Time
	user  bool
	tick  time.Duration
	start int64 // the time at New: where a shard's wheel starts

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

	// reapMu serializes reapShard: a reclaimer keeps the keys its wheel
	// fired, out of the wheel, across the lock drops between its batches,
	// so another reclaimer (a Reap) must wait for it to finish instead of
	// finding nothing to fire. Taken before a shard lock, never after one.
	reapMu sync.Mutex

	// listenMu guards listeners, the registered listeners in order of
	// registration (see feed.go). Taken before shard locks, never after
	// one. Every shard holds the current list too, in its observers.
	listenMu  sync.Mutex
	listeners []*listener
	// listening is true while any listener is registered: Set, which
	// otherwise never needs the time, reads an injected clock before
	// locking when listeners must be told whether it overwrote an expired
	// key.
	listening atomic.Bool
}

// New returns an engine with its reaper started. Call Close to stop the
// reaper. The zero Options select the defaults. New panics if
// Options.Policy is not one of the Policy constants, or if Options.Budget
// is given with MaxMemory, Policy or Samples.
func New(opts Options) *Engine {
	if opts.Policy > VolatileRandom {
		panic(fmt.Sprintf("engine: New with an unknown policy %d", opts.Policy))
	}
	if opts.Budget != nil && (opts.MaxMemory != 0 || opts.Policy != 0 || opts.Samples != 0) {
		panic("engine: New with both a Budget and MaxMemory, Policy or Samples (the budget has its own)")
	}
	e := &Engine{
		m:    shard.New[shardState](opts.Shards),
		tm:   clock.NewTime(opts.Clock),
		tick: opts.Tick,
		kick: make(chan struct{}, 1),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	e.user = !e.tm.Real()
	e.start = e.tm.Monotonic(e.tm.Nano())
	if e.mem = opts.Budget; e.mem == nil && opts.MaxMemory > 0 {
		e.mem = NewBudget(opts.MaxMemory, opts.Policy, opts.Samples)
	}
	if e.mem != nil {
		for i := range e.m.Shards() {
			s := e.m.ShardAt(i)
			s.Lock()
			s.EnableMetaLocked()
			s.Unlock()
		}
		e.mem.join(e)
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

// Clock returns the clock given in Options.Clock, or nil for the real clock.
// A lock client over the engine uses it so that the clock is given once.
func (e *Engine) Clock() clock.Clock { return e.tm.Clock() }

// Now returns the engine's current time: the time the next operation would
// see, never earlier than any time an operation has used (see the package
// doc). It is safe for concurrent use.
func (e *Engine) Now() time.Time { return time.Unix(0, e.tm.Monotonic(e.tm.Nano())) }

// opState is one operation's state: its time, whether its events are
// withheld from listeners, and the tag its events carry.
//
// It gives the operation at most one time reading. For the real clock it
// is read inside the critical section on first use; an injected clock is
// read by begin before the shard lock is taken (pre) and made monotonic on
// first use inside the section.
type opState struct {
	t    int64
	pre  int64
	read bool
	// quiet withholds the operation's events, all but KindExpired, from
	// listeners (never from watchers): set by Tx.Quiet for a section that
	// names its changes itself with Tx.Notify.
	quiet bool
	// tag is copied into the operation's events (Event.Tag): set by
	// Tx.SetTag for a section, nil for every other operation.
	tag any
}

// begin takes an injected clock's reading for an operation that may need
// the time. Call it before locking; it does nothing for the real clock.
func (e *Engine) begin(c *opState) {
	if e.user {
		c.pre = e.tm.Nano()
	}
}

// at returns the operation's time, reading it on first use.
func (e *Engine) at(c *opState) int64 {
	if !c.read {
		if e.user {
			c.t = e.tm.Monotonic(c.pre)
		} else {
			c.t = e.tm.Nano()
		}
		c.read = true
		if e.nowHook != nil {
			e.nowHook(c.t)
		}
	}
	return c.t
}

// stale forgets the operation's time, so that at reads it again: a time
// read before a writer changed the shard may be older than the writer's,
// and must not be used after it. For an injected clock the reading taken
// before the operation is kept and only made monotonic again, so no clock
// is called under a lock.
func (e *Engine) stale(c *opState) {
	if c.read && e.nowHook != nil {
		e.nowHook(noDeadline) // retract the reading for the test hook
	}
	c.read = false
}

// now returns the current time for a call that holds no lock (Reap, Update
// before its section) and reports it to the hook.
func (e *Engine) now() int64 {
	var c opState
	e.begin(&c)
	return e.at(&c)
}

// noDeadline is the deadline of a key without a TTL. It is the one int64 no
// computed deadline can take: deadlines clamp to noDeadline+1 at the far
// past end.
const noDeadline = math.MinInt64

// deadline returns now+ttl, or false if that overflows int64 nanoseconds
// (a negative ttl that underflows clamps to the earliest deadline).
func deadline(now int64, ttl time.Duration) (int64, bool) {
	d := int64(ttl)
	if d > 0 && now > math.MaxInt64-d {
		return 0, false
	}
	if d < 0 && now < noDeadline+1-d {
		return noDeadline + 1, true // far in the past
	}
	return now + d, true
}

// Bounds of the times whose UnixNano is defined (years 1678 to 2262).
var (
	minTime = time.Unix(0, noDeadline+1)
	maxTime = time.Unix(0, math.MaxInt64)
)

// unixNano converts t to a deadline in Unix nanoseconds; ok is false when t
// is after year 2262. Times before 1678 clamp to the earliest deadline.
func unixNano(t time.Time) (ns int64, ok bool) {
	if t.After(maxTime) {
		return 0, false
	}
	if t.Before(minTime) {
		return noDeadline + 1, true
	}
	return t.UnixNano(), true
}
