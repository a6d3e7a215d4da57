package lockapi

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nxkv/nxkv/clock"
)

// Lock is one acquisition, a lease: of a key (Client.Obtain), of one of a
// semaphore's slots (Semaphore.Obtain), of a read-write lock for reading or
// writing (RWMutex), or of several keys at once (Client.ObtainAll); Kind
// says which. Its methods are safe for concurrent use. Release it when done; a Lock that is never
// released expires at the backend after its TTL (but a watchdog keeps it
// alive until Release).
type Lock struct {
	c        *Client
	key      string // the key, or the primitive's name
	value    string // token + metadata, as stored
	fence    int64
	acquired int64 // Client.time.Nano() at the acquisition if it was timed, else 0
	p        prim  // nil for a plain mutex lock; immutable after Obtain

	// Packed into one word, so that a Lock fits the 128-byte size class.
	tokLen    int32 // the token is value[:tokLen]
	kind      Kind  // immutable
	released  bool  // guarded by mu: a Release succeeded or found the lock gone
	releasing bool  // guarded by mu: a Release is in progress
	watchdog  bool  // immutable: x.refresh is set and a watchdog runs

	tok [TokenLen]byte // backing array of a generated token; never written after Obtain

	mu sync.Mutex
	x  *lockExtra // guarded by mu; nil until needed, so a plain Obtain+Release stays small
}

// lockExtra is the state of a Lock that uses Lost or a watchdog.
type lockExtra struct {
	refresh     AutoRefresh                           // watchdog settings; immutable
	lostErr     error                                 // guarded by Lock.mu: why the lock was lost, nil while not lost
	lease       lease                                 // guarded by Lock.mu: the validity the backend granted, tracked with a watchdog
	kick        chan struct{}                         // with a watchdog: signals the monitor that lease.end moved; buffered
	lost        chan struct{}                         // guarded by Lock.mu: created by Lost, closed on loss
	monitorOn   bool                                  // guarded by Lock.mu: the monitor goroutine runs
	cancels     map[*context.CancelCauseFunc]struct{} // guarded by Lock.mu: live contexts from Lock.Context
	stopMonitor context.CancelFunc                    // guarded by Lock.mu: cancels the monitor's ctx
	monitorDone chan struct{}                         // guarded by Lock.mu: closed when the monitor exits
	inEvent     bool                                  // guarded by Lock.mu: the monitor is in Options.OnEvent (see monitorEvent)
	releaseDone chan struct{}                         // guarded by Lock.mu: created by a Release waiting for another; closed when that one ends
}

// lostErrLocked returns why the lock was lost, or nil.
func (l *Lock) lostErrLocked() error {
	if l.x == nil {
		return nil
	}
	return l.x.lostErr
}

// extraLocked returns l.x, creating it.
func (l *Lock) extraLocked() *lockExtra {
	if l.x == nil {
		l.x = new(lockExtra)
	}
	return l.x
}

// Key returns the locked key; for a semaphore or read-write lease, the
// semaphore's or lock's name; for a multi-key lock, its keys joined by
// commas (Keys returns them).
func (l *Lock) Key() string { return l.key }

// Keys returns the locked keys: the keys of a multi-key lock, in the order
// given to ObtainAll, and otherwise Key alone.
func (l *Lock) Keys() []string {
	if m, ok := l.p.(*multiLease); ok {
		return slices.Clone(m.keys)
	}
	return []string{l.key}
}

// Kind returns what the Lock is a lease of.
func (l *Lock) Kind() Kind { return l.kind }

// Holds returns, for a reentrant lock (ObtainOptions.Reentrant), how many
// holds its owner had right after this acquisition, this one included;
// for every other Lock, 1.
func (l *Lock) Holds() int {
	if r, ok := l.p.(*reentrantLease); ok {
		return r.holds
	}
	return 1
}

// Token returns the token of this acquisition.
func (l *Lock) Token() string { return l.value[:l.tokLen] }

// Metadata returns the metadata stored after the token
// (ObtainOptions.Metadata), or "".
func (l *Lock) Metadata() string { return l.value[l.tokLen:] }

// Fence returns the fencing token of this acquisition, and false when the
// backend gives none (see Backend.Acquire). A semaphore's and a read-write
// lock's tokens increase across all their leases; a reentrant lock's holds
// share the first hold's token; a multi-key lock has one per key (Fences),
// and Fence returns the first key's.
func (l *Lock) Fence() (int64, bool) { return l.fence, l.fence != 0 }

