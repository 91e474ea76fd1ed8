package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/convo-go/convo/bench/growth"
)

// growthEngines are the engines of the growth measurement (bench/growth),
// convo first, with the names the report shows.
var growthEngines = []struct{ name, label string }{
	{"convo", "**convo**"},
	{"encoding-json", "encoding/json"},
	{"json-v2", "encoding/json/v2"},
	{"sonic", "sonic"},
	{"sonic-any", "sonic into `any`"},
}

// growthName is the name of the samples of engine's op at n messages in a
// run of the growth measurement (growth.TestInterleaved): every engine in
// one process (growth.InterleavedName) or one engine alone
// (growth.AloneName).
func growthName(run, engine string, n int, op string) string {
	return run + "/n=" + strconv.Itoa(n) + "/" + engine + "/" + op
}

// growthRun is the run convo's growth is judged by: convo alone in its
// process when the results have it, else the run with every engine.
func (r *report) growthRun() string {
	if _, ok := r.stat(growthName(growth.AloneName, "convo", growth.Sizes[0], "decode"), "cpu-ns/msg"); ok {
		return growth.AloneName
	}
	return growth.InterleavedName
}

// growthTable writes the per-message cost of every engine at every size of
// growth.Sizes: wall time and the process's CPU time per message, and how
// the cost at the largest size compares with the smallest.
func (r *report) growthTable(b *strings.Builder) {
	const run = growth.InterleavedName
	if _, ok := r.stat(growthName(run, "convo", growth.Sizes[0], "decode"), "ns/msg"); !ok {
		return
	}
	sizes := growth.Sizes
	first, last := sizes[0], sizes[len(sizes)-1]
	fmt.Fprintf(b, "### Canonical JSON from %s to %s messages, against the fastest Go JSON engines\n\n", commas(float64(first)), commas(float64(last)))
	b.WriteString("`TestInterleaved` in `bench/growth` (run with `-growth.rounds`): the same history, encoded once by convo, decoded and encoded by convo " +
		"(`convo.Unmarshal` into a `History`, `convo.Marshal`) and, on the same bytes, by general JSON engines reading and writing " +
		"a plain struct mirror of the format (`growth.Doc`: strings, raw JSON for `args`/`value`, the time as text), which " +
		"`TestMirror` checks holds the whole document: encoding/json, encoding/json/v2 (Go's experiment, built with " +
		"`GOEXPERIMENT=jsonv2`) and bytedance/sonic (its default configuration; also into `any`). The engines check " +
		"JSON syntax only; convo also validates what the format requires (roles, part types, base64, times, UTF-8), " +
		"interns repeated strings and copies what it keeps out of the document. The sizes are measured interleaved, in one process: " +
		"every size's inputs are built once and kept alive, each operation runs untimed until the garbage collector has finished " +
		"two cycles, and then each round runs every size for a slice of about 75 ms of each operation (one operation at least), " +
		"the sizes in a different order each round, so a change in the machine's load falls on every size alike. This is the cost " +
		"of a program that decodes or encodes again and again, with a heap that holds every size's history; the cold cost of a " +
		"first load is in the analysis below. Each cell is the median over " + r.growthRounds(run) + " rounds of wall time / CPU time " +
		"per message in ns, ± the spread of the CPU time as above. CPU time is the measuring thread's (the codec, and the garbage " +
		"collector's assists and sweeping its allocation causes) plus the collector's background work on the other threads, charged " +
		"by bytes allocated (the run's background CPU time over the bytes it allocated; a background cycle over the gigabyte heap " +
		"outlasts most slices, and charged where it ran it made a size's median a matter of timing). The last columns are the cost per message at " +
		commas(float64(last)) + " messages relative to " + commas(float64(first)) + " (1.00× is linear), and allocations per message " +
		"at " + commas(float64(last)) + " (the fewest of the rounds).\n\n")
	r.growthHeader(b)
	for _, op := range []string{"decode", "encode"} {
		for _, e := range growthEngines {
			r.growthRow(b, run, op, e.name, e.label)
		}
	}
	r.growthRow(b, run, "append", "convo", appendLabel)
	r.growthRow(b, run, "walk", "convo", walkLabel)
	b.WriteString("\n")
	r.growthRatios(b)
	r.growthAlone(b)
}

