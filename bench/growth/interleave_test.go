package growth

import (
	"context"
	"flag"
	"fmt"
	"math"
	"runtime"
	"runtime/pprof"
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
	run    string // InterleavedName, or AloneName for one engine alone
	n      int
	engine string
	op     string
	docLen int
	f      func() error
	// per is how many operations a slice runs (see calibrate).
	per int
	// opNs is the fastest an operation ran in the warm-up and round 0.
	opNs time.Duration
}

func (j *job) name() string {
	return j.run + "/n=" + strconv.Itoa(j.n) + "/" + j.engine + "/" + j.op
}

// A sample is what one slice of a job measured.
type sample struct {
	ops            int
	wall           time.Duration
	thread, proc   time.Duration // CPU time of the measuring thread, of the process
	bytes, objects uint64        // allocated
	faults, gcs    int64         // page faults, collections finished
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
// CPU time is the measuring thread's (the codec, and the collector's
// assists and sweeping that its allocation causes; the test is locked to
// its thread) plus the collector's background work, which runs on other
// threads whenever a cycle is under way, charged to each slice by the bytes
// it allocated: the process's CPU time beyond the measuring thread's over
// the whole run, over the bytes the run allocated. A background cycle
// marking a heap of a gigabyte takes longer than most slices; charged to
// whichever slices it overlapped, it would make their cost a matter of
// timing rather than of what they allocated.
//
// It prints one line per slice in the Go benchmark format, named
// InterleavedName/n=<size>/<engine>/<op> (AloneName/… when -growth.engines
// names one engine), with the usual ns/op, MB/s, B/op
// and allocs/op and, per message, wall time (ns/msg), CPU time as above
// (cpu-ns/msg), the process's CPU time during the slice (proc-ns/msg),
// page faults and the document's bytes (docB/msg); then, as comment lines
// starting with "#", the median and spread per size.
func TestInterleaved(t *testing.T) {
	if *rounds <= 0 {
		t.Skip("only with -growth.rounds")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	jobs := interleavedJobs(t)
	got := map[*job][]sample{}
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
				j.opNs = min(j.opNs, s.wall/time.Duration(s.ops))
				continue
			}
			got[j] = append(got[j], s)
		}
	}
	printSamples(jobs, got)
}

// printSamples prints every sample as a benchmark line, in the order of
// the rounds, then the summary.
func printSamples(jobs []*job, got map[*job][]sample) {
	var background time.Duration
	var allocated uint64
	for _, ss := range got {
		for _, s := range ss {
			background += s.proc - s.thread
			allocated += s.bytes
		}
	}
	perByte := float64(background) / float64(max(allocated, 1))
	fmt.Printf("goos: %s\ngoarch: %s\npkg: github.com/convo-go/convo/bench/growth\n", runtime.GOOS, runtime.GOARCH)
	cpu := map[*job][]float64{}
	wall := map[*job][]float64{}
	for r := range *rounds {
		for _, j := range jobs {
			s := got[j][r]
			ops, msgs := float64(s.ops), float64(s.ops*j.n)
			c := (float64(s.thread) + perByte*float64(s.bytes)) / msgs
			cpu[j], wall[j] = append(cpu[j], c), append(wall[j], float64(s.wall)/msgs)
			fmt.Printf("%s-%d\t%d\t%.0f ns/op\t%.2f MB/s\t%.0f B/op\t%.0f allocs/op\t%.1f ns/msg\t%.1f cpu-ns/msg\t%.1f proc-ns/msg\t%.3f faults/msg\t%.3f gc/op\t%.1f docB/msg\n",
				j.name(), runtime.GOMAXPROCS(0), s.ops, float64(s.wall)/ops, float64(j.docLen)*ops/s.wall.Seconds()/1e6,
				float64(s.bytes)/ops, float64(s.objects)/ops, float64(s.wall)/msgs, c, float64(s.proc)/msgs,
				float64(s.faults)/msgs, float64(s.gcs)/ops, float64(j.docLen)/float64(j.n))
		}
	}
	fmt.Printf("# background collector: %.1f s of CPU for %.1f GB allocated, %.2f ns a byte\n", background.Seconds(), float64(allocated)/1e9, perByte)
	printSummary(jobs, wall, cpu)
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
	run := InterleavedName
	if len(want) == 1 {
		run = AloneName
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
			ops := []string{"decode", "encode"}
			if e.Name == "convo" {
				ops = append(ops, "append", "walk")
			}
			for _, op := range ops {
				if op == "encode" && e.Encode == nil {
					continue
				}
				jobs = append(jobs, &job{run: run, n: n, engine: e.Name, op: op, docLen: len(doc), f: jobFunc(t, e, op, h, doc)})
			}
		}
	}
	for _, j := range jobs {
		j.opNs = warm(t, j)
		j.per = max(1, int(*sliceTime/j.opNs))
	}
	return jobs
}

