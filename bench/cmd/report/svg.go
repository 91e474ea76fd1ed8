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

// GrowthSVG plots time per round trip against history length on log-log
// axes, with a dotted line of slope one (linear growth) for reference
// through the first series' first point, drawn over the curves. The first series is drawn
// heavier: it is convo.
func GrowthSVG(title string, series []Series) string {
	const (
		w, h                     = 760, 470
		left, right, top, bottom = 78, 180, 48, 58
	)
	minN, maxN := math.Inf(1), math.Inf(-1)
	minT, maxT := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, p := range s.Points {
			minN, maxN = math.Min(minN, float64(p.N)), math.Max(maxN, float64(p.N))
			minT, maxT = math.Min(minT, p.Ns), math.Max(maxT, p.Ns)
		}
	}
	if math.IsInf(minN, 0) || minN <= 0 || minT <= 0 {
		return ""
	}
	x0, x1 := math.Floor(math.Log10(minN)), math.Ceil(math.Log10(maxN))
	if x1 == x0 {
		x1++
	}
	y0, y1 := math.Floor(math.Log10(minT)), math.Ceil(math.Log10(maxT))
	if y1 == y0 {
		y1++
	}
	pw, ph := float64(w-left-right), float64(h-top-bottom)
	px := func(n float64) float64 { return float64(left) + (math.Log10(n)-x0)/(x1-x0)*pw }
	py := func(t float64) float64 { return float64(top) + (y1-math.Log10(t))/(y1-y0)*ph }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="13">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="26" font-size="16" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(title))
	// Grid and ticks: every decade labelled, 2 and 5 within it faint.
	for e := y0; e <= y1; e++ {
		for _, k := range []float64{1, 2, 5} {
			t := k * math.Pow(10, e)
			if math.Log10(t) > y1+1e-9 {
				break
			}
			y := py(t)
			stroke := "#eee"
			if k == 1 {
				stroke = "#ccc"
				fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", left-8, y, durationLabel(t))
			}
			fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s"/>`+"\n", left, w-right, y, y, stroke)
		}
	}
	for e := x0; e <= x1; e++ {
		x := px(math.Pow(10, e))
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#ccc"/>`+"\n", x, x, top, h-bottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x, h-bottom+20, countLabel(math.Pow(10, e)))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#444"/>`+"\n", left, top, pw, ph)
	fmt.Fprintf(&b, `<text x="%.0f" y="%d" text-anchor="middle">messages in the history (log scale)</text>`+"\n", float64(left)+pw/2, h-14)
	fmt.Fprintf(&b, `<text transform="translate(18 %.0f) rotate(-90)" text-anchor="middle">time per encode + decode (log scale)</text>`+"\n", float64(top)+ph/2)

	for i, s := range series {
		color := palette[i%len(palette)]
		width := 2.0
		if i == 0 {
			width = 3.5
		}
		var pts []string
		for _, p := range s.Points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(float64(p.N)), py(p.Ns)))
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%.1f"/>`+"\n", strings.Join(pts, " "), color, width)
		for _, p := range s.Points {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s"><title>%s, %d messages: %s</title></circle>`+"\n",
				px(float64(p.N)), py(p.Ns), color, html.EscapeString(s.Name), p.N, durationLabel(p.Ns))
		}
		ly := top + 14 + 22*i
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="%.1f"/>`+"\n", w-right+16, w-right+44, ly, ly, color, width)
		fmt.Fprintf(&b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", w-right+52, ly, html.EscapeString(s.Name))
	}
	// The reference goes on top: convo's curve, if linear, would hide it.
	if len(series) > 0 && len(series[0].Points) > 0 {
		p := series[0].Points[0]
		n2 := math.Pow(10, x1)
		t2 := p.Ns * n2 / float64(p.N)
		if t2 > math.Pow(10, y1) {
			n2 = float64(p.N) * math.Pow(10, y1) / p.Ns
			t2 = math.Pow(10, y1)
		}
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#222" stroke-width="1.5" stroke-dasharray="3 4"/>`+"\n", px(float64(p.N)), py(p.Ns), px(n2), py(t2))
	}
	ly := top + 14 + 22*len(series)
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#222" stroke-width="1.5" stroke-dasharray="3 4"/>`+"\n", w-right+16, w-right+44, ly, ly)
	fmt.Fprintf(&b, `<text x="%d" y="%d" dominant-baseline="middle">linear</text>`+"\n", w-right+52, ly)
	b.WriteString("</svg>\n")
	return b.String()
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
