package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// bar is one horizontal bar of a chart panel, with an optional error bar.
type bar struct {
	group  string // a header row is drawn when the group changes
	label  string
	value  float64
	lo, hi float64 // the error bar; both 0: none
	text   string  // printed after the bar
	family string  // its colour (see families.go)
}

// panel is one bar chart: linear from 0, or logarithmic. A panel with a
// reference and diverging set draws each bar from the reference line, to
// the left when below it and to the right when above (ratios around 1).
type panel struct {
	title     string
	subtitle  string
	bars      []bar
	log       bool
	diverging bool
	ref       float64 // a dashed reference line at this value (0: none)
	refLabel  string
	tick      func(float64) string // axis labels; nil: plain numbers
}

const (
	svgWidth   = 1100
	labelWidth = 270
	// maxLabelWidth bounds the labels' column, so the bars keep room.
	maxLabelWidth = 430
	// subtitleChars is about how many characters of a subtitle fit on a
	// line.
	subtitleChars = 180
	textWidth     = 320
	rowHeight     = 18
)

func xmlEscape(s string) string {
	var b bytes.Buffer
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// chart is one SVG file: a title, its panels and a legend of the
// families their bars belong to.
type chart struct {
	file   string
	title  string
	panels []panel
}

// families lists the families of c's bars, in the legend's order.
func (c chart) families() []string {
	seen := map[string]bool{}
	for _, p := range c.panels {
		for _, b := range p.bars {
			seen[b.family] = true
		}
	}
	var fs []string
	for _, fc := range familyColors {
		if seen[fc.family] {
			fs = append(fs, fc.family)
		}
	}
	return fs
}

// charts returns the headline chart and one chart per section of the full
// suite that ran.
func charts(r *Results) []chart {
	cs := []chart{{file: "headline.svg", title: "nxkv against the alternatives, job by job", panels: headlinePanels(r)}}
	for _, c := range []chart{
		{file: "raw.svg", title: "Raw operations (full suite)", panels: rawPanels(r)},
		{file: "locks.svg", title: "Lock cycle and hand-off (full suite)", panels: lockPanels(r)},
		{file: "expiry.svg", title: "Expiry (full suite)", panels: expiryPanels(r)},
		{file: "memory.svg", title: "Memory per key (full suite)", panels: memoryPanels(r)},
	} {
		if len(c.panels) > 0 {
			cs = append(cs, c)
		}
	}
	return cs
}

// writeCharts writes every chart into dir.
func writeCharts(dir string, r *Results) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, c := range charts(r) {
		if err := os.WriteFile(filepath.Join(dir, c.file), renderSVG(r, c), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// headlinePanels: the verdicts as ratios around 1, then every job's
// contestants with the confidence intervals of their costs.
func headlinePanels(r *Results) []panel {
	sum := panel{title: "nxkv's cost ÷ the alternative's", tick: func(v float64) string { return fmtTick(v) + "x" },
		subtitle: "median over interleaved rounds, error bar = 95% confidence interval, colour = the alternative (log scale; left of the line nxkv is faster or smaller)",
		log:      true, diverging: true, ref: 1, refLabel: "the alternative's cost"}
	var ps []panel
	for _, h := range r.Headline {
		if h.Skipped != "" || len(h.Verdicts) == 0 {
			continue
		}
		for _, v := range h.Verdicts {
			text := v.Outcome + " than " + v.Desc
			if v.Outcome == noDifference {
				text = "no clear difference from " + v.Desc
			}
			sum.bars = append(sum.bars, bar{label: h.Title, value: v.Ratio.Median, lo: v.Ratio.Lo, hi: v.Ratio.Hi,
				text: text, family: v.Family})
		}
		p := panel{title: h.Title, subtitle: h.Metric + "; median, error bar = 95% confidence interval (shorter is better)", tick: h.Unit.format}
		spread := 1.0
		for _, d := range h.Details {
			if h.Details[0].Part != "" && d.Part != geomeanPart {
				continue // the KV job's panel shows the combined figure; the table has each op
			}
			if d.Cost.Median > 0 {
				spread = math.Max(spread, d.Cost.Median/math.Max(h.SubjectCost.Median, 1e-9))
				spread = math.Max(spread, h.SubjectCost.Median/d.Cost.Median)
			}
			p.bars = append(p.bars, bar{label: contenderLabel(d.Peer, h.Axis), value: d.Cost.Median, lo: d.Cost.Lo, hi: d.Cost.Hi,
				text: h.Unit.format(d.Cost.Median), family: d.Family})
		}
		if h.Details[0].Part != "" {
			p.subtitle = h.Metric + ", geometric mean over the operations; median, error bar = 95% confidence interval (shorter is better)"
		}
		p.log = spread > 20
		if p.log {
			p.subtitle = strings.Replace(p.subtitle, "(shorter", "(log scale; shorter", 1)
		}
		ps = append(ps, p)
	}
	if len(sum.bars) == 0 {
		return ps
	}
	return append([]panel{sum}, ps...)
}

// repRange turns a summary of per-second rates into an error bar of
// nanoseconds per operation.
func repRange(s summary) (lo, hi float64) {
	if s.Max <= 0 || s.Min <= 0 {
		return 0, 0
	}
	return 1e9 / s.Max, 1e9 / s.Min
}

func rawPanels(r *Results) []panel {
	var ps []panel
	for _, keys := range []int{r.Config.HotKeys, r.Config.BigKeys} {
		p := panel{title: fmt.Sprintf("%d keys, 1 goroutine", keys),
			subtitle: "time per operation: median of the repetitions, error bar = their range (log scale; shorter is better)", log: true, tick: fmtNs}
		for _, op := range rawOps() {
			for _, row := range r.Raw {
				if row.Op != op.Name || row.Keys != keys || row.Goroutines != 1 || row.NsPerOp <= 0 {
					continue
				}
				lo, hi := repRange(row.OpsPerSec)
				p.bars = append(p.bars, bar{group: op.Name, label: row.Peer, value: row.NsPerOp, lo: lo, hi: hi,
					text: fmtNs(row.NsPerOp), family: familyOf(row.Peer, axisServer)})
			}
		}
		if len(p.bars) > 0 {
			ps = append(ps, p)
		}
	}
	return ps
}

// lockPanels: the uncontended cycle in process, over redis-server (the
// lock clients compared) and on each server (the servers compared, client
// by client), then the hand-off in process and over redis-server.
func lockPanels(r *Results) []panel {
	const cycleSub = "time per cycle: median of the repetitions, error bar = their range (log scale; shorter is better)"
	const handoffSub = "Release start to the next holder's Obtain return: bar = the median over the repetitions of each one's mean hand-off " +
		"without its slowest and fastest tenth (the headline's figure), error bar = their range (log scale; shorter is better)"
	inproc := panel{title: "Lock cycle (Obtain + Release) in process, uncontended, 1 goroutine", subtitle: cycleSub, log: true, tick: fmtNs}
	clients := panel{title: "Lock cycle over redis-server: the lock clients, uncontended, 1 goroutine", subtitle: cycleSub, log: true, tick: fmtNs}
	onServers := panel{title: "Lock cycle on each server: redis-server and the test doubles, client by client",
		subtitle: "time per cycle, uncontended, 1 goroutine; colour = the server (log scale; shorter is better)", log: true, tick: fmtNs}
	hoIn := panel{title: fmt.Sprintf("Hand-off to one of %d blocked waiters, in process", r.Config.Waiters), subtitle: handoffSub, log: true, tick: fmtNs}
	hoRedis := panel{title: fmt.Sprintf("Hand-off to one of %d blocked waiters, over redis-server", r.Config.Waiters), subtitle: handoffSub, log: true, tick: fmtNs}
	cycle := func(row LockRow, a axis) bar {
		lo, hi := repRange(row.CyclesPS)
		return bar{label: contenderLabel(row.Peer, a), value: row.NsPerCycle, lo: lo, hi: hi, text: fmtNs(row.NsPerCycle), family: familyOf(row.Peer, a)}
	}
	handoff := func(row LockRow) bar {
		return bar{label: contenderLabel(row.Peer, axisClient), value: row.Trimmed.Median, lo: row.Trimmed.Min, hi: row.Trimmed.Max,
			text:   fmt.Sprintf("%s (p50 %s, p99 %s)", fmtNs(row.Trimmed.Median), fmtNs(row.Latency.P50), fmtNs(row.Latency.P99)),
			family: familyOf(row.Peer, axisClient)}
	}
	byClient := map[string][]bar{}
	var order []string
	for _, row := range r.Locks {
		server, client := splitPeer(row.Peer)
		switch {
		case row.Scenario == "uncontended" && row.Goroutines == 1 && row.NsPerCycle > 0:
			if server == "" {
				inproc.bars = append(inproc.bars, cycle(row, axisPeer))
				continue
			}
			if server == famRedis {
				clients.bars = append(clients.bars, cycle(row, axisClient))
			}
			if strings.HasPrefix(client, "nxkv ") && client != "nxkv lockapi" {
				continue // the other kinds of lock: the panel above has them on redis-server
			}
			if _, ok := byClient[client]; !ok {
				order = append(order, client)
			}
			i, _ := serverOf(row.Peer)
			b := cycle(row, axisServer)
			b.group, b.label = client, fmt.Sprintf("%d %s", i, b.label)
			byClient[client] = append(byClient[client], b)
		case row.Scenario == "handoff" && row.Trimmed.Median > 0 && server == "":
			hoIn.bars = append(hoIn.bars, handoff(row))
		case row.Scenario == "handoff" && row.Trimmed.Median > 0 && server == famRedis:
			hoRedis.bars = append(hoRedis.bars, handoff(row))
		}
	}
	for _, c := range order {
		// In the servers' order; the label's index is only for sorting.
		bs := byClient[c]
		slices.SortStableFunc(bs, func(a, b bar) int { return strings.Compare(a.label, b.label) })
		for _, b := range bs {
			_, b.label, _ = strings.Cut(b.label, " ")
			onServers.bars = append(onServers.bars, b)
		}
	}
	var ps []panel
	for _, p := range []panel{inproc, clients, onServers, hoIn, hoRedis} {
		if len(p.bars) > 0 {
			ps = append(ps, p)
		}
	}
	return ps
}

func expiryPanels(r *Results) []panel {
	p := panel{title: fmt.Sprintf("Reclaiming %d keys", r.Config.ExpiryKeys),
		subtitle: "time from the (last) deadline until the store holds no key; one run each, no error bar (log scale; shorter is better)", log: true, tick: fmtNs}
	for _, sc := range []string{"together", "spread"} {
		for _, row := range r.Expiry {
			if row.Scenario == sc && row.ReclaimMs > 0 {
				p.bars = append(p.bars, bar{group: map[string]string{"together": "one common deadline", "spread": "deadlines spread over " + r.Config.Spread.String()}[sc],
					label: row.Peer, value: row.ReclaimMs * 1e6, text: fmtNs(row.ReclaimMs * 1e6), family: familyOf(row.Peer, axisPeer)})
			}
		}
	}
	if len(p.bars) == 0 {
		return nil
	}
	return []panel{p}
}

func memoryPanels(r *Results) []panel {
	p := panel{title: fmt.Sprintf("Heap per key (%d keys)", r.Config.MemKeys),
		subtitle: "bytes of heap per key after GC, including 32 B of key and value strings; one measurement each (shorter is better)"}
	for _, ttl := range []bool{false, true} {
		for _, m := range r.Memory {
			if m.WithTTL == ttl && m.BytesPerKy > 0 {
				p.bars = append(p.bars, bar{group: map[bool]string{false: "without TTL", true: "with a TTL"}[ttl],
					label: m.Peer, value: m.BytesPerKy, text: fmt.Sprintf("%.0f B", m.BytesPerKy), family: familyOf(m.Peer, axisPeer)})
			}
		}
	}
	if len(p.bars) == 0 {
		return nil
	}
	return []panel{p}
}

// renderSVG draws one chart as an SVG document.
func renderSVG(r *Results, c chart) []byte {
	var body bytes.Buffer
	y := 60
	if fs := c.families(); len(fs) > 0 {
		y = drawLegend(&body, fs, y) + 10
	}
	for _, p := range c.panels {
		y = drawPanel(&body, p, y) + 30
	}
	if len(c.panels) == 0 {
		fmt.Fprintf(&body, `<text x="20" y="%d" font-size="14">No results to chart.</text>`+"\n", y)
		y += 30
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`+"\n",
		svgWidth, y, svgWidth, y)
	fmt.Fprintf(&out, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&out, `<text x="20" y="28" font-size="18" font-weight="bold">%s</text>`+"\n", xmlEscape(c.title))
	fmt.Fprintf(&out, `<text x="20" y="46" font-size="11" fill="#555">%s</text>`+"\n",
		xmlEscape(fmt.Sprintf("nxkv bench, %s run; %s, %d cores, %s; started %s", r.Mode, r.Machine.CPU, r.Machine.Cores, r.Machine.Go,
			r.Started.Format("2006-01-02 15:04 UTC"))))
	out.Write(body.Bytes())
	out.WriteString("</svg>\n")
	return out.Bytes()
}

// scaleFor returns the panel's axis: lo, hi and the x offset of a value.
func scaleFor(p panel, w float64) (lo, hi float64, scale func(float64) float64) {
	for _, br := range p.bars {
		hi = math.Max(hi, math.Max(br.value, br.hi))
	}
	hi = math.Max(hi, p.ref)
	if !p.log {
		if hi <= 0 {
			hi = 1
		}
		return 0, hi, func(v float64) float64 { return math.Max(0, v) / hi * w }
	}
	lo = math.Inf(1)
	for _, br := range p.bars {
		for _, v := range []float64{br.value, br.lo} {
			if v > 0 {
				lo = math.Min(lo, v)
			}
		}
	}
	if p.ref > 0 {
		lo = math.Min(lo, p.ref)
	}
	if math.IsInf(lo, 1) {
		lo = 1
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi, func(v float64) float64 {
		if v <= lo {
			return 0
		}
		return math.Log10(v/lo) / math.Log10(hi/lo) * w
	}
}

// drawPanel draws p with its top at y and returns the y below it.
func drawPanel(b *bytes.Buffer, p panel, y int) int {
	fmt.Fprintf(b, `<text x="20" y="%d" font-size="15" font-weight="bold">%s</text>`+"\n", y+14, xmlEscape(p.title))
	for i, line := range wrapWords(p.subtitle, subtitleChars) {
		fmt.Fprintf(b, `<text x="20" y="%d" font-size="11" fill="#555">%s</text>`+"\n", y+30+14*i, xmlEscape(line))
		y += 14 * min(i, 1)
	}
	y += 42
	// The labels' column is as wide as the longest label needs.
	lw := labelWidth
	for _, br := range p.bars {
		lw = max(lw, 7*len([]rune(br.label))+30)
	}
	lw = min(lw, maxLabelWidth)
	x0 := float64(lw)
	w := float64(svgWidth - lw - textWidth - 20)
	lo, hi, scale := scaleFor(p, w)
	tick := func(v float64) string {
		if v == 0 || p.tick == nil {
			return fmtTick(v)
		}
		return p.tick(v)
	}
	// Rows first (into their own buffer) so the grid can go underneath.
	top := y
	var rows bytes.Buffer
	group := ""
	for _, br := range p.bars {
		if br.group != "" && br.group != group {
			group = br.group
			fmt.Fprintf(&rows, `<text x="20" y="%d" font-size="12" font-weight="bold">%s</text>`+"\n", y+13, xmlEscape(group))
			y += rowHeight
		}
		from, to := x0, x0+math.Max(1, scale(br.value))
		if p.diverging {
			from, to = x0+scale(p.ref), x0+scale(br.value)
			if to < from {
				from, to = to, from
			}
			to = math.Max(to, from+1)
		}
		fmt.Fprintf(&rows, `<text x="%.0f" y="%d" font-size="12" text-anchor="end">%s</text>`+"\n", x0-8, y+13, xmlEscape(br.label))
		fmt.Fprintf(&rows, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", from, y+3, to-from, rowHeight-6, familyColor(br.family))
		end := to
		if br.lo > 0 || br.hi > 0 {
			l, h := x0+scale(br.lo), x0+scale(br.hi)
			mid := y + rowHeight/2
			fmt.Fprintf(&rows, `<path d="M%.1f %dH%.1fM%.1f %dV%dM%.1f %dV%d" stroke="#000" stroke-width="1.2" fill="none"/>`+"\n",
				l, mid, h, l, mid-4, mid+4, h, mid-4, mid+4)
			end = math.Max(end, h)
		}
		fmt.Fprintf(&rows, `<text x="%.1f" y="%d" font-size="11">%s</text>`+"\n", end+5, y+13, xmlEscape(br.text))
		y += rowHeight
	}
	// Grid and tick labels.
	if p.log {
		for v := lo; v <= hi*1.0001; v *= 10 {
			x := x0 + scale(v)
			fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x, top, x, y)
			fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="10" fill="#555" text-anchor="middle">%s</text>`+"\n", x, y+12, xmlEscape(tick(v)))
		}
	} else {
		step := niceStep(hi)
		for v := 0.0; v <= hi*1.0001; v += step {
			x := x0 + scale(v)
			fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eee"/>`+"\n", x, top, x, y)
			fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="10" fill="#555" text-anchor="middle">%s</text>`+"\n", x, y+12, xmlEscape(tick(v)))
		}
	}
	b.Write(rows.Bytes())
	if !p.diverging {
		fmt.Fprintf(b, `<line x1="%.0f" y1="%d" x2="%.0f" y2="%d" stroke="#333"/>`+"\n", x0, top, x0, y)
	}
	if p.ref > 0 {
		x := x0 + scale(p.ref)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000" stroke-dasharray="4,3"/>`+"\n", x, top, x, y+16)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="10" font-weight="bold" text-anchor="middle">%s</text>`+"\n", x, y+26, xmlEscape(fmtTick(p.ref)+" = "+p.refLabel))
	}
	return y + 28
}

func niceStep(hi float64) float64 {
	raw := hi / 5
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func fmtTick(v float64) string {
	switch {
	case v == 0:
		return "0"
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gk", v/1e3)
	default:
		return fmt.Sprintf("%g", math.Round(v*1000)/1000)
	}
}

// drawLegend draws a swatch and a name per family, in rows, with its top at
// y, and returns the y below it.
func drawLegend(b *bytes.Buffer, families []string, y int) int {
	fmt.Fprintf(b, `<text x="20" y="%d" font-size="11" fill="#555">colour: the contender a bar measures (nxkv's own bars are nxkv's colour alone)</text>`+"\n", y+10)
	y += 16
	x := 20
	for _, f := range families {
		w := 22 + 7*len([]rune(f))
		if x+w > svgWidth-20 {
			x, y = 20, y+18
		}
		fmt.Fprintf(b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/>`+"\n", x, y+2, familyColor(f))
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="12">%s</text>`+"\n", x+16, y+12, xmlEscape(f))
		x += w + 14
	}
	return y + 18
}

// wrapWords splits s into lines of at most n characters at spaces.
func wrapWords(s string, n int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len([]rune(line))+1+len([]rune(w)) > n {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}