// jobFunc is op of engine e on doc, the canonical encoding of h. Every
// engine encodes what it decoded from doc, convo too: a history as a
// program that loads and saves conversations holds it, and the same
// comparison for every engine. (h, built message by message with its
// strings scattered over the heap, costs convo more per message once it
// outgrows the processor's caches: the analysis gives both.) "append" is
// convo's encoding into a buffer handed back each time
// (convo.AppendHistory), and "walk" the floor beside it: Walk, reading the
// same history and copying its bytes with none of the format's work.
func jobFunc(t *testing.T, e Engine, op string, h convo.History, doc []byte) func() error {
	if op == "decode" {
		return func() error { _, err := e.Decode(doc); return err }
	}
	v, err := e.Decode(doc)
	if err != nil {
		t.Fatalf("%s: %v", e.Name, err)
	}
	if op == "append" {
		var buf []byte
		return func() (err error) { buf, err = convo.AppendHistory(buf[:0], v.(convo.History)); return err }
	}
	if op == "walk" {
		var buf []byte
		return func() error { buf = Walk(buf[:0], v.(convo.History)); return nil }
	}
	return func() error { _, err := e.Encode(v); return err }
}

// warm runs j untimed until the collector has finished two cycles (at
// least two operations, at most twenty), as BenchmarkGrowth does, and
// returns the time of the fastest of them.
func warm(t *testing.T, j *job) time.Duration {
	start := gcCycles()
	fastest := time.Duration(math.MaxInt64)
	for i := 0; i < 2 || (gcCycles()-start < 2 && i < 20); i++ {
		t0 := time.Now()
		if err := j.f(); err != nil {
			t.Fatalf("%s: %v", j.name(), err)
		}
		fastest = min(fastest, time.Since(t0))
	}
	return max(fastest, 1)
}

// calibrate sets how many operations each job runs a slice: about
// -growth.slice, one operation at least, from the fastest an operation ran
// (the slowest ones ran while the heap was still growing, or while the
// machine was busy; a slice sized by them would be shorter and noisier).
func calibrate(jobs []*job) {
	for _, j := range jobs {
		j.per = max(1, int((*sliceTime+j.opNs/2)/j.opNs))
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

// runSlice runs one slice of j. The labels let a -test.cpuprofile of the
// whole run be cut by size (go tool pprof -tagfocus n=^100000$); they are
// set outside what is measured, which they would add allocations to.
func runSlice(t *testing.T, j *job) sample {
	var s sample
	labels := pprof.Labels("n", strconv.Itoa(j.n), "job", j.engine+"/"+j.op)
	pprof.Do(context.Background(), labels, func(context.Context) { s = measure(t, j) })
	return s
}

// measure runs j.per operations of j.
func measure(t *testing.T, j *job) sample {
	var m0, m1 runtime.MemStats
	var p0, p1, t0, t1 syscall.Rusage
	runtime.ReadMemStats(&m0)
	rusage(t, syscall.RUSAGE_SELF, &p0)
	rusage(t, rusageThread, &t0)
	start := time.Now()
	for range j.per {
		if err := j.f(); err != nil {
			t.Fatalf("%s: %v", j.name(), err)
		}
	}
	wall := time.Since(start)
	rusage(t, rusageThread, &t1)
	rusage(t, syscall.RUSAGE_SELF, &p1)
	runtime.ReadMemStats(&m1)
	return sample{
		ops:     j.per,
		wall:    wall,
		thread:  cpuOf(&t1) - cpuOf(&t0),
		proc:    cpuOf(&p1) - cpuOf(&p0),
		bytes:   m1.TotalAlloc - m0.TotalAlloc,
		objects: m1.Mallocs - m0.Mallocs,
		faults:  p1.Minflt - p0.Minflt,
		gcs:     int64(m1.NumGC - m0.NumGC),
	}
}

func rusage(t *testing.T, who int, ru *syscall.Rusage) {
	if err := syscall.Getrusage(who, ru); err != nil {
		t.Fatal(err)
	}
}

func cpuOf(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// printSummary prints, as comment lines, each job's median wall and CPU
// time per message over the rounds with their spread, and for each engine
// and operation the largest median over the smallest across sizes (the
// target is at most 1.10).
func printSummary(jobs []*job, wall, cpu map[*job][]float64) {
	type key struct{ engine, op string }
	wallMed, cpuMed := map[key][]float64{}, map[key][]float64{}
	for _, j := range jobs {
		w, ws := medianSpread(wall[j])
		c, cs := medianSpread(cpu[j])
		fmt.Printf("# n=%d %s/%s: wall %.0f ns/msg ±%.0f%%, cpu %.0f ns/msg ±%.0f%%, %d ops a slice\n",
			j.n, j.engine, j.op, w, ws*100, c, cs*100, j.per)
		k := key{j.engine, j.op}
		wallMed[k], cpuMed[k] = append(wallMed[k], w), append(cpuMed[k], c)
	}
	for _, j := range jobs {
		k := key{j.engine, j.op}
		if j.n != Sizes[0] || len(wallMed[k]) < 2 {
			continue
		}
		fmt.Printf("# %s/%s: largest over smallest median across sizes: wall %.2f, cpu %.2f\n",
			j.engine, j.op, flatness(wallMed[k]), flatness(cpuMed[k]))
	}
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
