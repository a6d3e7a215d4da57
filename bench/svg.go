package main

import (
	"bytes"
	"fmt"
	"math"
	"strings"
)

// bar is one horizontal bar of a chart panel.
type bar struct {
	group string // a header row is drawn when the group changes
	label string
	value float64
	text  string // printed after the bar
	color string
}

// panel is one bar chart: linear from 0, or logarithmic.
type panel struct {
	title    string
	subtitle string
	bars     []bar
	log      bool
	ref      float64 // a dashed reference line at this value (0: none)
	refLabel string
}

const (
	svgWidth   = 980
	labelWidth = 250
	textWidth  = 110
	rowHeight  = 17
)

// peerColor gives each peer family one color across panels.
func peerColor(peer string) string {
	switch {
	case strings.Contains(peer, "nxkv"):
		return "#d9480f"
	case strings.Contains(peer, "map+Mutex"):
		return "#495057"
	case strings.Contains(peer, "xsync"): // before sync.Map, a substring
		return "#2f9e44"
	case strings.Contains(peer, "sync.Map"):
		return "#1971c2"
	case strings.Contains(peer, "otter"):
		return "#9c36b5"
	case strings.Contains(peer, "sync.Mutex"):
		return "#868e96"
	case strings.Contains(peer, "miniredis"):
		return "#e599a7"
	case strings.Contains(peer, "Redis"):
		return "#c92a2a"
	}
	return "#74c0fc"
}

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

// headlinePanels picks the figures a reader choosing a lock engine looks at
// first.
func headlinePanels(r *Results) []panel {
	var ps []panel
	// Raw operations, hot keys, one goroutine, in-process peers.
	hot := panel{title: fmt.Sprintf("Raw operations: %d hot keys, 1 goroutine", r.Config.HotKeys),
		subtitle: "throughput relative to map+Mutex (longer is faster; dashed line = map+Mutex)", ref: 1, refLabel: "map+Mutex"}
	for _, op := range rawOps() {
		for _, row := range r.Raw {
			if row.Op != op.Name || row.Keys != r.Config.HotKeys || row.Goroutines != 1 || row.VsBaseline <= 0 || row.Peer == peerMapMutex {
				continue
			}
			if strings.Contains(row.Peer, "Redis") || strings.Contains(row.Peer, "redis") {
				continue // four orders of magnitude off this scale; see the lock panel
			}
			hot.bars = append(hot.bars, bar{group: op.Name, label: row.Peer, value: row.VsBaseline,
				text: fmt.Sprintf("%s  (%.0f ns)", fmtRatio(row.VsBaseline), row.NsPerOp), color: peerColor(row.Peer)})
		}
	}
	if len(hot.bars) > 0 {
		ps = append(ps, hot)
	}
	// Lock cycle, uncontended, one goroutine: speed relative to Redis.
	lk := panel{title: "Lock cycle (Obtain + Release), uncontended, 1 goroutine",
		subtitle: "throughput relative to a SET NX PX lock on Redis through go-redis (log scale; dashed line = that baseline)", log: true, ref: 1, refLabel: "Redis"}
	for _, row := range r.Locks {
		if row.Scenario == "uncontended" && row.Goroutines == 1 && row.VsRedis > 0 {
			lk.bars = append(lk.bars, bar{label: row.Peer, value: row.VsRedis,
				text: fmt.Sprintf("%s  (%s)", fmtRatio(row.VsRedis), fmtNs(row.NsPerCycle)), color: peerColor(row.Peer)})
		}
	}
	if len(lk.bars) == 0 {
		// No Redis in this run: chart the cycle time itself.
		lk = panel{title: "Lock cycle (Obtain + Release), uncontended, 1 goroutine",
			subtitle: "time per cycle, nanoseconds (log scale; shorter is better; no Redis in this run)", log: true}
		for _, row := range r.Locks {
			if row.Scenario == "uncontended" && row.Goroutines == 1 && row.NsPerCycle > 0 {
				lk.bars = append(lk.bars, bar{label: row.Peer, value: row.NsPerCycle, text: fmtNs(row.NsPerCycle), color: peerColor(row.Peer)})
			}
		}
	}
	if len(lk.bars) > 0 {
		ps = append(ps, lk)
	}
	// Hand-off p99 to a blocked waiter.
	ho := panel{title: fmt.Sprintf("Lock hand-off to a blocked waiter, %d waiters: p99", r.Config.Waiters),
		subtitle: "Release start to the next holder's Obtain return, microseconds (log scale; shorter is better; polling clients retry every 1 ms)", log: true}
	for _, row := range r.Locks {
		if row.Scenario == "handoff" && row.Latency.P99 > 0 {
			ho.bars = append(ho.bars, bar{label: row.Peer, value: row.Latency.P99 / 1e3,
				text: fmt.Sprintf("%s  (p50 %s)", fmtNs(row.Latency.P99), fmtNs(row.Latency.P50)), color: peerColor(row.Peer)})
		}
	}
	if len(ho.bars) > 0 {
		ps = append(ps, ho)
	}
	// Memory per key with TTL.
	mem := panel{title: fmt.Sprintf("Memory per key with a TTL (%d keys)", r.Config.MemKeys),
		subtitle: "bytes of heap per key, including 32 B of key and value strings (shorter is better)"}
	for _, m := range r.Memory {
		if m.WithTTL {
			mem.bars = append(mem.bars, bar{label: m.Peer, value: m.BytesPerKy, text: fmt.Sprintf("%.0f B", m.BytesPerKy), color: peerColor(m.Peer)})
		}
	}
	if len(mem.bars) > 0 {
		ps = append(ps, mem)
	}
	return ps
}

