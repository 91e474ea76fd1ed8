package bedrock

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// realistic returns a deterministic history of n messages shaped like a
// tool-using agent session on Bedrock: user questions (some with images),
// assistant turns with signed reasoning, text and parallel tool calls, tool
// results with JSON and text.
func realistic(n int) convo.History {
	words := strings.Fields("the quick brown fox jumps over the lazy dog while the weather in Paris stays mild and cloudy with light wind from the north west")
	text := func(i, k int) string {
		var b strings.Builder
		for j := 0; j < k; j++ {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[(i*7+j*3)%len(words)])
		}
		return b.String()
	}
	img := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x89PNG\r\n\x1a\n-pixels-", 200)))
	h := convo.History{convo.System("You are a helpful travel agent. " + text(0, 60))}
	for i := 0; len(h) < n; i++ {
		u := convo.User(text(i, 40))
		if i%10 == 0 {
			u.Parts = append(u.Parts, convo.Image("image/png", []byte(img[:1500])))
		}
		h = append(h, u)
		calls := []convo.Part{
			{Type: convo.TypeReasoning, Text: text(i+1, 50), Signature: "EqQBCkgIARABGAIiQL3Xw" + fmt.Sprint(i), Provider: ProviderID},
			convo.Text(text(i+2, 20)),
			convo.ToolCall(fmt.Sprintf("tooluse_%d_a", i), "get_weather", json.RawMessage(fmt.Sprintf(`{"city":"Paris","day":%d}`, i))),
			convo.ToolCall(fmt.Sprintf("tooluse_%d_b", i), "get_time", json.RawMessage(`{"tz":"Europe/Paris"}`)),
		}
		h = append(h, convo.Message{Role: convo.RoleAssistant, Parts: calls})
		h = append(h, convo.ToolResults(
			convo.ToolResultParts(fmt.Sprintf("tooluse_%d_a", i), "get_weather", convo.JSON(json.RawMessage(fmt.Sprintf(`{"temp_c":%d,"sky":"cloudy","wind":[3.5,"NW"]}`, i%30)))),
			convo.ToolResult(fmt.Sprintf("tooluse_%d_b", i), "get_time", "10:0"+fmt.Sprint(i%10)),
		))
		h = append(h, convo.Assistant(text(i+3, 80)))
	}
	return h[:n]
}

func BenchmarkEncode(b *testing.B) {
	h := realistic(1000)
	b.Run("bedrock", func(b *testing.B) { codectest.BenchEncode(b, converse{}, h) })
	// The shared rules alone, to tell their cost from Bedrock's own.
	b.Run("prepare", func(b *testing.B) { codectest.BenchPrepare(b, h, target) })
	b.Run("canonical", func(b *testing.B) { codectest.BenchMarshal(b, h) })
}

func BenchmarkDecode(b *testing.B) {
	h := realistic(1000)
	body, _, err := converse{}.Encode(h, provider.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("bedrock", func(b *testing.B) { codectest.BenchDecode(b, converse{}, body) })
	b.Run("canonical", func(b *testing.B) { codectest.BenchUnmarshal(b, h) })
}

// TestRealisticRoundTrip keeps the benchmark history honest: it encodes
// without warnings and decodes back to itself.
func TestRealisticRoundTrip(t *testing.T) {
	h := realistic(1000)
	body, warns, err := converse{}.Encode(h, provider.Options{Strict: true})
	if err != nil {
		t.Fatal(err, warns)
	}
	checkShape(t, body)
	back, _, err := converse{}.Decode(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(h) {
		t.Error("round trip differs")
	}
}

// deltaStream returns a reply of n deltas: a quarter reasoning, half text,
// a quarter tool-use input, between messageStart and metadata.
func deltaStream(n int) []provider.Event {
	evs := []provider.Event{{Type: "messageStart", Data: []byte(`{"role":"assistant"}`)}}
	add := func(typ, data string) { evs = append(evs, provider.Event{Type: typ, Data: []byte(data)}) }
	for i := 0; i < n/4; i++ {
		add("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"text":"think "}}}`)
	}
	add("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"signature":"EqQBCkgIARABGAIiQL3Xw2o="}}}`)
	add("contentBlockStop", `{"contentBlockIndex":0}`)
	for i := 0; i < n/2; i++ {
		add("contentBlockDelta", `{"contentBlockIndex":1,"delta":{"text":"token \u00e9\n"}}`)
	}
	add("contentBlockStop", `{"contentBlockIndex":1}`)
	add("contentBlockStart", `{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"tooluse_1","name":"write"}}}`)
	add("contentBlockDelta", `{"contentBlockIndex":2,"delta":{"toolUse":{"input":"{\"text\":\""}}}`)
	for i := 0; i < n/4; i++ {
		add("contentBlockDelta", `{"contentBlockIndex":2,"delta":{"toolUse":{"input":"word "}}}`)
	}
	add("contentBlockDelta", `{"contentBlockIndex":2,"delta":{"toolUse":{"input":"\"}"}}}`)
	add("contentBlockStop", `{"contentBlockIndex":2}`)
	add("messageStop", `{"stopReason":"tool_use"}`)
	add("metadata", `{"usage":{"inputTokens":10,"outputTokens":20,"totalTokens":30},"metrics":{"latencyMs":5}}`)
	return evs
}

// BenchmarkAccumulate measures folding a streamed reply: the cost per event
// must not grow with the length of the reply.
func BenchmarkAccumulate(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		evs := deltaStream(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				acc := converse{}.NewAccumulator(provider.Options{})
				for _, e := range evs {
					if err := acc.Add(e); err != nil {
						b.Fatal(err)
					}
				}
				if _, _, err := acc.Message(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// BenchmarkReadStream measures the whole path from bytes in the AWS binary
// framing to the final message.
func BenchmarkReadStream(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		evs := deltaStream(n)
		bin := binaryStream(evs)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(bin)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := (converse{}).ReadStream(bytes.NewReader(bin), provider.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(evs)), "ns/event")
			b.ReportMetric(0, "ns/op")
		})
	}
}
