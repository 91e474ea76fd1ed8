package provider_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/convo-go/convo/internal/cputime"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// benchStreams are the recorded streams BenchmarkDeltaReader reads: per
// format, the longest successful one with text deltas.
var benchStreams = []struct{ format, file, framing string }{
	{"anthropic", "anthropic/testdata/reply/interleaved.sse", "sse"},
	{"openai-chat", "openai/testdata/replies/chat/reasoning.sse", "sse"},
	{"openai-responses", "openai/testdata/replies/responses/incomplete.sse", "sse"},
	{"gemini", "gemini/testdata/replies/thinking.sse", "sse"},
	{"ollama", "ollama/testdata/replies/text.ndjson", "ndjson"},
	{"bedrock", "bedrock/testdata/replies/interleaved.bin", "eventstream"},
	{"litert", "litert/testdata/replies/thought_text.jsonl", "ndjson"},
}

// BenchmarkDeltaReader reads one recorded stream per format into deltas,
// as the gateway does when it translates, in two ways: with the pieces
// the accumulator reports ("pieces") and comparing a snapshot after every
// event ("snapshots", how every accumulator was read before pieces). xN
// repeats each text delta of the stream N times, so the reply is longer
// with the same structure: the time per event should not grow with it.
// ns/event is wall time per upstream event, cpu-ns/event the process's CPU
// time (GC included) per event.
func BenchmarkDeltaReader(b *testing.B) {
	for _, s := range benchStreams {
		data, err := os.ReadFile(filepath.FromSlash(s.file))
		if err != nil {
			b.Fatal(err)
		}
		rc, err := all.Lookup(s.format)
		if err != nil {
			b.Fatal(err)
		}
		evs := events(b, s.framing, data)
		for _, n := range []int{1, 16} {
			long := repeatText(b, rc, evs, n)
			for _, how := range []string{"pieces", "snapshots"} {
				b.Run(s.format+"/x"+strconv.Itoa(n)+"/"+how, func(b *testing.B) {
					newAcc := func() provider.Accumulator { return rc.NewAccumulator(provider.Options{}) }
					if how == "snapshots" {
						newAcc = func() provider.Accumulator { return snapshotOnly{rc.NewAccumulator(provider.Options{})} }
					}
					benchReader(b, newAcc, long)
				})
			}
		}
	}
}

func benchReader(b *testing.B, newAcc func() provider.Accumulator, evs []provider.Event) {
	ds := make([]provider.Delta, 0, 64)
	var err error
	b.ReportAllocs()
	cpu0 := cputime.Process()
	b.ResetTimer()
	for range b.N {
		dr := provider.NewDeltaReader(newAcc())
		for _, ev := range evs {
			if ds, err = dr.Add(ds[:0], ev); err != nil {
				b.Fatal(err)
			}
		}
		if _, _, _, err := dr.Finish(ds[:0]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	n := float64(b.N * len(evs))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/event")
	b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/n, "cpu-ns/event")
}

// repeatText returns the events with each event that is only a piece of
// text repeated n times.
func repeatText(tb testing.TB, rc provider.ReplyCodec, evs []provider.Event, n int) []provider.Event {
	acc, ok := rc.NewAccumulator(provider.Options{}).(provider.PieceAccumulator)
	if !ok {
		tb.Fatal("not a PieceAccumulator")
	}
	var out []provider.Event
	for _, ev := range evs {
		p, err := acc.AddPiece(ev)
		if err != nil {
			tb.Fatal(err)
		}
		k := 1
		if p.Kind == provider.DeltaText {
			k = n
		}
		for range k {
			out = append(out, ev)
		}
	}
	return out
}

// events reads every event of a recorded stream, each with its own copy
// of the data.
func events(tb testing.TB, framing string, data []byte) []provider.Event {
	src := source(framing, bytes.NewReader(data))
	var evs []provider.Event
	for {
		ev, err := src.Next()
		if errors.Is(err, io.EOF) {
			return evs
		}
		if err != nil {
			tb.Fatal(err)
		}
		ev.Data = bytes.Clone(ev.Data)
		evs = append(evs, ev)
	}
}
