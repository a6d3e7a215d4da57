package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestInterleaveRotatesTheFirst(t *testing.T) {
	var order []int
	costs := interleave(3, 0, 4, func() {}, func(i int) float64 { order = append(order, i); return float64(i) })
	want := []int{0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2}
	if !slices.Equal(order, want) {
		t.Errorf("interleave order = %v, want %v", order, want)
	}
	for i, c := range costs {
		if len(c) != 4 || c[0] != float64(i) {
			t.Errorf("costs[%d] = %v, want 4 rounds of %d", i, c, i)
		}
	}
	// A later batch goes on with the rotation.
	order = nil
	interleave(3, 4, 1, func() {}, func(i int) float64 { order = append(order, i); return 0 })
	if want := []int{1, 2, 0}; !slices.Equal(order, want) {
		t.Errorf("interleave from round 4 = %v, want %v", order, want)
	}
}

// roundNoise is a noise factor per round that hits every contestant of a
// round alike (a burst of load).
var roundNoise = []float64{1, 3, 1.2, 0.9, 5, 1, 1.1, 2, 1, 1, 0.8, 1, 4, 1, 1}

// synthetic is a one-view job over fixed costs: cost[c] per round, times
// roundNoise.
func synthetic(cs []contestant, cost []float64, words [2]string, vs versus) (job, []string, [][][]float64) {
	costs := make([][]float64, len(cs))
	var names []string
	for c := range cs {
		names = append(names, cs[c].Name)
		for _, n := range roundNoise {
			costs[c] = append(costs[c], cost[c]*n)
		}
	}
	j := job{ID: "raw", Words: words, Rounds: len(roundNoise), Views: []view{{Title: "the job", Versus: vs, Contestants: cs}}}
	return j, names, [][][]float64{costs}
}

func TestSummarizeView(t *testing.T) {
	cs := []contestant{
		{Name: "nxkv", Role: subject},
		{Name: "slow", Desc: "a slow map", Role: alternative},
		{Name: "fast", Desc: "a fast map", Role: alternative},
		{Name: "floor", Desc: "a floor", Role: reference}, // fastest, but never in a verdict
		{Name: "nxkv option", Role: variant},
	}
	tests := []struct {
		name         string
		cost         []float64
		words        [2]string
		vs           versus
		wantAgainst  []string
		wantVerdicts []string
	}{
		{"nxkv slower", []float64{20, 40, 10, 1, 5}, timeWords, versusBest, []string{"fast"}, []string{"the job vs a fast map: 2.0x slower"}},
		{"nxkv faster", []float64{10, 40, 30, 1, 5}, timeWords, versusBest, []string{"fast"}, []string{"the job vs a fast map: 3.0x faster"}},
		{"memory", []float64{150, 113, 128, 1, 5}, memoryWords, versusBest, []string{"slow"}, []string{"the job vs a slow map: 1.3x more memory"}},
		{"each", []float64{20, 40, 10, 1, 5}, timeWords, versusEach, []string{"slow", "fast"},
			[]string{"the job vs a slow map: 2.0x faster", "the job vs a fast map: 2.0x slower"}},
	}
	for _, tt := range tests {
		j, names, costs := synthetic(cs, tt.cost, tt.words, tt.vs)
		row := summarizeView(j, j.Views[0], names, costs, nil, true)
		var against, verdicts []string
		for _, v := range row.Verdicts {
			against, verdicts = append(against, v.Against), append(verdicts, v.sentence(row.Title))
			// The noise hits every contestant of a round alike, so the
			// ratio is exact and its interval has no width, while the
			// costs themselves vary fivefold.
			if !near(v.Ratio.Lo, v.Ratio.Median) || !near(v.Ratio.Hi, v.Ratio.Median) || !v.Resolved {
				t.Errorf("%s: ratio interval %+v (resolved %v), want a settled point", tt.name, v.Ratio, v.Resolved)
			}
		}
		if !slices.Equal(against, tt.wantAgainst) || !slices.Equal(verdicts, tt.wantVerdicts) {
			t.Errorf("%s: against %q, verdicts %q; want %q, %q", tt.name, against, verdicts, tt.wantAgainst, tt.wantVerdicts)
		}
		if row.SubjectCost.Hi <= row.SubjectCost.Lo {
			t.Errorf("%s: nxkv's cost interval %+v, want the noise to show", tt.name, row.SubjectCost)
		}
		if len(row.Details) != len(cs) || len(row.Details[0].Rounds) != len(roundNoise) {
			t.Errorf("%s: %d detail rows, want %d, each with its rounds", tt.name, len(row.Details), len(cs))
		}
		if row.Rounds != len(roundNoise) || row.Unresolved != "" {
			t.Errorf("%s: rounds %d, unresolved %q", tt.name, row.Rounds, row.Unresolved)
		}
	}
}

