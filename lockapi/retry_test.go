package lockapi_test

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/nxkv/nxkv/lockapi"
)

// delays returns up to n delays of one Start of s, and whether s stopped.
func delays(s lockapi.RetryStrategy, n int) ([]time.Duration, bool) {
	bo := s.Start()
	var out []time.Duration
	for i := 0; i < n; i++ {
		d, ok := bo.Next()
		if !ok {
			return out, true
		}
		out = append(out, d)
	}
	return out, false
}

func TestNoRetry(t *testing.T) {
	if got, stopped := delays(lockapi.NoRetry(), 3); len(got) != 0 || !stopped {
		t.Errorf("NoRetry delays = %v, stopped %v, want none, true", got, stopped)
	}
}

func TestLinearBackoff(t *testing.T) {
	for _, tc := range []struct {
		d, want time.Duration
	}{
		{10 * time.Millisecond, 10 * time.Millisecond},
		{0, time.Millisecond},
		{-time.Second, time.Millisecond},
	} {
		got, stopped := delays(lockapi.LinearBackoff(tc.d), 5)
		if stopped || len(got) != 5 {
			t.Fatalf("LinearBackoff(%v) stopped after %d delays, want unlimited", tc.d, len(got))
		}
		for i, d := range got {
			if d != tc.want {
				t.Errorf("LinearBackoff(%v) delay %d = %v, want %v", tc.d, i, d, tc.want)
			}
		}
	}
}

func TestExponentialBackoff(t *testing.T) {
	lo, hi := 2*time.Millisecond, 100*time.Millisecond
	s := lockapi.ExponentialBackoff(lo, hi)
	for run := 0; run < 50; run++ {
		got, stopped := delays(s, 12)
		if stopped {
			t.Fatal("ExponentialBackoff stopped, want unlimited")
		}
		base := lo
		for i, d := range got {
			if d < base/2 || d > base {
				t.Fatalf("run %d: delay %d = %v, want in [%v, %v]", run, i, d, base/2, base)
			}
			base = min(2*base, hi)
		}
	}
	// Bad bounds are repaired.
	got, _ := delays(lockapi.ExponentialBackoff(0, -1), 3)
	for i, d := range got {
		if d < 500*time.Microsecond || d > time.Millisecond {
			t.Errorf("ExponentialBackoff(0, -1) delay %d = %v, want in [0.5ms, 1ms]", i, d)
		}
	}
}

func TestLimitRetry(t *testing.T) {
	for _, tc := range []struct {
		s    lockapi.RetryStrategy
		n    int
		want int
	}{
		{lockapi.LinearBackoff(time.Millisecond), 3, 3},
		{lockapi.LinearBackoff(time.Millisecond), 0, 0},
		{lockapi.LinearBackoff(time.Millisecond), -2, 0},
		{lockapi.NoRetry(), 5, 0},
		{nil, 5, 0},
		{lockapi.LimitRetry(lockapi.LinearBackoff(time.Millisecond), 2), 5, 2},
	} {
		got, stopped := delays(lockapi.LimitRetry(tc.s, tc.n), 10)
		if len(got) != tc.want || !stopped {
			t.Errorf("LimitRetry(%T, %d) gave %d delays (stopped %v), want %d", tc.s, tc.n, len(got), stopped, tc.want)
		}
	}
}

// TestStrategyFreshState shows each Start has its own state: one shared
// strategy value used by many concurrent Obtain calls (here, Starts) gives
// each the full sequence, and the race detector sees no shared writes.
func TestStrategyFreshState(t *testing.T) {
	for _, s := range []lockapi.RetryStrategy{
		lockapi.LimitRetry(lockapi.LinearBackoff(time.Millisecond), 4),
		lockapi.LimitRetry(lockapi.ExponentialBackoff(time.Millisecond, 8*time.Millisecond), 4),
	} {
		var wg sync.WaitGroup
		counts := make([]int, 16)
		for g := range counts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, _ := delays(s, 10)
				counts[g] = len(got)
			}()
		}
		wg.Wait()
		for g, n := range counts {
			if n != 4 {
				t.Errorf("%T: Start #%d gave %d delays, want 4 (state shared between calls?)", s, g, n)
			}
		}
	}
}

// TestExponentialBackoffHugeMax: a max near math.MaxInt64 must not
// overflow the doubling base (which made rand.N panic after about 22 Next
// calls); the base stops at max and every delay stays in [base/2, base].
func TestExponentialBackoffHugeMax(t *testing.T) {
	for _, hi := range []time.Duration{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64/2 + 1} {
		got, stopped := delays(lockapi.ExponentialBackoff(time.Millisecond, hi), 200)
		if stopped || len(got) != 200 {
			t.Fatalf("ExponentialBackoff(1ms, %v) stopped after %d delays, want unlimited", hi, len(got))
		}
		base := time.Millisecond
		for i, d := range got {
			if d < base/2 || d > base {
				t.Fatalf("ExponentialBackoff(1ms, %d) delay %d = %v, want in [%v, %v]", hi, i, d, base/2, base)
			}
			if base > hi/2 {
				base = hi
			} else {
				base *= 2
			}
		}
		if last := got[len(got)-1]; last < hi/2 {
			t.Errorf("ExponentialBackoff(1ms, %d) last delay = %v, want >= max/2", hi, last)
		}
	}
}
