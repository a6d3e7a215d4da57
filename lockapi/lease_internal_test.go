package lockapi

import (
	"testing"
	"time"
)

// TestLease checks the lease bookkeeping against hand-computed ends, for
// lone and overlapping granting calls that succeed or fail.
func TestLease(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	type step struct {
		send    bool          // send a call at at(t) for ttl; else answer the oldest
		t, ttl  time.Duration // send only
		granted bool          // answer only
		want    time.Duration // end after the step, from t0
	}
	s := time.Second
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"lone success extends", []step{
			{send: true, t: 1 * s, ttl: 10 * s, want: 10 * s},
			{granted: true, want: 11 * s},
		}},
		{"lone success shortens", []step{
			{send: true, t: 1 * s, ttl: 2 * s, want: 3 * s}, // at once: it may apply at once
			{granted: true, want: 3 * s},
		}},
		{"lone failure never extends", []step{
			{send: true, t: 1 * s, ttl: 20 * s, want: 10 * s},
			{granted: false, want: 10 * s},
		}},
		{"lone failure may have shortened", []step{
			{send: true, t: 1 * s, ttl: 2 * s, want: 3 * s},
			{granted: false, want: 3 * s},
		}},
		{"overlapping successes keep the earlier end", []step{
			{send: true, t: 1 * s, ttl: 20 * s, want: 10 * s},
			{send: true, t: 2 * s, ttl: 5 * s, want: 7 * s},
			{granted: true, want: 7 * s},
			{granted: true, want: 7 * s},
		}},
		{"overlap: a failed call may have applied last", []step{
			{send: true, t: 1 * s, ttl: 20 * s, want: 10 * s},
			{send: true, t: 2 * s, ttl: 12 * s, want: 10 * s},
			{granted: true, want: 10 * s}, // still in flight: no change
			{granted: false, want: 14 * s},
		}},
		{"next group starts afresh", []step{
			{send: true, t: 1 * s, ttl: 2 * s, want: 3 * s},
			{granted: true, want: 3 * s},
			{send: true, t: 2 * s, ttl: 30 * s, want: 3 * s},
			{granted: true, want: 32 * s},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			le := lease{end: at(10 * s)}
			for i, st := range tc.steps {
				if st.send {
					le.send(at(st.t), st.ttl)
				} else {
					le.done(st.granted)
				}
				if got := le.end.Sub(t0); got != st.want {
					t.Fatalf("step %d: end = t0+%v, want t0+%v", i, got, st.want)
				}
			}
		})
	}
}
