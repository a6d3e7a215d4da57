package main

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// interval is an estimate with a confidence interval [Lo, Hi]: a median
// (medianCI) or a ratio of medians (ratioCI).
type interval struct {
	Median float64 `json:"median"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	// Level is the interval's actual coverage (at least 0.95 when N >= 6;
	// fewer repetitions cannot give 95%, and Lo, Hi are then the range).
	Level float64 `json:"level"`
	N     int     `json:"n"`
}

// medianCI returns the median of xs with a distribution-free interval:
// the order statistics x(k) and x(n+1-k) of n repetitions bracket the true
// median with probability 1 - 2·P(Binomial(n, 1/2) < k), whatever the
// distribution of the repetitions (they need only be independent); k is
// the largest that keeps this at 95% or more.
func medianCI(xs []float64) interval {
	n := len(xs)
	if n == 0 {
		return interval{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	iv := interval{Median: median(s), Lo: s[0], Hi: s[n-1], Level: 1 - 2*binomCDF(n, 0), N: n}
	// Raise k while the interval [x(k), x(n+1-k)] still covers 95%.
	for k := 2; k <= n/2; k++ {
		level := 1 - 2*binomCDF(n, k-1)
		if level < 0.95 {
			break
		}
		iv.Lo, iv.Hi, iv.Level = s[k-1], s[n-k], level
	}
	return iv
}

// bootstrapRounds is how many resamples ratioCI draws.
const bootstrapRounds = 4000

// ratioCI returns median(a) ÷ median(b), where a[r] and b[r] were measured
// in the same round r, with a 95% paired-bootstrap percentile interval:
// rounds are resampled with replacement, keeping each round's pair
// together, so noise that hit both contestants of a round (a burst of
// outside load) moves both medians alike. The estimate is the ratio of the
// figures the report prints, so the verdict and the figures always agree.
// Rounds where either cost is missing (0) are left out.
func ratioCI(a, b []float64) interval { return ratioCIAt(a, b, 0.95) }

// ratioCIAt is ratioCI at another coverage level (0.99 for the stricter
// interval that lets a job stop early; see decide).
func ratioCIAt(a, b []float64, level float64) interval {
	return bootstrapRatio(a, b, level, bootstrapRounds)
}

// bootstrapRatio is ratioCIAt with resamples resamples.
func bootstrapRatio(a, b []float64, level float64, resamples int) interval {
	var pa, pb []float64
	for r := range min(len(a), len(b)) {
		if a[r] > 0 && b[r] > 0 {
			pa, pb = append(pa, a[r]), append(pb, b[r])
		}
	}
	n := len(pa)
	if n == 0 {
		return interval{}
	}
	// A resample's median is found from how often it drew each rank, in
	// O(n), instead of by sorting it.
	sa, ra := ranks(pa)
	sb, rb := ranks(pb)
	iv := interval{Median: median(sa) / median(sb), Level: level, N: n}
	// A fixed seed: the same figures give the same interval.
	rng := rand.New(rand.NewPCG(uint64(n), 0x6e786b76))
	ca, cb := make([]int, n), make([]int, n)
	rs := make([]float64, resamples)
	for i := range rs {
		clear(ca)
		clear(cb)
		for range n {
			k := rng.IntN(n)
			ca[ra[k]]++
			cb[rb[k]]++
		}
		rs[i] = medianOfCounts(sa, ca) / medianOfCounts(sb, cb)
	}
	slices.Sort(rs)
	tail := int(math.Round((1 - level) / 2 * float64(resamples)))
	iv.Lo, iv.Hi = rs[tail], rs[resamples-1-tail]
	iv.Lo, iv.Hi = min(iv.Lo, iv.Median), max(iv.Hi, iv.Median)
	return iv
}

// ranks returns xs sorted and, for each x[i], its position in the sorted
// slice.
func ranks(xs []float64) (sorted []float64, rank []int) {
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return cmp.Compare(xs[i], xs[j]) })
	sorted, rank = make([]float64, len(xs)), make([]int, len(xs))
	for pos, i := range order {
		sorted[pos], rank[i] = xs[i], pos
	}
	return sorted, rank
}

// medianOfCounts is the median of the multiset holding sorted[r] count[r]
// times (the counts add up to len(sorted)).
func medianOfCounts(sorted []float64, count []int) float64 {
	n := len(sorted)
	at := func(pos int) float64 { // the pos-th smallest, from 0
		seen := 0
		for r, c := range count {
			seen += c
			if seen > pos {
				return sorted[r]
			}
		}
		return sorted[n-1]
	}
	if n%2 == 1 {
		return at(n / 2)
	}
	return (at(n/2-1) + at(n/2)) / 2
}

// includes reports whether the interval holds x.
func (iv interval) includes(x float64) bool { return iv.Lo <= x && x <= iv.Hi }

// median of sorted values.
func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// binomCDF is P(Binomial(n, 1/2) <= k).
func binomCDF(n, k int) float64 {
	p, c := 0.0, 1.0 // c = C(n, i)
	for i := 0; i <= k; i++ {
		p += c
		c = c * float64(n-i) / float64(i+1)
	}
	return p / math.Pow(2, float64(n))
}

// geomean is the geometric mean of positive values (0 if any is not).
func geomean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		if x <= 0 {
			return 0
		}
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(xs)))
}

// The words of a comparison of costs (time, bytes): what "more" and "less"
// of the cost mean to a reader.
var (
	timeWords   = [2]string{"slower", "faster"}
	memoryWords = [2]string{"more memory", "less memory"}
)

// fmtTimes formats r, a cost divided by a reference cost, as the report's
// one ratio format: how many times more or less, never a fraction ("1.3x
// slower", "53x faster").
func fmtTimes(r float64, words [2]string) string {
	if r <= 0 || math.IsInf(r, 0) || math.IsNaN(r) {
		return "-"
	}
	if r >= 1 {
		return fmtX(r) + " " + words[0]
	}
	return fmtX(1/r) + " " + words[1]
}

// fmtX prints a factor of at least 1 with two significant digits, or
// three below 1.1, where one decimal would print 1.0x for a difference.
func fmtX(x float64) string {
	switch {
	case x < 1.095:
		return fmt.Sprintf("%.2fx", x)
	case x < 9.95:
		return fmt.Sprintf("%.1fx", x)
	}
	return fmt.Sprintf("%.0fx", x)
}

// fmtTimesCI formats an interval of ratios: "1.2x–1.4x slower", or, when
// it straddles 1, "1.1x faster to 1.2x slower".
func fmtTimesCI(lo, hi float64, words [2]string) string {
	if lo <= 0 || hi <= 0 {
		return "-"
	}
	switch {
	case lo >= 1:
		return fmtRange(fmtX(lo), fmtX(hi)) + " " + words[0]
	case hi < 1:
		return fmtRange(fmtX(1/hi), fmtX(1/lo)) + " " + words[1]
	default:
		return fmtTimes(lo, words) + " to " + fmtTimes(hi, words)
	}
}
