// Package redlock implements the Redlock algorithm of the Redis
// distributed-lock page over N independent lockapi.Backends (typically N
// separate Redis masters through lockapi/goredis, N = 3 or 5).
//
// # Model
//
// A Redlock is itself a lockapi.Backend, so lockapi.New(rl) gives the usual
// Client (Obtain with retry strategies, Release, Refresh, TTL, the watchdog
// and the Lost signal) over the whole group. Each call runs one parallel
// round: the same key and value are sent to every node at once, each node
// call bounded by a per-node timeout (a context deadline on the Redlock's
// clock) well below the TTL, and the round ends when every node answered or
// timed out. A round waits for every node's call to return, so Backends must
// return promptly once their ctx ends (lockapi/goredis and lockapi/inproc
// do); no goroutine outlives the call that started it.
//
//   - Acquire succeeds when a majority (N/2+1) of nodes stored the value
//     and the validity ttl - elapsed - drift is still positive. Otherwise
//     it releases the value on every node (also those that timed out, whose
//     write may have landed late) and retries after a random delay, a
//     bounded number of times (Options.Tries). When a majority of nodes answered
//     that someone else holds the key it stops at once with ok false,
//     leaving the waiting to the Client's retry strategy.
//   - Refresh extends the value on every node; it succeeds only when a
//     majority did so before the current validity ran out, and a new
//     validity ttl - elapsed - drift remains. Options.MaxExtensions caps the
//     number of extensions of one acquisition.
//   - Release deletes the value on every node; ok reports that a majority
//     still held it and the validity had not run out.
//   - PTTL reports the remaining validity, as long as a majority still hold
//     the value.
//
// # Validity and drift
//
// Validity is the page's ttl - elapsed - drift, where elapsed is measured on
// the Redlock's clock from just before the round was sent, and the drift
// allowance (ttl*0.01 + 2ms by default, Options.DriftFactor and DriftMin) covers node clocks that
// run faster than ours. The lock is safe to use until start + ttl - drift:
// PTTL (and so lockapi's Lock.TTL) reports no more than that, and Refresh
// and Release report ok false once it has passed, even though the nodes keep
// the key for up to drift longer.
//
// A lockapi.Client with a watchdog measures its own lease, ttl from before
// it sent the Acquire or Refresh, and declares the lock lost when it ends;
// that is up to drift later than the Redlock validity. Code that must stop
// exactly at the validity should ask Lock.TTL, which asks PTTL. The Client
// measures on the Redlock's clock (Redlock is a lockapi.Clocker).
//
// # No fencing tokens
//
// Redlock cannot give fencing tokens. The nodes are independent masters:
// each could count acquisitions, but there is no single counter every
// holder's token is ordered by, and a majority of counters can disagree on
// who came last (a node that restarted empty, or a node the previous holder
// never reached). A token that looks monotonic but is not is worse than
// none, so Acquire returns fence 0 and Lock.Fence reports none (see Martin
// Kleppmann, "How to do distributed locking", 2016). Where correctness, not
// just efficiency, depends on the lock, use a single backend with fencing
// (lockapi/goredis, lockapi/inproc) and have the protected resource reject
// stale tokens.
//
// With no tokens there is none for a FLUSHALL to repeat; to a Redlock a
// node flushed is a node restarted empty: it forgets the leases it
// granted, so a majority that counted it may be granted again while the
// old holders still act. Keep a flushed node out for the longest TTL in
// use (as after a restart without persistence) before it serves again.
//
// # No semaphores, read-write, multi-key or reentrant locks
//
// A Redlock implements none of lockapi's primitive interfaces, so a Client
// over it refuses Semaphore, RWMutex, ObtainAll and ObtainOptions.Reentrant
// with an error matching errors.ErrUnsupported, before any node is called.
//
// For a semaphore this is a matter of safety, not of work left undone. A
// lease would be a value held in one of N slots on a majority of the M
// nodes, each node admitting at most N. A mutex is safe because any two
// majorities share a node, which refuses the second holder; but N+1 leases
// need not meet on any one node: they need (N+1)(M/2+1) slot placements,
// and M nodes offer N*M of them. With M = 3 and N = 2, leases on {A, B},
// {B, C} and {A, C} fill every node exactly, and three clients hold a
// semaphore of two. In general up to N*M/(M/2+1) clients (integer M/2),
// nearly 2N with many nodes, can each hold a majority.
//
// Read-write and multi-key locks only ever exclude pairs of holders, which
// majority intersection would cover under the timing assumptions below;
// but their waiting writer's mark and a reentrant lock's holds would
// live on each node separately, and nodes that disagree on them would
// break writer preference and reentrancy without a way to notice. Use a
// single backend (lockapi/goredis, lockapi/inproc) for these primitives.
//
// # Nodes over Redis
//
// Give every node its own go-redis client and lockapi/goredis Backend. A
// round waits for its slowest node up to the node timeout, so configure the
// clients to fail fast on a dead server: MaxRetries -1 (Redlock retries
// whole rounds itself) and DialerRetries 1 (go-redis otherwise re-dials a
// refused connection several times, 100ms apart, and a dead node then costs
// the full node timeout on every round).
//
// # What it does not guarantee
//
// Mutual exclusion holds only while the timing assumptions hold: node clocks
// advance at nearly the same rate as ours (within the drift allowance),
// process pauses and network delays are shorter than the validity, and a
// node that loses its data (a restart without fsync'd persistence) stays
// down for at least the longest TTL. The tests in this package show each
// assumption breaking: a node clock jumping forward (or running faster than
// the allowance), or a node restarting empty at once, lets two clients each
// hold a majority. A lock acquired on a bare majority is the most exposed:
// losing any one of those nodes lets another client form a majority with the
// rest, and the first holder learns of it only at its
// next Refresh or TTL. And, without fencing, nothing protects a resource
// from a holder paused past its validity after Acquire returned.
package redlock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nxkv/nxkv/clock"
	"github.com/nxkv/nxkv/lockapi"
)

