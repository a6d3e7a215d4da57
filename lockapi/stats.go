package lockapi

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Stats is a snapshot of a Client's counters (Client.Stats), for every kind
// of lock it hands out. Each count only grows; take two snapshots and
// subtract for a rate. The counters are read one by one, not as one atomic
// snapshot, so counts that move together may differ by the calls in flight.
type Stats struct {
	// Acquired counts successful Obtain calls.
	Acquired uint64
	// Released counts successful Release calls.
	Released uint64
	// Expired counts leases found no longer held by the backend while their
	// holder had not released them: they expired (or were deleted or taken
	// over by something outside lockapi, which the backend cannot tell
	// apart). Each lease counts once, whichever call found it: the loss
	// monitor, Release, Refresh, TTL or the watchdog.
	Expired uint64
	// Lost counts leases declared lost (Lock.Err became non-nil): the
	// Expired ones, and those whose watchdog lease ended first (refreshes
	// failing, extensions exhausted).
	Lost uint64
	// RefreshFailures counts Refresh calls, manual or by the watchdog, that
	// failed: a backend error, or the lease no longer held.
	RefreshFailures uint64
	// Waited counts Obtain calls whose first attempt found the lock held
	// and that then waited, whatever the outcome.
	Waited uint64
	// NotObtained counts Obtain calls that gave up (ErrNotObtained).
	NotObtained uint64
	// WaitTime is the distribution of how long the Waited calls waited,
	// from their first failed attempt to their return.
	WaitTime Histogram
	// HoldTime is the distribution of how long leases were held: from the
	// acquisition to a successful Release, or to the moment the Client
	// learnt of the loss. It holds a sample, one lease in
	// Options.HoldTimeEvery (16 by default; every lease with OnEvent set).
	HoldTime Histogram
}

// HistogramBuckets is the number of buckets of a Histogram.
const HistogramBuckets = 40

// Histogram is a distribution of durations in power-of-two buckets:
// Buckets[0] counts durations up to 1µs, Buckets[i] those in (2^(i-1)µs,
// 2^i µs], and the last bucket everything above 2^(HistogramBuckets-2)µs
// (about 76 hours). The zero value is empty.
type Histogram struct {
	// Count is the number of durations recorded.
	Count uint64
	// Sum is their total.
	Sum time.Duration
	// Buckets counts them by size; see Histogram.
	Buckets [HistogramBuckets]uint64
}

// BucketBound returns the upper bound of bucket i: 2^i µs, and the largest
// duration for the last bucket.
func BucketBound(i int) time.Duration {
	if i >= HistogramBuckets-1 {
		return time.Duration(1<<63 - 1)
	}
	return time.Duration(1<<i) * time.Microsecond
}

// Quantile returns the upper bound of the bucket holding the q-quantile (q
// in [0, 1]) of the distribution: a duration at least as large as that
// quantile and at most twice it (for durations above 1µs). It returns 0
// for an empty histogram.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.Count == 0 {
		return 0
	}
	rank := uint64(q*float64(h.Count) + 0.5)
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, n := range h.Buckets {
		seen += n
		if seen >= rank {
			return BucketBound(i)
		}
	}
	return BucketBound(HistogramBuckets - 1)
}

// Mean returns the mean duration, or 0 for an empty histogram.
func (h *Histogram) Mean() time.Duration {
	if h.Count == 0 {
		return 0
	}
	return h.Sum / time.Duration(h.Count)
}

// bucketOf returns the bucket of d.
func bucketOf(d time.Duration) int {
	if d <= time.Microsecond {
		return 0
	}
	i := bits.Len64(uint64(d-1) / uint64(time.Microsecond))
	if i >= HistogramBuckets {
		return HistogramBuckets - 1
	}
	return i
}

// histogram is the live, concurrently updated form of a Histogram.
type histogram struct {
	count   atomic.Uint64
	sum     atomic.Int64
	buckets [HistogramBuckets]atomic.Uint64
}

func (h *histogram) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.buckets[bucketOf(d)].Add(1)
	h.sum.Add(int64(d))
	h.count.Add(1)
}

func (h *histogram) snapshot() Histogram {
	s := Histogram{Count: h.count.Load(), Sum: time.Duration(h.sum.Load())}
	for i := range h.buckets {
		s.Buckets[i] = h.buckets[i].Load()
	}
	return s
}

// clientStats are a Client's live counters.
type clientStats struct {
	acquired, released, expired, lost  atomic.Uint64
	refreshFailures, waited, notObtain atomic.Uint64
	wait, hold                         histogram
}

// Stats returns a snapshot of the Client's counters. It is safe for
// concurrent use and cheap enough to call from a metrics exporter's scrape
// (see the expvar example).
func (c *Client) Stats() Stats {
	s := &c.stats
	return Stats{
		Acquired:        s.acquired.Load(),
		Released:        s.released.Load(),
		Expired:         s.expired.Load(),
		Lost:            s.lost.Load(),
		RefreshFailures: s.refreshFailures.Load(),
		Waited:          s.waited.Load(),
		NotObtained:     s.notObtain.Load(),
		WaitTime:        s.wait.snapshot(),
		HoldTime:        s.hold.snapshot(),
	}
}

// noteRelease counts a successful Release of l.
func (c *Client) noteRelease(l *Lock) {
	c.stats.released.Add(1)
	c.endHold(l, EventReleased, nil)
}

// defaultHoldTimeEvery is Options.HoldTimeEvery's default.
const defaultHoldTimeEvery = 16

// endHold records, if l's acquisition was timed, how long l was held, and
// reports its end to OnEvent as an event of type typ with err.
func (c *Client) endHold(l *Lock, typ EventType, err error) {
	if l.acquired == 0 {
		return
	}
	now := c.time.Nano()
	held := time.Duration(now - l.acquired)
	c.stats.hold.record(held)
	if c.onEvent != nil {
		c.emit(l, Event{Type: typ, Time: time.Unix(0, now), Held: held, Err: err})
	}
}

// noteLoss counts the loss of l, with the given cause and error (what
// Lock.Err returns).
func (c *Client) noteLoss(l *Lock, cause, err error) {
	c.stats.lost.Add(1)
	if cause == ErrNotHeld {
		c.stats.expired.Add(1)
	}
	c.endHold(l, EventLost, err)
}

// noteRefreshFailure counts a failed Refresh of l for ttl.
func (c *Client) noteRefreshFailure(l *Lock, ttl time.Duration, err error) {
	c.stats.refreshFailures.Add(1)
	if c.onEvent != nil {
		c.emit(l, Event{Type: EventRefreshFailed, Time: c.time.Now(), TTL: ttl, Err: err})
	}
}
