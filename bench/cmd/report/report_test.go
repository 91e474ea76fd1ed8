package main

import (
	"encoding/xml"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/convo-go/convo/bench/benchkit"
	"github.com/convo-go/convo/bench/growth"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/convo-go/convo/bench/persist
cpu: AMD EPYC
BenchmarkPersist/convo/n=100/roundtrip-2   	 100	 1000 ns/op	 50.0 MB/s	 5000 docB	 300 B/op	 10 allocs/op
BenchmarkPersist/eino/n=100/roundtrip-2    	 100	 3000 ns/op	 16.0 MB/s	 4000 docB	 900 B/op	 30 allocs/op
BenchmarkPersist/convo/n=100/roundtrip-2   	 100	 1400 ns/op	 50.0 MB/s	 5000 docB	 300 B/op	 10 allocs/op
BenchmarkPersist/convo/n=100/roundtrip-2   	 100	 1200 ns/op	 50.0 MB/s	 5000 docB	 300 B/op	 10 allocs/op
BenchmarkPersist/eino/n=100/roundtrip-2    	 100	 2000 ns/op	 16.0 MB/s	 4000 docB	 900 B/op	 30 allocs/op
BenchmarkPersist/convo/n=10000/roundtrip-2 	 1	 200000 ns/op	 50.0 MB/s	 5000 docB	 300 B/op	 10 allocs/op
BenchmarkPersist/eino/n=10000/roundtrip-2  	 1	 300000 ns/op	 16.0 MB/s	 4000 docB	 900 B/op	 30 allocs/op
PASS
`

func parsed(t *testing.T) *Set {
	var s Set
	if err := s.Parse(strings.NewReader(sample)); err != nil {
		t.Fatal(err)
	}
	return &s
}

func TestParseAndStat(t *testing.T) {
	s := parsed(t)
	if s.Header["cpu"] != "AMD EPYC" || s.Header["goos"] != "linux" {
		t.Errorf("header %v", s.Header)
	}
	st, ok := s.Get("BenchmarkPersist/convo/n=100/roundtrip").Stat("ns/op")
	if !ok || st.Median != 1200 || st.N != 3 || math.Abs(st.Spread-200.0/1200) > 1e-9 {
		t.Errorf("convo stat %+v %v", st, ok)
	}
	// Five runs: the quartiles (95 and 110) leave the slowest and the
	// fastest out.
	r := &Result{Samples: map[string][]float64{"ns/op": {100, 90, 110, 1000, 95}}}
	if st, _ := r.Stat("ns/op"); st.Median != 100 || math.Abs(st.Spread-0.075) > 1e-9 {
		t.Errorf("five runs: %+v, want median 100 ±7.5%%", st)
	}
	st, _ = s.Get("BenchmarkPersist/eino/n=100/roundtrip").Stat("ns/op")
	if st.Median != 2500 {
		t.Errorf("even number of samples: median %v, want 2500", st.Median)
	}
	if _, ok := s.Get("BenchmarkPersist/nobody").Stat("ns/op"); ok {
		t.Error("a missing benchmark has a stat")
	}
	var bad Set
	if err := bad.Parse(strings.NewReader("BenchmarkX-2 10 abc ns/op\n")); err == nil {
		t.Error("a malformed value parsed")
	}
}

func TestMarkdownTargets(t *testing.T) {
	r := &report{set: parsed(t), fid: []benchkit.FidelityRecord{
		{Library: "convo", Messages: 100},
		{Library: "eino", Messages: 100, Losses: []benchkit.Loss{{Field: "message.time", Count: 100, First: "messages[0]"}}},
	}}
	md := r.markdown("## Notes\n\nhand-written")
	for _, want := range []string{
		"| **convo** | 100 | 5 KiB | 1,200 ±17% |",
		"| eino | 100 | 4 KiB | 2,500 ±20% | 16 | 900 B | 30 | 2.08× | 3.00× |",
		"persistence, 10,000 messages: convo is 1.50× as fast as eino (target 2×)",
		"| **convo** | 0 | nothing: full fidelity |",
		"`message.time` 100",
		"| **convo** | 12 |  | 20 | 167× |",
		"persistence growth: convo takes 167× as long",
		"## Notes\n\nhand-written",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "100 messages: convo is") {
		t.Error("a met target (2.08× at 100 messages) is listed as missed")
	}
}

func TestGrowthSVG(t *testing.T) {
	r := &report{set: parsed(t)}
	svg := GrowthSVG("growth <test>", r.growthSeries())
	if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
		t.Fatalf("not well-formed XML: %v\n%s", err, svg)
	}
	for _, want := range []string{"growth &lt;test&gt;", ">convo<", ">eino<", "convo, 10000 messages: 200 µs", "stroke-dasharray"} {
		if !strings.Contains(svg, want) {
			t.Errorf("plot lacks %q", want)
		}
	}
	if GrowthSVG("empty", nil) != "" {
		t.Error("a plot of nothing is not empty")
	}
}

// TestGrowthTable checks the growth table read from the interleaved
// measurement's lines: medians over the rounds, the growth column, and a
// miss for every unit whose sizes are not within 10% of each other.
func TestGrowthTable(t *testing.T) {
	var in strings.Builder
	// Three rounds; CPU time is flat within 10% for decode, wall time not
	// (1,000 over 100 is 1.25); encode's CPU time falls.
	rows := []struct {
		n          int
		op         string
		wall, cpus [3]float64
	}{
		{100, "decode", [3]float64{1000, 1100, 900}, [3]float64{800, 700, 900}},
		{1000, "decode", [3]float64{1250, 1250, 1250}, [3]float64{850, 850, 850}},
		{10000, "decode", [3]float64{1000, 1000, 1000}, [3]float64{820, 820, 820}},
		{100000, "decode", [3]float64{1100, 1100, 1100}, [3]float64{860, 860, 860}},
		{100, "encode", [3]float64{500, 500, 500}, [3]float64{400, 400, 400}},
		{100000, "encode", [3]float64{300, 300, 300}, [3]float64{300, 300, 300}},
	}
	for i := range 3 {
		for _, row := range rows {
			fmt.Fprintf(&in, "%s/n=%d/convo/%s-2\t5\t1 ns/op\t%d allocs/op\t%.0f ns/msg\t%.0f cpu-ns/msg\n",
				growth.InterleavedName, row.n, row.op, row.n/100, row.wall[i], row.cpus[i])
		}
	}
	// A round whose slice held a collection cycle counts the runtime's own
	// allocations too; the table gives the fewest.
	fmt.Fprintf(&in, "%s/n=100000/convo/decode-2\t1\t1 ns/op\t1006 allocs/op\t1100 ns/msg\t860 cpu-ns/msg\n", growth.InterleavedName)
	in.WriteString("# n=100 convo/decode: a summary line the parser leaves out\n")
	r, md := growthReport(t, in.String())
	for _, want := range []string{
		"median over 3 rounds",
		"| decode | **convo** | 1,000 / 800 ±12% | 1,250 / 850 ±0% | 1,000 / 820 ±0% | 1,100 / 860 ±0% | 1.10× / 1.07× | 1,000 a document |",
		"| encode | **convo** | 500 / 400 ±0% |  |  | 300 / 300 ±0% | 0.60× / 0.75× |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("growth table lacks %q:\n%s", want, md)
		}
	}
	want := []string{
		"growth, decode: convo's wall time per message is 1.25× at 1,000 messages what it is at 100 (target: every size within 10% of the others)",
		"growth, encode: convo's CPU time per message is 1.33× at 100 messages what it is at 100,000 (target: every size within 10% of the others)",
		"growth, encode: convo's wall time per message is 1.67× at 100 messages what it is at 100,000 (target: every size within 10% of the others)",
	}
	if !slices.Equal(r.misses, want) {
		t.Errorf("misses:\n%s\nwant\n%s", strings.Join(r.misses, "\n"), strings.Join(want, "\n"))
	}
}

// TestGrowthAlone: with a run of convo alone in its process, the report
// gives its table and judges convo's growth by it, not by the run beside
// the other engines.
func TestGrowthAlone(t *testing.T) {
	var in strings.Builder
	for _, n := range growth.Sizes {
		// Beside the other engines decode grows 1.5×; alone, 1.05×.
		fmt.Fprintf(&in, "%s/n=%d/convo/decode-2\t5\t1 ns/op\t3 allocs/op\t%d ns/msg\t%d cpu-ns/msg\n",
			growth.InterleavedName, n, 1000+n/200, 1000+n/200)
		fmt.Fprintf(&in, "%s/n=%d/convo/decode-2\t5\t1 ns/op\t3 allocs/op\t%d ns/msg\t%d cpu-ns/msg\n",
			growth.AloneName, n, 1000+n/2000, 1000+n/2000)
	}
	r, md := growthReport(t, in.String())
	for _, want := range []string{
		"| decode | **convo** | 1,000 / 1,000 ±0% | 1,005 / 1,005 ±0% | 1,050 / 1,050 ±0% | 1,500 / 1,500 ±0% | 1.50× / 1.50× |",
		"convo alone in its process",
		"| decode | **convo** | 1,000 / 1,000 ±0% | 1,000 / 1,000 ±0% | 1,005 / 1,005 ±0% | 1,050 / 1,050 ±0% | 1.05× / 1.05× |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("growth tables lack %q:\n%s", want, md)
		}
	}
	if len(r.misses) != 0 {
		t.Errorf("misses judged by the run beside the other engines: %q", r.misses)
	}
	if got := r.growthSummary(); len(got) != 1 || !strings.Contains(got[0], "1.05× (wall) and 1.05× (CPU)") {
		t.Errorf("summary: %q", got)
	}
}

// TestGrowthFloor: the run alone has the floor's row (the history read
// with none of the format's work) beside append's, a sentence with what
// convo's encoder adds to it at each end of the sizes, and the floor's own
// growth is no miss of convo's.
func TestGrowthFloor(t *testing.T) {
	var in strings.Builder
	for _, run := range []string{growth.InterleavedName, growth.AloneName} {
		for _, n := range growth.Sizes {
			fmt.Fprintf(&in, "%s/n=%d/convo/decode-2\t5\t1 ns/op\t3 allocs/op\t1000 ns/msg\t1000 cpu-ns/msg\n", run, n)
		}
		// The floor doubles from 100 to 100,000 messages; append rises by
		// as much, so what convo adds falls from 450 to 430 ns.
		for _, c := range []struct{ n, app, walk int }{{100, 600, 150}, {1000, 620, 170}, {10000, 700, 250}, {100000, 730, 300}} {
			fmt.Fprintf(&in, "%s/n=%d/convo/append-2\t5\t1 ns/op\t1 allocs/op\t%d ns/msg\t%d cpu-ns/msg\n", run, c.n, c.app, c.app)
			fmt.Fprintf(&in, "%s/n=%d/convo/walk-2\t5\t1 ns/op\t1 allocs/op\t%d ns/msg\t%d cpu-ns/msg\n", run, c.n, c.walk, c.walk)
		}
	}
	r, md := growthReport(t, in.String())
	for _, want := range []string{
		"| encode | " + walkLabel + " | 150 / 150 ±0% | 170 / 170 ±0% | 250 / 250 ±0% | 300 / 300 ±0% | 2.00× / 2.00× |",
		"From 100 to 100,000 messages the floor's CPU time per message rises by 150 ns (2.00×) and the encoding into a buffer handed back by 130 ns: " +
			"what convo's encoder does beyond reading the history (the two rows' difference) goes from 450 to 430 ns a message, 0.96×.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("growth tables lack %q:\n%s", want, md)
		}
	}
	for _, m := range r.misses {
		if !strings.Contains(m, "buffer handed back") {
			t.Errorf("a miss other than append's: %q", m)
		}
	}
	if len(r.misses) != 2 {
		t.Errorf("misses: %q, want append's two", r.misses)
	}
}

// growthReport reads benchmark lines and returns the report and its growth
// tables.
func growthReport(t *testing.T, in string) (*report, string) {
	t.Helper()
	var s Set
	if err := s.Parse(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	r := &report{set: &s}
	var b strings.Builder
	r.growthTable(&b)
	return r, b.String()
}