var (
	_ lockapi.Backend = (*Redlock)(nil)
	_ lockapi.Clocker = (*Redlock)(nil)
)

var (
	// ErrNoQuorum is wrapped by an *Error when node failures (errors or
	// timeouts) left a call without a majority answer either way: Acquire
	// could not reach a majority of nodes at all, or Release, Refresh or
	// PTTL cannot tell whether a majority still held the value.
	ErrNoQuorum = errors.New("redlock: no quorum")
	// ErrValidityExpired is wrapped by an *Error when a majority granted the
	// call but only after the validity ran out; the value was then released
	// everywhere.
	ErrValidityExpired = errors.New("redlock: validity expired before a quorum answered")
	// ErrExtensionLimit is returned by Refresh once an acquisition was
	// extended Options.MaxExtensions times. Nothing is sent.
	ErrExtensionLimit = errors.New("redlock: extension limit reached")
	// ErrInvalidTTL is wrapped by the error for a ttl outside
	// [lockapi.MinTTL, lockapi.MaxTTL], or not above the drift allowance
	// (with the defaults, a ttl of about 2ms or less), which would leave a
	// lock no validity at all; it wraps lockapi.ErrInvalidTTL. Nothing is
	// sent.
	ErrInvalidTTL = fmt.Errorf("redlock: %w", lockapi.ErrInvalidTTL)
	// ErrInvalidConfig is returned by New for no nodes, a nil node, or an
	// Options field out of range.
	ErrInvalidConfig = errors.New("redlock: invalid configuration")
)

// NodeError is the failure of one node in a round.
type NodeError struct {
	Node string // the node's name (Options.Names), by default "node<i>"
	Err  error
}

// Error implements error.
func (e *NodeError) Error() string { return e.Node + ": " + e.Err.Error() }

