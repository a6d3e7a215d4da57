package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// recorder keeps every write with the time it happened, to check that the
// report streams.
type recorder struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes []struct {
		at  time.Time
		end int // offset in buf after the write
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n, _ := r.buf.Write(p)
	r.writes = append(r.writes, struct {
		at  time.Time
		end int
	}{time.Now(), r.buf.Len()})
	return n, nil
}

// when returns the time the first line containing s was written.
func (r *recorder) when(t *testing.T, s string) time.Time {
	t.Helper()
	i := strings.Index(r.buf.String(), s)
	if i < 0 {
		t.Fatalf("output lacks %q", s)
	}
	for _, w := range r.writes {
		if w.end > i {
			return w.at
		}
	}
	t.Fatalf("no write holds %q", s)
	return time.Time{}
}

func allWorkloads() map[string]bool {
	m := map[string]bool{}
	for _, w := range workloads {
		m[w] = true
	}
	return m
}

// runSuite runs the suite in the tiny configuration with no redis-server on
// PATH, as a user without Redis would.
func runSuite(t *testing.T, o options) (*Results, *recorder) {
	t.Helper()
	t.Setenv("PATH", t.TempDir())
	rec := &recorder{}
	env := &environment{}
	defer env.close()
	if o.want == nil {
		o.want = allWorkloads()
	}
	res := execute(newConsole(rec, io.Discard), tinyConfig(), o, env)
	return res, rec
}

// full is one tiny full run, shared by the tests that check its parts.
var full struct {
	once sync.Once
	res  *Results
	out  string
}

type fullResult struct {
	res *Results
	out string
}

func fullRun(t *testing.T) fullResult {
	t.Helper()
	full.once.Do(func() {
		res, rec := runSuite(t, options{full: true})
		full.res, full.out = res, rec.buf.String()
	})
	if full.res == nil {
		t.Fatal("the shared full run did not finish")
	}
	return fullResult{full.res, full.out}
}

// inOrder reports the first of parts that does not follow the previous one
// in s.
func inOrder(s string, parts ...string) error {
	at := 0
	for _, p := range parts {
		i := strings.Index(s[at:], p)
		if i < 0 {
			return errors.New("missing or out of order: " + p)
		}
		at += i + len(p)
	}
	return nil
}

var (
	// ratioToken is a factor in the report's ratio format and what follows it.
	ratioToken    = regexp.MustCompile(`\b\d+(?:\.\d+)?x(.{0,12})`)
	missingFigure = regexp.MustCompile(`(vs|nxkv|: ) - [(,]|vs -[ ,)]`)
	verdictRE     = regexp.MustCompile(`^  (.+) vs (.+): +(\d+(?:\.\d+)?x (?:slower|faster|more memory|less memory)|no clear difference) +\(\d\d% CI .+\)  nxkv .+, .+`)
)

// checkUserText returns what the report says that a user cannot read:
// internal issue numbers, ratios in another format, empty comparisons.
func checkUserText(out string) []string {
	var bad []string
	for _, m := range ratioToken.FindAllStringSubmatch(out, -1) {
		next := m[1]
		ok := false
		for _, w := range []string{" slower", " faster", " more memory", " less memory", "–"} {
			ok = ok || strings.HasPrefix(next, w)
		}
		if !ok {
			bad = append(bad, "ratio not in the report's format: "+m[0])
		}
	}
	for _, s := range []string{"issue", "Issue", "0x (", "1/"} {
		if strings.Contains(out, s) {
			bad = append(bad, "report says "+s)
		}
	}
	// A figure that was not measured printed as "-" in a sentence.
	for _, m := range missingFigure.FindAllString(out, -1) {
		bad = append(bad, "report compares with a missing figure: "+m)
	}
	return bad
}

func TestCheckUserTextCatchesPlantedText(t *testing.T) {
	for _, planted := range []string{"[MISSED] issue 5: raw ops", "speed 1/190x", "0.01x", "0x (1.8µs vs -",
		"- [n/a] goal: - (1.3µs vs - per cycle)", "per cycle: nxkv - (±0%, typical -)"} {
		if bad := checkUserText("report\n" + planted + "\n"); len(bad) == 0 {
			t.Errorf("checkUserText(%q) found nothing", planted)
		}
	}
	if bad := checkUserText("lock cycle in process vs a map+Mutex lock: 1.3x slower (95% CI 1.2x–1.4x slower)"); len(bad) != 0 {
		t.Errorf("checkUserText(a good verdict) = %v, want nothing", bad)
	}
}

