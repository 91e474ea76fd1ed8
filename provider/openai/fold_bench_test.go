package openai

import (
	"bytes"
	"os"
	"testing"

	"github.com/convo-go/convo/provider"
)

// longChatStream is the gateway bench's long stream
// (bench/gateway -stream text): a real OpenAI Chat stream of 303 chunks,
// 300 of them one text delta each, framed as OpenAI sends it.
func longChatStream(tb testing.TB) []byte {
	tb.Helper()
	chunks, err := os.ReadFile("testdata/recorded/chat/vercel-openai-text.chunks.txt")
	if err != nil {
		tb.Fatal(err)
	}
	var sse []byte
	for _, line := range bytes.Split(bytes.TrimSpace(chunks), []byte("\n")) {
		sse = append(append(append(sse, "data: "...), line...), "\n\n"...)
	}
	return append(sse, "data: [DONE]\n\n"...)
}

// BenchmarkReadStreamLong folds the long Chat stream into a message, as
// the recording gateway does for every exchange of its text bench.
func BenchmarkReadStreamLong(b *testing.B) {
	sse := longChatStream(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(sse)))
	for b.Loop() {
		if _, _, err := Chat().(provider.ReplyCodec).ReadStream(bytes.NewReader(sse), provider.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestReadStreamLongAllocs guards the fold's allocations: 417 an exchange
// before the fast path of repeated chunks and the shared SSE buffer, 108
// after (most of them the message's own, and CheckStream's peek).
func TestReadStreamLongAllocs(t *testing.T) {
	sse := longChatStream(t)
	rc := Chat().(provider.ReplyCodec)
	m, _, err := rc.ReadStream(bytes.NewReader(sse), provider.Options{})
	if err != nil || len(m.Text()) != 1730 {
		t.Fatalf("%v, %d bytes of text", err, len(m.Text()))
	}
	n := testing.AllocsPerRun(50, func() {
		if _, _, err := rc.ReadStream(bytes.NewReader(sse), provider.Options{}); err != nil {
			t.Fatal(err)
		}
	})
	if n > 115 {
		t.Errorf("%.0f allocations to fold the long stream, want at most 115", n)
	}
}