const (
	appendLabel = "**convo**, into a buffer handed back (`AppendHistory`)"
	walkLabel   = "floor: the history's bytes copied, no JSON (`growth.Walk`)"
)

// growthHeader writes the header of a growth table.
func (r *report) growthHeader(b *strings.Builder) {
	b.WriteString("| op | engine |")
	for _, n := range growth.Sizes {
		fmt.Fprintf(b, " %s |", commas(float64(n)))
	}
	b.WriteString(" growth (wall / CPU) | allocs/msg |\n|---|---|" + strings.Repeat("---:|", len(growth.Sizes)+2) + "\n")
}

// growthAlone writes the table of the run with convo alone in its process,
// when the results have it.
func (r *report) growthAlone(b *strings.Builder) {
	const run = growth.AloneName
	if r.growthRun() != run {
		return
	}
	b.WriteString("The same measurement with convo alone in its process (`-growth.engines convo`, run by `run.sh` after the one " +
		"above, " + r.growthRounds(run) + " rounds): the heap holds only convo's histories and documents, a few hundred MB " +
		"instead of a gigabyte, so a collection cycle is shorter than a slice and the rounds spread less. It is the run the " +
		"targets judge convo's growth by; the table above is for comparing engines measured side by side.\n\n")
	r.growthHeader(b)
	for _, op := range []string{"decode", "encode"} {
		r.growthRow(b, run, op, "convo", "**convo**")
	}
	r.growthRow(b, run, "append", "convo", appendLabel)
	r.growthRow(b, run, "walk", "convo", walkLabel)
	b.WriteString("\n")
	r.growthFloor(b, run)
}

// growthFloor writes how much of append's growth the floor (growth.Walk,
// reading the same history with none of the format's work) has too: what
// convo's own code adds per message at each end of the sizes.
func (r *report) growthFloor(b *strings.Builder, run string) {
	first, last := growth.Sizes[0], growth.Sizes[len(growth.Sizes)-1]
	cpu := func(op string, n int) float64 {
		st, _ := r.stat(growthName(run, "convo", n, op), "cpu-ns/msg")
		return st.Median
	}
	a0, a1, w0, w1 := cpu("append", first), cpu("append", last), cpu("walk", first), cpu("walk", last)
	if a0 == 0 || a1 == 0 || w0 == 0 || w1 == 0 {
		return
	}
	fmt.Fprintf(b, "From %s to %s messages the floor's CPU time per message rises by %s ns (%.2f×) and the encoding into a buffer "+
		"handed back by %s ns: what convo's encoder does beyond reading the history (the two rows' difference) goes from %s to %s ns "+
		"a message, %.2f×. The rise is the reading of a history that no longer fits in the caches; the analysis below has the rest.\n\n",
		commas(float64(first)), commas(float64(last)), commas(w1-w0), w1/w0, commas(a1-a0), commas(a0-w0), commas(a1-w1), (a1-w1)/(a0-w0))
}

func (r *report) growthRow(b *strings.Builder, run, op, engine, label string) {
	sizes := growth.Sizes
	var cells []string
	for _, n := range sizes {
		wall, ok1 := r.stat(growthName(run, engine, n, op), "ns/msg")
		cpu, ok2 := r.stat(growthName(run, engine, n, op), "cpu-ns/msg")
		if !ok1 || !ok2 {
			if n == sizes[0] {
				return
			}
			cells = append(cells, "")
			continue
		}
		cells = append(cells, fmt.Sprintf("%s / %s ±%.0f%%", commas(wall.Median), commas(cpu.Median), cpu.Spread*100))
	}
	first, last := sizes[0], sizes[len(sizes)-1]
	wg := r.growthOf(run, engine, op, "ns/msg", first, last)
	cg := r.growthOf(run, engine, op, "cpu-ns/msg", first, last)
	// The fewest of the rounds: a slice of one operation during which the
	// collector ran counts the runtime's own few allocations too.
	al := slices.Min(append([]float64{math.Inf(1)}, r.set.Get(growthName(run, engine, last, op)).samples("allocs/op")...))
	allocs := fmt.Sprintf("%.1f", al/float64(last))
	if al/float64(last) < 0.05 {
		allocs = commas(al) + " a document"
	}
	fmt.Fprintf(b, "| %s | %s | %s | %s / %s | %s |\n", opLabel(op), label, strings.Join(cells, " | "), ratioOrBlank(wg), ratioOrBlank(cg), allocs)
	if engine == "convo" && op != "walk" && run == r.growthRun() {
		r.growthMisses(run, op)
	}
}

