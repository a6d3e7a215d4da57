package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// The README quotes the suite's figures only between these markers, and
// only as renderReadme writes them from the results (bench/results/
// latest.json), so that it cannot quote a figure the results do not hold.
const (
	readmeBegin = "<!-- bench:begin: generated from bench/results/latest.json by `bash bench/regenerate.sh`; do not edit -->"
	readmeEnd   = "<!-- bench:end -->"
)

// readmeBlock returns what lies between the markers of readme, and where.
func readmeBlock(readme string) (block string, start, end int, err error) {
	i := strings.Index(readme, readmeBegin)
	j := strings.Index(readme, readmeEnd)
	if i < 0 || j < i {
		return "", 0, 0, errors.New("the README has no bench:begin ... bench:end block")
	}
	start = i + len(readmeBegin)
	return readme[start:j], start, j, nil
}

// updateReadme rewrites the block of the README at path from r.
func updateReadme(path string, r *Results) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	_, start, end, err := readmeBlock(string(b))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var block bytes.Buffer
	renderReadme(&block, r)
	out := string(b[:start]) + block.String() + string(b[end:])
	return os.WriteFile(path, []byte(out), 0o644)
}

// renderReadme writes the README's figures: the headline's verdicts, what
// fencing costs, every kind of lock's cycle in process and over the
// servers, and redis-benchmark's comparison of the two servers.
func renderReadme(w io.Writer, r *Results) {
	fmt.Fprintf(w, "\nFrom the %s run in [BENCHMARKS.md](BENCHMARKS.md), started %s", r.Mode, r.Started.Format("2006-01-02"))
	if r.Label != "" {
		fmt.Fprintf(w, ", %s", r.Label)
	}
	fmt.Fprintf(w, " (%d cores; %s):\n\n", r.Machine.Cores, r.Busy)
	writeHeadlineTable(w, r)
	if rows := unresolved(r); len(rows) > 0 {
		var titles []string
		for _, h := range rows {
			titles = append(titles, h.Title)
		}
		fmt.Fprintf(w, "\nNot settled in that run: %s.\n", strings.Join(titles, "; "))
	}
	for _, h := range r.Headline {
		for _, d := range h.Details {
			if d.Peer == "nxkv lockapi (in-process, NoFencing)" && h.Title == "lock cycle in process" && d.VsSubject.N > 0 {
				outcome, _ := decide(d.VsSubject, d.VsSubject, h.Words, true)
				if outcome != noDifference {
					outcome += " with them"
				}
				fmt.Fprintf(w, "\nFencing tokens, on by default, cost one counter increment in the engine: the in-process lock cycle took\n"+
					"%s with them and %s without, %s (95%% CI %s).\n", h.Unit.format(h.SubjectCost.Median), h.Unit.format(d.Cost.Median),
					outcome, fmtTimesCI(d.VsSubject.Lo, d.VsSubject.Hi, h.Words))
			}
		}
	}
	writePrimitivesTable(w, r)
	writeRESPLine(w, r)
}

// primitiveRows are the kinds of lock the README's table shows, by the
// name the lock workload gives each (the mutex first).
var primitiveRows = []struct{ label, name string }{
	{"mutex (`Obtain`)", "nxkv lockapi"},
	{"semaphore of 4, empty (`Semaphore`)", "nxkv semaphore of 4"},
	{"read-write lock, read (`RWMutex`)", "nxkv RWMutex read"},
	{"read-write lock, write", "nxkv RWMutex write"},
	{"multi-key lock, 2 keys (`ObtainAll`)", "nxkv ObtainAll, 2 keys"},
	{"reentrant lock, first hold", "nxkv reentrant"},
}

// writePrimitivesTable writes every kind of lock's uncontended cycle in
// process, over redis-server and over nxkv-server, when the run measured
// them (a full run).
func writePrimitivesTable(w io.Writer, r *Results) {
	cell := func(peer string) string {
		row, ok := lockRow(r, peer, "uncontended", 1)
		if !ok || row.NsPerCycle <= 0 {
			return "-"
		}
		return fmtNs(row.NsPerCycle)
	}
	var lines []string
	for _, p := range primitiveRows {
		in := p.name + " (in-process)"
		if p.name == "nxkv lockapi" {
			in = "nxkv lockapi (in-process)"
		}
		c := []string{cell(in), cell("Redis " + p.name), cell(nxkvServerName + " " + p.name)}
		if c[0] == "-" && c[1] == "-" && c[2] == "-" {
			continue
		}
		lines = append(lines, fmt.Sprintf("| %s | %s | %s | %s |\n", p.label, c[0], c[1], c[2]))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "\n| acquire + release through lockapi, 1 goroutine | in process | over redis-server | over nxkv-server |\n|---|---|---|---|\n")
	fmt.Fprint(w, strings.Join(lines, ""))
}

// writeRESPLine says how nxkv-server's throughput compared with
// redis-server's under redis-benchmark, when the run measured it.
func writeRESPLine(w io.Writer, r *Results) {
	var one, piped []string
	runs := 0
	for _, row := range r.RESP {
		if row.Server != nxkvServerName {
			continue
		}
		runs = len(row.RunsRPS)
		d := row.Test + " " + fmtVs(row.VsRedis, false)
		if row.Pipeline > 1 {
			piped = append(piped, d)
		} else {
			one = append(one, d)
		}
	}
	if len(one)+len(piped) == 0 {
		return
	}
	fmt.Fprintf(w, "\nUnder `redis-benchmark -c 50` (median of %d interleaved runs), nxkv-server's requests per second against\n"+
		"redis-server's: %s one request at a time; %s with `-P 16`.\n", runs, strings.Join(one, ", "), strings.Join(piped, ", "))
}
