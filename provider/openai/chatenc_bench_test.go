package openai

import (
	"io"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// benchDeltas are the deltas of a streamed reply with reasoning, 64 pieces
// of text and a tool call whose arguments come in 8 pieces, as a gateway
// translating a stream hands them to a stream encoder.
func benchDeltas() []provider.Delta {
	ds := []provider.Delta{
		{Kind: provider.DeltaStart, Origin: &convo.Origin{Provider: "anthropic", Model: "claude-x", ResponseID: "msg_01"}},
		{Kind: provider.DeltaPartStart, Index: 0, Part: &convo.Part{Type: convo.TypeReasoning, Provider: "anthropic"}},
		{Kind: provider.DeltaText, Index: 0, Text: "The user wants the weather in Paris. "},
		{Kind: provider.DeltaSignature, Index: 0, Text: "EqQBCkYIBxgCKkBq2nEa1vBv7c3mTzLf3Yw9x1bq"},
		{Kind: provider.DeltaPartStart, Index: 1, Part: &convo.Part{Type: convo.TypeText}},
	}
	for range 64 {
		ds = append(ds, provider.Delta{Kind: provider.DeltaText, Index: 1, Text: "Let me check \"the\" weather.\n"})
	}
	ds = append(ds, provider.Delta{Kind: provider.DeltaPartStart, Index: 2, Part: &convo.Part{Type: convo.TypeToolCall, ID: "toolu_01", Name: "get_weather"}})
	for range 8 {
		ds = append(ds, provider.Delta{Kind: provider.DeltaArgs, Index: 2, Text: `{"city":"Paris",`})
	}
	for i, p := range []convo.Part{convo.Reasoning("The user wants the weather in Paris. "), convo.Text("…"), {Type: convo.TypeToolCall, ID: "toolu_01", Name: "get_weather", Args: []byte(`{}`)}} {
		ds = append(ds, provider.Delta{Kind: provider.DeltaPartEnd, Index: i, Part: &p})
	}
	return append(ds,
		provider.Delta{Kind: provider.DeltaUsage, Usage: &convo.Usage{Input: 12, Output: 89}},
		provider.Delta{Kind: provider.DeltaFinish, Finish: convo.FinishToolUse})
}

// BenchmarkChatStreamEncoder writes a translated reply as a Chat
// Completions chunk stream; per delta, so encoders of other formats
// compare.
func BenchmarkChatStreamEncoder(b *testing.B) {
	ds := benchDeltas()
	b.ReportAllocs()
	for range b.N {
		enc := NewChatStreamEncoder(io.Discard, provider.StreamOptions{Model: "claude-x"})
		for _, d := range ds {
			if err := enc.Write(d); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ds)), "ns/delta")
}
