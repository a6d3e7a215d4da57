package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The documents that quote the suite's figures, and the results they
// quote, relative to the bench module.
const (
	resultsJSON  = "results/latest.json"
	benchmarksMD = "../BENCHMARKS.md"
	readmeMD     = "../README.md"
	chartsDir    = "results"
)

// firstDiff describes where got first differs from want, or returns "".
func firstDiff(want, got string) string {
	if want == got {
		return ""
	}
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(wl), len(gl)) {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d is\n\t%q\nwhere the results give\n\t%q", i+1, g, w)
		}
	}
	return "they differ"
}

// figure is a number with a unit or a factor, as the reports print them.
var figure = regexp.MustCompile(`\d+(?:\.\d+)?\s?(?:ns|µs|ms|s|B|x)\b|\d+(?:\.\d+)?x`)

// strayQuotes returns the lines of the README outside its generated block
// that quote a figure next to the title of a headline job: figures the
// results do not vouch for.
func strayQuotes(readme string, r *Results) []string {
	_, start, end, err := readmeBlock(readme)
	if err != nil {
		return []string{err.Error()}
	}
	outside := readme[:start] + readme[end:]
	var bad []string
	for _, line := range strings.Split(outside, "\n") {
		l := strings.ToLower(line)
		for _, h := range r.Headline {
			if strings.Contains(l, strings.ToLower(h.Title)) && figure.MatchString(line) {
				bad = append(bad, fmt.Sprintf("the README quotes %q outside its generated block: %s", h.Title, line))
			}
		}
	}
	return bad
}

// TestDocsQuoteTheResults checks that BENCHMARKS.md, its charts and the
// README's figures are exactly what bench/results/latest.json renders, so
// that no document quotes a figure for a job that differs from the JSON,
// and that the README quotes none outside its generated block. After a
// change to how reports are rendered, re-render them with
//
//	go run ./bench -from bench/results/latest.json -svg bench/results -md BENCHMARKS.md -readme README.md
func TestDocsQuoteTheResults(t *testing.T) {
	r, err := readJSON(resultsJSON)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	renderMarkdown(&md, "bench/results", r.Label, r)
	got, err := os.ReadFile(benchmarksMD)
	if err != nil {
		t.Fatal(err)
	}
	if d := firstDiff(md.String(), string(got)); d != "" {
		t.Errorf("BENCHMARKS.md is not what %s renders: %s", resultsJSON, d)
	}
	want := map[string]bool{}
	for _, c := range charts(r) {
		want[c.file] = true
		got, err := os.ReadFile(filepath.Join(chartsDir, c.file))
		if err != nil {
			t.Error(err)
			continue
		}
		if d := firstDiff(string(renderSVG(r, c)), string(got)); d != "" {
			t.Errorf("%s is not what %s renders: %s", c.file, resultsJSON, d)
		}
	}
	svgs, _ := filepath.Glob(filepath.Join(chartsDir, "*.svg"))
	for _, s := range svgs {
		if !want[filepath.Base(s)] {
			t.Errorf("%s is a chart the results do not render", s)
		}
	}
	readme, err := os.ReadFile(readmeMD)
	if err != nil {
		t.Fatal(err)
	}
	block, _, _, err := readmeBlock(string(readme))
	if err != nil {
		t.Fatal(err)
	}
	var rb bytes.Buffer
	renderReadme(&rb, r)
	if d := firstDiff(rb.String(), block); d != "" {
		t.Errorf("the README's figures are not what %s renders: %s", resultsJSON, d)
	}
	for _, b := range strayQuotes(string(readme), r) {
		t.Error(b)
	}
}

// TestDocsCheckCatchesChangedFigures plants a changed figure in each
// document and checks the comparisons see it.
func TestDocsCheckCatchesChangedFigures(t *testing.T) {
	r, err := readJSON(resultsJSON)
	if err != nil {
		t.Fatal(err)
	}
	h := r.Headline[0]
	cost := h.Unit.format(h.SubjectCost.Median)
	var md bytes.Buffer
	renderMarkdown(&md, "bench/results", r.Label, r)
	planted := strings.Replace(md.String(), "| "+h.Title+" | "+cost+" |", "| "+h.Title+" | 1"+cost+" |", 1)
	if planted == md.String() {
		t.Fatalf("the Markdown report has no row %q", "| "+h.Title+" | "+cost+" |")
	}
	if firstDiff(md.String(), planted) == "" {
		t.Error("firstDiff saw no difference in a BENCHMARKS.md with a changed figure")
	}
	readme := "intro\n" + readmeBegin + "\n" + readmeEnd + "\nThe " + h.Title + " took 1" + cost + " on my laptop.\n"
	if len(strayQuotes(readme, r)) != 1 {
		t.Errorf("strayQuotes missed a figure for %q outside the block", h.Title)
	}
	if bad := strayQuotes("intro\n"+readmeBegin+"\n"+h.Title+": "+cost+"\n"+readmeEnd+"\n", r); len(bad) != 0 {
		t.Errorf("strayQuotes flagged the generated block itself: %v", bad)
	}
}
