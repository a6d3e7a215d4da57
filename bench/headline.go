package main

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
)

// role is what a contestant of a headline job stands for.
type role int

const (
	// subject is nxkv as a user gets it by default.
	subject role = iota
	// alternative is what a user would otherwise pick for the job; a
	// verdict compares nxkv with it (see versus).
	alternative
	// variant is nxkv with a non-default option, shown in the details.
	variant
	// reference is a floor with less function (sync.Mutex has no TTL and
	// no token, a bare SET NX PX has no retry strategy), or the same
	// client on another server: shown in the details, never in a verdict.
	reference
)

func (r role) String() string {
	return [...]string{"nxkv", "alternative", "nxkv option", "reference"}[r]
}

// contestant is one implementation measured in a headline job.
type contestant struct {
	Name string // as in the tables
	Desc string // in a verdict, after "vs"
	Role role
}

// versus says which alternatives a view's verdicts compare nxkv with.
type versus int

const (
	// versusBest compares with the alternative of lowest median cost,
	// for jobs whose alternatives are far apart (maps, caches, sweepers).
	versusBest versus = iota
	// versusEach gives a verdict against every alternative, for jobs
	// whose alternatives are close to each other (the Redis lock
	// clients), where "the best" would change from run to run.
	versusEach
)

// view is one question a job answers: some of the job's contestants, with
// their roles, and the verdicts it gives. Most jobs have one view; jobs
// whose contestants also answer another question share one measurement
// (one number per fact) and have several.
type view struct {
	Title  string // the verdict's subject: "lock cycle in process"
	Metric string // what a cost is, for the details
	Versus versus
	// Contestants are names of the job's peers, with their roles here.
	Contestants []contestant
	// Skip, when set, says why this view cannot run here.
	Skip string
	// Workload is the view's -only workload when it is not the job's.
	Workload string
	// Axis is what the view compares, which decides each contestant's
	// family in the charts.
	Axis axis
}

// workload is the -only workload that selects v in job j.
func (v view) workload(j job) string {
	if v.Workload != "" {
		return v.Workload
	}
	return j.ID
}

// job is one measurement of the headline: its contestants' costs in
// interleaved rounds, from which each view draws its verdicts.
type job struct {
	ID    string // its -only workload: raw, locks, resp, expiry, memory
	Words [2]string
	Unit  unit
	// Parts are measured separately and combined per round by geometric
	// mean (the KV operations); nil means one part.
	Parts []string
	// Rounds are measured first; while a verdict is unresolved (see
	// decide) rounds are added, Step at a time, up to MaxRounds. Rounds
	// and Step keep the count odd, so a median is one round's cost.
	Rounds, Step, MaxRounds int
	Views                   []view
	// open prepares the named contestants (the views' contestants that
	// run, in order) and returns the session that measures them.
	open func(names []string) (*session, error)
}

// session measures the contestants of one job.
type session struct {
	// more measures n more interleaved rounds of every contestant and
	// returns costs[part][contestant][round]; tick is called after each
	// measurement.
	more func(n int, tick func()) ([][][]float64, error)
	// done ends the session: a remark per contestant name, and the rows
	// the measurement gives the full suite's tables. It releases
	// everything the session holds.
	done func() (notes map[string]string, rows jobRows)
}

// jobRows are a headline job's measurements in the full suite's row
// formats, so that the tables show the same figures (one number per fact).
type jobRows struct {
	Raw   []RawRow
	Locks []LockRow
}

// peers returns the names of every contestant of the runnable views, in
// order, once each.
func (j job) peers() []string {
	var names []string
	for _, v := range j.Views {
		if v.Skip != "" {
			continue
		}
		for _, c := range v.Contestants {
			if !slices.Contains(names, c.Name) {
				names = append(names, c.Name)
			}
		}
	}
	return names
}

// maxRounds is how many rounds the job may run in all.
func (j job) maxRounds() int { return max(j.Rounds, j.MaxRounds) }

// unit formats a cost.
type unit int

const (
	nanoseconds unit = iota
	bytesUnit
)

func (u unit) format(x float64) string {
	if u == bytesUnit {
		return fmt.Sprintf("%.0f B", x)
	}
	return fmtNs(x)
}