// Unwrap returns the node's error.
func (e *NodeError) Unwrap() error { return e.Err }

// Error is a Redlock call that failed for lack of a quorum. It names the
// nodes that failed and unwraps (Unwrap() []error) to ErrNoQuorum or
// ErrValidityExpired and to one *NodeError per failed node, so
// errors.Is(err, context.DeadlineExceeded) finds a node that timed out.
type Error struct {
	Op      string // "acquire", "release", "refresh" or "pttl"
	Key     string
	Quorum  int
	Granted int         // nodes whose answer was yes
	Reason  error       // ErrNoQuorum or ErrValidityExpired
	Nodes   []NodeError // the nodes that failed, in node order
}

// Error implements error. The message names the operation and the reason,
// not the key, which the caller (lockapi's error) already names.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "redlock: %s: %s (%d granted, quorum %d)", e.Op, strings.TrimPrefix(e.Reason.Error(), "redlock: "), e.Granted, e.Quorum)
	for i := range e.Nodes {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(e.Nodes[i].Error())
	}
	return b.String()
}

// Unwrap returns Reason followed by the node errors.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 1+len(e.Nodes))
	errs = append(errs, e.Reason)
	for i := range e.Nodes {
		errs = append(errs, &e.Nodes[i])
	}
	return errs
}

// FailedNodes returns the names of the nodes that failed.
func (e *Error) FailedNodes() []string {
	names := make([]string, len(e.Nodes))
	for i := range e.Nodes {
		names[i] = e.Nodes[i].Node
	}
	return names
}

// Options configures a Redlock. The zero value selects every default.
type Options struct {
	// Clock measures elapsed time and validity, bounds node calls and times
	// the waits between tries; nil selects the real clock. A
	// lockapi.Client over the Redlock uses it too (Redlock is a
	// lockapi.Clocker).
	Clock clock.Clock
	// NodeTimeout bounds each node call. It should be well below the TTLs
	// in use (the Redis page suggests 5-50 ms for a 10 s TTL): a slow node
	// then only costs its vote. 0 selects ttl/10 capped at 500ms per call.
	NodeTimeout time.Duration
	// DriftFactor and DriftMin set the clock drift allowance to
	// ttl*DriftFactor + DriftMin. 0 selects 0.01 and 2ms; DriftFactor must
	// be in [0, 0.5) and DriftMin not negative.
	DriftFactor float64
	DriftMin    time.Duration
	// Tries bounds the rounds one Acquire makes; 0 selects 3.
	Tries int
	// TryDelayMin and TryDelayMax bound the uniformly random wait between
	// rounds, so that clients that split the votes desynchronise. Both 0
	// select 10ms and 50ms; a TryDelayMax of 0 alone selects TryDelayMin.
	TryDelayMin, TryDelayMax time.Duration
	// MaxExtensions caps the successful Refresh calls per acquisition; 0
	// means no cap.
	MaxExtensions int
	// Names names the nodes in errors, in order; nil selects "node0",
	// "node1", ...
	Names []string
}

// Redlock is a lock over a majority of independent Backends; see the
// package doc. It is safe for concurrent use. It does not own the Backends
// and has nothing to close.
type Redlock struct {
	nodes         []lockapi.Backend
	names         []string
	quorum        int
	clock         clock.Clock // nil: the real clock
	time          *clock.Time // reads clock
	nodeTimeout   time.Duration
	driftFactor   float64
	driftMin      time.Duration
	tries         int
	retryMin      time.Duration
	retryMax      time.Duration
	maxExtensions int

	mu      sync.Mutex
	held    map[heldKey]*holding // guarded by mu: acquisitions made here
	pruneAt int                  // guarded by mu: len(held) that triggers a sweep
}

type heldKey struct{ key, value string }

// holding is what this Redlock knows of one acquisition it made.
type holding struct {
	validUntil time.Time // on r.time; the lock is safe to use before it
	extensions int
}

