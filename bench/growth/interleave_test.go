package growth

import (
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/bench/benchkit"
)

var (
	rounds     = flag.Int("growth.rounds", 0, "run TestInterleaved with this many rounds (0: skip it)")
	sliceTime  = flag.Duration("growth.slice", 75*time.Millisecond, "how long each size runs each operation in a round of TestInterleaved")
	engineList = flag.String("growth.engines", "", "the engines TestInterleaved measures, comma-separated (default: all)")
)

// A job is one operation of one engine at one size, ready to run.
type job struct {
	n      int
	engine string
	op     string
	docLen int
	f      func() error
	// per is how many operations a slice runs (see calibrate); until
	// then, the nanoseconds one operation took.
	per int
}

func (j *job) name() string {
	return InterleavedName + "/n=" + strconv.Itoa(j.n) + "/" + j.engine + "/" + j.op
}

// A sample is what one slice of a job measured, per message.
type sample struct {
	wall, cpu       float64 // ns per message
	bytes, allocs   float64 // per operation
	faults, gcs     float64 // page faults per message, GC cycles per operation
	ops             int
	wallOp, bytesMB float64 // ns per operation, MB/s of the document
}

// TestInterleaved (only with -growth.rounds) is the growth measurement the
// report's growth table comes from. BenchmarkGrowth runs one size after
// another, tens of seconds apart; on a shared virtual machine the cost of
// the same operation drifts by more than half between two runs a minute
// apart, so sizes measured at different times cannot show whether a cost
// per message is flat within 10%. Here every size's inputs are built once
// and kept alive, every operation is warmed up as in BenchmarkGrowth, and
// then, for each round, every size runs each operation for a slice of about
// -growth.slice (one operation at least), the sizes in a different order
// each round. A change in the machine's load then falls on every size
// alike, and the median over rounds compares them.
//
// It prints one line per slice in the Go benchmark format, named
// InterleavedName/n=<size>/<engine>/<op>, with the usual ns/op, MB/s, B/op
// and allocs/op and, per message, wall time (ns/msg), the process's CPU
// time (cpu-ns/msg) and the document's bytes (docB/msg); then, as comment
// lines starting with "#", the median and spread per size.
func TestInterleaved(t *testing.T) {
	if *rounds <= 0 {
		t.Skip("only with -growth.rounds")
	}
	jobs := interleavedJobs(t)
	fmt.Printf("goos: %s\ngoarch: %s\npkg: github.com/convo-go/convo/bench/growth\n", runtime.GOOS, runtime.GOARCH)
	got := map[string][]sample{}
	// Round 0 is not recorded: it runs every job once in the order the
	// rounds use, beside every other size, and times its operations for
	// calibrate.
	for r := range *rounds + 1 {
		if r == 1 {
			calibrate(jobs)
		}
		for _, j := range roundOrder(jobs, r) {
			s := runSlice(t, j)
			if r == 0 {
				j.per = int(s.wallOp) // for calibrate
				continue
			}
			got[j.name()] = append(got[j.name()], s)
			fmt.Printf("%s-%d\t%d\t%.0f ns/op\t%.2f MB/s\t%.0f B/op\t%.0f allocs/op\t%.1f ns/msg\t%.1f cpu-ns/msg\t%.1f docB/msg\t%.3f faults/msg\t%.3f gc/op\n",
				j.name(), runtime.GOMAXPROCS(0), s.ops, s.wallOp, s.bytesMB, s.bytes, s.allocs, s.wall, s.cpu, float64(j.docLen)/float64(j.n), s.faults, s.gcs)
		}
	}
	printSummary(jobs, got)
}

// interleavedJobs builds every size's history and document, then every
// job, warmed up and calibrated. Everything stays alive until the test
// ends: the heap is the same for every slice.
func interleavedJobs(t *testing.T) []*job {
	want := map[string]bool{}
	for e := range strings.SplitSeq(*engineList, ",") {
		if e != "" {
			want[e] = true
		}
	}
	var jobs []*job
	for _, n := range Sizes {
		h := benchkit.History(n, benchkit.Options{})
		doc, err := convo.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range Engines() {
			if len(want) > 0 && !want[e.Name] {
				continue
			}
			for _, op := range []string{"decode", "encode"} {
				if op == "encode" && e.Encode == nil {
					continue
				}
				jobs = append(jobs, &job{n: n, engine: e.Name, op: op, docLen: len(doc), f: jobFunc(t, e, op, h, doc)})
			}
		}
	}
	for _, j := range jobs {
		j.per = warm(t, j)
	}
	return jobs
}

// jobFunc is op of engine e on doc, the canonical encoding of h. Encoding
// writes what the engine decodes (convo: h itself).
func jobFunc(t *testing.T, e Engine, op string, h convo.History, doc []byte) func() error {
	if op == "decode" {
		return func() error { _, err := e.Decode(doc); return err }
	}
	var v any = h
	if e.Name != "convo" {
		var err error
		if v, err = e.Decode(doc); err != nil {
			t.Fatalf("%s: %v", e.Name, err)
		}
	}
	return func() error { _, err := e.Encode(v); return err }
}