// near reports whether a and b are equal but for rounding.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }

// TestVerdictWithinNoise checks that a verdict states no direction when
// its interval includes 1x, whichever way the medians lean.
func TestVerdictWithinNoise(t *testing.T) {
	cs := []contestant{{Name: "nxkv", Role: subject}, {Name: "map", Desc: "a map", Role: alternative}}
	r := rand.New(rand.NewPCG(5, 6))
	var a, b []float64
	for range 15 {
		// 3% apart, with noise of their own of about 20% each round.
		a = append(a, 103*math.Exp(0.2*r.NormFloat64()))
		b = append(b, 100*math.Exp(0.2*r.NormFloat64()))
	}
	j := job{ID: "locks", Words: timeWords, Rounds: 15, MaxRounds: 47, Views: []view{{Title: "op", Contestants: cs}}}
	row := summarizeView(j, j.Views[0], []string{"nxkv", "map"}, [][][]float64{{a, b}}, nil, true)
	v := row.Verdicts[0]
	if !v.Ratio.includes(1) {
		t.Fatalf("the planted noise did not make the interval include 1: %+v", v.Ratio)
	}
	if v.Outcome != noDifference || v.Resolved || row.Unresolved == "" {
		t.Errorf("interval %+v: outcome %q, resolved %v, unresolved %q; want %q, not settled, and said why",
			v.Ratio, v.Outcome, v.Resolved, row.Unresolved, noDifference)
	}
	if strings.Contains(v.sentence(row.Title), "slower") || strings.Contains(v.sentence(row.Title), "faster") {
		t.Errorf("verdict %q states a direction", v.sentence(row.Title))
	}
}

func TestDecide(t *testing.T) {
	iv := func(lo, med, hi float64) interval { return interval{Lo: lo, Median: med, Hi: hi, Level: 0.95} }
	tests := []struct {
		name         string
		ci95, strict interval
		last         bool
		want         string
		wantResolved bool
	}{
		{"clear", iv(1.2, 1.3, 1.4), iv(1.1, 1.3, 1.5), false, "1.3x slower", true},
		{"clear at 95% only, rounds left", iv(0.8, 0.85, 0.95), iv(0.75, 0.85, 1.02), false, "1.2x faster", false},
		{"clear at 95% only, last round", iv(0.8, 0.85, 0.95), iv(0.75, 0.85, 1.02), true, "1.2x faster", true},
		{"alike", iv(0.97, 1.01, 1.04), iv(0.96, 1.01, 1.05), false, noDifference, true},
		{"too wide", iv(0.8, 1.1, 1.3), iv(0.7, 1.1, 1.4), false, noDifference, false},
		{"clear but small", iv(0.94, 0.97, 0.99), iv(0.93, 0.97, 0.995), true, noDifference, false},
		{"too wide, last round", iv(0.8, 1.1, 1.3), iv(0.7, 1.1, 1.4), true, noDifference, false},
	}
	for _, tt := range tests {
		got, resolved := decide(tt.ci95, tt.strict, timeWords, tt.last)
		if got != tt.want || resolved != tt.wantResolved {
			t.Errorf("%s: decide = %q, %v; want %q, %v", tt.name, got, resolved, tt.want, tt.wantResolved)
		}
	}
}

func TestSummarizeViewParts(t *testing.T) {
	cs := []contestant{{Name: "nxkv", Role: subject}, {Name: "map", Desc: "a map", Role: alternative}}
	// nxkv is 4x slower on one op and 4x faster on the other: even overall.
	costs := [][][]float64{
		{{40, 40, 40, 40, 40, 40, 40}, {10, 10, 10, 10, 10, 10, 10}},
		{{10, 10, 10, 10, 10, 10, 10}, {40, 40, 40, 40, 40, 40, 40}},
	}
	j := job{ID: "raw", Words: timeWords, Parts: []string{"Get", "Set"}, Rounds: 7, Views: []view{{Title: "op", Contestants: cs}}}
	row := summarizeView(j, j.Views[0], []string{"nxkv", "map"}, costs, nil, true)
	if v := row.Verdicts[0]; v.Ratio.Median != 1 || v.sentence(row.Title) != "op vs a map: "+noDifference || !v.Resolved {
		t.Errorf("ratio %+v, verdict %q; want 1 and a settled %q", v.Ratio, v.sentence(row.Title), noDifference)
	}
	var parts []string
	for _, d := range row.Details {
		parts = append(parts, d.Part)
	}
	if want := []string{"Get", "Get", "Set", "Set", geomeanPart, geomeanPart}; !slices.Equal(parts, want) {
		t.Errorf("detail parts = %v, want %v", parts, want)
	}
}

