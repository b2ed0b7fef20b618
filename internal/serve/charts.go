package serve

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"
)

// The charts are drawn here as inline SVG: no script, no library. Every
// number in them is formatted by the server; no text from a loop's files
// goes into them.

const (
	chartW, chartH         = 600, 220
	padL, padR, padT, padB = 56, 16, 14, 34
)

// costChart is the loop's cumulative spend over time.
func costChart(pts []costPoint, budget float64) template.HTML {
	var b strings.Builder
	open(&b, "cost-chart", "Cost over time")
	if len(pts) == 0 {
		empty(&b, "no agent run has ended yet")
		return template.HTML(b.String())
	}
	t0, t1 := pts[0].T, pts[len(pts)-1].T
	if !t1.After(t0) {
		t1 = t0.Add(time.Second)
	}
	ymax := pts[len(pts)-1].USD
	showBudget := budget > 0 && budget <= ymax*4
	if showBudget {
		ymax = math.Max(ymax, budget)
	}
	ymax = niceMax(ymax)
	x := func(t time.Time) float64 {
		return padL + float64(t.Sub(t0))/float64(t1.Sub(t0))*(chartW-padL-padR)
	}
	y := func(v float64) float64 { return chartH - padB - v/ymax*(chartH-padT-padB) }
	axes(&b, ymax, func(v float64) string { return fmt.Sprintf("$%.2f", v) })
	fmt.Fprintf(&b, `<text class="lbl" x="%d" y="%d">%s</text>`, padL, chartH-8, t0.Local().Format("15:04:05"))
	fmt.Fprintf(&b, `<text class="lbl" x="%d" y="%d" text-anchor="end">%s</text>`, chartW-padR, chartH-8, t1.Local().Format("15:04:05"))
	if showBudget {
		fmt.Fprintf(&b, `<line class="budget" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/><text class="lbl" x="%d" y="%.1f" text-anchor="end">budget $%.2f</text>`,
			padL, chartW-padR, y(budget), y(budget), chartW-padR, y(budget)-4, budget)
	}
	var path strings.Builder
	prev := 0.0
	for i, p := range pts {
		if i == 0 {
			fmt.Fprintf(&path, "M%.1f,%.1f", x(p.T), y(0))
		}
		// A step: spend jumps when a run ends.
		fmt.Fprintf(&path, " L%.1f,%.1f L%.1f,%.1f", x(p.T), y(prev), x(p.T), y(p.USD))
		prev = p.USD
	}
	fmt.Fprintf(&b, `<path class="line" d="%s"/>`, path.String())
	for _, p := range pts {
		fmt.Fprintf(&b, `<circle class="dot" cx="%.1f" cy="%.1f" r="2.5"><title>%s $%.4f</title></circle>`, x(p.T), y(p.USD), p.T.Local().Format("15:04:05"), p.USD)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// failuresChart is the number of failed checks (and built-in check errors)
// of the judging gates in each cycle (ralph: each attempt).
func failuresChart(pts []failPoint, unit string) template.HTML {
	var b strings.Builder
	open(&b, "fail-chart", "Failures per "+unit)
	if len(pts) == 0 {
		empty(&b, "no gate has run yet")
		return template.HTML(b.String())
	}
	ymax := 1.0
	for _, p := range pts {
		ymax = math.Max(ymax, float64(p.Failed))
	}
	ymax = math.Ceil(ymax/4) * 4 // whole numbers on the four grid lines
	axes(&b, ymax, func(v float64) string { return fmt.Sprintf("%g", v) })
	slot := float64(chartW-padL-padR) / float64(len(pts))
	bw := math.Min(slot*0.7, 48)
	for i, p := range pts {
		h := float64(p.Failed) / ymax * (chartH - padT - padB)
		cx := padL + slot*(float64(i)+0.5)
		cls := "bar"
		if p.Failed == 0 {
			cls = "bar pass"
			h = 2
		}
		what := fmt.Sprintf("%s %d: %d failed", unit, p.N, p.Failed)
		if p.To > p.N {
			what = fmt.Sprintf("%ss %d–%d: %d failed a %s judged (mean)", unit, p.N, p.To, p.Failed, unit)
		}
		fmt.Fprintf(&b, `<rect class="%s" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s</title></rect>`,
			cls, cx-bw/2, chartH-padB-h, bw, h, what)
		if len(pts) <= 30 || i%(len(pts)/15+1) == 0 {
			fmt.Fprintf(&b, `<text class="lbl" x="%.1f" y="%d" text-anchor="middle">%d</text>`, cx, chartH-padB+14, p.N)
		}
	}
	fmt.Fprintf(&b, `<text class="lbl" x="%d" y="%d" text-anchor="middle">%s</text>`, chartW/2+padL/2, chartH-4, unit)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func open(b *strings.Builder, class, title string) {
	fmt.Fprintf(b, `<svg class="chart %s" viewBox="0 0 %d %d" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg"><title>%s</title>`, class, chartW, chartH, title, title)
}

func empty(b *strings.Builder, why string) {
	fmt.Fprintf(b, `<text class="lbl" x="%d" y="%d" text-anchor="middle">%s</text></svg>`, chartW/2, chartH/2, why)
}

// axes draws the y axis with four grid lines, and the x axis.
func axes(b *strings.Builder, ymax float64, label func(float64) string) {
	for i := 0; i <= 4; i++ {
		v := ymax * float64(i) / 4
		yy := chartH - padB - float64(i)/4*(chartH-padT-padB)
		fmt.Fprintf(b, `<line class="grid" x1="%d" x2="%d" y1="%.1f" y2="%.1f"/><text class="lbl" x="%d" y="%.1f" text-anchor="end">%s</text>`,
			padL, chartW-padR, yy, yy, padL-6, yy+4, label(v))
	}
	fmt.Fprintf(b, `<line class="axis" x1="%d" x2="%d" y1="%d" y2="%d"/>`, padL, chartW-padR, chartH-padB, chartH-padB)
}

// niceMax rounds v up to 1, 2, 4 or 8 times a power of ten (so its
// quarters, the grid lines, are round too).
func niceMax(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 4, 8, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}