// New returns a Redlock over nodes configured by opts. Errors:
// ErrInvalidConfig.
func New(nodes []lockapi.Backend, opts Options) (*Redlock, error) {
	r := &Redlock{
		nodes:         slices.Clone(nodes),
		names:         slices.Clone(opts.Names),
		clock:         opts.Clock,
		nodeTimeout:   opts.NodeTimeout,
		driftFactor:   opts.DriftFactor,
		driftMin:      opts.DriftMin,
		tries:         opts.Tries,
		retryMin:      opts.TryDelayMin,
		retryMax:      opts.TryDelayMax,
		maxExtensions: opts.MaxExtensions,
		held:          make(map[heldKey]*holding),
		pruneAt:       64,
	}
	if clock.IsReal(r.clock) {
		r.clock = nil
	}
	r.time = clock.NewTime(r.clock)
	if r.driftFactor == 0 {
		r.driftFactor = 0.01
	}
	if r.driftMin == 0 {
		r.driftMin = 2 * time.Millisecond
	}
	if r.tries == 0 {
		r.tries = 3
	}
	switch {
	case r.retryMin == 0 && r.retryMax == 0:
		r.retryMin, r.retryMax = 10*time.Millisecond, 50*time.Millisecond
	case r.retryMax == 0:
		r.retryMax = r.retryMin
	}
	switch {
	case len(nodes) == 0:
		return nil, fmt.Errorf("%w: no nodes", ErrInvalidConfig)
	case slices.Contains(r.nodes, nil):
		return nil, fmt.Errorf("%w: nil node", ErrInvalidConfig)
	case r.nodeTimeout < 0:
		return nil, fmt.Errorf("%w: negative node timeout", ErrInvalidConfig)
	case !(r.driftFactor >= 0 && r.driftFactor < 0.5) || r.driftMin < 0:
		return nil, fmt.Errorf("%w: drift factor must be in [0, 0.5) and min >= 0", ErrInvalidConfig)
	case r.tries < 1 || r.retryMin < 0 || r.retryMax < r.retryMin:
		return nil, fmt.Errorf("%w: need Tries >= 0 and 0 <= TryDelayMin <= TryDelayMax", ErrInvalidConfig)
	case r.maxExtensions < 0:
		return nil, fmt.Errorf("%w: negative extension cap", ErrInvalidConfig)
	case r.names != nil && len(r.names) != len(nodes):
		return nil, fmt.Errorf("%w: %d names for %d nodes", ErrInvalidConfig, len(r.names), len(nodes))
	}
	if r.names == nil {
		r.names = make([]string, len(nodes))
		for i := range r.names {
			r.names[i] = fmt.Sprintf("node%d", i)
		}
	}
	r.quorum = len(nodes)/2 + 1
	return r, nil
}

// Clock returns the Redlock's clock (nil: the real clock), so that a
// lockapi.Client over it measures leases on the same clock.
func (r *Redlock) Clock() clock.Clock { return r.clock }

// Quorum returns the number of nodes a call needs: N/2 + 1.
func (r *Redlock) Quorum() int { return r.quorum }

// checkTTL returns an error wrapping ErrInvalidTTL for a ttl out of range
// or with no validity left after the drift allowance.
func (r *Redlock) checkTTL(ttl time.Duration) error {
	switch {
	case ttl < lockapi.MinTTL || ttl > lockapi.MaxTTL:
		return fmt.Errorf("%w: %v outside [%v, %v]", ErrInvalidTTL, ttl, lockapi.MinTTL, lockapi.MaxTTL)
	case ttl <= r.drift(ttl):
		return fmt.Errorf("%w: %v is not above the drift allowance %v", ErrInvalidTTL, ttl, r.drift(ttl))
	}
	return nil
}

