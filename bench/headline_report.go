package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// printHeader says what runs, where, and against which servers.
func printHeader(w io.Writer, r *Results, env *environment) {
	what := "the headline, one to two minutes; -full runs every workload, about 10 minutes"
	if r.Mode == "full" {
		what = "the headline, then every workload"
	}
	fmt.Fprintf(w, "# nxkv bench, %s run (%s)\n\n", r.Mode, what)
	load := ""
	if r.LoadAtStart >= 0 {
		load = fmt.Sprintf("; load average %.2f at the start", r.LoadAtStart)
	}
	fmt.Fprintf(w, "machine: %s, %d cores (GOMAXPROCS %d), %s %s%s\n", r.Machine.CPU, r.Machine.Cores, r.Machine.GOMAXPROCS, r.Machine.Go, r.Machine.OS, load)
	if v, ok := r.Versions["redis-server"]; ok {
		fmt.Fprintf(w, "redis-server: %s, %s\n", v, r.RedisSource)
	} else if env.redisWhy != "" {
		fmt.Fprintf(w, "redis-server: none, so the comparisons over Redis are skipped: %s\n", env.redisWhy)
	}
	fmt.Fprintf(w, "peers: %s\n", formatVersions(r.Versions))
}

// verdictWidth is the widest "title vs alternative:" of the jobs: a
// verdict line is streamed as soon as its job is measured, so the column is
// sized before the first one.
func verdictWidth(jobs []job) int {
	n := 0
	for _, j := range jobs {
		for _, v := range j.Views {
			for _, c := range v.Contestants {
				if c.Role == alternative {
					n = max(n, len([]rune(v.Title+" vs "+c.Desc+":")))
				}
			}
			n = max(n, len([]rune(v.Title+":")))
		}
	}
	return n
}

// outcomeWidth is the widest outcome a verdict can have.
var outcomeWidth = len(noDifference)

func printHeadlineIntro(w io.Writer, r *Results, jobs []job) {
	h := r.Config.Head
	fmt.Fprintf(w, "\n## nxkv against the alternatives, job by job\n\n")
	fmt.Fprintf(w, "Each line compares nxkv's median cost with an alternative's, measured in the same interleaved rounds\n"+
		"(%d per job, %d over Redis, %d for expiry, %d for memory; a job whose verdict is not settled adds rounds, up to %d,\n"+
		"%d for expiry), with a 95%% confidence interval from resampling the rounds. A verdict states a direction only\n"+
		"when its whole interval lies more than 5%% from equal costs; otherwise it says \"%s\".\n\n",
		h.Rounds, h.NetRounds, h.ExpiryRounds, h.MemRounds, h.MaxRounds, h.ExpiryMaxRounds, noDifference)
}

// printHeadlineRow prints one view's verdict lines.
func printHeadlineRow(w io.Writer, h HeadlineRow, jobs []job) {
	if h.Skipped != "" {
		fmt.Fprintf(w, "  %s\n", describeSkip(h.Title, h.Skipped))
		return
	}
	for _, v := range h.Verdicts {
		fmt.Fprintf(w, "  %s %s  (%d%% CI %s)  %s\n", pad(h.Title+" vs "+v.Desc+":", verdictWidth(jobs)),
			pad(v.Outcome, outcomeWidth), levelPct(v.Ratio), v.interval95(h.Words), h.costsLine(v))
	}
	if h.Unresolved != "" {
		fmt.Fprintf(w, "    (not settled: %s)\n", h.Unresolved)
	}
	if h.Busy.busy() {
		fmt.Fprintf(w, "    (machine busy during this job: %s)\n", h.Busy)
	}
}

// unresolved lists the views whose verdicts the run could not settle.
func unresolved(r *Results) []HeadlineRow {
	var out []HeadlineRow
	for _, h := range r.Headline {
		if h.Unresolved != "" {
			out = append(out, h)
		}
	}
	return out
}

