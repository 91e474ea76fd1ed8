package fit

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/tokens"
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

// BenchmarkFitVsMarshal fits the 10,000-message history and encodes it
// once, alternately on one locked thread, and reports the fit's CPU time
// as a percentage of the encoding's (fit/marshal-%): the goal is well
// under 100. "counted" is a session that keeps its messages' counts
// (Options.Counts); "warm" one whose counter remembers the messages.
func BenchmarkFitVsMarshal(b *testing.B) {
	h := benchHistory(b)
	for _, mode := range []string{"counted", "warm"} {
		b.Run(mode, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			c, err := tokens.NewCounter("gpt-4o", tokens.Options{Cache: true})
			if err != nil {
				b.Fatal(err)
			}
			opts := Options{Budget: 100000, Block: 25000, Counter: c}
			if mode == "counted" {
				opts.Counts = CountsFor(c, h, nil)
			}
			fitOnce := func() {
				if r, err := Fit(context.Background(), h, opts); err != nil || r.Level == 0 {
					b.Fatal(err)
				}
			}
			marshal := func() {
				if _, err := convo.Marshal(h); err != nil {
					b.Fatal(err)
				}
			}
			fitOnce()
			var tFit, tMarshal time.Duration
			for i := 0; b.Loop(); i++ {
				first, second := fitOnce, marshal
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
				tFit += d1
				tMarshal += d2
			}
			b.ReportMetric(100*float64(tFit)/float64(tMarshal), "fit/marshal-%")
			b.ReportMetric(float64(tFit.Microseconds())/float64(b.N)/1000, "fit-ms")
			b.ReportMetric(float64(tMarshal.Microseconds())/float64(b.N)/1000, "marshal-ms")
		})
	}
}
