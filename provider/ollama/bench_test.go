package ollama

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// benchHistory returns a realistic agent conversation of n messages: user
// questions (some with an image), assistant turns with thinking and tool
// calls, JSON tool results and prose answers.
func benchHistory(n int) convo.History {
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
			{Type: convo.TypeReasoning, Text: "I should look this up. " + prose[:80], Provider: ProviderID},
			convo.ToolCall(id, "get_weather", args),
		}})
		h = append(h, convo.ToolResults(convo.ToolResult(id, "get_weather", `{"temp_c":18,"sky":"clear","wind_kmh":12}`)))
		h = append(h, convo.Assistant("Here is what I found. "+prose))
	}
	return h[:n]
}

func BenchmarkEncode(b *testing.B) {
	h := benchHistory(1000)
	b.Run("ollama", func(b *testing.B) {
		out, _, err := Codec().Encode(h, provider.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(out)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := Codec().Encode(h, provider.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The mapping alone, without the shared rules of provider.Prepare.
	b.Run("ollama-mapping", func(b *testing.B) {
		ph, from, _, err := provider.PrepareIndexed(h, target, provider.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodePrepared(ph, from); err != nil {
				b.Fatal(err)
			}
			warnings(h, provider.Options{})
		}
	})
	b.Run("canonical", func(b *testing.B) {
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
	})
}

func BenchmarkDecode(b *testing.B) {
	h := benchHistory(1000)
	wire, _, err := Codec().Encode(h, provider.Options{})
	if err != nil {
		b.Fatal(err)
	}
	canon, err := convo.Marshal(h)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("ollama", func(b *testing.B) {
		b.SetBytes(int64(len(wire)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := Codec().Decode(wire, provider.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("canonical", func(b *testing.B) {
		b.SetBytes(int64(len(canon)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := convo.Unmarshal(canon); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPrepare measures the shared conversion rules alone, the part of
// Encode this package does not control.
func BenchmarkPrepare(b *testing.B) {
	h := benchHistory(1000)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := provider.Prepare(h, target, provider.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
