package lockapi

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/nxkv/nxkv/clock"
)

// Client obtains locks from a Backend. It is safe for concurrent use; create
// it with New. A Client holds no resources of its own: there is nothing to
// close, but every Lock it returns must be released (or left to expire).
type Client struct {
	b       Backend
	w       Watcher     // b as a Watcher, or nil
	wt      WaitTracker // b as a WaitTracker, or nil
	clock   clock.Clock // nil: the real clock
	time    *clock.Time // reads clock
	fifo    bool
	onEvent func(Event) // Options.OnEvent, or nil
	every   uint64      // time one acquisition in every; 0 for none
	stats   clientStats

	prefix [prefixLen]byte // random, read once in New
	seq    atomic.Uint64   // token counter

	queues waitQueues // per-key FIFO queues; used only when fifo
}

const (
	prefixLen = 16
	// TokenLen is the length of the tokens a Client generates: 16
	// characters of the Client's random prefix (base64url), then 16
	// hexadecimal digits of its acquisition counter.
	TokenLen = 32
)

// Clocker is implemented by backends that keep time with a clock of their
// own, such as the in-process backend (the engine's clock). New uses that
// clock when Options.Clock is nil, so that a clock is injected once.
type Clocker interface {
	// Clock returns the backend's clock; nil means the real clock.
	Clock() clock.Clock
}

// New returns a Client over b configured by opts. It reads 12 random bytes
// from crypto/rand once, for the token prefix. New panics if b is nil.
func New(b Backend, opts Options) *Client {
	if b == nil {
		panic("lockapi: New with a nil Backend")
	}
	c := &Client{b: b, clock: opts.Clock, fifo: opts.FIFO, onEvent: opts.OnEvent}
	switch n := opts.HoldTimeEvery; {
	case opts.OnEvent != nil:
		c.every = 1
	case n == 0:
		c.every = defaultHoldTimeEvery
	case n > 0:
		c.every = uint64(n)
	}
	c.w, _ = b.(Watcher)
	c.wt, _ = b.(WaitTracker)
	if c.clock == nil {
		if cl, ok := b.(Clocker); ok {
			c.clock = cl.Clock()
		}
	}
	if clock.IsReal(c.clock) {
		c.clock = nil
	}
	c.time = clock.NewTime(c.clock)
	var raw [prefixLen * 3 / 4]byte
	rand.Read(raw[:]) // never fails (crypto/rand panics instead)
	base64.RawURLEncoding.Encode(c.prefix[:], raw[:])
	c.queues.init()
	return c
}

// Clock returns the clock the Client waits on; nil means the real clock.
// A Client is itself a Clocker, so wrappers can pass its clock on.
func (c *Client) Clock() clock.Clock { return c.clock }

// obtainConfig is one Obtain's options, checked and with defaults filled in.
type obtainConfig struct {
	retry     RetryStrategy
	token     string // "" to generate one
	metadata  string
	refresh   AutoRefresh
	refreshOn bool
	reentrant bool
}

// config checks opts against ttl and returns the Obtain's configuration;
// name is the key or name the error names.
func config(name string, ttl time.Duration, opts *ObtainOptions) (obtainConfig, error) {
	var cfg obtainConfig
	if opts == nil {
		return cfg, nil
	}
	cfg.retry, cfg.token, cfg.metadata, cfg.reentrant = opts.Retry, opts.Token, opts.Metadata, opts.Reentrant
	if opts.AutoRefresh != nil {
		ar, err := opts.AutoRefresh.resolve(name, ttl)
		if err != nil {
			return cfg, err
		}
		cfg.refresh, cfg.refreshOn = ar, true
	}
	return cfg, nil
}

