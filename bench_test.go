package convo_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo"
)

// realisticHistory builds n messages shaped like a real agent session: user
// turns, assistant turns with signed reasoning and tool calls, JSON tool
// results, and a few inline images.
func realisticHistory(n int) convo.History {
	img := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x89PNG\r\n\x1a\nimage-bytes", 400)))
	t0 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	h := convo.History{convo.System("You are a careful assistant. Use the tools when they help; answer briefly.")}
	for i := 1; len(h) < n; i++ {
		u := convo.User(fmt.Sprintf("Question %d: what is the weather in city %d, and should I take an umbrella? Explain \"why\".", i, i))
		u.Time = t0.Add(time.Duration(i) * time.Minute)
		if i%25 == 0 {
			u.Parts = append(u.Parts, convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: img})
		}
		id := fmt.Sprintf("toolu_%08d", i)
		a := convo.Assistant("", convo.ToolCall(id, "get_weather", json.RawMessage(fmt.Sprintf(`{"city":"City %d","units":"metric","days":[1,2,3]}`, i))))
		a.Parts = append([]convo.Part{{Type: convo.TypeReasoning, Text: "The user wants the forecast; call get_weather, then judge rain probability.",
			Signature: "EqQBCkYIBxgCKkDx" + strings.Repeat("Zm9vYmFy", 40), Provider: "anthropic", Model: "claude-x"}}, a.Parts...)
		a.Origin = &convo.Origin{Provider: "anthropic", Model: "claude-x", ResponseID: fmt.Sprintf("msg_%d", i)}
		a.Usage = &convo.Usage{Input: int64(1000 + 40*i), Output: 120, CacheRead: 900}
		a.Finish = convo.FinishToolUse
		r := convo.ToolResults(convo.ToolResultParts(id, "get_weather", convo.JSON(json.RawMessage(fmt.Sprintf(`{"temp_c":%d,"rain_probability":0.%d,"summary":"Cloudy with \"light\" rain"}`, i%30, i%10)))))
		f := convo.Assistant(fmt.Sprintf("In city %d it is cloudy with light rain expected — yes, take an umbrella. Temperature around %d °C.", i, i%30))
		f.Phase = convo.PhaseFinal
		f.Finish = convo.FinishStop
		h = append(h, u, a, r, f)
	}
	return h[:n]
}

// plainMessage is the baseline: the same document decoded by encoding/json
// into ordinary tagged structs.
type plainMessage struct {
	Role   string          `json:"role"`
	ID     string          `json:"id,omitempty"`
	Name   string          `json:"name,omitempty"`
	Time   *time.Time      `json:"time,omitempty"`
	Phase  string          `json:"phase,omitempty"`
	Origin *convo.Origin   `json:"origin,omitempty"`
	Usage  map[string]int  `json:"usage,omitempty"`
	Finish string          `json:"finish,omitempty"`
	Parts  []plainPart     `json:"parts,omitempty"`
	Meta   json.RawMessage `json:"meta,omitempty"`
}

type plainPart struct {
	Type      string          `json:"type"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Text      string          `json:"text,omitempty"`
	MediaType string          `json:"media_type,omitempty"`
	Data      string          `json:"data,omitempty"`
	Value     json.RawMessage `json:"value,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	Parts     []plainPart     `json:"parts,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Provider  string          `json:"provider,omitempty"`
	Model     string          `json:"model,omitempty"`
}

type plainDoc struct {
	Format   string         `json:"format"`
	Messages []plainMessage `json:"messages"`
}

func benchSizes(b *testing.B, f func(b *testing.B, h convo.History, doc []byte)) {
	for _, n := range []int{1000, 10000} {
		h := realisticHistory(n)
		doc, err := convo.Marshal(h)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			f(b, h, doc)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/msg")
		})
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	benchSizes(b, func(b *testing.B, _ convo.History, doc []byte) {
		for b.Loop() {
			if _, err := convo.Unmarshal(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkUnmarshalBaselineEncodingJSON(b *testing.B) {
	benchSizes(b, func(b *testing.B, _ convo.History, doc []byte) {
		for b.Loop() {
			var d plainDoc
			if err := json.Unmarshal(doc, &d); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkMarshal(b *testing.B) {
	benchSizes(b, func(b *testing.B, h convo.History, _ []byte) {
		for b.Loop() {
			if _, err := convo.Marshal(h); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkMarshalBaselineEncodingJSON(b *testing.B) {
	benchSizes(b, func(b *testing.B, _ convo.History, doc []byte) {
		var d plainDoc
		if err := json.Unmarshal(doc, &d); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for b.Loop() {
			if _, err := json.Marshal(d); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkValidate(b *testing.B) {
	benchSizes(b, func(b *testing.B, h convo.History, _ []byte) {
		for b.Loop() {
			if err := h.Validate(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkUnmarshalMessage(b *testing.B) {
	h := realisticHistory(400)
	var docs [][]byte
	for _, m := range h {
		d, _ := m.MarshalJSON()
		docs = append(docs, d)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range docs {
			if _, err := convo.UnmarshalMessage(d); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(docs)), "ns/msg")
}
