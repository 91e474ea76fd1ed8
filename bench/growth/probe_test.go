package growth

import (
	"flag"
	"fmt"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/bench/benchkit"
)

var probe = flag.String("growth.probe", "", "run TestProbe: the operations to probe, e.g. convo/decode,sonic/decode")

// TestProbe (only with -growth.probe) times single operations of engines at
// every size of Sizes, one at a time and interleaved, and prints for each
// size the median and the smallest CPU time per message over the
// operations, with the page faults and GC cycles each operation caused.
// It is the tool behind the growth analysis (bench/analysis.md): unlike
// BenchmarkGrowth, which averages whatever operations fit in -benchtime
// (one to three at 100,000 messages), it shows the spread, and what of it
// is fresh memory (page faults) and the collector.
func TestProbe(t *testing.T) {
	if *probe == "" {
		t.Skip("only with -growth.probe")
	}
	ops := strings.Split(*probe, ",")
	byName := map[string]Engine{}
	for _, e := range Engines() {
		byName[e.Name] = e
	}
	for _, n := range Sizes {
		h := benchkit.History(n, benchkit.Options{})
		doc, err := convo.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		for _, op := range ops {
			name, what, _ := strings.Cut(op, "/")
			e, ok := byName[name]
			if !ok {
				t.Fatalf("no engine %q", name)
			}
			f := probeOp(t, e, what, h, doc)
			probeRun(t, n, op, *probeReps, f)
		}
	}
}

var probeReps = flag.Int("growth.reps", 7, "samples per size and operation in TestProbe")

func probeOp(t *testing.T, e Engine, what string, h convo.History, doc []byte) func() {
	if what == "decode" {
		return func() {
			if _, err := e.Decode(doc); err != nil {
				t.Fatal(err)
			}
		}
	}
	var v any = h
	if e.Name != "convo" {
		var err error
		if v, err = e.Decode(doc); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		if _, err := e.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
}

func probeRun(t *testing.T, n int, op string, reps int, f func()) {
	// Small sizes run many operations per sample, so that a sample is
	// about as long as one at 10,000 messages.
	per := max(1, 10000/n)
	var cpus, faults, gcs []float64
	var first, firstFaults float64
	sample := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	for i := range reps + 1 {
		var r0, r1 syscall.Rusage
		metrics.Read(sample)
		gc0 := sample[0].Value.Uint64()
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
		for range per {
			f()
		}
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
		metrics.Read(sample)
		msgs := float64(per * n)
		cpu := time.Duration(r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano())
		if i == 0 {
			// The first sample after a larger history was built maps memory
			// the heap has not used before: the cost of a first load.
			first, firstFaults = float64(cpu.Nanoseconds())/msgs, float64(r1.Minflt-r0.Minflt)/msgs
			continue
		}
		cpus = append(cpus, float64(cpu.Nanoseconds())/msgs)
		faults = append(faults, float64(r1.Minflt-r0.Minflt)/msgs)
		gcs = append(gcs, float64(sample[0].Value.Uint64()-gc0)/float64(per))
	}
	fmt.Printf("probe n=%d %s: cpu-ns/msg median %.0f min %.0f  faults/msg %.3f  gc/op %.2f  first sample: cpu-ns/msg %.0f faults/msg %.3f\n",
		n, op, median(cpus), slices.Min(cpus), median(faults), median(gcs), first, firstFaults)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
