package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
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
	b.Run("anthropic", func(b *testing.B) { codectest.BenchEncode(b, Messages(), h) })
	// The codec's own share, after the shared rules: what Encode costs
	// beyond provider.Prepare.
	b.Run("anthropic-after-prepare", func(b *testing.B) {
		p, from, _, err := provider.PrepareIndexed(h, target, provider.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			e := encoder{orig: h, h: p, from: from, buf: make([]byte, 0, estimate(p))}
			if err := e.encode(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("prepare", func(b *testing.B) { codectest.BenchPrepare(b, h, target) })
	b.Run("canonical", func(b *testing.B) { codectest.BenchMarshal(b, h) })
}

func BenchmarkDecode(b *testing.B) {
	body, _, err := Messages().Encode(benchHistory(1000), provider.Options{})
	if err != nil {
		b.Fatal(err)
	}
	h, _, err := Messages().Decode(body, provider.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("anthropic", func(b *testing.B) { codectest.BenchDecode(b, Messages(), body) })
	// The whole request, as the gateway reads a client's: the history and
	// the settings beside it.
	b.Run("request", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, _, err := Messages().(provider.RequestCodec).DecodeRequest(body, provider.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The baseline is the canonical form of the decoded history.
	b.Run("canonical", func(b *testing.B) { codectest.BenchUnmarshal(b, h) })
}

// TestDecodeRequestReadsMessagesOnce checks that reading a whole request
// costs about what reading its history does: the settings beside the
// messages are read apart, but the messages, most of the request's
// bytes, are not copied again (every member of the body was copied, the
// messages too, and compacted when the body was indented: 116 KB more than
// the history for a compact request of 108 KB, 246 KB for the same
// request indented, 140 KB).
func TestDecodeRequestReadsMessagesOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts: not in -short")
	}
	body, _, err := Messages().Encode(benchHistory(200), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, body, "", "  "); err != nil {
		t.Fatal(err)
	}
	allocated := func(f func()) int64 {
		var before, after runtime.MemStats
		f() // pools and caches
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		return int64(after.TotalAlloc - before.TotalAlloc)
	}
	for name, b := range map[string][]byte{"compact": body, "indented": indented.Bytes()} {
		history := allocated(func() {
			if _, _, err := Messages().Decode(b, provider.Options{}); err != nil {
				t.Fatal(err)
			}
		})
		request := allocated(func() {
			if _, _, err := Messages().(provider.RequestCodec).DecodeRequest(b, provider.Options{}); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("%s, %d bytes: the history allocates %d bytes, the request %d", name, len(b), history, request)
		if request-history > int64(len(b))/8 {
			t.Errorf("%s, %d bytes: reading the request allocates %d bytes more than reading its history", name, len(b), request-history)
		}
	}
}

// deltas are the delta events of streamEvents: thinking and text, plain
// and with an escape.
var deltas = func() []provider.Event {
	var out []provider.Event
	for _, d := range [][3]string{{"0", "thinking_delta", "thinking"}, {"1", "text_delta", "text"}} {
		for _, piece := range []string{`some words `, `line\n`} {
			out = append(out, provider.Event{Type: "content_block_delta",
				Data: []byte(`{"type":"content_block_delta","index":` + d[0] + `,"delta":{"type":"` + d[1] + `","` + d[2] + `":"` + piece + `"}}`)})
		}
	}
	return out
}()

// streamEvents builds the events of a streamed reply of n deltas: half
// thinking, half text.
func streamEvents(n int) []provider.Event {
	evs := []provider.Event{
		{Type: "message_start", Data: []byte(`{"type":"message_start","message":{"id":"msg_b","type":"message","role":"assistant","content":[],"model":"claude-x","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":100,"output_tokens":1}}}`)},
		{Type: "content_block_start", Data: []byte(`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)},
	}
	for i := 0; i < n; i++ {
		if i == n/2 {
			evs = append(evs,
				provider.Event{Type: "content_block_delta", Data: []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkYIBxgCKkBq2nEa1vBv7c3m"}}`)},
				provider.Event{Type: "content_block_stop", Data: []byte(`{"type":"content_block_stop","index":0}`)},
				provider.Event{Type: "content_block_start", Data: []byte(`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`)})
		}
		k := 0
		if i >= n/2 {
			k = 2
		}
		if i%8 == 0 {
			k++
		}
		// The same few buffers over and over: a live stream hands over
		// each event once and drops it, so only the accumulator's own
		// state should grow with n, not the input kept in memory.
		evs = append(evs, deltas[k])
	}
	return append(evs,
		provider.Event{Type: "content_block_stop", Data: []byte(`{"type":"content_block_stop","index":1}`)},
		provider.Event{Type: "message_delta", Data: []byte(`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":` + fmt.Sprint(n) + `}}`)},
		provider.Event{Type: "message_stop", Data: []byte(`{"type":"message_stop"}`)})
}

// BenchmarkAccumulate measures the cost per event of a 10,000- and a
// 100,000-delta reply: the two must be about the same (linear growth).
func BenchmarkAccumulate(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		evs := streamEvents(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) { codectest.BenchAccumulate(b, Messages(), evs) })
	}
}

// BenchmarkEncodeGrowth: encoding must grow linearly with the history.
func BenchmarkEncodeGrowth(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		h := benchHistory(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Messages().Encode(h, provider.Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/msg")
		})
	}
}
