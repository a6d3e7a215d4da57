package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestMedianCI(t *testing.T) {
	seq := func(n int) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(n - i) // n..1, unsorted on purpose
		}
		return xs
	}
	tests := []struct {
		n              int
		lo, med, hi    float64
		minLvl, maxLvl float64
	}{
		{n: 15, lo: 4, med: 8, hi: 12, minLvl: 0.964, maxLvl: 0.965}, // 1 - 2·576/32768
		{n: 6, lo: 1, med: 3.5, hi: 6, minLvl: 0.968, maxLvl: 0.969}, // 1 - 2/64
		{n: 5, lo: 1, med: 3, hi: 5, minLvl: 0.937, maxLvl: 0.938},   // fewer than 6 cannot reach 95%
		{n: 1, lo: 1, med: 1, hi: 1, minLvl: 0, maxLvl: 0},
	}
	for _, tt := range tests {
		got := medianCI(seq(tt.n))
		if got.Lo != tt.lo || got.Median != tt.med || got.Hi != tt.hi || got.Level < tt.minLvl || got.Level > tt.maxLvl || got.N != tt.n {
			t.Errorf("medianCI(1..%d) = %+v, want [%v, %v] around %v at level in [%v, %v]", tt.n, got, tt.lo, tt.hi, tt.med, tt.minLvl, tt.maxLvl)
		}
	}
	if got := medianCI(nil); got != (interval{}) {
		t.Errorf("medianCI(nil) = %+v, want zero", got)
	}
}

// coverage draws trials samples of n exponential values (true median ln 2)
// and returns how often ci covers the true median.
func coverage(n, trials int, ci func([]float64) (lo, hi float64)) float64 {
	r := rand.New(rand.NewPCG(1, 2))
	hit := 0
	for range trials {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = r.ExpFloat64()
		}
		if lo, hi := ci(xs); lo <= math.Ln2 && math.Ln2 <= hi {
			hit++
		}
	}
	return float64(hit) / float64(trials)
}

// TestMedianCICovers checks by simulation that the interval covers the
// true median about as often as it claims, and that the check would catch
// an interval that is too narrow.
func TestMedianCICovers(t *testing.T) {
	got := coverage(15, 4000, func(xs []float64) (float64, float64) { iv := medianCI(xs); return iv.Lo, iv.Hi })
	if got < 0.95 || got > 0.98 {
		t.Errorf("medianCI covered the true median in %.3f of trials, want about 0.965", got)
	}
	// Planted: the interquartile range (x(5)..x(11) of 15) is not a 95%
	// interval; the simulation must show it.
	narrow := coverage(15, 4000, func(xs []float64) (float64, float64) {
		s := slices.Clone(xs)
		slices.Sort(s)
		return s[4], s[10]
	})
	if narrow > 0.93 {
		t.Errorf("the planted narrow interval covered %.3f, want the simulation to show it below 0.93", narrow)
	}
}

func TestFmtTimes(t *testing.T) {
	tests := []struct {
		r     float64
		words [2]string
		want  string
	}{
		{1.3, timeWords, "1.3x slower"},
		{0.5, timeWords, "2.0x faster"},
		{53.4, timeWords, "53x slower"},
		{1.0 / 190, timeWords, "190x faster"},
		{1, timeWords, "1.00x slower"},
		{1.04, timeWords, "1.04x slower"},
		{1 / 1.094, timeWords, "1.09x faster"},
		{9.96, timeWords, "10x slower"},
		{1.25, memoryWords, "1.2x more memory"},
		{0.8, memoryWords, "1.2x less memory"},
		{0, timeWords, "-"},
		{math.Inf(1), timeWords, "-"},
	}
	for _, tt := range tests {
		if got := fmtTimes(tt.r, tt.words); got != tt.want {
			t.Errorf("fmtTimes(%v) = %q, want %q", tt.r, got, tt.want)
		}
	}
	cis := []struct {
		lo, hi float64
		want   string
	}{
		{1.2, 1.4, "1.2x–1.4x slower"},
		{0.5, 0.8, "1.2x–2.0x faster"},
		{0.9, 1.2, "1.1x faster to 1.2x slower"},
		{1.21, 1.24, "1.2x slower"},
	}
	for _, tt := range cis {
		if got := fmtTimesCI(tt.lo, tt.hi, timeWords); got != tt.want {
			t.Errorf("fmtTimesCI(%v, %v) = %q, want %q", tt.lo, tt.hi, got, tt.want)
		}
	}
}

