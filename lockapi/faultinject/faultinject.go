// Package faultinject wraps a lockapi.Backend to inject failures, for tests
// of code that uses locks: errors per operation (for the next N calls or
// with a probability), added latency (on an injectable clock, cut short by
// ctx), and lost replies (the operation is applied, but the caller gets an
// error, as when a network drops the response).
//
// Faults are rules set per operation with Inject; a call consults its
// operation's rule, and a rule with Next > 0 expires after that many hits.
// Latency is added before the call reaches the wrapped backend.
package faultinject

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/nxkv/nxkv/clock"
	"github.com/nxkv/nxkv/lockapi"
)

// ErrInjected is the error an injected fault returns when Fault.Err is nil.
var ErrInjected = errors.New("faultinject: injected fault")

// Op names a Backend operation.
type Op uint8

// The operations of lockapi.Backend.
const (
	Acquire Op = iota
	Release
	Refresh
	PTTL
	numOps
)

// String returns the operation's name, as in lockapi.Backend.
func (o Op) String() string {
	switch o {
	case Acquire:
		return "Acquire"
	case Release:
		return "Release"
	case Refresh:
		return "Refresh"
	case PTTL:
		return "PTTL"
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// Fault is what happens to calls of one operation. The zero Fault is a
// plain error (ErrInjected) on every call.
type Fault struct {
	// Err is the error returned; nil means ErrInjected. It is not used
	// when only Latency is set and NoError is true.
	Err error
	// NoError makes the call succeed (after Latency): a latency-only fault.
	NoError bool
	// LostReply applies the operation at the wrapped backend, then
	// discards its result and returns the error.
	LostReply bool
	// Latency is added before the call, on the Backend's clock; if ctx ends
	// first the call returns ctx.Err() without reaching the backend.
	Latency time.Duration
	// Next limits the fault to the next Next hits; 0 means no limit.
	Next int
	// Probability is the chance that a call is hit, in (0, 1]; 0 means 1.
	Probability float64
}

// Options configures a Backend. The zero value selects every default.
type Options struct {
	// Clock times Latency faults; nil selects the wrapped backend's clock
	// when it has one (it implements lockapi.Clocker), else the real clock.
	Clock clock.Clock
	// Seed seeds the generator deciding Probability faults, for
	// reproducible runs; 0 selects a fixed default seed.
	Seed uint64
	// OnCall, if not nil, is called after every call with its operation
	// and returned error (for tests to follow what the client does). It
	// must not call back into the Backend.
	OnCall func(op Op, err error)
}

// Backend is a fault-injecting lockapi.Backend. It offers every lockapi
// primitive too, faulting their calls by the rule of the operation they
// resemble: every acquisition (AcquireSlot, AcquireRead, AcquireWrite,
// AcquireAll, AcquireReentrant) by Acquire's, ReleaseAll, ReleaseReentrant
// and Abandon by Release's, RefreshAll and RefreshReentrant by Refresh's,
// PTTLAll and PTTLReentrant by PTTL's; a primitive the wrapped backend lacks fails, without
// being counted, with an error matching errors.ErrUnsupported. It is safe
// for concurrent use.
type Backend struct {
	inner  lockapi.Backend
	clock  clock.Clock // nil: the real clock
	onCall func(Op, error)

	mu    sync.Mutex
	rules [numOps]*Fault // guarded by mu; nil means no fault
	rng   *rand.Rand     // guarded by mu
	calls [numOps]int    // guarded by mu
	hits  [numOps]int    // guarded by mu
}

var (
	_ lockapi.Backend = (*Backend)(nil)
	_ lockapi.Clocker = (*Backend)(nil)
)

// New wraps b. It panics if b is nil. The result does not implement
// lockapi.Watcher even when b does; use NewWatcher to keep watching.
func New(b lockapi.Backend, opts Options) *Backend {
	if b == nil {
		panic("faultinject: New with a nil Backend")
	}
	f := &Backend{inner: b, clock: opts.Clock, onCall: opts.OnCall}
	if f.clock == nil {
		if cl, ok := b.(lockapi.Clocker); ok {
			f.clock = cl.Clock()
		}
	}
	seed := opts.Seed
	if seed == 0 {
		seed = 0x6e786b76 // "nxkv"
	}
	f.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return f
}

// Clock returns the clock that times Latency faults (nil: the real clock),
// so that a lockapi.Client over the Backend waits on the same clock.
func (b *Backend) Clock() clock.Clock { return b.clock }

// WatchBackend is a fault-injecting Backend that passes Watch through to the
// wrapped backend (watches themselves are not faulted).
type WatchBackend struct {
	*Backend
	w lockapi.Watcher
}

var _ lockapi.Watcher = (*WatchBackend)(nil)

// NewWatcher wraps a Backend that is also a Watcher.
func NewWatcher(b interface {
	lockapi.Backend
	lockapi.Watcher
}, opts Options) *WatchBackend {
	return &WatchBackend{Backend: New(b, opts), w: b}
}

// Watch calls the wrapped backend's Watch.
func (w *WatchBackend) Watch(key string) (<-chan struct{}, func()) { return w.w.Watch(key) }

// Inject sets the fault of op, replacing any previous one.
func (b *Backend) Inject(op Op, f Fault) {
	if op >= numOps {
		panic(fmt.Sprintf("faultinject: Inject(%v)", op))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rules[op] = &f
}

// Clear removes every fault.
func (b *Backend) Clear() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.rules = [numOps]*Fault{}
}

// Calls returns how many calls of op were made, faulted or not.
func (b *Backend) Calls(op Op) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls[op]
}

// Hits returns how many calls of op were faulted.
func (b *Backend) Hits(op Op) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hits[op]
}