// TestDefaultRunStructure runs the default run as a user without
// redis-server would and checks what it prints, and when: the headline
// first, one verdict line per job in words, streamed as each job ends, the
// Redis line saying it was skipped and why, then the details and the
// machine's load.
func TestDefaultRunStructure(t *testing.T) {
	res, rec := runSuite(t, options{})
	out := rec.buf.String()
	if err := inOrder(out,
		"# nxkv bench, default run",
		"machine: ",
		"redis-server: none, so the comparisons over Redis are skipped: no redis-server on PATH",
		"## nxkv against the alternatives, job by job",
		"  embedded KV operation vs ",
		"  lock cycle in process vs ",
		"  contended lock in process, 4 goroutines on one key vs ",
		"  contended lock in process, 4 goroutines on 8 keys vs ",
		"  hand-off to a waiter vs ",
		"  reclaiming expired keys vs ",
		"  memory per key with a TTL vs ",
		"  lock cycle over Redis: skipped, no redis-server on PATH (install it",
		"  redislock cycle on a Redis test double vs miniredis: ",
		"  contended lock over Redis, 4 goroutines on one key: skipped, no redis-server on PATH",
		"  contended lock over Redis, 4 goroutines on 8 keys: skipped, no redis-server on PATH",
		"## Details of the headline",
		"### embedded KV operation:", "### lock cycle in process:", "### contended lock in process, 4 goroutines on one key:",
		"### contended lock in process, 4 goroutines on 8 keys:", "### hand-off to a waiter:",
		"### reclaiming expired keys:", "### memory per key with a TTL:", "### redislock cycle on a Redis test double:",
		"go run ./bench -full",
		"## Not available in this run",
		"- Redis peers: no redis-server on PATH",
		"## The machine during the run",
	); err != nil {
		t.Errorf("default run: %v\n%s", err, out)
	}
	if strings.Contains(out, "# The full suite") || strings.Contains(out, "### lock cycle over Redis") {
		t.Errorf("default run ran more than the headline:\n%s", out)
	}
	verdicts := 0
	for _, line := range strings.Split(out, "\n") {
		if verdictRE.MatchString(line) {
			verdicts++
		}
	}
	if verdicts != 8 {
		t.Errorf("%d verdict lines of the form 'job vs alternative: 1.3x slower  (95%% CI ...)  nxkv ..., ...', want 8:\n%s", verdicts, out)
	}
	for _, b := range checkUserText(out) {
		t.Error(b)
	}
	if len(res.Headline) != 11 {
		t.Fatalf("headline rows = %d, want 11", len(res.Headline))
	}
	for _, h := range res.Headline {
		if overRedis := strings.Contains(h.Title, "over Redis"); overRedis != (h.Skipped != "") {
			t.Errorf("%s: skipped %q", h.Title, h.Skipped)
			continue
		}
		for _, v := range h.Verdicts {
			// A round whose repetition saw no hand-off has no ratio; most must.
			if v.Ratio.N < h.Rounds/2 || v.Ratio.N > h.Rounds || v.Ratio.Lo > v.Ratio.Median || v.Ratio.Hi < v.Ratio.Median {
				t.Errorf("%s: ratio %+v over %d rounds", h.Title, v.Ratio, h.Rounds)
			}
			beyond := v.Ratio.Hi < 1/(1+alikeWithin) || v.Ratio.Lo > 1+alikeWithin
			if beyond == (v.Outcome == noDifference) {
				t.Errorf("%s vs %s: outcome %q with interval %+v", h.Title, v.Desc, v.Outcome, v.Ratio)
			}
		}
	}
	// Streaming: the header is out before the first verdict, and each
	// verdict as soon as its job ends; the expiry job alone waits for two
	// rounds of real deadlines per contestant, so its line comes well
	// after the hand-off's.
	if !rec.when(t, "# nxkv bench").Before(rec.when(t, "  embedded KV operation vs ")) {
		t.Error("the header was not written before the first job ended")
	}
	lead := time.Duration(res.Config.Head.ExpiryRounds) * 3 * (res.Config.Head.ExpiryLead + res.Config.Head.ExpirySpread)
	if gap := rec.when(t, "  reclaiming expired keys vs ").Sub(rec.when(t, "  hand-off to a waiter vs ")); gap < lead {
		t.Errorf("the hand-off and expiry verdicts were written %v apart, want at least %v: the report is not streamed", gap, lead)
	}
}