// warm runs j untimed until the collector has finished two cycles (at
// least two operations, at most twenty), as BenchmarkGrowth does, and
// returns how many operations fill a slice, from the fastest of them.
func warm(t *testing.T, j *job) int {
	start := gcCycles()
	fastest := time.Duration(math.MaxInt64)
	for i := 0; i < 2 || (gcCycles()-start < 2 && i < 20); i++ {
		t0 := time.Now()
		if err := j.f(); err != nil {
			t.Fatalf("%s: %v", j.name(), err)
		}
		fastest = min(fastest, time.Since(t0))
	}
	return max(1, int(*sliceTime/max(fastest, 1)))
}

// calibrate sets how many operations each job runs a slice, from the time
// an operation took in round 0 (the warm-up's operations ran on a heap
// that was still growing). The slices of an engine's operation last the
// same at every size: -growth.slice, or one operation at the largest size
// if that takes longer. Equal lengths matter because a slice's median
// would otherwise leave out a collection cycle in short slices, which
// mostly run without one, and keep it in long ones, which always hold one.
func calibrate(jobs []*job) {
	target := map[string]int{}
	for _, j := range jobs {
		k := j.engine + "/" + j.op
		target[k] = max(target[k], int(*sliceTime), j.per)
	}
	for _, j := range jobs {
		j.per = max(1, (target[j.engine+"/"+j.op]+j.per/2)/max(j.per, 1))
	}
}

// roundOrder is the order of round r: the sizes rotated by r, so that no
// size always follows the largest one (whose garbage the collector may
// still be marking when the next slice starts), each size's jobs together.
func roundOrder(jobs []*job, r int) []*job {
	out := make([]*job, 0, len(jobs))
	for i := range Sizes {
		n := Sizes[(r+i)%len(Sizes)]
		for _, j := range jobs {
			if j.n == n {
				out = append(out, j)
			}
		}
	}
	return out
}

// runSlice runs one slice of j: wall and CPU time, bytes and objects
// allocated.
func runSlice(t *testing.T, j *job) sample {
	var m0, m1 runtime.MemStats
	var r0, r1 syscall.Rusage
	runtime.ReadMemStats(&m0)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	cpu0 := cpuTime(t)
	t0 := time.Now()
	for range j.per {
		if err := j.f(); err != nil {
			t.Fatalf("%s: %v", j.name(), err)
		}
	}
	wall := time.Since(t0)
	cpu := cpuTime(t) - cpu0
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	runtime.ReadMemStats(&m1)
	ops := float64(j.per)
	msgs := ops * float64(j.n)
	return sample{
		wall:    float64(wall.Nanoseconds()) / msgs,
		cpu:     float64(cpu.Nanoseconds()) / msgs,
		bytes:   float64(m1.TotalAlloc-m0.TotalAlloc) / ops,
		allocs:  float64(m1.Mallocs-m0.Mallocs) / ops,
		faults:  float64(r1.Minflt-r0.Minflt) / msgs,
		gcs:     float64(m1.NumGC-m0.NumGC) / ops,
		ops:     j.per,
		wallOp:  float64(wall.Nanoseconds()) / ops,
		bytesMB: float64(j.docLen) * ops / wall.Seconds() / 1e6,
	}
}

// printSummary prints, as comment lines, each job's median wall and CPU
// time per message over the rounds with their spread, and for each engine
// and operation the largest median over the smallest across sizes (the
// target is at most 1.10).
func printSummary(jobs []*job, got map[string][]sample) {
	type key struct{ engine, op string }
	var wallMed, cpuMed = map[key][]float64{}, map[key][]float64{}
	for _, j := range jobs {
		ss := got[j.name()]
		wall, ws := medianSpread(field(ss, func(s sample) float64 { return s.wall }))
		cpu, cs := medianSpread(field(ss, func(s sample) float64 { return s.cpu }))
		faults, _ := medianSpread(field(ss, func(s sample) float64 { return s.faults }))
		gcs, _ := medianSpread(field(ss, func(s sample) float64 { return s.gcs }))
		fmt.Printf("# n=%d %s/%s: wall %.0f ns/msg ±%.0f%%, cpu %.0f ns/msg ±%.0f%%, faults/msg %.3f, gc/op %.3f, %d ops a slice, %d rounds\n",
			j.n, j.engine, j.op, wall, ws*100, cpu, cs*100, faults, gcs, j.per, len(ss))
		k := key{j.engine, j.op}
		wallMed[k], cpuMed[k] = append(wallMed[k], wall), append(cpuMed[k], cpu)
	}
	for _, j := range jobs {
		k := key{j.engine, j.op}
		if j.n != Sizes[0] || len(wallMed[k]) < 2 {
			continue
		}
		fmt.Printf("# %s/%s: largest over smallest median across sizes: wall %.2f, cpu %.2f\n",
			j.engine, j.op, flatness(wallMed[k]), flatness(cpuMed[k]))
	}
	os.Stdout.Sync()
}

func field(ss []sample, f func(sample) float64) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

// medianSpread returns the median of xs and half their interquartile
// range relative to it (the quartiles as bench/cmd/report takes them: the
// values k = (len-1)/4 from either end).
func medianSpread(xs []float64) (median, spread float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	median = s[len(s)/2]
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if median == 0 {
		return 0, 0
	}
	k := (len(s) - 1) / 4
	return median, (s[len(s)-1-k] - s[k]) / 2 / median
}

// flatness is the largest of xs over the smallest: 1 for a flat cost.
func flatness(xs []float64) float64 {
	lo, hi := slices.Min(xs), slices.Max(xs)
	if lo <= 0 {
		return 0
	}
	return hi / lo
}
