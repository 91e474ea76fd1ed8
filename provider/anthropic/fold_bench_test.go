package anthropic

import (
	"bytes"
	"os"
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// longTextStream is the gateway bench's long stream as Anthropic sends it
// (codectest.LongTextStream).
func longTextStream(tb testing.TB) []byte {
	return codectest.LongTextStream(tb, "..")
}

// BenchmarkReadStreamLong folds the long text stream into a message, as
// the recording gateway does for every exchange of its text bench.
func BenchmarkReadStreamLong(b *testing.B) {
	sse := longTextStream(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(sse)))
	for b.Loop() {
		if _, _, err := Messages().(provider.ReplyCodec).ReadStream(bytes.NewReader(sse), provider.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadStreamRecorded folds real streams as Anthropic's API sent
// them, most events padded with spaces before their closing brace: a
// tool call's (7 events) and a reply with thinking and text (118).
func BenchmarkReadStreamRecorded(b *testing.B) {
	for _, name := range []string{"llm-anthropic-tool-calls", "pydantic-thinking"} {
		sse, err := os.ReadFile("testdata/recorded/" + name + ".sse")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(sse)))
			for b.Loop() {
				if _, _, err := Messages().(provider.ReplyCodec).ReadStream(bytes.NewReader(sse), provider.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