// fault counts a call of op and returns the fault hitting it, if any.
func (b *Backend) fault(op Op) (Fault, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls[op]++
	r := b.rules[op]
	if r == nil {
		return Fault{}, false
	}
	if r.Probability > 0 && r.Probability < 1 && b.rng.Float64() >= r.Probability {
		return Fault{}, false
	}
	b.hits[op]++
	if r.Next > 0 {
		r.Next--
		if r.Next == 0 {
			b.rules[op] = nil
		}
	}
	return *r, true
}

// before applies the fault's latency and reports whether the call goes on
// to the wrapped backend, and the error to return instead.
func (b *Backend) before(ctx context.Context, f Fault, hit bool) (proceed bool, err error) {
	if !hit {
		return true, nil
	}
	if f.Latency > 0 {
		t := clock.NewTimer(b.clock, f.Latency)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		}
	}
	if f.NoError {
		return true, nil
	}
	if f.Err == nil {
		f.Err = ErrInjected
	}
	return f.LostReply, f.Err
}

func (b *Backend) done(op Op, err error) {
	if b.onCall != nil {
		b.onCall(op, err)
	}
}

// Acquire calls the wrapped Acquire, subject to the Acquire fault.
func (b *Backend) Acquire(ctx context.Context, key, value string, ttl time.Duration) (fence int64, ok bool, err error) {
	r, err := faulted(ctx, b, Acquire, func() (acquired, error) {
		f, ok, err := b.inner.Acquire(ctx, key, value, ttl)
		return acquired{fence: f, ok: ok}, err
	})
	return r.fence, r.ok, err
}

// Release calls the wrapped Release, subject to the Release fault.
func (b *Backend) Release(ctx context.Context, key, value string) (ok bool, err error) {
	return faulted(ctx, b, Release, func() (bool, error) { return b.inner.Release(ctx, key, value) })
}

// Refresh calls the wrapped Refresh, subject to the Refresh fault.
func (b *Backend) Refresh(ctx context.Context, key, value string, ttl time.Duration) (ok bool, err error) {
	return faulted(ctx, b, Refresh, func() (bool, error) { return b.inner.Refresh(ctx, key, value, ttl) })
}

// PTTL calls the wrapped PTTL, subject to the PTTL fault.
func (b *Backend) PTTL(ctx context.Context, key, value string) (ttl time.Duration, ok bool, err error) {
	r, err := faulted(ctx, b, PTTL, func() (acquired, error) {
		d, ok, err := b.inner.PTTL(ctx, key, value)
		return acquired{fence: int64(d), ok: ok}, err
	})
	return time.Duration(r.fence), r.ok, err
}
