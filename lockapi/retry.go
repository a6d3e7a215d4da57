package lockapi

import (
	"math/rand/v2"
	"time"
)

// RetryStrategy decides whether and how long a blocked Obtain waits before
// trying again. It is a recipe, not a state: Obtain calls Start once per
// call and uses only the returned Backoff, so one RetryStrategy value may be
// shared by any number of concurrent Obtain calls. Implementations must make
// Start safe for concurrent use.
type RetryStrategy interface {
	// Start returns the delay sequence for one Obtain call.
	Start() Backoff
}

// Backoff is the state of one Obtain call's retry strategy. It is used by
// one goroutine only.
type Backoff interface {
	// Next returns the delay before the next attempt, or ok == false to
	// give up. See the package doc for how delays are used on Watcher
	// backends.
	Next() (wait time.Duration, ok bool)
}

// NoRetry returns a RetryStrategy that never retries: Obtain fails with
// ErrNotObtained after one attempt. It is the default.
func NoRetry() RetryStrategy { return noRetry{} }

type noRetry struct{}

func (noRetry) Start() Backoff              { return noRetry{} }
func (noRetry) Next() (time.Duration, bool) { return 0, false }

// LinearBackoff returns a RetryStrategy that retries forever (until ctx
// ends), waiting d between attempts. A d <= 0 is treated as 1 ms.
func LinearBackoff(d time.Duration) RetryStrategy {
	if d <= 0 {
		d = time.Millisecond
	}
	return linearBackoff(d)
}

type linearBackoff time.Duration

func (l linearBackoff) Start() Backoff              { return l }
func (l linearBackoff) Next() (time.Duration, bool) { return time.Duration(l), true }

// ExponentialBackoff returns a RetryStrategy that retries forever (until
// ctx ends) with a base delay doubling from min up to max. Each delay is
// drawn uniformly from [base/2, base] ("equal jitter"), which spreads
// competing clients apart. min <= 0 is treated as 1 ms, and max < min as
// min. The jitter comes from math/rand/v2's global generator, which is safe
// for concurrent use.
func ExponentialBackoff(min, max time.Duration) RetryStrategy {
	if min <= 0 {
		min = time.Millisecond
	}
	if max < min {
		max = min
	}
	return expBackoff{min: min, max: max}
}

type expBackoff struct {
	min, max time.Duration
	base     time.Duration // the next un-jittered delay; 0 before the first
}

func (e expBackoff) Start() Backoff { e.base = 0; return &e }

func (e *expBackoff) Next() (time.Duration, bool) {
	switch {
	case e.base == 0:
		e.base = e.min
	case e.base > e.max/2: // doubling would pass max, or overflow
		e.base = e.max
	default:
		e.base *= 2
	}
	half := e.base / 2
	return half + rand.N(e.base-half+1), true
}

// LimitRetry returns a RetryStrategy that allows at most n retries of s
// (n waiting windows on a Watcher backend). n <= 0 means no retry.
func LimitRetry(s RetryStrategy, n int) RetryStrategy {
	if s == nil {
		s = NoRetry()
	}
	return limitRetry{s: s, n: n}
}

type limitRetry struct {
	s RetryStrategy
	n int
}

func (l limitRetry) Start() Backoff { return &limitBackoff{b: l.s.Start(), left: l.n} }

type limitBackoff struct {
	b    Backoff
	left int
}

func (l *limitBackoff) Next() (time.Duration, bool) {
	if l.left <= 0 {
		return 0, false
	}
	l.left--
	return l.b.Next()
}
