package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// printHeader says what runs, where, and against which servers.
func printHeader(w io.Writer, r *Results, env *environment) {
	what := "the headline, about a minute; -full runs every workload, about 8-10 minutes"
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
		for _, c := range j.Contestants {
			if c.Role == alternative {
				n = max(n, len([]rune(j.Title+" vs "+c.Desc+":")))
			}
		}
		n = max(n, len([]rune(j.Title+":")))
	}
	return n
}

func printHeadlineIntro(w io.Writer, r *Results, jobs []job) {
	fmt.Fprintf(w, "\n## nxkv against the best alternative, job by job\n\n")
	fmt.Fprintf(w, "Each line compares nxkv's median cost with that of the alternative that did best in this run, measured in\n"+
		"the same interleaved rounds (%d per job, %d for expiry, %d for memory), with a 95%% confidence interval\n"+
		"from resampling the rounds.\n\n", r.Config.Head.Rounds, r.Config.Head.ExpiryRounds, r.Config.Head.MemRounds)
}

// printHeadlineRow prints one job's verdict line.
func printHeadlineRow(w io.Writer, h HeadlineRow, jobs []job) {
	if h.Skipped != "" {
		fmt.Fprintf(w, "  %s\n", describeSkip(h.Title, h.Skipped))
		return
	}
	prefix := strings.TrimSuffix(h.Verdict, fmtTimes(h.Ratio.Median, h.Words))
	fmt.Fprintf(w, "  %s %s  (%d%% CI %s)  %s\n", pad(strings.TrimSpace(prefix), verdictWidth(jobs)),
		fmtTimes(h.Ratio.Median, h.Words), levelPct(h.Ratio), h.verdictCI(), h.costsLine())
	if h.Busy.busy() {
		fmt.Fprintf(w, "    (machine busy during this job: %s)\n", h.Busy)
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
