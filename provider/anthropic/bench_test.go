package anthropic

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// benchHistory builds a realistic agent conversation of about n messages:
// a system prompt, user turns (some with an image), assistant turns with
// signed thinking, text and tool calls, and tool results (text and JSON).
func benchHistory(n int) convo.History {
	img := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x89PNG image bytes ", 200)))
	prose := "The quarterly numbers show steady growth in every region; the \"north\" office leads.\n"
	h := convo.History{convo.System("You are a careful analyst. Cite your sources and keep answers short.")}
	for turn := 0; len(h) < n; turn++ {
		u := convo.User(fmt.Sprintf("Question %d: %s", turn, strings.Repeat(prose, 3)))
		if turn%10 == 0 {
			u.Parts = append(u.Parts, convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: img})
		}
		h = append(h, u)
		id := fmt.Sprintf("toolu_%04d", turn)
		h = append(h, convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
			{Type: convo.TypeReasoning, Text: strings.Repeat("I should look this up before answering. ", 6),
				Signature: strings.Repeat("EqQBCkYIBxgCKkBq2nEa1vBv7c3m", 8), Provider: ProviderID},
			convo.Text("Let me check the report."),
			convo.ToolCall(id, "search_reports", []byte(fmt.Sprintf(`{"query":"q%d revenue","limit":5,"filters":{"region":"north"}}`, turn))),
		}})
		h = append(h, convo.ToolResults(convo.ToolResultParts(id, "search_reports",
			convo.JSON([]byte(`{"hits":[{"title":"Q3 report","score":0.92},{"title":"Q2 report","score":0.81}]}`)),
			convo.Text(strings.Repeat(prose, 2)))))
		h = append(h, convo.Assistant(strings.Repeat(prose, 2)))
	}
	return h[:n]
}

func BenchmarkEncode(b *testing.B) {
	h := benchHistory(1000)
	b.Run("anthropic", func(b *testing.B) {
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
	// The codec's own share, after the shared rules: what Encode costs
	// beyond provider.Prepare.
	b.Run("anthropic-after-prepare", func(b *testing.B) {
		p, _, err := provider.Prepare(tag(h), target, provider.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			e := encoder{orig: h, h: p, buf: make([]byte, 0, estimate(p))}
			if err := e.encode(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("prepare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := provider.Prepare(h, target, provider.Options{}); err != nil {
				b.Fatal(err)
			}
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
	body, _, err := Codec().Encode(benchHistory(1000), provider.Options{})
	if err != nil {
		b.Fatal(err)
	}
	h, _, err := Codec().Decode(body, provider.Options{})
	if err != nil {
		b.Fatal(err)
	}
	canon, err := convo.Marshal(h)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("anthropic", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := Codec().Decode(body, provider.Options{}); err != nil {
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
