package growth

import (
	"bytes"
	"encoding/json"
	"reflect"
	"runtime/metrics"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/bench/benchkit"
)

// TestMirror checks that the comparison is fair: Doc holds the whole
// canonical document, so encoding/json writing back what it read gives
// convo's bytes (compacted), and every engine reads the same Doc.
func TestMirror(t *testing.T) {
	h := benchkit.History(1000, benchkit.Options{})
	h = append(h, benchkit.History(400, benchkit.Options{Flavor: benchkit.OpenAI})...)
	doc, err := convo.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, doc); err != nil {
		t.Fatal(err)
	}
	var ref *Doc
	for _, e := range Engines() {
		v, err := e.Decode(doc)
		if err != nil {
			t.Fatalf("%s: decode: %v", e.Name, err)
		}
		if d, ok := v.(*Doc); ok {
			if ref == nil {
				ref = d
				got, err := json.Marshal(d)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want.Bytes()) {
					t.Fatalf("%s: the mirror does not hold the whole document:\n%.300s\nwant\n%.300s", e.Name, got, want.Bytes())
				}
			} else if !reflect.DeepEqual(d, ref) {
				t.Errorf("%s read a different Doc than %s", e.Name, Engines()[1].Name)
			}
		}
		if e.Encode == nil {
			continue
		}
		out, err := e.Encode(v)
		if err != nil {
			t.Fatalf("%s: encode: %v", e.Name, err)
		}
		var got bytes.Buffer
		if err := json.Compact(&got, out); err != nil {
			t.Fatalf("%s: encode wrote invalid JSON: %v", e.Name, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: encoding what it read does not give the document back", e.Name)
		}
	}
	if ref == nil || len(ref.Messages) != len(h) {
		t.Fatalf("no struct engine read the %d messages", len(h))
	}
}

// cpuTime is the user and system time the process has used so far, every
// thread (the garbage collector's workers too).
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// gcCycles is how many collections the process has finished.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// BenchmarkGrowth encodes and decodes the benchmark history at every size
// of Sizes with every engine, named "n=<size>/<engine>/<op>" (the size
// first, so -bench can pick one size without building the others). Beside
// the usual metrics it reports per message: wall time (ns/msg), CPU time of
// the whole process (cpu-ns/msg: more than the wall time when the garbage
// collector works on the other core) and the document's bytes. It measures
// one size after another, tens of seconds apart, which on a shared machine
// drifts by more than the sizes differ: the report's growth table comes
// from TestInterleaved; this benchmark is for profiling one size
// (-cpuprofile) and for benchstat.
func BenchmarkGrowth(b *testing.B) {
	for _, n := range Sizes {
		b.Run("n="+strconv.Itoa(n), func(b *testing.B) {
			h := benchkit.History(n, benchkit.Options{})
			doc, err := convo.Marshal(h)
			if err != nil {
				b.Fatal(err)
			}
			for _, e := range Engines() {
				growthEngine(b, e, n, h, doc)
			}
		})
	}
}

// growthEngine runs one engine's decode and encode benchmarks on doc, the
// canonical encoding of h.
func growthEngine(b *testing.B, e Engine, n int, h convo.History, doc []byte) {
	b.Run(e.Name, func(b *testing.B) {
		growthRun(b, "decode", n, doc, func() error { _, err := e.Decode(doc); return err })
		if e.Encode == nil {
			return
		}
		var v any = h
		if e.Name != "convo" {
			var err error
			if v, err = e.Decode(doc); err != nil {
				b.Fatal(err)
			}
		}
		growthRun(b, "encode", n, doc, func() error { _, err := e.Encode(v); return err })
	})
}

func growthRun(b *testing.B, name string, n int, doc []byte, f func() error) {
	b.Run(name, func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		// Untimed operations first, until the collector has finished two
		// cycles (at least two operations, at most twenty): the heap then
		// has grown to its steady size, twice what is live, and the timed
		// operations reuse its memory. Before it, each operation maps memory
		// the process has never touched, whose page faults cost more than
		// the decoding itself on this virtual machine at 10,000 messages and
		// more, and would weigh on the one to three operations that large
		// sizes run (the analysis gives that cold cost apart: TestProbe).
		warm := gcCycles()
		for i := 0; i < 2 || (gcCycles()-warm < 2 && i < 20); i++ {
			if err := f(); err != nil {
				b.Fatal(err)
			}
		}
		var cpu0 time.Duration
		started := false
		for b.Loop() {
			if !started {
				cpu0, started = cpuTime(b), true
			}
			if err := f(); err != nil {
				b.Fatal(err)
			}
		}
		cpu := cpuTime(b) - cpu0
		per := float64(b.N) * float64(n)
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/msg")
		b.ReportMetric(float64(cpu.Nanoseconds())/per, "cpu-ns/msg")
		b.ReportMetric(float64(len(doc))/float64(n), "docB/msg")
	})
}