// HeadlineRow is the answer to one view of a job.
type HeadlineRow struct {
	Job    string `json:"job"`
	Title  string `json:"title"`
	Metric string `json:"metric"`
	// Rounds is how many rounds ran; MaxRounds the bound adaptive rounds
	// could reach.
	Rounds    int    `json:"rounds"`
	MaxRounds int    `json:"max_rounds"`
	Skipped   string `json:"skipped,omitempty"`

	Subject     string   `json:"subject,omitempty"`
	SubjectCost interval `json:"subject_cost"`
	// Verdicts compare nxkv with the best alternative, or with each (see
	// versus).
	Verdicts []Verdict `json:"verdicts,omitempty"`
	// Unresolved says why a verdict is still "no clear difference" with
	// an interval too wide to tell after MaxRounds rounds; empty when every
	// verdict was resolved.
	Unresolved string      `json:"unresolved,omitempty"`
	Busy       Busy        `json:"machine"`
	Details    []DetailRow `json:"details,omitempty"`

	// Words and Unit say how to print the costs and ratios.
	Words [2]string `json:"words"`
	Unit  unit      `json:"unit"`
	// Axis is what the view compares (see families.go).
	Axis axis `json:"axis"`
}

// Verdict is nxkv against one alternative.
type Verdict struct {
	Against string   `json:"against"`      // its peer name
	Desc    string   `json:"against_desc"` // in words: "a map+Mutex lock"
	Cost    interval `json:"cost"`
	// Ratio is nxkv's median cost divided by the alternative's, with a
	// 95% paired-bootstrap interval over the rounds.
	Ratio interval `json:"ratio"`
	// Outcome is the ratio in words, or noDifference when the interval
	// includes 1.
	Outcome string `json:"outcome"`
	// Resolved is false when the interval includes 1 and is too wide to
	// say the two are alike (see decide).
	Resolved bool `json:"resolved"`
	// Family is the alternative's family in the charts.
	Family string `json:"family"`
}

// noDifference is the outcome of a verdict whose interval includes 1.
const noDifference = "no clear difference"

// DetailRow is one contestant (on one part, for multi-part jobs).
type DetailRow struct {
	Part string   `json:"part,omitempty"`
	Peer string   `json:"peer"`
	Role string   `json:"role"`
	Cost interval `json:"cost"`
	// VsSubject is nxkv's median cost divided by this contestant's (zero
	// for nxkv itself).
	VsSubject interval `json:"nxkv_vs_this"`
	Note      string   `json:"note,omitempty"`
	// Rounds are the contestant's cost in each round, in order.
	Rounds []float64 `json:"rounds"`
	// Family is the contestant's family in the charts.
	Family string `json:"family"`
}

// geomeanPart names the combined part of a multi-part job.
const geomeanPart = "geometric mean"

// alikeWithin is the smallest difference a verdict states: a direction
// ("1.3x faster") needs the whole 95% interval beyond alikeWithin of equal
// costs. A smaller difference, even one the interval shows, does not repeat
// from run to run on a shared machine, and stating it would make verdicts
// flip; when the interval lies within alikeWithin of 1 at both ends, "no
// clear difference" is the settled answer.
const alikeWithin = 0.05

// earlyLevel is the coverage of the interval that must exclude 1 for a job
// to stop with a direction before its last permitted round. Adding rounds
// only while the 95% interval includes 1 and stopping as soon as it does
// not would state a spurious direction more often than 1 time in 20; a
// stricter interval at the early looks keeps that rate near 5% (see
// TestAdaptiveRoundsFalseDirections).
const earlyLevel = 0.99

// decide turns a ratio's intervals into a verdict's outcome. A direction
// is stated only when the 95% interval lies wholly beyond alikeWithin of 1,
// and is final before the last round only when the stricter interval
// (earlyLevel) does too. "No clear difference" is final when the 95%
// interval lies within alikeWithin of 1; otherwise more rounds may settle
// it.
func decide(ci95, strict interval, words [2]string, last bool) (outcome string, resolved bool) {
	lo, hi := 1/(1+alikeWithin), 1+alikeWithin
	beyond := func(iv interval) bool { return iv.Hi < lo || iv.Lo > hi }
	switch {
	case ci95.Lo >= lo && ci95.Hi <= hi:
		return noDifference, true
	case beyond(ci95):
		return fmtTimes(ci95.Median, words), last || beyond(strict)
	}
	return noDifference, false
}

