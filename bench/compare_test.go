package main

import (
	"bytes"
	"strings"
	"testing"
)

// verdictRun is a run with one verdict on one view.
func verdictRun(outcome string, lo, med, hi float64) *Results {
	return &Results{Headline: []HeadlineRow{{Title: "lock cycle", Words: timeWords, Rounds: 15,
		Verdicts: []Verdict{{Desc: "a lock", Outcome: outcome, Ratio: interval{Lo: lo, Median: med, Hi: hi, N: 15}, Resolved: true}}}}}
}

func TestCompareRuns(t *testing.T) {
	tests := []struct {
		name string
		runs []*Results
		want []string // a substring of each problem, in order
	}{
		{"agree", []*Results{verdictRun("1.3x faster", 0.7, 0.75, 0.8), verdictRun("1.4x faster", 0.68, 0.72, 0.77)}, nil},
		{"alike", []*Results{verdictRun(noDifference, 0.97, 1, 1.03), verdictRun(noDifference, 0.9, 1.02, 1.1)}, nil},
		{"a direction, then none", []*Results{verdictRun("1.3x faster", 0.7, 0.75, 0.8), verdictRun(noDifference, 0.9, 0.95, 1.02)},
			[]string{"the runs disagree"}},
		{"a direction its interval does not support", []*Results{verdictRun("1.3x faster", 0.7, 0.75, 1.01), verdictRun("1.3x faster", 0.7, 0.75, 0.8)},
			[]string{"with a 95% interval that includes 1"}},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		problems := compareRuns(&out, []string{"a", "b"}, tt.runs)
		if len(problems) != len(tt.want) {
			t.Errorf("%s: problems %q, want %d", tt.name, problems, len(tt.want))
			continue
		}
		for i, p := range problems {
			if !strings.Contains(p, tt.want[i]) {
				t.Errorf("%s: problem %q, want it to say %q", tt.name, p, tt.want[i])
			}
		}
		if !strings.Contains(out.String(), "lock cycle vs a lock") {
			t.Errorf("%s: the table does not name the verdict:\n%s", tt.name, out.String())
		}
	}
	var out bytes.Buffer
	compareRuns(&out, []string{"a", "b"}, []*Results{verdictRun("1.3x faster", 0.7, 0.75, 0.8), verdictRun("1.3x slower", 1.2, 1.3, 1.4)})
	if !strings.Contains(out.String(), "opposite directions") {
		t.Errorf("opposite directions not called so:\n%s", out.String())
	}
}
