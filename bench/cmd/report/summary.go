package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/convo-go/convo/bench/benchkit"
	"github.com/convo-go/convo/bench/growth"
)

// summary writes the headline figures of the run: the ranges of the ratios
// in the tables below, in the form the README quotes them. TestReadme
// checks that every figure of the README's performance section is stated
// here, so the README cannot drift from the measurements.
func (r *report) summary(b *strings.Builder) {
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	var peers []string
	for _, lib := range persistLibs[1:] {
		lo, hi := r.span(func(yield func(lib, base string)) {
			for _, n := range benchkit.Sizes {
				yield(persistName(lib, n, "roundtrip"), persistName("convo", n, "roundtrip"))
			}
		}, "ns/op")
		if lo > 0 {
			peers = append(peers, spanLabel(lo, hi)+" as fast as "+lib)
		}
	}
	if len(peers) > 0 {
		add("persistence round trip, 100 to 10,000 messages: convo is %s", strings.Join(peers, ", "))
	}
	if lo, hi := r.span(func(yield func(a, b string)) {
		for _, api := range requestAPIs {
			for _, n := range benchkit.Sizes {
				for _, lib := range requestLibs[1:] {
					yield(fmt.Sprintf("BenchmarkRequest/%s/%s/n=%d", api, lib, n), fmt.Sprintf("BenchmarkRequest/%s/convo/n=%d", api, n))
				}
			}
		}
	}, "ns/op"); lo > 0 {
		add("building a request: convo is %s as fast as the official SDKs", spanLabel(lo, hi))
	}
	if lo, hi := r.span(func(yield func(a, b string)) {
		for _, sc := range streamCases {
			yield("BenchmarkStream/"+sc+"/sdk", "BenchmarkStream/"+sc+"/convo")
		}
	}, "ns/op"); lo > 0 {
		add("folding a stream: convo is %s as fast as the SDKs' accumulators", spanLabel(lo, hi))
	}
	lines = append(lines, r.growthSummary()...)
	if len(lines) == 0 {
		return
	}
	b.WriteString("## In short\n\n")
	for _, l := range lines {
		b.WriteString("- " + l + "\n")
	}
	b.WriteString("\n")
}

// growthSummary is the summary of the growth measurement: convo's speed, its
// ratio to encoding/json and sonic, and its growth.
func (r *report) growthSummary() []string {
	var out []string
	sizes := growth.Sizes
	first, last := sizes[0], sizes[len(sizes)-1]
	for _, op := range []string{"decode", "encode"} {
		const run = growth.InterleavedName
		if _, ok := r.stat(growthName(run, "convo", first, op), "cpu-ns/msg"); !ok {
			continue
		}
		s := fmt.Sprintf("canonical JSON %s, %s to %s messages, CPU time: convo is", op, commas(float64(first)), commas(float64(last)))
		sep := " "
		for _, e := range []struct{ name, label string }{{"encoding-json", "`encoding/json`"}, {"json-v2", "encoding/json/v2"}, {"sonic", "sonic"}} {
			lo, hi := r.span(func(yield func(a, b string)) {
				for _, n := range sizes {
					yield(growthName(run, e.name, n, op), growthName(run, "convo", n, op))
				}
			}, "cpu-ns/msg")
			if lo > 0 {
				s += fmt.Sprintf("%s%s as fast as %s", sep, spanLabel(lo, hi), e.label)
				sep = ", "
			}
		}
		grun := r.growthRun()
		wg := r.growthOf(grun, "convo", op, "ns/msg", first, last)
		cg := r.growthOf(grun, "convo", op, "cpu-ns/msg", first, last)
		s += fmt.Sprintf("; cost per message at %s messages %s (wall) and %s (CPU) of that at %s",
			commas(float64(last)), ratioOrBlank(wg), ratioOrBlank(cg), commas(float64(first)))
		out = append(out, s)
	}
	return out
}

// span returns the smallest and largest ratio a/b of the unit's medians
// over the pairs of benchmark names that pairs yields, both present; 0, 0
// when there is none.
func (r *report) span(pairs func(yield func(a, b string)), unit string) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	pairs(func(a, b string) {
		x, ok1 := r.stat(a, unit)
		y, ok2 := r.stat(b, unit)
		if ok1 && ok2 && y.Median > 0 {
			lo, hi = math.Min(lo, x.Median/y.Median), math.Max(hi, x.Median/y.Median)
		}
	})
	if math.IsInf(lo, 1) {
		return 0, 0
	}
	return lo, hi
}

// figure rounds a ratio as the README quotes it: one decimal below 10,
// none above.
func figure(x float64) string {
	if x >= 9.95 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

// spanLabel is a range of ratios, "2.1–2.4×", or one figure when both ends
// round alike.
func spanLabel(lo, hi float64) string {
	a, z := figure(lo), figure(hi)
	if a == z {
		return a + "×"
	}
	return a + "–" + z + "×"
}
