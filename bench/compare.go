package main

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// compareFiles reads the results in files and compares their verdicts; it
// returns the exit code: 1 when the runs disagree or a verdict states a
// direction its interval does not support, 2 on a bad argument.
func compareFiles(files []string, stdout, stderr io.Writer) int {
	if len(files) < 2 {
		fmt.Fprintln(stderr, "bench: -compare needs two or more -json files")
		return 2
	}
	var names []string
	var runs []*Results
	for _, f := range files {
		r, err := readJSON(f)
		if err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 2
		}
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".json"))
		runs = append(runs, r)
	}
	for i, r := range runs {
		fmt.Fprintf(stdout, "%s: %s run started %s, %s; %s\n", names[i], r.Mode, r.Started.Format("2006-01-02 15:04:05 UTC"), r.Elapsed, r.Busy)
	}
	fmt.Fprintln(stdout)
	problems := compareRuns(stdout, names, runs)
	if len(problems) == 0 {
		fmt.Fprintf(stdout, "\nEvery verdict has the same direction, or says %q, in all %d runs.\n", noDifference, len(runs))
		return 0
	}
	fmt.Fprintf(stdout, "\n%d problems:\n", len(problems))
	for _, p := range problems {
		fmt.Fprintf(stdout, "- %s\n", p)
	}
	return 1
}

// This file compares the verdicts of several runs (-compare): whether
// consecutive runs of the headline say the same thing.

// verdictKey names one verdict across runs: the view and the alternative.
func verdictKey(h HeadlineRow, v Verdict) string { return h.Title + " vs " + v.Desc }

// runVerdict is one run's verdict on one key.
type runVerdict struct {
	outcome string // "1.3x faster", noDifference, or "skipped"
	ratio   interval
	rounds  int
	settled bool
}

// direction is the verdict's direction: +1 (nxkv costs more), -1 (less), 0
// (no clear difference, or not measured).
func (v runVerdict) direction() int {
	switch {
	case v.outcome == noDifference || v.ratio.N == 0:
		return 0
	case v.ratio.Median > 1:
		return 1
	}
	return -1
}

// compareRuns prints, per verdict, what each run said and the spread of
// its ratio across the runs, and returns the problems: verdicts whose
// direction differs between runs, and directions stated with an interval
// that includes 1.
func compareRuns(w io.Writer, names []string, runs []*Results) (problems []string) {
	var keys []string
	byKey := map[string][]runVerdict{}
	for i, r := range runs {
		for _, h := range r.Headline {
			if h.Skipped != "" {
				continue
			}
			for _, v := range h.Verdicts {
				k := verdictKey(h, v)
				if _, ok := byKey[k]; !ok {
					keys = append(keys, k)
					byKey[k] = make([]runVerdict, len(runs))
				}
				byKey[k][i] = runVerdict{outcome: v.Outcome, ratio: v.Ratio, rounds: h.Rounds, settled: v.Resolved}
				if v.Outcome != noDifference && v.Ratio.includes(1) {
					problems = append(problems, fmt.Sprintf("%s: %s says %s with a 95%% interval that includes 1 (%s)", k, names[i], v.Outcome,
						fmtTimesCI(v.Ratio.Lo, v.Ratio.Hi, h.Words)))
				}
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "verdict\t")
	for _, n := range names {
		fmt.Fprintf(tw, "%s\t", n)
	}
	fmt.Fprintln(tw, "ratio, lowest-highest\tsame?")
	for _, k := range keys {
		vs := byKey[k]
		fmt.Fprintf(tw, "%s\t", k)
		dirs := map[int]bool{}
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range vs {
			cell := "-"
			if v.ratio.N > 0 {
				cell = fmt.Sprintf("%s (%d)", v.outcome, v.rounds)
				if !v.settled {
					cell += "*"
				}
				dirs[v.direction()] = true
				lo, hi = min(lo, v.ratio.Median), max(hi, v.ratio.Median)
			}
			fmt.Fprintf(tw, "%s\t", cell)
		}
		same := "yes"
		if len(dirs) > 1 {
			same = "NO"
			if dirs[1] && dirs[-1] {
				same = "NO, opposite directions"
			}
			var said []string
			for i, v := range vs {
				said = append(said, names[i]+": "+v.outcome)
			}
			problems = append(problems, fmt.Sprintf("%s: the runs disagree (%s)", k, strings.Join(said, ", ")))
		}
		spread := "-"
		if hi > 0 {
			spread = fmt.Sprintf("%.3f-%.3f", lo, hi)
		}
		fmt.Fprintf(tw, "%s\t%s\n", spread, same)
	}
	tw.Flush()
	fmt.Fprintf(w, "(each cell: the verdict and its rounds; * not settled; ratio = nxkv's cost ÷ the alternative's)\n")
	return problems
}
