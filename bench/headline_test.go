package main

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestInterleaveRotatesTheFirst(t *testing.T) {
	var order []int
	costs := interleave(3, 4, func() {}, func(i int) float64 { order = append(order, i); return float64(i) })
	want := []int{0, 1, 2, 1, 2, 0, 2, 0, 1, 0, 1, 2}
	if !slices.Equal(order, want) {
		t.Errorf("interleave order = %v, want %v", order, want)
	}
	for i, c := range costs {
		if len(c) != 4 || c[0] != float64(i) {
			t.Errorf("costs[%d] = %v, want 4 rounds of %d", i, c, i)
		}
	}
}

// synthetic is a job over fixed costs: cost[c] per round, times a noise
// factor per round that hits every contestant of a round alike (a burst of
// load).
func synthetic(cs []contestant, cost []float64, words [2]string) (job, [][][]float64) {
	noise := []float64{1, 3, 1.2, 0.9, 5, 1, 1.1, 2, 1, 1, 0.8, 1, 4, 1, 1}
	costs := make([][]float64, len(cs))
	for c := range cs {
		for _, n := range noise {
			costs[c] = append(costs[c], cost[c]*n)
		}
	}
	return job{ID: "raw", Title: "the job", Words: words, Rounds: len(noise), Contestants: cs}, [][][]float64{costs}
}

func TestSummarizeJob(t *testing.T) {
	cs := []contestant{
		{Name: "nxkv", Role: subject},
		{Name: "slow", Desc: "a slow map", Role: alternative},
		{Name: "fast", Desc: "a fast map", Role: alternative},
		{Name: "floor", Desc: "a floor", Role: reference}, // fastest, but never the yardstick
		{Name: "nxkv option", Role: variant},
	}
	tests := []struct {
		name        string
		cost        []float64
		words       [2]string
		wantBest    string
		wantVerdict string
	}{
		{"nxkv slower", []float64{20, 40, 10, 1, 5}, timeWords, "fast", "the job vs a fast map: 2.0x slower"},
		{"nxkv faster", []float64{10, 40, 30, 1, 5}, timeWords, "fast", "the job vs a fast map: 3.0x faster"},
		{"memory", []float64{150, 113, 128, 1, 5}, memoryWords, "slow", "the job vs a slow map: 1.3x more memory"},
	}
	for _, tt := range tests {
		j, costs := synthetic(cs, tt.cost, tt.words)
		row := summarizeJob(j, cs, costs, nil)
		if row.Best != tt.wantBest || row.Verdict != tt.wantVerdict {
			t.Errorf("%s: best %q, verdict %q; want %q, %q", tt.name, row.Best, row.Verdict, tt.wantBest, tt.wantVerdict)
		}
		// The noise hits every contestant of a round alike, so the
		// ratio is exact and its interval has no width, while
		// the costs themselves vary fivefold.
		if !near(row.Ratio.Lo, row.Ratio.Median) || !near(row.Ratio.Hi, row.Ratio.Median) {
			t.Errorf("%s: ratio interval %+v, want a point", tt.name, row.Ratio)
		}
		if row.SubjectCost.Hi <= row.SubjectCost.Lo {
			t.Errorf("%s: nxkv's cost interval %+v, want the noise to show", tt.name, row.SubjectCost)
		}
		if len(row.Details) != len(cs) {
			t.Errorf("%s: %d detail rows, want %d", tt.name, len(row.Details), len(cs))
		}
	}
}

// near reports whether a and b are equal but for rounding.
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(math.Abs(a), math.Abs(b)) }

func TestSummarizeJobParts(t *testing.T) {
	cs := []contestant{{Name: "nxkv", Role: subject}, {Name: "map", Desc: "a map", Role: alternative}}
	// nxkv is 4x slower on one op and 4x faster on the other: even overall.
	costs := [][][]float64{
		{{40, 40, 40, 40, 40, 40}, {10, 10, 10, 10, 10, 10}},
		{{10, 10, 10, 10, 10, 10}, {40, 40, 40, 40, 40, 40}},
	}
	j := job{ID: "raw", Title: "op", Words: timeWords, Parts: []string{"Get", "Set"}, Rounds: 6}
	row := summarizeJob(j, cs, costs, nil)
	if row.Ratio.Median != 1 || row.Verdict != "op vs a map: 1.0x slower" {
		t.Errorf("ratio %+v, verdict %q; want 1 and an even verdict", row.Ratio, row.Verdict)
	}
	var parts []string
	for _, d := range row.Details {
		parts = append(parts, d.Part)
	}
	if want := []string{"Get", "Get", "Set", "Set", geomeanPart, geomeanPart}; !slices.Equal(parts, want) {
		t.Errorf("detail parts = %v, want %v", parts, want)
	}
}

func TestSummarizeJobWithoutAlternative(t *testing.T) {
	cs := []contestant{{Name: "nxkv", Role: subject}, {Name: "floor", Role: reference}}
	j, costs := synthetic(cs, []float64{2, 1}, timeWords)
	if row := summarizeJob(j, cs, costs, nil); row.Skipped == "" || row.Verdict != "" {
		t.Errorf("without an alternative: skipped %q, verdict %q; want skipped and no verdict", row.Skipped, row.Verdict)
	}
}

// TestVerdictsNameTheComparison checks every headline job's verdict names
// what was compared in words, whichever alternative wins.
func TestVerdictsNameTheComparison(t *testing.T) {
	env := &environment{targets: []*target{{Name: "Redis", Addr: "127.0.0.1:1"}, {Name: "miniredis", Addr: "127.0.0.1:2"},
		{Name: nxkvServerName, Addr: "127.0.0.1:3"}}}
	for _, j := range headlineJobs(tinyConfig(), env) {
		var alts int
		for _, c := range j.Contestants {
			if c.Role == alternative {
				alts++
				if c.Desc == "" {
					t.Errorf("%s: alternative %q has no description for the verdict", j.Title, c.Name)
				}
			}
			if strings.Contains(strings.ToLower(c.Desc+j.Title), "issue") {
				t.Errorf("%s: %q speaks of issues", j.Title, c.Desc)
			}
		}
		if alts == 0 {
			t.Errorf("%s: no alternative to compare with", j.Title)
		}
	}
	if j := redisLockJob(tinyConfig(), nil, "no redis-server on PATH"); j.Skip == "" {
		t.Error("redisLockJob without a server: no skip reason")
	}
	if j := testDoubleJob(tinyConfig(), &environment{doubleWhy: "nxkv-server: did not start"}); j.Skip == "" {
		t.Error("testDoubleJob without its servers: no skip reason")
	}
}
