// Package clock is the one time source interface nxkv reads, and the small
// set of waits built on it that the engine, the lock client and the
// backends share.
//
// # Model
//
// A Clock needs only two methods: Now, and After for a one-shot wake-up.
// github.com/benbjohnson/clock's real clock and *Mock satisfy it, and so do
// the fake clocks of k8s.io/utils/clock and jonboulle/clockwork, so tests
// inject whatever fake clock they already use. A nil Clock means the real
// clock; nxkv then reads time.Now once and afterwards adds the monotonic time
// elapsed since, which is faster than time.Now and immune to wall-clock
// steps. Passing benbjohnson's real clock (clock.New()) is recognised and
// takes the same fast path.
//
// # What nxkv promises about an injected clock
//
//   - It never calls into the clock while holding one of its own locks, so a
//     fake clock whose Add fires timers under its own mutex cannot deadlock
//     with nxkv.
//   - It uses only Now and a one-shot wake-up: never Reset, tickers or the
//     clock's contexts (benbjohnson's Mock races and can deadlock in those).
//   - For a clock that has benbjohnson's AfterFunc (the real clock and
//     *Mock), the wake-up is AfterFunc, not After: Mock.After runs the due
//     timers from the calling goroutine, so when it races the test's Add the
//     two can fire one timer twice, and the second send blocks the Mock
//     under its mutex forever. Mock.AfterFunc only registers, and a fired
//     AfterFunc sends nothing while holding the mutex.
//   - Otherwise it uses After, receiving from each channel at most once and
//     never reusing it. A wait abandoned early leaves its After pending in
//     the fake clock until the clock passes it.
//
// # Time never goes backwards
//
// Time (see Time) reports the latest reading it has handed out whenever the
// clock reads earlier, so time seen through it never decreases: after a
// step back (a fake clock Set to an earlier time, a wall clock stepped by
// NTP) it stands still until the clock passes the latest reading. A key that
// was seen expired stays expired and a lock lease never grows back.
//
// # testing/synctest
//
// The real clock (nil) works inside a testing/synctest bubble, where
// time.Now, timers and the monotonic clock are all virtual: code using nxkv
// with no clock injected runs in fake time without any change.
package clock

import (
	"context"
	"math"
	"reflect"
	"sync/atomic"
	"time"

	bbclock "github.com/benbjohnson/clock"
)

// Clock is the time source nxkv reads: Now for the current time, After for a
// channel that receives once, d after the call. Implementations must be safe
// for concurrent use. A nil Clock means the real clock.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

var bbReal = reflect.TypeOf(bbclock.New())

// IsReal reports whether c is the real clock: nil, or
// github.com/benbjohnson/clock's clock.New(). It is safe for concurrent use.
func IsReal(c Clock) bool {
	return c == nil || reflect.TypeOf(c) == bbReal
}

// Time reads a Clock as Unix nanoseconds that never decrease. The zero value
// is not usable; create it with NewTime. It is safe for concurrent use.
type Time struct {
	user  Clock // nil: the real clock, read through the monotonic clock
	wall0 int64 // Unix nanoseconds at mono0
	mono0 time.Time
	high  atomic.Int64 // the latest reading handed out, for a user clock
}

// NewTime returns a Time over c; nil and benbjohnson's real clock select the
// fast real clock.
func NewTime(c Clock) *Time {
	t := &Time{}
	if IsReal(c) {
		t.mono0 = time.Now()
		t.wall0 = t.mono0.UnixNano()
	} else {
		t.user = c
	}
	t.high.Store(math.MinInt64)
	return t
}

// Clock returns the Clock t reads, nil for the real clock.
func (t *Time) Clock() Clock { return t.user }

// Real reports whether t reads the real clock.
func (t *Time) Real() bool { return t.user == nil }

// Nano returns the current time in Unix nanoseconds. For the real clock it
// is one monotonic clock read, and time.Now() at NewTime plus the monotonic
// time elapsed since: it never decreases. For an injected clock it calls the
// clock's Now: call it without holding locks, then pass the reading to
// Monotonic inside the critical section that uses it.
func (t *Time) Nano() int64 {
	if t.user == nil {
		return t.wall0 + int64(time.Since(t.mono0))
	}
	return t.user.Now().UnixNano()
}