// Fences returns the fencing token of each key, in the order of Keys, or
// nil when the backend gives none.
func (l *Lock) Fences() []int64 {
	if m, ok := l.p.(*multiLease); ok {
		return slices.Clone(m.fences)
	}
	if l.fence == 0 {
		return nil
	}
	return []int64{l.fence}
}

// queueKey names l's FIFO queue and its waiter count.
func (l *Lock) queueKey() string {
	if l.p != nil {
		return l.p.queueKey()
	}
	return mutexQueue(l.key)
}

// mutexQueue is the FIFO queue key of mutex key: the key itself, unless
// it begins with NUL like the primitives' queue keys (primQueue), which
// it then must not equal.
func mutexQueue(key string) string {
	if strings.HasPrefix(key, "\x00") {
		return "\x00m" + key
	}
	return key
}

// primQueue is the FIFO queue key of a primitive of kind called name: NUL
// and the kind's digit before the name, so that queue keys of different
// kinds, and mutexes' (mutexQueue), never collide.
func primQueue(kind Kind, name string) string {
	return "\x00" + string(rune('0'+kind)) + name
}

// The backend calls on l's lease.

func (l *Lock) releaseCall(ctx context.Context) (bool, error) {
	if l.p != nil {
		return l.p.release(ctx, l)
	}
	return l.c.b.Release(ctx, l.key, l.value)
}

func (l *Lock) refreshCall(ctx context.Context, ttl time.Duration) (bool, error) {
	if l.p != nil {
		return l.p.refresh(ctx, l, ttl)
	}
	return l.c.b.Refresh(ctx, l.key, l.value, ttl)
}

func (l *Lock) pttlCall(ctx context.Context) (time.Duration, bool, error) {
	if l.p != nil {
		return l.p.pttl(ctx, l)
	}
	return l.c.b.PTTL(ctx, l.key, l.value)
}

// watch arms the loss monitor's watch on the keys of l's lease.
func (l *Lock) watch() (<-chan struct{}, func()) {
	if l.p != nil {
		return watchAll(l.c.w, l.p.watchKeys())
	}
	return l.c.w.Watch(l.key)
}

// Release deletes the lock if this acquisition still holds it. It returns an
// error wrapping ErrNotHeld when the lock had expired or been taken (the
// lock is then also marked lost, nothing is deleted), when it was already
// released, or when it was known lost before (Release then still deletes
// the key if it holds this acquisition's value, which is always safe; a
// reentrant hold removes only itself, never another hold of its owner).
// Release first stops the watchdog and the loss monitor, even if the
// backend call then fails or ctx has already ended (the key is then left to
// expire at its TTL); a Release that failed with a backend or ctx error
// may be retried. Concurrent Release calls on one Lock take turns: a second
// waits for the first's outcome (or its own ctx) and then reports
// ErrNotHeld ("already released") if the first succeeded, so a successful
// Release is never taken for a loss. Errors wrap ctx.Err() when ctx ended;
// a backend failure wraps the backend's error and never matches ErrNotHeld.
func (l *Lock) Release(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		// The backend is out of reach, but the lease's upkeep ends here
		// all the same: a watchdog left running would keep the lock for
		// ever after a deferred Release with a request's ended context.
		l.mu.Lock()
		done := l.haltMonitorLocked()
		l.mu.Unlock()
		if done != nil {
			<-done
		}
		return newError("release", l.key, nil, "", err)
	}
	l.mu.Lock()
	for l.releasing {
		// Another Release is in flight: wait for its outcome, so that its
		// success is never mistaken for a loss by this one.
		x := l.extraLocked()
		if x.releaseDone == nil {
			x.releaseDone = make(chan struct{})
		}
		wait := x.releaseDone
		l.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return newError("release", l.key, nil, "", ctx.Err())
		}
		l.mu.Lock()
	}
	if l.released {
		l.mu.Unlock()
		return newError("release", l.key, ErrNotHeld, "already released", nil)
	}
	l.releasing = true
	lostErr := l.lostErrLocked()
	done := l.haltMonitorLocked()
	l.mu.Unlock()
	if done != nil {
		<-done
	}
	var (
		ok  bool
		err error
	)
	ok, err = l.releaseCall(ctx)
	l.mu.Lock()
	l.releasing = false
	if x := l.x; x != nil && x.releaseDone != nil {
		close(x.releaseDone)
		x.releaseDone = nil
	}
	if err != nil {
		l.mu.Unlock()
		return newError("release", l.key, nil, "", withCtx(err, ctx.Err()))
	}
	var lossErr error
	if !ok {
		lossErr = l.loseLocked(ErrNotHeld)
	}
	l.released = true
	l.cancelContextsLocked(ErrReleased)
	l.mu.Unlock()
	switch {
	case lossErr != nil:
		l.c.noteLoss(l, ErrNotHeld, lossErr)
	case ok:
		l.c.noteRelease(l)
	}
	switch {
	case lostErr != nil:
		return newError("release", l.key, ErrNotHeld, "", lostErr)
	case !ok:
		return newError("release", l.key, ErrNotHeld, "", nil)
	}
	return nil
}