// TestFullRunReport checks the full run's sections, JSON, charts and
// Markdown report.
func TestFullRunReport(t *testing.T) {
	f := fullRun(t)
	dir := t.TempDir()
	o := options{jsonOut: filepath.Join(dir, "r.json"), svgDir: filepath.Join(dir, "charts"), mdOut: filepath.Join(dir, "BENCHMARKS.md"), label: "a test run"}
	if err := writeOutputs(f.res, o); err != nil {
		t.Fatal(err)
	}
	if err := inOrder(f.out,
		"# nxkv bench, full run",
		"## nxkv against the alternatives, job by job",
		"## Details of the headline",
		"# The full suite",
		"## Raw operations: 64 keys, 1 goroutine(s)",
		"## Lock cycle (Obtain + Release)",
		"## Expiry (2048 keys)",
		"## Memory per key",
		"## Goals nxkv sets itself",
		"## Not available in this run",
		"## The machine during the run",
	); err != nil {
		t.Errorf("full run: %v\n%s", err, f.out)
	}
	for _, b := range checkUserText(f.out) {
		t.Error(b)
	}

	b, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Results
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("JSON does not parse: %v", err)
	}
	if len(back.Headline) != len(f.res.Headline) || len(back.Raw) != len(f.res.Raw) || len(back.Locks) != len(f.res.Locks) {
		t.Errorf("JSON round trip: %d/%d/%d rows, want %d/%d/%d", len(back.Headline), len(back.Raw), len(back.Locks),
			len(f.res.Headline), len(f.res.Raw), len(f.res.Locks))
	}

	for _, name := range []string{"headline.svg", "raw.svg", "locks.svg", "expiry.svg", "memory.svg"} {
		svg, err := os.ReadFile(filepath.Join(dir, "charts", name))
		if err != nil {
			t.Errorf("chart %s: %v", name, err)
			continue
		}
		if err := wellFormed(svg); err != nil {
			t.Errorf("%s is not well-formed XML: %v", name, err)
		}
		// Error bars are paths: the headline, raw and lock charts have one
		// per bar with repetitions.
		if name == "headline.svg" || name == "raw.svg" || name == "locks.svg" {
			if n := bytes.Count(svg, []byte("<path ")); n < 3 {
				t.Errorf("%s has %d error bars, want one per bar", name, n)
			}
		}
	}
	if err := wellFormed(renderSVG(&Results{}, chart{title: "empty"})); err != nil {
		t.Errorf("an empty chart is not well-formed: %v", err)
	}

	md, err := os.ReadFile(filepath.Join(dir, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := inOrder(string(md),
		"# nxkv benchmarks",
		"a test run",
		"bash bench/regenerate.sh",
		"## Results: nxkv against the alternatives, job by job",
		"](charts/headline.svg)",
		"| job | nxkv | alternative | nxkv is | 95% CI | rounds |",
		"| embedded KV operation |",
		"| lock cycle over Redis | | | skipped: no redis-server on PATH",
		"## How these figures were measured",
		"## The machine",
		"| CPU |",
		"## The full suite",
		"](charts/raw.svg)",
		"](charts/memory.svg)",
		"## Goals nxkv sets itself",
		"## Reading the full suite's tables",
		"## How to run it",
		"## Method, workload by workload",
		"## The engine's design",
		"](docs/design.md)",
	); err != nil {
		t.Errorf("Markdown report: %v\n%s", err, md)
	}
	for _, b := range checkUserText(string(md)) {
		t.Error(b)
	}
	if n := strings.Count(string(md), "docs/design.md"); n != 2 {
		t.Errorf("the report links the design document %d times, want once (its text and its target)", n/2)
	}

	// -from renders the same report from the JSON, without measuring.
	again := filepath.Join(dir, "again")
	if code := run([]string{"-from", filepath.Join(dir, "r.json"), "-svg", filepath.Join(again, "charts"), "-md", filepath.Join(again, "BENCHMARKS.md"),
		"-label", "a test run"}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("run(-from) = %d, want 0", code)
	}
	md2, err := os.ReadFile(filepath.Join(again, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if string(md2) != string(md) {
		t.Errorf("the report rendered with -from differs from the run's own:\n%s", md2)
	}
}

func wellFormed(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func TestWellFormedCatchesBrokenXML(t *testing.T) {
	if err := wellFormed([]byte(`<svg><text>a & b</text></svg>`)); err == nil {
		t.Error("wellFormed(unescaped &) = nil, want an error")
	}
	if got := xmlEscape(`a<b>&"c"`); got != "a&lt;b&gt;&amp;&quot;c&quot;" {
		t.Errorf("xmlEscape = %q", got)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-only", "nonsense"},
		{"-peers", "("},
		{"-no-such-flag"},
		{"-md", "x.md"}, // without -svg
		{"extra"},
	} {
		if code := run(args, io.Discard, io.Discard); code != 2 {
			t.Errorf("run(%q) = %d, want 2", args, code)
		}
	}
}
