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
	// alternative is what a user would otherwise pick for the job; the
	// best one (lowest median cost) is the headline's yardstick.
	alternative
	// variant is nxkv with a non-default option, shown in the details.
	variant
	// reference is a floor with less function (sync.Mutex has no TTL and
	// no token): shown in the details, never the yardstick.
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

// job is one question of the headline: what does nxkv cost for this job,
// against the best alternative, measured in the same interleaved rounds.
type job struct {
	ID    string // its -only workload: raw, locks, expiry, memory
	Title string // the verdict's subject: "lock cycle in process"
	// Metric says what a cost is, for the details.
	Metric string
	Words  [2]string
	Unit   unit
	// Parts are measured separately and combined per round by geometric
	// mean (the KV operations); nil means one part.
	Parts       []string
	Contestants []contestant
	Rounds      int
	// Skip, when set, says why the job cannot run here.
	Skip string
	// measure runs Rounds interleaved rounds of every contestant of cs
	// (a subset of Contestants) and returns costs[part][contestant][round].
	// tick is called after each measurement. notes holds a remark per
	// contestant name.
	measure func(cs []contestant, tick func()) (costs [][][]float64, notes map[string]string, err error)
}

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

// HeadlineRow is the answer to one job.
type HeadlineRow struct {
	Job     string `json:"job"`
	Title   string `json:"title"`
	Metric  string `json:"metric"`
	Rounds  int    `json:"rounds"`
	Skipped string `json:"skipped,omitempty"`

	Subject     string   `json:"subject,omitempty"`
	SubjectCost interval `json:"subject_cost"`
	Best        string   `json:"best_alternative,omitempty"`
	BestDesc    string   `json:"best_alternative_desc,omitempty"`
	BestCost    interval `json:"best_alternative_cost"`
	// Ratio is nxkv's median cost divided by the best alternative's, with
	// a paired-bootstrap interval over the rounds.
	Ratio   interval    `json:"ratio"`
	Verdict string      `json:"verdict,omitempty"`
	Busy    Busy        `json:"machine"`
	Details []DetailRow `json:"details,omitempty"`

	// Words and Unit say how to print the costs and ratios.
	Words [2]string `json:"words"`
	Unit  unit      `json:"unit"`
}

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
}

// geomeanPart names the combined part of a multi-part job.
const geomeanPart = "geometric mean"

// interleave runs rounds rounds over n contestants. Round r starts with
// contestant r mod n, so each goes first equally often, and a burst of
// load from other processes hits every contestant of a round alike: the
// ratios of one round are fair even when the absolute figures are not.
// It returns costs[contestant][round].
func interleave(n, rounds int, tick func(), rep func(i int) float64) [][]float64 {
	costs := make([][]float64, n)
	for r := range rounds {
		for k := range n {
			i := (r + k) % n
			costs[i] = append(costs[i], rep(i))
			tick()
		}
	}
	return costs
}

// summarizeJob turns the costs of a job into its headline row.
func summarizeJob(j job, cs []contestant, costs [][][]float64, notes map[string]string) HeadlineRow {
	row := HeadlineRow{Job: j.ID, Title: j.Title, Metric: j.Metric, Rounds: j.Rounds, Words: j.Words, Unit: j.Unit}
	si := slices.IndexFunc(cs, func(c contestant) bool { return c.Role == subject })
	if si < 0 || len(costs) == 0 {
		row.Skipped = "nxkv was not measured (see -peers)"
		return row
	}
	// combined[c][r]: the geometric mean over the parts of one round.
	combined := costs[0]
	if len(costs) > 1 {
		combined = make([][]float64, len(cs))
		for c := range cs {
			for r := range costs[0][c] {
				var xs []float64
				for p := range costs {
					xs = append(xs, costs[p][c][r])
				}
				combined[c] = append(combined[c], geomean(xs))
			}
		}
	}
	row.Subject = cs[si].Name
	row.SubjectCost = medianCI(combined[si])
	best := -1
	for c := range cs {
		if cs[c].Role != alternative {
			continue
		}
		if best < 0 || medianCI(combined[c]).Median < medianCI(combined[best]).Median {
			best = c
		}
	}
	if best >= 0 {
		row.Best, row.BestDesc = cs[best].Name, cs[best].Desc
		row.BestCost = medianCI(combined[best])
		row.Ratio = ratioCI(combined[si], combined[best])
		row.Verdict = fmt.Sprintf("%s vs %s: %s", j.Title, cs[best].Desc, fmtTimes(row.Ratio.Median, j.Words))
	} else {
		row.Skipped = "no alternative was measured (see -peers)"
	}
	addParts := func(part string, pc [][]float64) {
		for c := range cs {
			d := DetailRow{Part: part, Peer: cs[c].Name, Role: cs[c].Role.String(), Cost: medianCI(pc[c]), Note: notes[cs[c].Name]}
			if c != si {
				d.VsSubject = ratioCI(pc[si], pc[c])
			}
			row.Details = append(row.Details, d)
		}
	}
	for p := range costs {
		part := ""
		if len(j.Parts) > 1 {
			part = j.Parts[p]
		}
		addParts(part, costs[p])
	}
	if len(costs) > 1 {
		addParts(geomeanPart, combined)
	}
	return row
}

// runJob measures one job and summarizes it; a job that cannot run, or
// whose nxkv or alternatives are all filtered out, comes back Skipped.
func runJob(j job, cfg config, mon *loadMonitor) HeadlineRow {
	row := HeadlineRow{Job: j.ID, Title: j.Title, Metric: j.Metric, Rounds: j.Rounds, Words: j.Words, Unit: j.Unit}
	if j.Skip != "" {
		row.Skipped = j.Skip
		return row
	}
	var cs []contestant
	for _, c := range j.Contestants {
		if cfg.want(c.Name) {
			cs = append(cs, c)
		}
	}
	total := j.Rounds * len(cs) * max(1, len(j.Parts))
	done := 0
	tick := func() {
		done++
		progress("%s: %d of %d measurements", j.Title, done, total)
	}
	tick0 := readCPU()
	costs, notes, err := j.measure(cs, tick)
	busy := mon.between(tick0, readCPU())
	if err != nil {
		row.Skipped = err.Error()
		return row
	}
	row = summarizeJob(j, cs, costs, notes)
	row.Busy = busy
	runtime.GC()
	return row
}

// verdictCI formats a row's interval in the report's ratio format.
func (h HeadlineRow) verdictCI() string {
	return fmtTimesCI(h.Ratio.Lo, h.Ratio.Hi, h.Words)
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

// costsLine gives the two figures behind a verdict: "nxkv 41ns, xsync.Map
// 34ns".
func (h HeadlineRow) costsLine() string {
	return fmt.Sprintf("nxkv %s, %s %s", h.Unit.format(h.SubjectCost.Median), h.bestName(), h.Unit.format(h.BestCost.Median))
}

// bestName names the best alternative as its verdict does, without the
// article: "map+Mutex lock polling every 1ms".
func (h HeadlineRow) bestName() string {
	return strings.TrimPrefix(strings.TrimPrefix(h.BestDesc, "a "), "an ")
}

// describeSkip turns a reason into a headline line.
func describeSkip(title, reason string) string {
	return fmt.Sprintf("%s: skipped, %s", title, strings.TrimSuffix(reason, "."))
}
