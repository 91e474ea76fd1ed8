package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// benchHistory builds a realistic 1,000-message agent conversation in the
// shape each format produces: a long system prompt, user turns (some with
// an inline image), assistant turns with reasoning, a preamble and a tool
// call, JSON tool results and long answers. For Responses the reasoning
// carries item ids, summaries and encrypted payloads and the items their
// ids and status; for Chat the reasoning is plain reasoning_content.
func benchHistory(responses bool) convo.History {
	word := func(i int, n int) string {
		var b strings.Builder
		for b.Len() < n {
			fmt.Fprintf(&b, "token%d, ", (i*7+b.Len())%997)
		}
		return b.String()[:n]
	}
	image := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x89PNG\r\n\x1a\n", 200)))
	encrypted := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("encrypted reasoning ", 60)))
	h := convo.History{convo.System(word(0, 1500))}
	for i := 0; len(h) < 1000; i++ {
		u := convo.User(word(i, 300))
		if i%10 == 0 {
			u.Parts = append(u.Parts, convo.Image("image/png", nil))
			u.Parts[1].Data = image
			u.Parts[1].Detail = "auto"
		}
		id := fmt.Sprintf("call_%08d", i)
		args := []byte(fmt.Sprintf(`{"query":%q,"limit":%d,"filters":{"lang":"en","safe":true}}`, word(i, 40), i%20))
		call := convo.ToolCall(id, "search", args)
		r := convo.Reasoning(word(i+1, 400))
		r.Provider = ProviderID
		a := convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{r, convo.Text(word(i+2, 120)), call}}
		final := convo.Assistant(word(i+3, 600))
		if responses {
			a.Parts[0] = convo.Part{Type: convo.TypeReasoning, Provider: ProviderID, ID: fmt.Sprintf("rs_%08d", i),
				Summary: []string{word(i+1, 200)}, Encrypted: encrypted}
			a.Parts[2].Native = convo.Native{ProviderID: []byte(fmt.Sprintf(`{"id":"fc_%08d","status":"completed"}`, i))}
			a.Native = convo.Native{ProviderID: []byte(fmt.Sprintf(`{"type":"message","id":"msg_%08da","status":"completed"}`, i))}
			a.Phase = convo.PhaseCommentary
			final.Phase = convo.PhaseFinal
			final.Native = convo.Native{ProviderID: []byte(fmt.Sprintf(`{"type":"message","id":"msg_%08db","status":"completed"}`, i))}
		}
		result := convo.ToolResults(convo.ToolResult(id, "search", fmt.Sprintf(`{"results":[%q,%q,%q]}`, word(i, 120), word(i+5, 120), word(i+9, 120))))
		h = append(h, u, a, result, final)
	}
	return h[:1000]
}

func benchCodecs() []struct {
	name  string
	codec provider.Codec
	h     convo.History
} {
	return []struct {
		name  string
		codec provider.Codec
		h     convo.History
	}{
		{"chat", Chat(), benchHistory(false)},
		{"responses", Responses(), benchHistory(true)},
	}
}

// BenchmarkEncode encodes the 1,000-message history for each format, next
// to the canonical encode (convo.Marshal) of the same history.
func BenchmarkEncode(b *testing.B) {
	for _, c := range benchCodecs() {
		canon, err := convo.Marshal(c.h)
		if err != nil {
			b.Fatal(err)
		}
		out, warns, err := c.codec.Encode(c.h, provider.Options{})
		if err != nil || len(warns) > 0 {
			b.Fatal(err, warns)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(out)))
			for b.Loop() {
				if _, _, err := c.codec.Encode(c.h, provider.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/canonical", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(canon)))
			for b.Loop() {
				if _, err := convo.Marshal(c.h); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecode decodes the same history from each format, next to the
// canonical decode (convo.Unmarshal).
func BenchmarkDecode(b *testing.B) {
	for _, c := range benchCodecs() {
		canon, err := convo.Marshal(c.h)
		if err != nil {
			b.Fatal(err)
		}
		body, _, err := c.codec.Encode(c.h, provider.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, _, err := c.codec.Decode(body, provider.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/canonical", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(canon)))
			for b.Loop() {
				if _, err := convo.Unmarshal(canon); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestBenchHistory keeps the benchmark honest: the history round-trips
// through each format unchanged.
func TestBenchHistory(t *testing.T) {
	for _, c := range benchCodecs() {
		if len(c.h) != 1000 {
			t.Fatalf("%d messages", len(c.h))
		}
		out, warns, err := c.codec.Encode(c.h, provider.Options{})
		if err != nil || len(warns) > 0 {
			t.Fatal(err, warns)
		}
		back, _, err := c.codec.Decode(out, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !back.Equal(c.h) {
			t.Errorf("%s: the benchmark history does not round-trip", c.name)
		}
	}
}

// BenchmarkServerItems reads the provider-run tool items of a recorded
// reply as calls and results (mapped) and, for comparison, the same items
// under a type convo does not know, which are kept opaque.
func BenchmarkServerItems(b *testing.B) {
	items, _ := recordedServerItems(b, "testdata/recorded/responses/vercel-openai-mcp-tool.1.json")
	ci, _ := recordedServerItems(b, "testdata/recorded/responses/vercel-openai-code-interpreter-tool.1.json")
	var mapped, opaque []json.RawMessage
	for _, m := range []map[string][]byte{items, ci} {
		for _, it := range m {
			mapped = append(mapped, it)
			opaque = append(opaque, bytes.Replace(it, []byte(`"type":"`), []byte(`"type":"x_`), 1))
		}
	}
	for _, c := range []struct {
		name  string
		items []json.RawMessage
	}{{"mapped", mapped}, {"opaque", opaque}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := DecodeItems(c.items, provider.Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