// renderSVG draws the headline panels as one SVG document.
func renderSVG(r *Results) []byte {
	ps := headlinePanels(r)
	var body bytes.Buffer
	y := 60
	for _, p := range ps {
		y = drawPanel(&body, p, y) + 30
	}
	if len(ps) == 0 {
		fmt.Fprintf(&body, `<text x="20" y="%d" font-size="14">No results to chart.</text>`+"\n", y)
		y += 30
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&out, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`+"\n",
		svgWidth, y, svgWidth, y)
	fmt.Fprintf(&out, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&out, `<text x="20" y="28" font-size="18" font-weight="bold">%s</text>`+"\n",
		xmlEscape(fmt.Sprintf("nxkv bench: %s mode, %d cores, %s", r.Mode, r.Machine.Cores, r.Machine.Go)))
	fmt.Fprintf(&out, `<text x="20" y="46" font-size="11" fill="#555">%s</text>`+"\n",
		xmlEscape(fmt.Sprintf("%s; medians of %d repetitions; started %s", r.Machine.CPU, r.Config.Reps, r.Started.Format("2006-01-02 15:04 UTC"))))
	out.Write(body.Bytes())
	out.WriteString("</svg>\n")
	return out.Bytes()
}

// drawPanel draws p with its top at y and returns the y below it.
func drawPanel(b *bytes.Buffer, p panel, y int) int {
	fmt.Fprintf(b, `<text x="20" y="%d" font-size="15" font-weight="bold">%s</text>`+"\n", y+14, xmlEscape(p.title))
	fmt.Fprintf(b, `<text x="20" y="%d" font-size="11" fill="#555">%s</text>`+"\n", y+30, xmlEscape(p.subtitle))
	y += 42
	x0 := labelWidth
	w := float64(svgWidth - labelWidth - textWidth - 20)
	lo, hi := 0.0, 0.0
	for _, br := range p.bars {
		hi = math.Max(hi, br.value)
	}
	hi = math.Max(hi, p.ref)
	scale := func(v float64) float64 { return v / hi * w }
	if p.log {
		lo = math.Inf(1)
		for _, br := range p.bars {
			if br.value > 0 {
				lo = math.Min(lo, br.value)
			}
		}
		if p.ref > 0 {
			lo = math.Min(lo, p.ref)
		}
		lo = math.Pow(10, math.Floor(math.Log10(lo)))
		hi = math.Pow(10, math.Ceil(math.Log10(hi)))
		if hi <= lo {
			hi = lo * 10
		}
		scale = func(v float64) float64 {
			if v <= lo {
				return 1
			}
			return math.Log10(v/lo) / math.Log10(hi/lo) * w
		}
	}
	// Rows first (into their own buffer) so the grid can go underneath.
	top := y
	var rows bytes.Buffer
	group := ""
	for _, br := range p.bars {
		if br.group != "" && br.group != group {
			group = br.group
			fmt.Fprintf(&rows, `<text x="20" y="%d" font-size="12" font-weight="bold">%s</text>`+"\n", y+12, xmlEscape(group))
			y += rowHeight
		}
		bw := math.Max(1, scale(br.value))
		fmt.Fprintf(&rows, `<text x="%d" y="%d" font-size="12" text-anchor="end">%s</text>`+"\n", x0-8, y+12, xmlEscape(br.label))
		fmt.Fprintf(&rows, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", x0, y+2, bw, rowHeight-4, br.color)
		fmt.Fprintf(&rows, `<text x="%.1f" y="%d" font-size="11">%s</text>`+"\n", float64(x0)+bw+5, y+12, xmlEscape(br.text))
		y += rowHeight
	}
	// Grid and tick labels.
	if p.log {
		for v := lo; v <= hi*1.0001; v *= 10 {
			x := float64(x0) + scale(v)
			if v == lo {
				x = float64(x0)
			}
			fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", x, top, x, y)
			fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="10" fill="#555" text-anchor="middle">%s</text>`+"\n", x, y+12, xmlEscape(fmtTick(v)))
		}
	} else {
		step := niceStep(hi)
		for v := 0.0; v <= hi*1.0001; v += step {
			x := float64(x0) + scale(v)
			fmt.Fprintf(b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#eee"/>`+"\n", x, top, x, y)
			if p.ref > 0 && math.Abs(v-p.ref) < step/4 {
				continue // the reference line's own label says it
			}
			fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="10" fill="#555" text-anchor="middle">%s</text>`+"\n", x, y+12, xmlEscape(fmtTick(v)))
		}
	}
	b.Write(rows.Bytes())
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333"/>`+"\n", x0, top, x0, y)
	if p.ref > 0 {
		x := float64(x0) + scale(p.ref)
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