// Obtain acquires key for ttl and returns the Lock; opts may be nil. It
// blocks, as the retry strategy allows (see the package doc), until the lock
// is acquired, or another holder keeps it until the strategy gives up (an
// error matching ErrNotObtained) or ctx ends (matching ErrNotObtained and
// ctx.Err()). A ttl outside [MinTTL, MaxTTL] is ErrInvalidTTL, an empty or
// reserved key ErrInvalidKey, bad options ErrInvalidOption: these are
// returned before any backend call. A ctx that has ended before the first
// attempt gives an error matching ctx.Err() only.
//
// A backend error ends Obtain at once with an error wrapping it (and
// ctx.Err() when ctx has ended), which matches ErrNotObtained only if an
// earlier attempt found the key held and ctx ended the wait. Since the
// failed call may still have stored the lock (a lost reply), Obtain then
// deletes it with a compare-and-delete, best effort (skipped when ctx has
// ended: such a lock expires after ttl; a primitive's lease and a waiting
// writer's mark are cleaned up even then). Obtain is safe for concurrent use.
func (c *Client) Obtain(ctx context.Context, key string, ttl time.Duration, opts *ObtainOptions) (*Lock, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := checkTTL("obtain", key, ttl); err != nil {
		return nil, err
	}
	cfg, err := config(key, ttl, opts)
	if err != nil {
		return nil, err
	}
	var p prim
	if cfg.reentrant {
		rb, ok := c.b.(ReentrantBackend)
		if !ok {
			return nil, unsupported(key, c.b, "reentrant locks")
		}
		p = &reentrantLease{rb: rb, hold: c.holdID(), watch: []string{key}}
	}
	if err := ctx.Err(); err != nil {
		return nil, newError("obtain", key, nil, "", err)
	}
	l := c.newLock(key, &cfg)
	l.p = p
	return c.obtain(ctx, l, ttl, &cfg)
}

// obtain acquires l, a Lock built by newLock (with its kind and prim set),
// as Obtain says: once, then waiting as cfg's strategy allows.
func (c *Client) obtain(ctx context.Context, l *Lock, ttl time.Duration, cfg *obtainConfig) (*Lock, error) {
	if c.fifo {
		return c.obtainQueued(ctx, l, ttl, cfg)
	}
	ok, err := c.attempt(ctx, l, ttl, false, false)
	if ok || err != nil {
		return c.obtained(l, ttl, 0, err)
	}
	return c.wait(ctx, l, ttl, cfg, nil)
}

// holdID returns a name for one reentrant hold, unique among every Client's
// holds: the Client's random prefix and a number it never hands out again.
func (c *Client) holdID() string {
	return string(c.prefix[:]) + strconv.FormatUint(c.seq.Add(1), 16)
}

// newLock builds the Lock of one acquisition. A generated token lives in
// the Lock's own array, so the Lock and its token are one allocation.
func (c *Client) newLock(key string, cfg *obtainConfig) *Lock {
	l := &Lock{c: c, key: key}
	token := cfg.token
	if token == "" {
		copy(l.tok[:], c.prefix[:])
		n := c.seq.Add(1)
		const hexdigits = "0123456789abcdef"
		for i := TokenLen - 1; i >= prefixLen; i-- {
			l.tok[i] = hexdigits[n&0xf]
			n >>= 4
		}
		// The array is never written again, so the string may alias it.
		token = unsafe.String(&l.tok[0], TokenLen)
	}
	l.tokLen = int32(len(token))
	l.value = token
	if cfg.metadata != "" {
		l.value = token + cfg.metadata
	}
	if cfg.refreshOn {
		l.x = &lockExtra{refresh: cfg.refresh, kick: make(chan struct{}, 1)}
		l.watchdog = true
	}
	return l
}

// attempt tries to acquire l once; waited reports that an earlier attempt
// found the key held, queue that the Obtain waits if this attempt fails.
func (c *Client) attempt(ctx context.Context, l *Lock, ttl time.Duration, waited, queue bool) (bool, error) {
	var start time.Time
	if l.watchdog {
		start = c.time.Now()
	}
	var (
		fence int64
		ok    bool
		err   error
	)
	if l.p == nil {
		fence, ok, err = c.b.Acquire(ctx, l.key, l.value, ttl)
	} else {
		ok, err = l.p.try(ctx, l, ttl, queue)
	}
	if err != nil {
		// A lost reply may have stored our value; only we can hold it, so
		// deleting it by compare-and-delete is always safe. A primitive's
		// cleanup runs even when ctx ended during the call (without ctx's
		// cancellation, as in notObtained): Obtain gives up here, and a
		// waiting writer's mark, left by an earlier attempt, must go.
		cerr := ctx.Err()
		switch {
		case l.p != nil:
			cctx, cancel := cleanupContext(ctx, ttl)
			l.p.cleanup(cctx, l, true)
			cancel()
		case cerr == nil:
			c.b.Release(ctx, l.key, l.value)
		}
		var kind error
		if waited && cerr != nil {
			kind = ErrNotObtained // the key was held, and ctx ended the wait
		}
		return false, newError("obtain", l.key, kind, "", withCtx(err, cerr))
	}
	if ok {
		if l.p == nil {
			l.fence = fence
		}
		if l.watchdog {
			l.x.lease.end = start.Add(ttl)
		}
	}
	return ok, nil
}

