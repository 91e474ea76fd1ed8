package provider_test

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// translateStream reads an Anthropic stream from data and writes it to w
// as an OpenAI Chat stream, as the gateway does when it translates: the
// SSE reader, the Anthropic accumulator read into deltas, the Chat stream
// encoder.
func translateStream(tb testing.TB, data []byte, w io.Writer, ds []provider.Delta) []provider.Delta {
	rc, err := all.Lookup("anthropic")
	if err != nil {
		tb.Fatal(err)
	}
	re, err := all.Encoder("openai-chat")
	if err != nil {
		tb.Fatal(err)
	}
	enc := re.NewStreamEncoder(w, provider.StreamOptions{Model: "claude-x"})
	dr := provider.NewDeltaReader(rc.NewAccumulator(provider.Options{}))
	src := stream.NewSSE(bytes.NewReader(data))
	defer src.Release()
	for {
		ev, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		if ds, err = dr.Add(ds[:0], ev); err != nil {
			tb.Fatal(err)
		}
		for _, d := range ds {
			if err := enc.Write(d); err != nil {
				tb.Fatal(err)
			}
		}
	}
	ds, _, _, err = dr.Finish(ds[:0])
	if err != nil {
		tb.Fatal(err)
	}
	for _, d := range ds {
		if err := enc.Write(d); err != nil {
			tb.Fatal(err)
		}
	}
	return ds
}

// BenchmarkTranslateStream translates recorded Anthropic streams to OpenAI
// Chat streams, per upstream event; long is the gateway bench's translated
// text stream (300 text deltas written as a recorded Anthropic stream: see
// codectest.LongTextStream).
func BenchmarkTranslateStream(b *testing.B) {
	for _, name := range []string{"tool_use", "interleaved", "long"} {
		var data []byte
		var err error
		if name == "long" {
			data = codectest.LongTextStream(b, ".")
		} else if data, err = os.ReadFile("anthropic/testdata/reply/" + name + ".sse"); err != nil {
			b.Fatal(err)
		}
		events := bytes.Count(data, []byte("\ndata:")) + 1
		b.Run(name, func(b *testing.B) {
			ds := make([]provider.Delta, 0, 16)
			b.ReportAllocs()
			for range b.N {
				ds = translateStream(b, data, io.Discard, ds)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
		})
	}
}

// maxTranslateAllocsPerEvent bounds TestTranslateStreamAllocs, a little
// above what was measured on 2026-12-06 (linux/amd64) for the recorded
// tool stream: 58 allocations for its 20 events (2.9 an event), the
// reader's, accumulator's and encoder's set-up included (63 before the
// Anthropic stream's message_start, message_delta and tool_use start were
// read without the general reader; 64 before its events of fixed form
// were); 127 before the
// SSE reader kept short events' data in shared slabs, the Anthropic
// accumulator its usage values in shared chunks, a piece's text in the
// block's own bytes and an escaped piece in its reader's scratch, and the
// buffers that grow with a stream were made with room for a few pieces
// (151 on 2026-12-05, before the SSE reader
// knew the providers' event names and the Chat encoder kept its state in
// itself rather than in maps).
const maxTranslateAllocsPerEvent = 3.0

// TestTranslateStreamAllocs guards the allocations of the gateway's
// translating stream path, per upstream event: an Anthropic stream with
// thinking, text and a tool call read into deltas and written as an
// OpenAI Chat stream. A change that makes each event allocate more fails
// here; one that makes it allocate less should lower the bound.
func TestTranslateStreamAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts: not in -short")
	}
	data, err := os.ReadFile("anthropic/testdata/reply/tool_use.sse")
	if err != nil {
		t.Fatal(err)
	}
	events := bytes.Count(data, []byte("\ndata:")) + 1
	var out bytes.Buffer
	ds := make([]provider.Delta, 0, 16)
	translateStream(t, data, &out, ds)
	if !bytes.Contains(out.Bytes(), []byte(`"name":"get_weather"`)) || !bytes.HasSuffix(out.Bytes(), []byte("data: [DONE]\n\n")) {
		t.Fatalf("translated stream:\n%s", out.Bytes())
	}
	out.Grow(2 * out.Len())
	got := testing.AllocsPerRun(100, func() {
		out.Reset()
		ds = translateStream(t, data, &out, ds)
	}) / float64(events)
	t.Logf("%.2f allocations an event (bound %.2f)", got, maxTranslateAllocsPerEvent)
	if got > maxTranslateAllocsPerEvent {
		t.Errorf("%.2f allocations an event, more than %.2f: translating a stream allocates more than it did", got, maxTranslateAllocsPerEvent)
	}
}