// printUnresolved says which jobs the run could not settle, if any.
func printUnresolved(w io.Writer, r *Results) {
	rows := unresolved(r)
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%d of the headline's jobs could not be settled in this run: their verdict is \"%s\", but the interval\n"+
		"is too wide to say they are alike. Run again on a quieter machine, or with more -rounds:\n", len(rows), noDifference)
	for _, h := range rows {
		fmt.Fprintf(w, "- %s: %s\n", h.Title, h.Unresolved)
	}
}

// fmtRange prints "lo–hi", or one figure when both print alike.
func fmtRange(lo, hi string) string {
	if lo == hi {
		return lo
	}
	return lo + "–" + hi
}

// pad right-pads s with spaces to n runes.
func pad(s string, n int) string {
	if k := len([]rune(s)); k < n {
		return s + strings.Repeat(" ", n-k)
	}
	return s
}

// printDetails prints every contestant of every job that ran.
func printDetails(w io.Writer, r *Results) {
	measured := false
	for _, h := range r.Headline {
		measured = measured || len(h.Details) > 0
	}
	if !measured {
		return
	}
	fmt.Fprintf(w, "\n## Details of the headline\n\n")
	fmt.Fprintf(w, "cost = median over the rounds with its 95%% confidence interval; nxkv vs this = nxkv's median cost ÷ this\n"+
		"one's, with its 95%% confidence interval. \"nxkv option\" rows are nxkv with a non-default setting; \"reference\"\n"+
		"rows do less than the job asks (sync.Mutex has no TTL and no token) and show the floor.\n")
	for _, h := range r.Headline {
		if len(h.Details) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n### %s: %s\n\n", h.Title, h.Metric)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		multi := h.Details[0].Part != ""
		if multi {
			fmt.Fprint(tw, "op\t")
		}
		fmt.Fprintln(tw, "peer\trole\tcost\t95% CI\tnxkv vs this\t95% CI\tnote")
		part := ""
		for _, d := range h.Details {
			if multi {
				name := d.Part
				if name == part {
					name = ""
				}
				part = d.Part
				fmt.Fprintf(tw, "%s\t", name)
			}
			vs, vsCI := "", ""
			if d.VsSubject.N > 0 {
				vs = fmtTimes(d.VsSubject.Median, h.Words)
				vsCI = fmtTimesCI(d.VsSubject.Lo, d.VsSubject.Hi, h.Words)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Peer, d.Role, h.Unit.format(d.Cost.Median),
				fmtRange(h.Unit.format(d.Cost.Lo), h.Unit.format(d.Cost.Hi)), vs, vsCI, d.Note)
		}
		tw.Flush()
	}
}

// printLoad says how busy the machine was, and warns when it was too busy.
func printLoad(w io.Writer, r *Results) {
	fmt.Fprintf(w, "\n## The machine during the run\n\n")
	fmt.Fprintf(w, "%s over %s: %s.\n", strings.ToUpper(r.Mode[:1])+r.Mode[1:]+" run", r.Elapsed, r.Busy)
	var busy []string
	for _, h := range r.Headline {
		if h.Busy.busy() {
			busy = append(busy, h.Title)
		}
	}
	for _, s := range r.Sections {
		if s.Busy.busy() {
			busy = append(busy, "the "+s.Name+" section")
		}
	}
	if r.Busy.busy() || len(busy) > 0 {
		fmt.Fprintf(w, "\nWARNING: the machine was busy with other work during this run (other processes took %d%% or more of\n"+
			"the CPU, or the hypervisor %d%%)", busyOtherPct, busyStealPct)
		if len(busy) > 0 {
			fmt.Fprintf(w, ", in particular during: %s (see the notes above)", strings.Join(busy, ", "))
		}
		fmt.Fprintf(w, ".\nInterleaving keeps the ratios fairer than the absolute figures, but both may be off by more than their\n"+
			"intervals show. Run again when the machine is quiet.\n")
	}
}

func printSkipped(w io.Writer, r *Results) {
	if len(r.Skipped) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## Not available in this run\n\n")
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "- %s: %s\n", s.Peer, s.Reason)
	}
}