// Refresh sets the lock's TTL to ttl if this acquisition still holds it. It
// returns ErrInvalidTTL for ttl <= 0 (nothing touched), an error wrapping
// ErrNotHeld when the lock expired, was taken, released or is known lost
// (the lock is then marked lost; nothing is changed at the backend), and
// wraps ctx.Err() when ctx ended.
func (l *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	if err := checkTTL("refresh", l.key, ttl); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return newError("refresh", l.key, nil, "", err)
	}
	if err := l.heldErr("refresh"); err != nil {
		return err
	}
	if l.watchdog {
		l.leaseSend(l.c.time.Now(), ttl)
	}
	ok, err := l.refreshCall(ctx, ttl)
	if l.watchdog {
		l.leaseDone(err == nil && ok)
	}
	if err != nil {
		err = newError("refresh", l.key, nil, "", withCtx(err, ctx.Err()))
		l.c.noteRefreshFailure(l, ttl, err)
		return err
	}
	if !ok {
		err := newError("refresh", l.key, ErrNotHeld, "", nil)
		l.c.noteRefreshFailure(l, ttl, err)
		l.lose(ErrNotHeld)
		return err
	}
	return nil
}

// TTL returns the lock's remaining TTL at the backend, or an error wrapping
// ErrNotHeld when this acquisition no longer holds it (the lock is then
// marked lost). A lock whose TTL was removed by someone else reports -1.
// Errors wrap ctx.Err() when ctx ended.
func (l *Lock) TTL(ctx context.Context) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, newError("ttl", l.key, nil, "", err)
	}
	if err := l.heldErr("ttl"); err != nil {
		return 0, err
	}
	d, ok, err := l.pttlCall(ctx)
	if err != nil {
		return 0, newError("ttl", l.key, nil, "", withCtx(err, ctx.Err()))
	}
	if !ok {
		l.lose(ErrNotHeld)
		return 0, newError("ttl", l.key, ErrNotHeld, "", nil)
	}
	return d, nil
}

// heldErr returns op's error matching ErrNotHeld if the lock is known
// released or lost.
func (l *Lock) heldErr(op string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.released:
		return newError(op, l.key, ErrNotHeld, "released", nil)
	case l.lostErrLocked() != nil:
		return newError(op, l.key, ErrNotHeld, "", l.lostErrLocked())
	}
	return nil
}

// Lost returns a channel closed when the lock is known lost (see the package
// doc). On a Watcher backend the first call starts the loss monitor, so call
// it right after Obtain. After a successful Release the channel is never
// closed.
func (l *Lock) Lost() <-chan struct{} {
	l.mu.Lock()
	x := l.extraLocked()
	if x.lost == nil {
		x.lost = make(chan struct{})
		if x.lostErr != nil {
			close(x.lost)
		}
	}
	var start func()
	if l.c.w != nil {
		start = l.startMonitorLocked()
	}
	ch := x.lost
	l.mu.Unlock()
	if start != nil {
		start()
	}
	return ch
}