// interleave runs rounds rounds over n contestants. Round r starts with
// contestant (first+r) mod n, so each goes first equally often over a run,
// and a burst of load from other processes hits every contestant of a
// round alike: the ratios of one round are fair even when the absolute
// figures are not. It returns costs[contestant][round].
func interleave(n, first, rounds int, tick func(), rep func(i int) float64) [][]float64 {
	costs := make([][]float64, n)
	for r := range rounds {
		for k := range n {
			i := (first + r + k) % n
			costs[i] = append(costs[i], rep(i))
			tick()
		}
	}
	return costs
}

// combine returns, for each contestant and round, the geometric mean of
// the parts' costs (costs itself when there is one part).
func combine(costs [][][]float64) [][]float64 {
	if len(costs) == 1 {
		return costs[0]
	}
	combined := make([][]float64, len(costs[0]))
	for c := range costs[0] {
		for r := range costs[0][c] {
			var xs []float64
			for p := range costs {
				xs = append(xs, costs[p][c][r])
			}
			combined[c] = append(combined[c], geomean(xs))
		}
	}
	return combined
}

// summarizeView turns the costs of a job's contestants (named by names,
// costs[part][contestant][round]) into one view's headline row. last says
// whether the job may not add rounds any more.
func summarizeView(j job, v view, names []string, costs [][][]float64, notes map[string]string, last bool) HeadlineRow {
	row := HeadlineRow{Job: v.workload(j), Title: v.Title, Metric: v.Metric, MaxRounds: j.maxRounds(), Words: j.Words, Unit: j.Unit,
		Axis: v.Axis}
	if v.Skip != "" {
		row.Skipped = v.Skip
		return row
	}
	// idx[i] is the position in names of the view's contestant i.
	var cs []contestant
	var idx []int
	for _, c := range v.Contestants {
		if k := slices.Index(names, c.Name); k >= 0 {
			cs, idx = append(cs, c), append(idx, k)
		}
	}
	si := slices.IndexFunc(cs, func(c contestant) bool { return c.Role == subject })
	if si < 0 || len(costs) == 0 {
		row.Skipped = "nxkv was not measured (see -peers)"
		return row
	}
	pick := func(all [][]float64) [][]float64 {
		out := make([][]float64, len(cs))
		for i, k := range idx {
			out[i] = all[k]
		}
		return out
	}
	parts := make([][][]float64, len(costs))
	for p := range costs {
		parts[p] = pick(costs[p])
	}
	combined := combine(parts)
	row.Rounds = len(combined[si])
	row.Subject = cs[si].Name
	row.SubjectCost = medianCI(combined[si])
	var against []int
	for c := range cs {
		if cs[c].Role != alternative {
			continue
		}
		switch {
		case v.Versus == versusEach:
			against = append(against, c)
		case len(against) == 0:
			against = []int{c}
		case medianCI(combined[c]).Median < medianCI(combined[against[0]]).Median:
			against[0] = c
		}
	}
	if len(against) == 0 {
		row.Skipped = "no alternative was measured (see -peers)"
		return row
	}
	var open []string
	for _, c := range against {
		ratio := ratioCI(combined[si], combined[c])
		outcome, resolved := decide(ratio, ratioCIAt(combined[si], combined[c], earlyLevel), j.Words, last)
		row.Verdicts = append(row.Verdicts, Verdict{Against: cs[c].Name, Desc: cs[c].Desc, Cost: medianCI(combined[c]), Ratio: ratio,
			Outcome: outcome, Resolved: resolved, Family: familyOf(cs[c].Name, v.Axis)})
		if !resolved {
			open = append(open, fmt.Sprintf("vs %s, %s", cs[c].Desc, fmtTimesCI(ratio.Lo, ratio.Hi, j.Words)))
		}
	}
	if len(open) > 0 {
		row.Unresolved = fmt.Sprintf("after %d rounds, the most this run allows, the 95%% interval still reaches both within and beyond %.0f%% of equal costs (%s)",
			row.Rounds, alikeWithin*100, strings.Join(open, "; "))
	}
	addParts := func(part string, pc [][]float64) {
		for c := range cs {
			d := DetailRow{Part: part, Peer: cs[c].Name, Role: cs[c].Role.String(), Cost: medianCI(pc[c]), Note: notes[cs[c].Name],
				Rounds: pc[c], Family: familyOf(cs[c].Name, v.Axis)}
			if c != si {
				d.VsSubject = ratioCI(pc[si], pc[c])
			}
			row.Details = append(row.Details, d)
		}
	}
	for p := range parts {
		part := ""
		if len(j.Parts) > 1 {
			part = j.Parts[p]
		}
		addParts(part, parts[p])
	}
	if len(parts) > 1 {
		addParts(geomeanPart, combined)
	}
	return row
}

