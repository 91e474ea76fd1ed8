package growth

import (
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/bench/benchkit"
)

// BenchmarkColdHistory separates what a long history costs per message
// from its length: convo.AppendHistory of the same 100-message history into
// a buffer handed back, "hot" the one history again and again (it stays in
// the processor's caches), "cold" 1,000 copies of it decoded one by one
// (the memory of a 100,000-message history) encoded in turn, so each is
// read from memory, and "built" 1,000 copies built in memory as the growth
// table's histories are (benchkit.History: every slice and string an
// allocation of its own, so each size class lies in its own spans). The
// work per message is the same; what differs is where the history is.
func BenchmarkColdHistory(b *testing.B) {
	var err error
	var buf []byte
	eachLayout(b, func(h convo.History) {
		if buf, err = convo.AppendHistory(buf[:0], h); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkColdEstimate is BenchmarkColdHistory for the size estimate
// Marshal makes before it encodes (Message.EstimatedBytes, a pass over
// every part), which pays the same reads from memory.
func BenchmarkColdEstimate(b *testing.B) {
	n := 0
	eachLayout(b, func(h convo.History) {
		for i := range h {
			n += h[i].EstimatedBytes()
		}
	})
}

// eachLayout runs op on the copies of a 100-message history of each
// layout of BenchmarkColdHistory, one copy an iteration, and reports the
// time per message.
func eachLayout(b *testing.B, op func(convo.History)) {
	const n, copies = 100, 1000
	doc, err := convo.Marshal(benchkit.History(n, benchkit.Options{}))
	if err != nil {
		b.Fatal(err)
	}
	decoded := make([]convo.History, copies)
	built := make([]convo.History, copies)
	for i := range decoded {
		if decoded[i], err = convo.Unmarshal(doc); err != nil {
			b.Fatal(err)
		}
	}
	for i := range built {
		built[i] = benchkit.History(n, benchkit.Options{})
	}
	for _, c := range []struct {
		name string
		hs   []convo.History
	}{{"hot", decoded[:1]}, {"cold", decoded}, {"built", built}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				op(c.hs[i%len(c.hs)])
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/msg")
		})
	}
}