// Context returns a context derived from parent that is canceled when the
// lock is lost (context.Cause is then the error Err returns) or released
// (cause ErrReleased), or when parent ends. Work that must stop when the
// lock is gone can run under it. Like Lost, it starts the loss monitor on a
// Watcher backend; elsewhere loss is known only from failed calls and the
// watchdog. Call the returned cancel function when done with the context.
func (l *Lock) Context(parent context.Context) (context.Context, context.CancelFunc) {
	l.Lost()
	ctx, cancel := context.WithCancelCause(parent)
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.lostErrLocked() != nil:
		cancel(l.lostErrLocked())
	case l.released:
		cancel(ErrReleased)
	default:
		x := l.extraLocked()
		if x.cancels == nil {
			x.cancels = make(map[*context.CancelCauseFunc]struct{})
		}
		key := &cancel
		x.cancels[key] = struct{}{}
		return ctx, func() {
			cancel(context.Canceled)
			l.mu.Lock()
			delete(x.cancels, key)
			l.mu.Unlock()
		}
	}
	return ctx, func() { cancel(context.Canceled) }
}

// cancelContextsLocked cancels every context from Context with cause.
func (l *Lock) cancelContextsLocked(cause error) {
	if l.x == nil {
		return
	}
	for cancel := range l.x.cancels {
		(*cancel)(cause)
	}
	l.x.cancels = nil
}

// Err returns nil while the lock is not known lost, and after that an error
// wrapping ErrLost and the cause: ErrNotHeld (expired, deleted, overwritten),
// ErrExtensionsExhausted, or the backend error that kept the watchdog from
// refreshing in time.
func (l *Lock) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lostErrLocked()
}

func (l *Lock) lose(cause error) {
	l.mu.Lock()
	err := l.loseLocked(cause)
	l.mu.Unlock()
	if err != nil {
		l.c.noteLoss(l, cause, err)
	}
}

// lossError is the error of a loss with the given cause: ErrNotHeld (the
// backend no longer holds the value), ErrExtensionsExhausted, or the error
// that kept the watchdog from refreshing in time.
func lossError(key string, cause error) *Error {
	switch cause {
	case ErrNotHeld:
		return &Error{Key: key, kinds: [2]error{ErrLost, ErrNotHeld}, detail: "expired, deleted or taken over"}
	case ErrExtensionsExhausted:
		return &Error{Key: key, kinds: [2]error{ErrLost, ErrExtensionsExhausted}}
	}
	return &Error{Key: key, Err: cause, kinds: [2]error{ErrLost}}
}

// loseLocked records the first loss and returns its error; a loss found
// while releasing or after a Release is no loss, and then, as for a lock
// already lost, it returns nil. The caller reports a loss to the Client
// (noteLoss) after unlocking mu.
func (l *Lock) loseLocked(cause error) error {
	if l.released || l.releasing || l.lostErrLocked() != nil {
		return nil
	}
	err := lossError(l.key, cause)
	l.extraLocked().lostErr = err
	l.cancelContextsLocked(err)
	if x := l.x; x != nil {
		if x.lost != nil {
			close(x.lost)
		}
		if x.stopMonitor != nil {
			x.stopMonitor()
		}
	}
	return err
}