// resolved reports whether every verdict of rows is settled.
func resolved(rows []HeadlineRow) bool {
	for _, r := range rows {
		for _, v := range r.Verdicts {
			if !v.Resolved {
				return false
			}
		}
	}
	return true
}

// runJob measures one job and summarizes its views. It adds rounds while a
// verdict is unresolved, up to the job's bound. A view that cannot run, or
// whose nxkv or alternatives are all filtered out, comes back Skipped; the
// rows for the full suite's tables come back with the rest.
func runJob(j job, cfg config, mon *loadMonitor) ([]HeadlineRow, jobRows) {
	for i, v := range j.Views {
		var kept []contestant
		for _, c := range v.Contestants {
			if cfg.want(c.Name) {
				kept = append(kept, c)
			}
		}
		j.Views[i].Contestants = kept
	}
	skipAll := func(why string) []HeadlineRow {
		var rows []HeadlineRow
		for _, v := range j.Views {
			r := summarizeView(j, v, nil, nil, nil, true)
			if v.Skip == "" {
				r.Skipped = why
			}
			rows = append(rows, r)
		}
		return rows
	}
	names := j.peers()
	if len(names) == 0 {
		return skipAll("nothing to measure (see -peers)"), jobRows{}
	}
	title := j.Views[0].Title
	done, total := 0, j.Rounds*len(names)*max(1, len(j.Parts))
	tick := func() {
		done++
		progress("%s: %d of %d measurements", title, done, total)
	}
	cpu0 := readCPU()
	s, err := j.open(names)
	if err != nil {
		return skipAll(err.Error()), jobRows{}
	}
	var costs [][][]float64
	var rows []HeadlineRow
	for n := j.Rounds; n > 0; {
		more, err := s.more(n, tick)
		if err != nil {
			s.done()
			return skipAll(err.Error()), jobRows{}
		}
		if costs == nil {
			costs = more
		} else {
			for p := range costs {
				for c := range costs[p] {
					costs[p][c] = append(costs[p][c], more[p][c]...)
				}
			}
		}
		got := len(costs[0][0])
		n = min(max(j.Step, 1), j.maxRounds()-got)
		rows = rows[:0]
		for _, v := range j.Views {
			rows = append(rows, summarizeView(j, v, names, costs, nil, n <= 0))
		}
		if resolved(rows) {
			n = 0
		}
		total += n * len(names) * max(1, len(j.Parts))
	}
	notes, jr := s.done()
	busy := mon.between(cpu0, readCPU())
	rows = rows[:0]
	for _, v := range j.Views {
		r := summarizeView(j, v, names, costs, notes, true)
		r.Busy = busy
		rows = append(rows, r)
	}
	runtime.GC()
	return rows, jr
}

// levelPct is an interval's coverage as a whole percentage: 95 when it is
// at least that (the order statistics give a little more), else the
// coverage rounded down.
func levelPct(iv interval) int {
	if iv.Level >= 0.95 {
		return 95
	}
	return int(math.Floor(iv.Level * 100))
}

// sentence is the verdict in words: "lock cycle in process vs a map+Mutex
// lock: 1.3x faster".
func (v Verdict) sentence(title string) string {
	return fmt.Sprintf("%s vs %s: %s", title, v.Desc, v.Outcome)
}

// interval95 formats the verdict's interval: "1.2x–1.4x faster".
func (v Verdict) interval95(words [2]string) string {
	return fmtTimesCI(v.Ratio.Lo, v.Ratio.Hi, words)
}

// name is the alternative as its verdict names it, without the article:
// "map+Mutex lock polling every 1ms".
func (v Verdict) name() string {
	return strings.TrimPrefix(strings.TrimPrefix(v.Desc, "a "), "an ")
}

// costsLine gives the two figures behind a verdict: "nxkv 41ns, xsync.Map
// 34ns".
func (h HeadlineRow) costsLine(v Verdict) string {
	return fmt.Sprintf("nxkv %s, %s %s", h.Unit.format(h.SubjectCost.Median), v.name(), h.Unit.format(v.Cost.Median))
}

// describeSkip turns a reason into a headline line.
func describeSkip(title, reason string) string {
	return fmt.Sprintf("%s: skipped, %s", title, strings.TrimSuffix(reason, "."))
}