func TestGeomean(t *testing.T) {
	if got := geomean([]float64{1, 4, 16}); math.Abs(got-4) > 1e-9 {
		t.Errorf("geomean(1, 4, 16) = %v, want 4", got)
	}
	if got := geomean([]float64{1, 0}); got != 0 {
		t.Errorf("geomean(1, 0) = %v, want 0", got)
	}
}

func TestRatioCI(t *testing.T) {
	// Costs 2 and 1 times a noise common to each round: the ratio is
	// exact, however large the noise.
	noise := []float64{1, 3, 1.2, 0.9, 5, 1, 1.1, 2}
	var a, b []float64
	for _, n := range noise {
		a, b = append(a, 2*n), append(b, n)
	}
	if got := ratioCI(a, b); got.Median != 2 || got.Lo != 2 || got.Hi != 2 || got.N != 8 {
		t.Errorf("ratioCI(common noise) = %+v, want exactly 2", got)
	}
	// The estimate is the ratio of the medians, never a median of ratios,
	// so it agrees with the costs the report prints beside it.
	a, b = []float64{10, 100, 20, 90, 30}, []float64{50, 10, 60, 20, 40}
	if got := ratioCI(a, b); got.Median != 30.0/40 || got.Lo > got.Median || got.Hi < got.Median {
		t.Errorf("ratioCI = %+v, want median 30/40 inside its interval", got)
	}
	// Rounds with a missing cost are left out.
	if got := ratioCI([]float64{1, 0, 3}, []float64{1, 1, 0}); got.N != 1 || got.Median != 1 {
		t.Errorf("ratioCI with missing costs = %+v, want one round, ratio 1", got)
	}
	if got := ratioCI(nil, nil); got != (interval{}) {
		t.Errorf("ratioCI(nil) = %+v, want zero", got)
	}
}

// TestRatioCICovers checks by simulation that the interval covers the
// true ratio of medians (2) in most trials when each round adds its own
// noise to each contestant, besides the noise common to the round.
func TestRatioCICovers(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const trials = 200
	hit := 0
	for range trials {
		var a, b []float64
		for range 15 {
			common := math.Exp(r.NormFloat64())
			a = append(a, 2*common*math.Exp(0.2*r.NormFloat64()))
			b = append(b, common*math.Exp(0.2*r.NormFloat64()))
		}
		if iv := ratioCI(a, b); iv.Lo <= 2 && 2 <= iv.Hi {
			hit++
		}
	}
	// A percentile bootstrap of medians from 15 rounds covers a little
	// less than its nominal 95%; far less would mean a broken interval.
	got := float64(hit) / trials
	t.Logf("covered in %.3f of %d trials", got, trials)
	if got < 0.85 {
		t.Errorf("ratioCI covered the true ratio in %.3f of trials, want about 0.9 or more", got)
	}
}

// TestMedianOfCounts checks the bootstrap's O(n) median of a resample
// against sorting the resample.
func TestMedianOfCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{1, 2, 5, 6, 15, 16} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = float64(r.IntN(5)) // ties too
		}
		sorted, rank := ranks(xs)
		for range 50 {
			count := make([]int, n)
			var drawn []float64
			for range n {
				k := r.IntN(n)
				count[rank[k]]++
				drawn = append(drawn, xs[k])
			}
			slices.Sort(drawn)
			if got, want := medianOfCounts(sorted, count), median(drawn); got != want {
				t.Fatalf("n=%d: medianOfCounts = %v, sorting gives %v (%v)", n, got, want, drawn)
			}
		}
	}
}