// Monotonic returns max(read, the largest value Monotonic returned before),
// so that times handed out never decrease, even when an injected clock
// steps back. read is a reading of Nano. Called inside a critical section,
// it keeps the time used within the operation's real-time interval: at
// least read (taken before it) and at most the latest reading any other
// operation had taken before it returned. For the real clock it returns
// read unchanged (the monotonic clock never goes back).
func (t *Time) Monotonic(read int64) int64 {
	if t.user == nil {
		return read
	}
	for {
		h := t.high.Load()
		if read <= h {
			return h
		}
		if t.high.CompareAndSwap(h, read) {
			return read
		}
	}
}

// Now returns the current time, never earlier than a time Now or Monotonic
// returned before. Do not call it while holding a lock if the clock is
// injected.
func (t *Time) Now() time.Time {
	return time.Unix(0, t.Monotonic(t.Nano()))
}

// NewTimer returns a Timer that fires d after now on t's clock.
func (t *Time) NewTimer(d time.Duration) *Timer { return NewTimer(t.user, d) }

// afterFuncer is benbjohnson's one-shot callback timer, which its real
// clock and *Mock have.
type afterFuncer interface {
	AfterFunc(d time.Duration, f func()) *bbclock.Timer
}

// Timer is a one-shot wait on a Clock. C receives at most once, when it
// fires. A Timer is used by one goroutine.
type Timer struct {
	C  <-chan time.Time
	t  *time.Timer    // the real clock
	bt *bbclock.Timer // an AfterFunc of a benbjohnson clock
}

// NewTimer returns a Timer that fires d after now on c (nil: the real clock).
// A d <= 0 fires at once (for a fake clock: at its next move or timer run).
func NewTimer(c Clock, d time.Duration) *Timer {
	if IsReal(c) {
		t := time.NewTimer(d)
		return &Timer{C: t.C, t: t}
	}
	if af, ok := c.(afterFuncer); ok {
		ch := make(chan time.Time, 1)
		// The callback runs on its own goroutine, after the Mock released
		// its mutex; it may run twice if the test races its own timers, so
		// it never blocks.
		bt := af.AfterFunc(d, func() {
			select {
			case ch <- c.Now():
			default:
			}
		})
		return &Timer{C: ch, bt: bt}
	}
	return &Timer{C: c.After(d)}
}

// Stop stops the timer if it has not fired; for a clock with only After it
// does nothing (the channel is abandoned). It is safe to call more than
// once and never blocks on the clock beyond its own mutex.
func (t *Timer) Stop() {
	switch {
	case t.t != nil:
		t.t.Stop()
	case t.bt != nil:
		t.bt.Stop()
	}
}

// WithTimeout returns a context that is canceled d after now on c (nil: the
// real clock), or when parent ends, or when cancel is called. For the real
// clock it is context.WithTimeout; for an injected clock a goroutine waits
// on a Timer or the context's end, so it exits when cancel is called, and
// the context's error at the timeout is context.DeadlineExceeded.
func WithTimeout(parent context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	if IsReal(c) {
		return context.WithTimeout(parent, d)
	}
	ctx, cancel := context.WithCancelCause(parent)
	if d <= 0 {
		cancel(context.DeadlineExceeded)
		return &causeCtx{ctx}, func() { cancel(context.Canceled) }
	}
	t := NewTimer(c, d)
	go func() {
		select {
		case <-t.C:
			cancel(context.DeadlineExceeded)
		case <-ctx.Done():
			t.Stop()
		}
	}()
	return &causeCtx{ctx}, func() { cancel(context.Canceled) }
}

// causeCtx reports context.DeadlineExceeded from Err when the timeout
// fired, as context.WithTimeout does, instead of context.Canceled.
type causeCtx struct{ context.Context }

func (c *causeCtx) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}