// startMonitorLocked marks the monitor started unless it runs, or the lock
// is released, being released or lost. The caller must call the returned
// function (if not nil) after unlocking mu: on a Watcher backend it arms the
// watch and checks ownership once before the goroutine starts, so that Lost
// is accurate when it returns.
func (l *Lock) startMonitorLocked() (start func()) {
	x := l.extraLocked()
	if x.monitorOn || l.released || l.releasing || x.lostErr != nil {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	x.monitorOn = true
	x.stopMonitor = cancel
	x.monitorDone = done
	return func() {
		var changed <-chan struct{}
		stop := func() {}
		if l.c.w != nil {
			changed, stop = l.watch()
			_, ok, err := l.pttlCall(ctx)
			if ctx.Err() == nil && err == nil && !ok {
				l.lose(ErrNotHeld)
			}
			if ctx.Err() != nil {
				stop()
				close(done)
				return
			}
		}
		go l.monitor(ctx, done, changed, stop)
	}
}

// stopMonitorLocked detaches the monitor; the caller cancels it and waits
// for done outside the lock (the monitor takes mu).
func (l *Lock) stopMonitorLocked() (cancel context.CancelFunc, done chan struct{}) {
	x := l.x
	if x == nil || !x.monitorOn {
		return nil, nil
	}
	cancel, done = x.stopMonitor, x.monitorDone
	x.monitorOn, x.stopMonitor, x.monitorDone = false, nil, nil
	return cancel, done
}

// haltMonitorLocked stops the monitor and returns the channel to wait on
// (after unlocking mu) for it to exit, or nil if there is none to wait for:
// no monitor, or one inside Options.OnEvent, perhaps calling this very
// Release. Such a monitor does nothing more at the backend: it exits when
// the callback returns (see monitorEvent).
func (l *Lock) haltMonitorLocked() (done chan struct{}) {
	cancel, done := l.stopMonitorLocked()
	if cancel == nil {
		return nil
	}
	cancel()
	if l.x.inEvent {
		return nil
	}
	return done
}

// monitorLose is lose for the monitor goroutine, whose loss event may call
// the Lock's methods (see monitorEvent).
func (l *Lock) monitorLose(cause error) {
	var err error
	l.monitorEvent(func() bool {
		err = l.loseLocked(cause)
		return err != nil
	}, func() { l.c.noteLoss(l, cause, err) })
}

// monitorRefreshFailed reports the watchdog's failed refresh, unless a
// Release (which cancels ctx under mu) has begun: then the failure is
// moot, and the event could not be told apart from one after the release.
func (l *Lock) monitorRefreshFailed(ctx context.Context, ttl time.Duration, err error) {
	l.monitorEvent(func() bool { return ctx.Err() == nil }, func() { l.c.noteRefreshFailure(l, ttl, err) })
}

// monitorEvent runs emit, which reports an event of the monitor goroutine
// to Options.OnEvent, if happened (called with mu held) says there is one.
// While emit runs, Release does not wait for the monitor to exit, so the
// callback may release the lock.
func (l *Lock) monitorEvent(happened func() bool, emit func()) {
	l.mu.Lock()
	if !happened() {
		l.mu.Unlock()
		return
	}
	l.x.inEvent = true
	l.mu.Unlock()
	emit()
	l.mu.Lock()
	l.x.inEvent = false
	l.mu.Unlock()
}

// leaseSend records, with a watchdog, a granting call for ttl about to be
// sent at start (see lease), and wakes the monitor if the lease's end moved.
func (l *Lock) leaseSend(start time.Time, ttl time.Duration) {
	l.mu.Lock()
	moved := l.x.lease.send(start, ttl)
	l.mu.Unlock()
	if moved {
		l.kickMonitor()
	}
}

// leaseDone records the answer to a call recorded by leaseSend.
func (l *Lock) leaseDone(granted bool) {
	l.mu.Lock()
	moved := l.x.lease.done(granted)
	l.mu.Unlock()
	if moved {
		l.kickMonitor()
	}
}

func (l *Lock) kickMonitor() {
	select {
	case l.x.kick <- struct{}{}:
	default:
	}
}

// leaseEnd returns the end of the lease, with a watchdog.
func (l *Lock) leaseEnd() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.x.lease.end
}

// errValidityEnded is the cause of a loss when the lease ended with no
// refresh error to blame.
var errValidityEnded = errors.New("the lease ended before the watchdog refreshed it")