func TestSummarizeViewWithoutAlternative(t *testing.T) {
	cs := []contestant{{Name: "nxkv", Role: subject}, {Name: "floor", Role: reference}}
	j, names, costs := synthetic(cs, []float64{2, 1}, timeWords, versusBest)
	if row := summarizeView(j, j.Views[0], names, costs, nil, true); row.Skipped == "" || len(row.Verdicts) != 0 {
		t.Errorf("without an alternative: skipped %q, verdicts %v; want skipped and none", row.Skipped, row.Verdicts)
	}
}

// fakeJob is a job whose session draws costs: nxkv's are ratio times the
// alternative's, each with noise of its own (sigma, log scale) per round.
func fakeJob(ratio, sigma float64, seed uint64) (job, *int) {
	rounds := new(int)
	r := rand.New(rand.NewPCG(seed, 1))
	j := job{ID: "locks", Words: timeWords, Rounds: 15, Step: 16, MaxRounds: 47,
		Views: []view{{Title: "fake", Contestants: []contestant{{Name: "nxkv", Role: subject}, {Name: "alt", Desc: "an alt", Role: alternative}}}},
		open: func(names []string) (*session, error) {
			return &session{
				more: func(n int, tick func()) ([][][]float64, error) {
					*rounds += n
					a, b := make([]float64, n), make([]float64, n)
					for i := range n {
						common := math.Exp(0.5 * r.NormFloat64())
						a[i] = ratio * common * math.Exp(sigma*r.NormFloat64())
						b[i] = common * math.Exp(sigma*r.NormFloat64())
					}
					return [][][]float64{{a, b}}, nil
				},
				done: func() (map[string]string, jobRows) { return nil, jobRows{} },
			}, nil
		}}
	return j, rounds
}

// TestRunJobAddsRounds checks that a clear job stops after its first
// rounds, an unclear one adds rounds up to its bound and says it could not
// settle, and one that more rounds settle stops there.
func TestRunJobAddsRounds(t *testing.T) {
	mon := startLoadMonitor()
	defer mon.Close()
	tests := []struct {
		name         string
		ratio, sigma float64
		wantRounds   int
		wantSettled  bool
	}{
		{"clear", 2, 0.1, 15, true},
		{"equal within noise", 1, 0.4, 47, false},
		{"alike", 1, 0.01, 15, true},
	}
	for _, tt := range tests {
		j, rounds := fakeJob(tt.ratio, tt.sigma, 1)
		rows, _ := runJob(j, config{}, mon)
		if *rounds != tt.wantRounds || rows[0].Rounds != tt.wantRounds || (rows[0].Unresolved == "") != tt.wantSettled {
			t.Errorf("%s: %d rounds measured, row says %d, unresolved %q; want %d rounds, settled %v",
				tt.name, *rounds, rows[0].Rounds, rows[0].Unresolved, tt.wantRounds, tt.wantSettled)
		}
	}
	// A 20% difference, with noise the first rounds cannot resolve,
	// settles with more (for some seed).
	for seed := range uint64(20) {
		j, rounds := fakeJob(1.2, 0.2, seed)
		rows, _ := runJob(j, config{}, mon)
		if *rounds > 15 && rows[0].Unresolved == "" && rows[0].Verdicts[0].Outcome == "1.2x slower" {
			return
		}
	}
	t.Error("no seed of a 10% difference settled after adding rounds")
}

// adaptiveOutcome runs the headline's rule for adding rounds (15, then 16
// at a time up to 47) on costs drawn by draw and returns the final
// verdict's outcome. naive stops as soon as the 95% interval excludes 1.
// It resamples less than the suite does, to keep the simulation short.
func adaptiveOutcome(draw func(n int) (a, b []float64), naive bool) string {
	var a, b []float64
	for n, got := 15, 0; ; n = min(16, 47-got) {
		x, y := draw(n)
		a, b = append(a, x...), append(b, y...)
		got = len(a)
		last := got >= 47
		ci := bootstrapRatio(a, b, 0.95, 300)
		strict := ci
		if !naive {
			strict = bootstrapRatio(a, b, earlyLevel, 300)
		}
		outcome, ok := decide(ci, strict, timeWords, last)
		if ok || last {
			return outcome
		}
	}
}