// notObtained is Obtain's error when the key stayed held: the strategy
// gave up, or ctx ended the wait. It undoes what the waiting left behind
// (a writer's mark, which lasts ttl).
func (c *Client) notObtained(ctx context.Context, l *Lock, ttl time.Duration) error {
	if l.p != nil {
		cctx, cancel := cleanupContext(ctx, ttl)
		l.p.cleanup(cctx, l, false)
		cancel()
	}
	c.stats.notObtain.Add(1)
	return newError("obtain", l.key, ErrNotObtained, "", ctx.Err())
}

// cleanupContext is the context of a best-effort undo at the end of an
// Obtain: not cancelled with ctx, which may be what ended the Obtain, but
// bounded by ttl, after which anything the undo would remove has expired on
// its own, so that a backend that hangs cannot hold Obtain much past its
// ctx.
func cleanupContext(ctx context.Context, ttl time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), ttl)
}

// obtained finishes an Obtain: with err nil, a successful one. waitStart is
// when the Obtain started to wait (Client.time.Nano), 0 if it did not.
func (c *Client) obtained(l *Lock, ttl time.Duration, waitStart int64, err error) (*Lock, error) {
	var timed bool
	if err == nil {
		n := c.stats.acquired.Add(1)
		timed = c.every != 0 && n%c.every == 0
	}
	var now int64
	if timed || waitStart != 0 {
		now = c.time.Nano()
	}
	if waitStart != 0 {
		c.stats.wait.record(time.Duration(now - waitStart))
	}
	if err != nil {
		return nil, err
	}
	if timed {
		l.acquired = now // nonzero: the release or loss is timed too
	}
	if l.watchdog {
		l.mu.Lock()
		start := l.startMonitorLocked()
		l.mu.Unlock()
		if start != nil {
			start()
		}
	}
	if c.onEvent != nil {
		var wait time.Duration
		if waitStart != 0 {
			wait = time.Duration(now - waitStart)
		}
		c.emit(l, Event{Type: EventAcquired, Time: time.Unix(0, now), Wait: wait, TTL: ttl})
	}
	return l, nil
}