// monitor is the Lock's goroutine: on a Watcher backend it re-checks
// ownership after every change of the key (changed is the watch armed by
// startMonitorLocked), and with a watchdog it refreshes the lock and
// declares it lost when its lease ends. It exits when ctx is canceled
// (Release, loss) or on loss.
func (l *Lock) monitor(ctx context.Context, done chan struct{}, changed <-chan struct{}, stop func()) {
	defer close(done)
	c := l.c
	defer func() { stop() }()
	l.mu.Lock()
	x := l.x // never replaced once set
	l.mu.Unlock()

	var (
		timer       *clock.Timer
		timerAt     time.Time // when timer fires; zero when none is armed
		nextRefresh time.Time
		extensions  int
		exhausted   bool
		lastErr     error // the last watchdog refresh error
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	if l.watchdog {
		nextRefresh = c.time.Now().Add(x.refresh.Interval)
	}
	for {
		if c.w != nil && changed == nil {
			changed, stop = l.watch()
			var ok bool
			err := l.bounded(ctx, "check", func(ctx context.Context) error {
				var err error
				_, ok, err = l.pttlCall(ctx)
				return err
			})
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, errLeaseEnded) {
				l.monitorLose(l.endedCause(lastErr)) // a no-op if bounded declared it
				return
			}
			if err == nil && !ok {
				l.monitorLose(ErrNotHeld)
				return
			}
		}
		var wake <-chan time.Time
		if l.watchdog {
			now := c.time.Now()
			end := l.leaseEnd()
			if !now.Before(end) {
				if exhausted {
					l.monitorLose(ErrExtensionsExhausted)
				} else {
					l.monitorLose(l.endedCause(lastErr))
				}
				return
			}
			at := end
			if !exhausted && nextRefresh.Before(at) {
				at = nextRefresh
			}
			if !at.Equal(timerAt) {
				if timer != nil {
					timer.Stop()
				}
				timer, timerAt = clock.NewTimer(c.clock, at.Sub(now)), at
			}
			wake = timer.C
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
			stop()
			changed, stop = nil, func() {}
			continue
		case <-x.kick:
			continue
		case <-wake:
			timerAt = time.Time{}
		}
		now := c.time.Now()
		if exhausted || now.Before(nextRefresh) || !now.Before(l.leaseEnd()) {
			continue // the loop's top handles the end of the lease
		}

		// Watchdog turn: one refresh, bounded by the lease's end.
		ttl := x.refresh.TTL
		l.leaseSend(now, ttl)
		var ok bool
		err := l.bounded(ctx, "refresh", func(ctx context.Context) error {
			var err error
			ok, err = l.refreshCall(ctx, ttl)
			return err
		})
		l.leaseDone(err == nil && ok)
		if ctx.Err() != nil {
			return
		}
		switch {
		case errors.Is(err, errLeaseEnded):
			l.monitorLose(l.endedCause(lastErr)) // a no-op if bounded declared it
			return
		case err != nil:
			lastErr = fmt.Errorf("watchdog refresh: %w", err)
			nextRefresh = now.Add(x.refresh.Interval)
			l.monitorRefreshFailed(ctx, ttl, newError("refresh", l.key, nil, "", lastErr))
		case !ok:
			l.monitorRefreshFailed(ctx, ttl, newError("refresh", l.key, ErrNotHeld, "watchdog", nil))
			l.monitorLose(ErrNotHeld)
			return
		default:
			lastErr = nil
			extensions++
			nextRefresh = now.Add(x.refresh.Interval)
			exhausted = x.refresh.MaxExtensions > 0 && extensions >= x.refresh.MaxExtensions
		}
	}
}

// errLeaseEnded is returned by bounded when the lease ended before the
// call did; the loss is then already declared.
var errLeaseEnded = errors.New("the lease ended before the call returned")

// endedCause returns the cause of a loss at the end of the lease.
func (l *Lock) endedCause(lastErr error) error {
	if lastErr != nil {
		return lastErr
	}
	return errValidityEnded
}

// bounded runs call, a backend call of the monitor named op. Without a
// watchdog it runs it under ctx. With one, the call's ctx ends when the
// lease does; if the lease ends first, bounded declares the loss at that
// moment, then cancels the call, waits for it (no goroutine outlives the
// monitor) and returns errLeaseEnded.
func (l *Lock) bounded(ctx context.Context, op string, call func(ctx context.Context) error) error {
	if !l.watchdog {
		return call(ctx)
	}
	c := l.c
	now, end := c.time.Now(), l.leaseEnd()
	if !now.Before(end) {
		return errLeaseEnded // the monitor's loop declares the loss
	}
	cctx, cancel := clock.WithTimeout(ctx, c.clock, end.Sub(now))
	defer cancel()
	res := make(chan error, 1)
	go func() { res <- call(cctx) }()
	timer := clock.NewTimer(c.clock, end.Sub(now))
	defer func() { timer.Stop() }()
	for {
		select {
		case err := <-res:
			if err == nil || ctx.Err() != nil || cctx.Err() == nil {
				return err
			}
			if c.time.Now().Before(l.leaseEnd()) {
				return err // cut short, but a manual Refresh extended the lease meanwhile
			}
			l.monitorLose(fmt.Errorf("watchdog %s: %w: %w", op, errLeaseEnded, err))
			return errLeaseEnded
		case <-l.x.kick:
		case <-timer.C:
		}
		// The lease may have moved: wait for its current end.
		now, end = c.time.Now(), l.leaseEnd()
		if now.Before(end) {
			timer.Stop()
			timer = clock.NewTimer(c.clock, end.Sub(now))
			continue
		}
		// The lease ended first: declare the loss at once, then cancel the
		// call and wait for it.
		l.monitorLose(fmt.Errorf("watchdog %s: %w: %w", op, errLeaseEnded, context.DeadlineExceeded))
		cancel()
		<-res
		return errLeaseEnded
	}
}
