package lockapi

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
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

// New returns a Client over b. It reads 12 random bytes from crypto/rand
// once, for the token prefix. New panics if b is nil.
func New(b Backend, opts ...ClientOption) *Client {
	if b == nil {
		panic("lockapi: New with a nil Backend")
	}
	c := &Client{b: b}
	c.w, _ = b.(Watcher)
	for _, o := range opts {
		if o != nil {
			o(c)
		}
	}
	c.time = clock.NewTime(c.clock)
	var raw [prefixLen * 3 / 4]byte
	rand.Read(raw[:]) // never fails (crypto/rand panics instead)
	base64.RawURLEncoding.Encode(c.prefix[:], raw[:])
	c.queues.init()
	return c
}

// Obtain acquires key for ttl and returns the Lock. It blocks, as the retry
// strategy allows (see the package doc), until the lock is acquired, the
// strategy gives up (an error wrapping ErrNotObtained), or ctx ends (an error
// wrapping both ErrNotObtained and ctx.Err()). A ttl <= 0 is ErrInvalidTTL,
// an empty key ErrInvalidKey, bad options ErrInvalidOption; then nothing is
// touched. A Backend error ends Obtain at once with an error wrapping
// ErrNotObtained and the backend's error; since the failed call may still
// have stored the lock (a lost reply), Obtain then deletes it with a
// compare-and-delete, best effort (skipped when ctx has ended: such a lock
// expires after ttl). Obtain is safe for concurrent use.
func (c *Client) Obtain(ctx context.Context, key string, ttl time.Duration, opts ...Option) (*Lock, error) {
	if ttl <= 0 {
		return nil, fmt.Errorf("%w: obtain %q with ttl %v", ErrInvalidTTL, key, ttl)
	}
	if key == "" {
		return nil, ErrInvalidKey
	}
	var cfg obtainConfig
	if len(opts) > 0 {
		cfg = buildConfig(opts)
		if err := cfg.check(ttl); err != nil {
			return nil, err
		}
	}
	if ctx.Err() != nil {
		return nil, ctxError(ctx, ErrNotObtained, key, nil)
	}
	l := c.newLock(key, &cfg)
	if c.fifo {
		return c.obtainQueued(ctx, l, ttl, &cfg)
	}
	ok, err := c.attempt(ctx, l, ttl)
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
	if !cfg.tokenSet {
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

// attempt tries to acquire l once.
func (c *Client) attempt(ctx context.Context, l *Lock, ttl time.Duration) (bool, error) {
	var start time.Time
	if l.watchdog {
		start = c.time.Now()
	}
	fence, ok, err := c.b.Acquire(ctx, l.key, l.value, ttl)
	if err != nil {
		// A lost reply may have stored our value; only we can hold it, so
		// deleting it by compare-and-delete is always safe.
		if ctx.Err() == nil {
			c.b.Release(ctx, l.key, l.value)
		}
		return false, ctxError(ctx, ErrNotObtained, l.key, err)
	}
	if ok {
		l.fence = fence
		if l.watchdog {
			l.x.lease.end = start.Add(ttl)
		}
	}
	return ok, nil
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
		return nil, ctxError(ctx, ErrNotObtained, l.key, nil)
	}
	bo := cfg.retry.Start()
	d, more := bo.Next()
	if !more {
		return nil, ctxError(ctx, ErrNotObtained, l.key, nil)
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
			if ok, err := c.attempt(ctx, l, ttl); ok || err != nil {
				return c.obtained(l, err)
			}
		}
		select {
		case <-turn:
			turn = nil
			if c.w == nil {
				if ok, err := c.attempt(ctx, l, ttl); ok || err != nil {
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
			return nil, ctxError(ctx, ErrNotObtained, l.key, nil)
		}
		// A delay (or, with a Watcher, a waiting window) ended.
		if turn == nil {
			if ok, err := c.attempt(ctx, l, ttl); ok || err != nil {
				return c.obtained(l, err)
			}
		}
		if d, more = bo.Next(); !more {
			return nil, ctxError(ctx, ErrNotObtained, l.key, nil)
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
		if ok, err := c.attempt(ctx, l, ttl); ok || err != nil {
			return c.obtained(l, err)
		}
	}
	return c.wait(ctx, l, ttl, cfg, turn)
}