// wait is the blocking part of Obtain after a failed first attempt (or,
// with FIFO, after joining a queue that was not empty). turn is nil when l
// may attempt the key; otherwise it is closed when l reaches the head of its
// queue.
func (c *Client) wait(ctx context.Context, l *Lock, ttl time.Duration, cfg *obtainConfig, turn <-chan struct{}) (*Lock, error) {
	if cfg.retry == nil {
		return nil, c.notObtained(ctx, l, ttl)
	}
	bo := cfg.retry.Start()
	d, more := bo.Next()
	if !more {
		return nil, c.notObtained(ctx, l, ttl)
	}
	c.stats.waited.Add(1)
	waitStart := c.time.Nano()
	if c.wt != nil {
		defer c.trackWaiting(l)()
	}
	timer := clock.NewTimer(c.clock, d)
	defer func() { timer.Stop() }()
	var changed <-chan struct{}
	stop := func() {}
	defer func() { stop() }()
	// A waiting writer's mark lasts its ttl from its latest attempt: it
	// renews the mark by an attempt every renewEvery, which consumes
	// nothing of the strategy, so that the mark never lapses while it
	// waits.
	var (
		renewTimer *clock.Timer
		renew      <-chan time.Time
		renewEvery time.Duration
	)
	if r, ok := l.p.(renewer); ok {
		renewEvery = r.renewEvery(ttl)
	}
	armRenew := func() {
		if renewEvery > 0 {
			renewTimer = clock.NewTimer(c.clock, renewEvery)
			renew = renewTimer.C
		}
	}
	armRenew()
	defer func() {
		if renewTimer != nil {
			renewTimer.Stop()
		}
	}()
	gaveUp := func() (*Lock, error) {
		err := c.notObtained(ctx, l, ttl)
		c.obtained(l, ttl, waitStart, err)
		return nil, err
	}
	for {
		if turn == nil && c.w != nil && changed == nil {
			// Watch before trying, so that a change between the attempt
			// and the select below is not missed.
			if l.p == nil {
				changed, stop = c.w.Watch(l.key)
				if ok, err := c.attempt(ctx, l, ttl, true, true); ok || err != nil {
					return c.obtained(l, ttl, waitStart, err)
				}
			} else {
				// The keys to watch come from the last failed attempt; watch
				// them and try again until an attempt fails on the keys
				// being watched.
				for {
					keys := l.p.watchKeys()
					changed, stop = watchAll(c.w, keys)
					if ok, err := c.attempt(ctx, l, ttl, true, true); ok || err != nil {
						return c.obtained(l, ttl, waitStart, err)
					}
					if sameKeys(keys, l.p.watchKeys()) {
						break
					}
					stop()
				}
			}
		}
		select {
		case <-turn:
			turn = nil
			if c.w == nil {
				if ok, err := c.attempt(ctx, l, ttl, true, true); ok || err != nil {
					return c.obtained(l, ttl, waitStart, err)
				}
			}
			continue
		case <-changed:
			stop()
			changed, stop = nil, func() {}
			continue
		case <-renew:
			if turn == nil {
				if ok, err := c.attempt(ctx, l, ttl, true, true); ok || err != nil {
					return c.obtained(l, ttl, waitStart, err)
				}
			}
			armRenew()
			continue
		case <-timer.C:
		case <-ctx.Done():
			return gaveUp()
		}
		// A delay (or, with a Watcher, a waiting window) ended.
		if turn == nil {
			if ok, err := c.attempt(ctx, l, ttl, true, true); ok || err != nil {
				return c.obtained(l, ttl, waitStart, err)
			}
		}
		if d, more = bo.Next(); !more {
			return gaveUp()
		}
		timer = clock.NewTimer(c.clock, d)
	}
}

// obtainQueued is Obtain with FIFO: only the head of the key's queue
// attempts the key.
func (c *Client) obtainQueued(ctx context.Context, l *Lock, ttl time.Duration, cfg *obtainConfig) (*Lock, error) {
	if _, re := l.p.(*reentrantLease); re && cfg.token != "" {
		// The owner's re-entry does not queue: the waiters ahead wait for
		// the owner's release, so it would wait for nothing.
		if _, held, err := c.b.PTTL(ctx, l.key, l.value); err == nil && held {
			if ok, err := c.attempt(ctx, l, ttl, false, false); ok || err != nil {
				return c.obtained(l, ttl, 0, err)
			}
		}
	}
	w := new(waiter)
	q := l.queueKey()
	turn := c.queues.enqueue(w, q)
	defer c.queues.remove(w, q)
	if turn == nil {
		if ok, err := c.attempt(ctx, l, ttl, false, false); ok || err != nil {
			return c.obtained(l, ttl, 0, err)
		}
	}
	return c.wait(ctx, l, ttl, cfg, turn)
}

// trackWaiting records l's Obtain as waiting with the WaitTracker, under
// its key or name, or each of a multi-key lock's keys; it returns the
// function that ends the record.
func (c *Client) trackWaiting(l *Lock) func() {
	if l.kind != KindMulti {
		return c.wt.Waiting(l.kind, l.key)
	}
	keys := l.Keys()
	dones := make([]func(), len(keys))
	for i, k := range keys {
		dones[i] = c.wt.Waiting(KindMulti, k)
	}
	return func() {
		for _, done := range dones {
			done()
		}
	}
}

// emit gives ev, completed with l's identity, to Options.OnEvent.
func (c *Client) emit(l *Lock, ev Event) {
	ev.Kind, ev.Key, ev.Token, ev.Fence = l.kind, l.key, l.Token(), l.fence
	c.onEvent(ev)
}

// unsupported is the error of a call the backend cannot serve.
func unsupported(name string, b Backend, what string) error {
	return newError("obtain", name, nil, fmt.Sprintf("the backend (%T) has no %s", b, what), errors.ErrUnsupported)
}
