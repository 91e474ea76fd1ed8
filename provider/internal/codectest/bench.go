package codectest

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// AgentHistory returns a realistic agent conversation of n messages for
// the codec of providerID: user questions (every tenth with a PNG image),
// assistant turns with providerID's plain reasoning and a tool call, JSON
// tool results and prose answers.
func AgentHistory(n int, providerID string) convo.History {
	prose := strings.Repeat("The quick brown fox jumps over the lazy dog; ", 8)
	img := convo.Image("image/png", []byte(strings.Repeat("\x89PNG\r\n\x1a\n pixels ", 60)))
	h := convo.History{convo.System("You are a careful assistant. Use the tools when they help.")}
	for turn := 0; len(h) < n; turn++ {
		u := convo.User(fmt.Sprintf("Question %d: %s", turn, prose[:120]))
		if turn%10 == 0 {
			u.Parts = append(u.Parts, img)
		}
		h = append(h, u)
		id := fmt.Sprintf("call_%d", turn)
		args, _ := json.Marshal(map[string]any{"city": "Paris", "days": turn % 7, "units": "metric"})
		h = append(h, convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
			{Type: convo.TypeReasoning, Text: "I should look this up. " + prose[:80], Provider: providerID},
			convo.ToolCall(id, "get_weather", args),
		}})
		h = append(h, convo.ToolResults(convo.ToolResult(id, "get_weather", `{"temp_c":18,"sky":"clear","wind_kmh":12}`)))
		h = append(h, convo.Assistant("Here is what I found. "+prose))
	}
	return h[:n]
}

// BenchMarshal measures convo.Marshal of h: the canonical baseline a
// codec's encoding is compared with.
func BenchMarshal(b *testing.B, h convo.History) {
	out, err := convo.Marshal(h)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := convo.Marshal(h); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchUnmarshal measures convo.Unmarshal of the canonical form of h: the
// baseline a codec's decoding is compared with.
func BenchUnmarshal(b *testing.B, h convo.History) {
	doc, err := convo.Marshal(h)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := convo.Unmarshal(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchEncode measures c.Encode of h with default options.
func BenchEncode(b *testing.B, c provider.Codec, h convo.History) {
	out, _, err := c.Encode(h, provider.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.Encode(h, provider.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchDecode measures c.Decode of body with default options.
func BenchDecode(b *testing.B, c provider.Codec, body []byte) {
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := c.Decode(body, provider.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchAccumulate measures folding evs, a whole streamed reply, with an
// accumulator of rc and taking its message. It reports the cost per event
// as ns/event and allocs/event, which must not grow with the length of the
// reply.
func BenchAccumulate(b *testing.B, rc provider.ReplyCodec, evs []provider.Event) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		acc := rc.NewAccumulator(provider.Options{})
		for _, ev := range evs {
			if err := acc.Add(ev); err != nil {
				b.Fatal(err)
			}
		}
		if _, _, err := acc.Message(); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	events := float64(b.N) * float64(len(evs))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/events, "ns/event")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/events, "allocs/event")
}

// BenchPrepare measures provider.Prepare of h for t: the shared rules
// alone, to tell their cost from a codec's own.
func BenchPrepare(b *testing.B, h convo.History, t provider.Target) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := provider.Prepare(h, t, provider.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
