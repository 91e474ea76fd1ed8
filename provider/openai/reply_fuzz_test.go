package openai

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// FuzzAccumulate feeds arbitrary bytes to both reply decoders: as a stream
// (SSE framing) and as one event's data, and as a whole reply body. Nothing
// may panic; a message is always returned with an error or without one.
func FuzzAccumulate(f *testing.F) {
	for _, pattern := range []string{"*/*.sse", "*/*.stream", "*/*.json"} {
		files, _ := filepath.Glob(filepath.Join("testdata", "replies", pattern))
		for _, file := range files {
			f.Add(readFile(f, file))
		}
	}
	// Real recorded streams, and a delta member merged by its index.
	for _, dir := range []string{"chat", "responses"} {
		for _, seed := range codectest.RecordedEvents(f, filepath.Join("testdata", "recorded", dir)) {
			f.Add(codectest.SSEFromChunks(seed, dir == "responses"))
		}
	}
	f.Add([]byte(`data: {"choices":[{"index":0,"delta":{"reasoning_details":[{"index":0,"text":"a"}]}}]}` + "\n\n" +
		`data: {"choices":[{"index":0,"delta":{"reasoning_details":[{"index":0,"text":"b"},{"index":9}],"x":{"y":"z"}}}]}` + "\n\n"))
	f.Add([]byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":-1,"id":"c","function":{"name":"f","arguments":"{"}}]}}]}` + "\n\n"))
	f.Add([]byte(`data: {"type":"response.output_text.delta","output_index":3,"content_index":2,"delta":"x"}` + "\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range []provider.ReplyCodec{Chat(), Responses()} {
			m, _, err := c.ReadStream(bytes.NewReader(data), provider.Options{})
			if err == nil && m.Role == "" {
				t.Fatalf("no error and no message")
			}
			acc := c.NewAccumulator(provider.Options{})
			_ = acc.Add(provider.Event{Data: data})
			_ = acc.Snapshot()
			_, _, _ = acc.Message()
			_, _, _ = c.DecodeReply(data, provider.Options{})
		}
	})
}

// deltaStream builds a streamed reply of n text deltas for a codec, as
// events (framing already removed).
func deltaStream(dir string, n int) []provider.Event {
	var evs []provider.Event
	add := func(s string) { evs = append(evs, provider.Event{Data: []byte(s)}) }
	if dir == "chat" {
		add(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)
		for i := 0; i < n; i++ {
			add(fmt.Sprintf(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok%d "},"finish_reason":null}]}`, i%1000))
		}
		add(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
		add(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":` + fmt.Sprint(n) + `,"total_tokens":` + fmt.Sprint(n+5) + `}}`)
		add(`[DONE]`)
		return evs
	}
	add(`{"type":"response.created","sequence_number":0,"response":{"id":"r1","object":"response","created_at":1,"status":"in_progress","model":"m","output":[]}}`)
	add(`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}`)
	add(`{"type":"response.content_part.added","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}`)
	for i := 0; i < n; i++ {
		add(fmt.Sprintf(`{"type":"response.output_text.delta","sequence_number":%d,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"tok%d "}`, i+3, i%1000))
	}
	add(`{"type":"response.completed","sequence_number":0,"response":{"id":"r1","object":"response","created_at":1,"status":"completed","model":"m","output":null,"usage":{"input_tokens":5,"output_tokens":` + fmt.Sprint(n) + `,"total_tokens":` + fmt.Sprint(n+5) + `}}}`)
	return evs
}

// BenchmarkAccumulate feeds replies of 10,000 and 100,000 text deltas to
// each accumulator and reports the cost per event: it must stay flat (no
// quadratic text building).
func BenchmarkAccumulate(b *testing.B) {
	for _, c := range replyCodecs {
		for _, n := range []int{10_000, 100_000} {
			evs := deltaStream(c.dir, n)
			b.Run(fmt.Sprintf("%s/%d", c.dir, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					acc := c.codec.NewAccumulator(provider.Options{})
					for _, ev := range evs {
						if err := acc.Add(ev); err != nil {
							b.Fatal(err)
						}
					}
					if _, _, err := acc.Message(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(evs)), "ns/event")
			})
		}
	}
}

// TestDeltaStream checks the benchmark streams: every delta ends up in the
// text, in order.
func TestDeltaStream(t *testing.T) {
	for _, c := range replyCodecs {
		evs := deltaStream(c.dir, 2000)
		acc := c.codec.NewAccumulator(provider.Options{})
		for _, ev := range evs {
			if err := acc.Add(ev); err != nil {
				t.Fatal(err)
			}
		}
		m, _, err := acc.Message()
		if err != nil {
			t.Fatal(err)
		}
		text := m.Text()
		if !strings.HasPrefix(text, "tok0 tok1 tok2 ") || !strings.HasSuffix(text, "tok999 ") || strings.Count(text, "tok") != 2000 {
			t.Errorf("%s: text %q...", c.dir, text[:min(40, len(text))])
		}
		if m.Usage == nil || m.Usage.Output != 2000 || m.Finish != "stop" {
			t.Errorf("%s: usage %+v finish %q", c.dir, m.Usage, m.Finish)
		}
	}
}