// drift returns the clock drift allowance for ttl.
func (r *Redlock) drift(ttl time.Duration) time.Duration {
	return time.Duration(float64(ttl)*r.driftFactor) + r.driftMin
}

func (r *Redlock) timeout(ttl time.Duration) time.Duration {
	if r.nodeTimeout > 0 {
		return r.nodeTimeout
	}
	return min(ttl/10, 500*time.Millisecond)
}

// reply is one node's answer in a round.
type reply struct {
	ok  bool
	ttl time.Duration
	err error
}

// round calls fn on every node in parallel under one deadline (all calls
// start together, so one context serves them all), the first node on the
// calling goroutine, and returns the replies in node order once all have
// answered. A yes that races with the deadline still counts: the validity
// check measures the whole round, so a late answer can only shorten the
// validity.
func (r *Redlock) round(ctx context.Context, timeout time.Duration, fn func(ctx context.Context, b lockapi.Backend) reply) []reply {
	replies := make([]reply, len(r.nodes))
	rctx, cancel := clock.WithTimeout(ctx, r.clock, timeout)
	defer cancel()
	var wg sync.WaitGroup
	for i := 1; i < len(r.nodes); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = fn(rctx, r.nodes[i])
		}()
	}
	replies[0] = fn(rctx, r.nodes[0])
	wg.Wait()
	return replies
}

// tally counts a round's answers.
func (r *Redlock) tally(op, key string, replies []reply) (granted, refused int, failure *Error) {
	var nodes []NodeError
	for i, rep := range replies {
		switch {
		case rep.err != nil:
			nodes = append(nodes, NodeError{Node: r.names[i], Err: rep.err})
		case rep.ok:
			granted++
		default:
			refused++
		}
	}
	if len(nodes) > 0 {
		failure = &Error{Op: op, Key: key, Quorum: r.quorum, Granted: granted, Reason: ErrNoQuorum, Nodes: nodes}
	}
	return granted, refused, failure
}

// releaseAll deletes value on every node, best effort: it runs even when
// ctx is already cancelled, each node bounded by the node timeout.
func (r *Redlock) releaseAll(ctx context.Context, key, value string, timeout time.Duration) []reply {
	return r.round(context.WithoutCancel(ctx), timeout, func(ctx context.Context, b lockapi.Backend) reply {
		ok, err := b.Release(ctx, key, value)
		return reply{ok: ok, err: err}
	})
}

// Acquire acquires key with value on a majority of nodes, as described in
// the package doc, and returns fence 0: Redlock has no fencing tokens. ok is
// false, with a nil error, when a majority answered that the key is held by
// someone else, or when the votes stayed split for every try. Errors:
// ErrInvalidTTL; an *Error (ErrNoQuorum naming the failed nodes, or
// ErrValidityExpired) from the last try; ctx's error when it ends while
// waiting to retry. On every failure that may have stored the value
// somewhere, it was released on all nodes. value must be unique to this
// acquisition (lockapi.Client's tokens are).
func (r *Redlock) Acquire(ctx context.Context, key, value string, ttl time.Duration) (fence int64, ok bool, err error) {
	if err := r.checkTTL(ttl); err != nil {
		return 0, false, err
	}
	drift := r.drift(ttl)
	timeout := r.timeout(ttl)
	for try := 1; ; try++ {
		if err := ctx.Err(); err != nil {
			return 0, false, fmt.Errorf("redlock: acquire: %w", err)
		}
		start := r.time.Now()
		replies := r.round(ctx, timeout, func(ctx context.Context, b lockapi.Backend) reply {
			_, ok, err := b.Acquire(ctx, key, value, ttl)
			return reply{ok: ok, err: err}
		})
		validity := ttl - r.time.Now().Sub(start) - drift
		granted, refused, failure := r.tally("acquire", key, replies)
		if granted >= r.quorum && validity > 0 {
			r.remember(key, value, start.Add(ttl-drift), r.time.Now())
			return 0, true, nil
		}
		if granted > 0 || failure != nil {
			// Nodes that timed out may have stored the value late. A value
			// refused everywhere is left alone: it may be a holder's own
			// (Acquire again with the value held must not release it).
			r.releaseAll(ctx, key, value, timeout)
		}
		if refused >= r.quorum {
			return 0, false, nil // held elsewhere: waiting is the caller's business
		}
		var last error
		switch {
		case granted >= r.quorum:
			last = &Error{Op: "acquire", Key: key, Quorum: r.quorum, Granted: granted, Reason: ErrValidityExpired}
			if failure != nil {
				last.(*Error).Nodes = failure.Nodes
			}
		case failure != nil && len(r.nodes)-len(failure.Nodes) < r.quorum:
			last = failure // too few nodes answered for any majority
		}
		if try >= r.tries {
			if last != nil {
				return 0, false, last
			}
			return 0, false, nil
		}
		if err := r.wait(ctx); err != nil {
			if last != nil {
				return 0, false, fmt.Errorf("redlock: acquire: %w: %w", err, last)
			}
			return 0, false, fmt.Errorf("redlock: acquire: %w", err)
		}
	}
}

