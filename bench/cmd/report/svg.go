package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Series is one library's curve: median time per operation at each size.
type Series struct {
	Name   string
	Points []Point
}

// Point is one size and its median time in nanoseconds.
type Point struct {
	N  int
	Ns float64
}

var palette = []string{"#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"}

// The size of a growth plot and its margins.
const (
	plotW, plotH                             = 760, 470
	plotLeft, plotRight, plotTop, plotBottom = 78, 180, 48, 58
)

// logPlot maps sizes and times to a plot's coordinates: decades x0–x1 of
// sizes across, y0–y1 of times up.
type logPlot struct {
	x0, x1, y0, y1 float64
	pw, ph         float64
}

func (p *logPlot) px(n float64) float64 {
	return float64(plotLeft) + (math.Log10(n)-p.x0)/(p.x1-p.x0)*p.pw
}

func (p *logPlot) py(t float64) float64 {
	return float64(plotTop) + (p.y1-math.Log10(t))/(p.y1-p.y0)*p.ph
}

// GrowthSVG plots time per round trip against history length on log-log
// axes, with a dotted line of slope one (linear growth) for reference
// through the first series' first point, drawn over the curves. The first series is drawn
// heavier: it is convo.
func GrowthSVG(title string, series []Series) string {
	p, ok := newLogPlot(series)
	if !ok {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`+"\n", plotW, plotH, plotW, plotH)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", plotW, plotH)
	fmt.Fprintf(&b, `<text x="%d" y="26" font-size="16" font-weight="bold">%s</text>`+"\n", plotLeft, html.EscapeString(title))
	p.axes(&b)
	for i, s := range series {
		p.curve(&b, i, s)
	}
	p.linear(&b, series)
	b.WriteString("</svg>\n")
	return b.String()
}

// newLogPlot fits whole decades around every point; ok is false when
// there is nothing to plot on log axes.
func newLogPlot(series []Series) (*logPlot, bool) {
	minN, maxN := math.Inf(1), math.Inf(-1)
	minT, maxT := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, p := range s.Points {
			minN, maxN = math.Min(minN, float64(p.N)), math.Max(maxN, float64(p.N))
			minT, maxT = math.Min(minT, p.Ns), math.Max(maxT, p.Ns)
		}
	}
	if math.IsInf(minN, 0) || minN <= 0 || minT <= 0 {
		return nil, false
	}
	p := &logPlot{pw: float64(plotW - plotLeft - plotRight), ph: float64(plotH - plotTop - plotBottom)}
	p.x0, p.x1 = math.Floor(math.Log10(minN)), math.Ceil(math.Log10(maxN))
	if p.x1 == p.x0 {
		p.x1++
	}
	p.y0, p.y1 = math.Floor(math.Log10(minT)), math.Ceil(math.Log10(maxT))
	if p.y1 == p.y0 {
		p.y1++
	}
	return p, true
}

// axes writes the grid, ticks, frame and axis titles: every decade
// labelled, 2 and 5 within it faint.
func (p *logPlot) axes(b *strings.Builder) {
	for e := p.y0; e <= p.y1; e++ {
		for _, k := range []float64{1, 2, 5} {
			t := k * math.Pow(10, e)
			if math.Log10(t) > p.y1+1e-9 {
				break
			}
			y := p.py(t)
			stroke := "#eee"
			if k == 1 {
				stroke = "#ccc"
				fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", plotLeft-8, y, durationLabel(t))
			}
			fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/>`+"\n", plotLeft, plotW-plotRight, y, y, stroke)
		}
	}
	for e := p.x0; e <= p.x1; e++ {
		x := p.px(math.Pow(10, e))
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#ccc"/>`+"\n", x, x, plotTop, plotH-plotBottom)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, plotH-plotBottom+20, countLabel(math.Pow(10, e)))
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#444"/>`+"\n", plotLeft, plotTop, p.pw, p.ph)
	fmt.Fprintf(b, `<text x="%.0f" y="%d" text-anchor="middle">messages in the history (log scale)</text>`+"\n", float64(plotLeft)+p.pw/2, plotH-14)
	fmt.Fprintf(b, `<text transform="translate(18 %.0f) rotate(-90)" text-anchor="middle">time per encode + decode (log scale)</text>`+"\n", float64(plotTop)+p.ph/2)
}

// curve writes series s, the i-th, and its legend entry.
func (p *logPlot) curve(b *strings.Builder, i int, s Series) {
	color := palette[i%len(palette)]
	width := 2.0
	if i == 0 {
		width = 3.5
	}
	var pts []string
	for _, q := range s.Points {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", p.px(float64(q.N)), p.py(q.Ns)))
	}
	fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%.1f"/>`+"\n", strings.Join(pts, " "), color, width)
	for _, q := range s.Points {
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s, %d messages: %s</title></circle>`+"\n",
			p.px(float64(q.N)), p.py(q.Ns), color, html.EscapeString(s.Name), q.N, durationLabel(q.Ns))
	}
	ly := plotTop + 14 + 22*i
	fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="%.1f"/>`+"\n", plotW-plotRight+16, plotW-plotRight+44, ly, ly, color, width)
	fmt.Fprintf(b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", plotW-plotRight+52, ly, html.EscapeString(s.Name))
}

// linear writes the reference line of slope one through the first
// series' first point, on top (convo's curve, if linear, would hide it),
// and its legend entry.
func (p *logPlot) linear(b *strings.Builder, series []Series) {
	if len(series) > 0 && len(series[0].Points) > 0 {
		q := series[0].Points[0]
		n2 := math.Pow(10, p.x1)
		t2 := q.Ns * n2 / float64(q.N)
		if t2 > math.Pow(10, p.y1) {
			n2 = float64(q.N) * math.Pow(10, p.y1) / q.Ns
			t2 = math.Pow(10, p.y1)
		}
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#222" stroke-width="1.5" stroke-dasharray="3 4"/>`+"\n", p.px(float64(q.N)), p.py(q.Ns), p.px(n2), p.py(t2))
	}
	ly := plotTop + 14 + 22*len(series)
	fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#222" stroke-width="1.5" stroke-dasharray="3 4"/>`+"\n", plotW-plotRight+16, plotW-plotRight+44, ly, ly)
	fmt.Fprintf(b, `<text x="%d" y="%d" dominant-baseline="middle">linear</text>`+"\n", plotW-plotRight+52, ly)
}

func durationLabel(ns float64) string {
	switch {
	case ns >= 1e9:
		return trim(ns/1e9) + " s"
	case ns >= 1e6:
		return trim(ns/1e6) + " ms"
	case ns >= 1e3:
		return trim(ns/1e3) + " µs"
	}
	return trim(ns) + " ns"
}

func countLabel(n float64) string {
	if n >= 1000 {
		return trim(n/1000) + "k"
	}
	return trim(n)
}

func trim(v float64) string {
	s := fmt.Sprintf("%.3g", v)
	if strings.Contains(s, "e") {
		s = fmt.Sprintf("%.0f", v)
	}
	return s
}
