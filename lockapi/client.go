package lockapi

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/nxkv/nxkv/clock"
)

// Client obtains locks from a Backend. It is safe for concurrent use; create
// it with New. A Client holds no resources of its own: there is nothing to
// close, but every Lock it returns must be released (or left to expire).
type Client struct {
	b     Backend
	w     Watcher     // b as a Watcher, or nil
	clock clock.Clock // nil: the real clock
	time  *clock.Time // reads clock
	fifo  bool

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
	c := &Client{b: b, clock: opts.Clock, fifo: opts.FIFO}
	c.w, _ = b.(Watcher)
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
// ended: such a lock expires after ttl). Obtain is safe for concurrent use.
func (c *Client) Obtain(ctx context.Context, key string, ttl time.Duration, opts *ObtainOptions) (*Lock, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := checkTTL("obtain", key, ttl); err != nil {
		return nil, err
	}
	var cfg obtainConfig
	if opts != nil {
		cfg.retry, cfg.token, cfg.metadata = opts.Retry, opts.Token, opts.Metadata
		if opts.AutoRefresh != nil {
			ar, err := opts.AutoRefresh.resolve(key, ttl)
			if err != nil {
				return nil, err
			}
			cfg.refresh, cfg.refreshOn = ar, true
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, newError("obtain", key, nil, "", err)
	}
	l := c.newLock(key, &cfg)
	if c.fifo {
		return c.obtainQueued(ctx, l, ttl, &cfg)
	}
	ok, err := c.attempt(ctx, l, ttl, false)
	if ok || err != nil {
		return c.obtained(l, err)
	}
	return c.wait(ctx, l, ttl, &cfg, nil)
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
// found the key held.
func (c *Client) attempt(ctx context.Context, l *Lock, ttl time.Duration, waited bool) (bool, error) {
	var start time.Time
	if l.watchdog {
		start = c.time.Now()
	}
	fence, ok, err := c.b.Acquire(ctx, l.key, l.value, ttl)
	if err != nil {
		// A lost reply may have stored our value; only we can hold it, so
		// deleting it by compare-and-delete is always safe.
		cerr := ctx.Err()
		if cerr == nil {
			c.b.Release(ctx, l.key, l.value)
		}
		var kind error
		if waited && cerr != nil {
			kind = ErrNotObtained // the key was held, and ctx ended the wait
		}
		return false, newError("obtain", l.key, kind, "", withCtx(err, cerr))
	}
	if ok {
		l.fence = fence
		if l.watchdog {
			l.x.lease.end = start.Add(ttl)
		}
	}
	return ok, nil
}

// notObtained is Obtain's error when the key stayed held: the strategy
// gave up, or ctx ended the wait.
func notObtained(ctx context.Context, key string) error {
	return newError("obtain", key, ErrNotObtained, "", ctx.Err())
}

// obtained finishes a successful Obtain.
func (c *Client) obtained(l *Lock, err error) (*Lock, error) {
	if err != nil {
		return nil, err
	}
	if l.watchdog {
		l.mu.Lock()
		start := l.startMonitorLocked()
		l.mu.Unlock()
		if start != nil {
			start()
		}
	}
	return l, nil
}

// wait is the blocking part of Obtain after a failed first attempt (or,
// with FIFO, after joining a queue that was not empty). turn is nil when l
// may attempt the key; otherwise it is closed when l reaches the head of its
// queue.
func (c *Client) wait(ctx context.Context, l *Lock, ttl time.Duration, cfg *obtainConfig, turn <-chan struct{}) (*Lock, error) {
	if cfg.retry == nil {
		return nil, notObtained(ctx, l.key)
	}
	bo := cfg.retry.Start()
	d, more := bo.Next()
	if !more {
		return nil, notObtained(ctx, l.key)
	}
	timer := clock.NewTimer(c.clock, d)
	defer func() { timer.Stop() }()
	var changed <-chan struct{}
	stop := func() {}
	defer func() { stop() }()
	for {
		if turn == nil && c.w != nil && changed == nil {
			// Watch before trying, so that a change between the attempt
			// and the select below is not missed.
			changed, stop = c.w.Watch(l.key)
			if ok, err := c.attempt(ctx, l, ttl, true); ok || err != nil {
				return c.obtained(l, err)
			}
		}
		select {
		case <-turn:
			turn = nil
			if c.w == nil {
				if ok, err := c.attempt(ctx, l, ttl, true); ok || err != nil {
					return c.obtained(l, err)
				}
			}
			continue
		case <-changed:
			stop()
			changed, stop = nil, func() {}
			continue
		case <-timer.C:
		case <-ctx.Done():
			return nil, notObtained(ctx, l.key)
		}
		// A delay (or, with a Watcher, a waiting window) ended.
		if turn == nil {
			if ok, err := c.attempt(ctx, l, ttl, true); ok || err != nil {
				return c.obtained(l, err)
			}
		}
		if d, more = bo.Next(); !more {
			return nil, notObtained(ctx, l.key)
		}
		timer = clock.NewTimer(c.clock, d)
	}
}

// obtainQueued is Obtain with FIFO: only the head of the key's queue
// attempts the key.
func (c *Client) obtainQueued(ctx context.Context, l *Lock, ttl time.Duration, cfg *obtainConfig) (*Lock, error) {
	w := new(waiter)
	turn := c.queues.enqueue(w, l.key)
	defer c.queues.remove(w, l.key)
	if turn == nil {
		if ok, err := c.attempt(ctx, l, ttl, false); ok || err != nil {
			return c.obtained(l, err)
		}
	}
	return c.wait(ctx, l, ttl, cfg, turn)
}