// growthMisses notes where convo's cost per message, wall or CPU time, is
// not flat within 10% across the sizes: the target is every size within
// 10% of the others, so one that rises with the length misses it, and so
// does one that falls (small documents then cost more).
func (r *report) growthMisses(run, op string) {
	for _, unit := range []struct{ unit, label string }{{"cpu-ns/msg", "CPU"}, {"ns/msg", "wall"}} {
		lo, hi := 0, 0
		var loV, hiV float64
		for _, n := range growth.Sizes {
			st, ok := r.stat(growthName(run, "convo", n, op), unit.unit)
			if !ok || st.Median == 0 {
				continue
			}
			if loV == 0 || st.Median < loV {
				lo, loV = n, st.Median
			}
			if st.Median > hiV {
				hi, hiV = n, st.Median
			}
		}
		if loV == 0 || hiV/loV <= 1.1 {
			continue
		}
		what := op
		if op == "append" {
			what = "encode into a buffer handed back (`AppendHistory`)"
		}
		r.misses = append(r.misses, fmt.Sprintf("growth, %s: convo's %s time per message is %.2f× at %s messages what it is at %s (target: every size within 10%% of the others)",
			what, unit.label, hiV/loV, commas(float64(hi)), commas(float64(lo))))
	}
}

// growthRounds is how many rounds convo's decode at the smallest size has
// in run, as text.
func (r *report) growthRounds(run string) string {
	st, _ := r.stat(growthName(run, "convo", growth.Sizes[0], "decode"), "cpu-ns/msg")
	return strconv.Itoa(st.N)
}

// growthOf is the cost per message at size to over the cost at size from,
// or 0 when either is missing.
func (r *report) growthOf(run, engine, op, unit string, from, to int) float64 {
	a, ok1 := r.stat(growthName(run, engine, from, op), unit)
	z, ok2 := r.stat(growthName(run, engine, to, op), unit)
	if !ok1 || !ok2 || a.Median == 0 {
		return 0
	}
	return z.Median / a.Median
}

// opLabel is op as the growth tables show it: append and the floor are
// both encodes.
func opLabel(op string) string {
	if op == "append" || op == "walk" {
		return "encode"
	}
	return op
}

func ratioOrBlank(x float64) string {
	if x == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f×", x)
}

// growthRatios writes each engine's CPU time over convo's at every size.
func (r *report) growthRatios(b *strings.Builder) {
	b.WriteString("Each engine's CPU time per message over convo's at each size (CPU time, because it is the steadier of the two " +
		"on a shared machine; above 1× the engine is slower than convo, below 1× it is faster):\n\n")
	b.WriteString("| op | engine |")
	for _, n := range growth.Sizes {
		fmt.Fprintf(b, " %s |", commas(float64(n)))
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---:|", len(growth.Sizes)) + "\n")
	for _, op := range []string{"decode", "encode"} {
		for _, e := range growthEngines[1:] {
			var cells []string
			for _, n := range growth.Sizes {
				base, _ := r.stat(growthName(growth.InterleavedName, "convo", n, op), "cpu-ns/msg")
				v, ok := r.stat(growthName(growth.InterleavedName, e.name, n, op), "cpu-ns/msg")
				if !ok {
					cells = append(cells, "")
					continue
				}
				cells = append(cells, ratio(v.Median, base.Median))
			}
			if strings.Join(cells, "") == "" {
				continue
			}
			fmt.Fprintf(b, "| %s | %s | %s |\n", op, e.label, strings.Join(cells, " | "))
		}
	}
	b.WriteString("\n")
}