// wait sleeps a random retry delay on the clock, or until ctx ends.
func (r *Redlock) wait(ctx context.Context) error {
	d := r.retryMin
	if r.retryMax > r.retryMin {
		d += rand.N(r.retryMax - r.retryMin + 1)
	}
	t := clock.NewTimer(r.clock, d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// remember records a successful acquisition, pruning the records expired
// at now (read before locking: the clock is never read under r.mu) when the
// map has doubled since the last sweep.
func (r *Redlock) remember(key, value string, validUntil, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held[heldKey{key, value}] = &holding{validUntil: validUntil}
	if len(r.held) >= r.pruneAt {
		r.pruneLocked(now)
	}
}

func (r *Redlock) pruneLocked(now time.Time) {
	for k, h := range r.held {
		if !now.Before(h.validUntil) {
			delete(r.held, k)
		}
	}
	r.pruneAt = max(64, 2*len(r.held))
}

// lookup returns a copy of the record of (key, value), if any.
func (r *Redlock) lookup(key, value string) (holding, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	h, ok := r.held[heldKey{key, value}]
	if !ok {
		return holding{}, false
	}
	return *h, true
}

func (r *Redlock) forget(key, value string) {
	r.mu.Lock()
	delete(r.held, heldKey{key, value})
	r.mu.Unlock()
}

// Release deletes value at key on every node. ok is true when a majority
// held it and, for an acquisition made by this Redlock, its validity had not
// yet run out. Errors: an *Error wrapping ErrNoQuorum when failed nodes
// leave it unknown whether a majority held it.
func (r *Redlock) Release(ctx context.Context, key, value string) (ok bool, err error) {
	h, known := r.lookup(key, value)
	r.forget(key, value)
	replies := r.releaseAll(ctx, key, value, r.untimedTimeout())
	now := r.time.Now()
	granted, _, failure := r.tally("release", key, replies)
	if granted >= r.quorum {
		return !known || now.Before(h.validUntil), nil
	}
	if failure != nil && granted+len(failure.Nodes) >= r.quorum {
		return false, failure
	}
	return false, nil
}

// untimedTimeout bounds the node calls of Release and PTTL, which get no
// ttl: Options.NodeTimeout, or the 500ms cap of the default.
func (r *Redlock) untimedTimeout() time.Duration {
	if r.nodeTimeout > 0 {
		return r.nodeTimeout
	}
	return 500 * time.Millisecond
}

// Refresh extends value at key to ttl on every node. It succeeds when a
// majority still held the value, answered before the current validity ran
// out (for an acquisition made here), and ttl - elapsed - drift is
// positive; the validity then ends ttl - drift after the call started. ok false means the lock is lost: the
// value is then released on every node. Errors: ErrInvalidTTL and
// ErrExtensionLimit (nothing sent); an *Error when failed nodes leave the
// outcome open, in which case the previous validity still stands and the
// call may be retried.
func (r *Redlock) Refresh(ctx context.Context, key, value string, ttl time.Duration) (ok bool, err error) {
	if err := r.checkTTL(ttl); err != nil {
		return false, err
	}
	h, known := r.lookup(key, value)
	if known && r.maxExtensions > 0 && h.extensions >= r.maxExtensions {
		return false, fmt.Errorf("%w: %q extended %d times", ErrExtensionLimit, key, h.extensions)
	}
	drift := r.drift(ttl)
	timeout := r.timeout(ttl)
	start := r.time.Now()
	if known && !start.Before(h.validUntil) {
		r.forget(key, value)
		r.releaseAll(ctx, key, value, timeout)
		return false, nil
	}
	replies := r.round(ctx, timeout, func(ctx context.Context, b lockapi.Backend) reply {
		ok, err := b.Refresh(ctx, key, value, ttl)
		return reply{ok: ok, err: err}
	})
	end := r.time.Now()
	granted, _, failure := r.tally("refresh", key, replies)
	inTime := ttl-end.Sub(start)-drift > 0 && (!known || end.Before(h.validUntil))
	if granted >= r.quorum && inTime {
		r.mu.Lock()
		if cur, ok := r.held[heldKey{key, value}]; ok {
			cur.validUntil = start.Add(ttl - drift)
			cur.extensions++
		} else {
			r.held[heldKey{key, value}] = &holding{validUntil: start.Add(ttl - drift), extensions: 1}
		}
		r.mu.Unlock()
		return true, nil
	}
	if inTime && failure != nil && granted+len(failure.Nodes) >= r.quorum {
		return false, failure // open: the old validity still stands
	}
	r.forget(key, value)
	r.releaseAll(ctx, key, value, timeout)
	if granted >= r.quorum {
		return false, &Error{Op: "refresh", Key: key, Quorum: r.quorum, Granted: granted, Reason: ErrValidityExpired}
	}
	return false, nil
}

// PTTL returns the remaining validity of value at key: the smaller of this
// Redlock's own validity for the acquisition (when it made it) and the time
// until fewer than a majority of nodes would still hold it, less elapsed
// time and drift. ok is false when fewer than a majority hold the value or
// the validity has run out. Errors: an *Error when failed nodes leave it
// open.
func (r *Redlock) PTTL(ctx context.Context, key, value string) (ttl time.Duration, ok bool, err error) {
	h, known := r.lookup(key, value)
	start := r.time.Now()
	replies := r.round(ctx, r.untimedTimeout(), func(ctx context.Context, b lockapi.Backend) reply {
		ttl, ok, err := b.PTTL(ctx, key, value)
		return reply{ok: ok, ttl: ttl, err: err}
	})
	now := r.time.Now()
	granted, _, failure := r.tally("pttl", key, replies)
	if granted < r.quorum {
		if failure != nil && granted+len(failure.Nodes) >= r.quorum {
			return 0, false, failure
		}
		return 0, false, nil
	}
	ttls := make([]time.Duration, 0, granted)
	for _, rep := range replies {
		if rep.err == nil && rep.ok {
			if rep.ttl < 0 { // no TTL on that node: it never expires there
				rep.ttl = math.MaxInt64
			}
			ttls = append(ttls, rep.ttl)
		}
	}
	slices.Sort(ttls)
	// The majority holds until the quorum-th longest TTL runs out.
	q := ttls[len(ttls)-r.quorum]
	remaining := q
	if q != math.MaxInt64 {
		remaining = q - r.drift(q) - now.Sub(start)
	}
	if known {
		remaining = min(remaining, h.validUntil.Sub(now))
	}
	if remaining <= 0 {
		return 0, false, nil
	}
	return remaining, true, nil
}
