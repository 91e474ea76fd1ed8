package tokens

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/tiktoken-go/tokenizer"
)

// threadCPU is the CPU time the calling OS thread has used. Timing with it
// instead of the wall clock keeps a busy shared machine out of the figures.
func threadCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	const rusageThread = 1 // RUSAGE_THREAD
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkOverhead runs the library and convo alternately on the same
// corpus and reports convo's CPU time over the library's as overhead-%:
// the figure the ≤ 10% goal is about. Both are timed on one locked thread
// in CPU time, so other load on the machine does not skew the ratio.
func BenchmarkOverhead(b *testing.B) {
	for _, tt := range []struct {
		model string
		enc   tokenizer.Encoding
	}{{"gpt-4o", tokenizer.O200kBase}, {"gpt-4", tokenizer.Cl100kBase}} {
		b.Run(tt.model, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			h, texts, size := benchCorpus(b)
			lib, err := tokenizer.Get(tt.enc)
			if err != nil {
				b.Fatal(err)
			}
			c := mustCounter(b, tt.model, Options{})
			libCount := func() {
				for _, s := range texts {
					lib.Count(s)
				}
			}
			convoCount := func() { c.Count(h) }
			libCount()
			convoCount()
			var tLib, tConvo time.Duration
			b.SetBytes(2 * size)
			for i := 0; b.Loop(); i++ {
				// Alternate which goes first, so that garbage collection
				// one leaves behind is not always paid by the other.
				first, second := libCount, convoCount
				if i%2 == 1 {
					first, second = second, first
				}
				t0 := threadCPU(b)
				first()
				t1 := threadCPU(b)
				second()
				d1, d2 := t1-t0, threadCPU(b)-t1
				if i%2 == 1 {
					d1, d2 = d2, d1
				}
				tLib += d1
				tConvo += d2
			}
			b.ReportMetric(100*(float64(tConvo)/float64(tLib)-1), "overhead-%")
			b.ReportMetric(float64(size)*float64(b.N)/tConvo.Seconds()/1e6, "convo-MB/s")
			b.ReportMetric(float64(size)*float64(b.N)/tLib.Seconds()/1e6, "library-MB/s")
		})
	}
}