// TestAdaptiveRoundsFalseDirections checks by simulation that, when nxkv
// costs exactly alikeWithin more than the alternative (a difference a
// verdict must not state), adding rounds states one about as rarely as one
// look at the most rounds would, and that the check would catch the naive
// rule (stop as soon as the 95% interval allows a direction). In 3000
// trials: one look 2.5%, the adaptive rule 3.0%, the naive rule 4.9%.
func TestAdaptiveRoundsFalseDirections(t *testing.T) {
	const trials = 1500
	draw := func(seed uint64) func(n int) (a, b []float64) {
		r := rand.New(rand.NewPCG(seed, 9))
		return func(n int) (a, b []float64) {
			for range n {
				a = append(a, (1+alikeWithin)*math.Exp(0.2*r.NormFloat64()))
				b = append(b, math.Exp(0.2*r.NormFloat64()))
			}
			return a, b
		}
	}
	var one, adaptive, naive int
	single, ad, nv := draw(1), draw(2), draw(3)
	for range trials {
		a, b := single(47)
		if o, _ := decide(bootstrapRatio(a, b, 0.95, 300), interval{}, timeWords, true); o != noDifference {
			one++
		}
		if adaptiveOutcome(ad, false) != noDifference {
			adaptive++
		}
		if adaptiveOutcome(nv, true) != noDifference {
			naive++
		}
	}
	rOne, rAdaptive, rNaive := float64(one)/trials, float64(adaptive)/trials, float64(naive)/trials
	t.Logf("spurious directions: one look at 47 rounds %.3f, the adaptive rule %.3f, the naive rule %.3f", rOne, rAdaptive, rNaive)
	if rAdaptive > rOne+0.015 {
		t.Errorf("the adaptive rule states a spurious direction in %.3f of trials, one look %.3f: want at most 0.015 more", rAdaptive, rOne)
	}
	if rNaive < rAdaptive+0.01 {
		t.Errorf("the naive rule's rate %.3f is not 0.01 above the adaptive rule's %.3f: the check could not catch it", rNaive, rAdaptive)
	}
}

// TestVerdictsNameTheComparison checks every headline view's verdict names
// what was compared in words.
func TestVerdictsNameTheComparison(t *testing.T) {
	env := &environment{targets: []*target{{Name: "Redis", Addr: "127.0.0.1:1"}, {Name: "miniredis", Addr: "127.0.0.1:2"},
		{Name: nxkvServerName, Addr: "127.0.0.1:3"}}}
	for _, j := range headlineJobs(tinyConfig(), env) {
		if j.Rounds%2 == 0 || j.Step%2 == 1 {
			t.Errorf("%s: %d rounds, adding %d: want the counts to stay odd", j.Views[0].Title, j.Rounds, j.Step)
		}
		for _, v := range j.Views {
			var alts int
			for _, c := range v.Contestants {
				if c.Role == alternative {
					alts++
					if c.Desc == "" {
						t.Errorf("%s: alternative %q has no description for the verdict", v.Title, c.Name)
					}
				}
				if strings.Contains(strings.ToLower(c.Desc+v.Title), "issue") {
					t.Errorf("%s: %q speaks of issues", v.Title, c.Desc)
				}
			}
			if alts == 0 || v.Skip != "" {
				t.Errorf("%s: %d alternatives, skipped %q", v.Title, alts, v.Skip)
			}
		}
	}
	noRedis := &environment{redisWhy: "no redis-server on PATH", targets: []*target{{Name: "miniredis", Addr: "127.0.0.1:2"},
		{Name: nxkvServerName, Addr: "127.0.0.1:3"}}}
	skipped := 0
	for _, j := range headlineJobs(tinyConfig(), noRedis) {
		for _, v := range j.Views {
			if v.Skip != "" {
				skipped++
			}
		}
	}
	if skipped != 3 {
		t.Errorf("without redis-server, %d views skipped, want the 3 over Redis", skipped)
	}
	if v := redisLockJob(tinyConfig(), &environment{doubleWhy: "nxkv-server: did not start"}).Views[1]; v.Skip == "" {
		t.Error("the test double view without its servers: no skip reason")
	}
}
