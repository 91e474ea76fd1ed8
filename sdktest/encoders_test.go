package sdktest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
	"github.com/openai/openai-go/v3"
	ossestream "github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// sdkSeen is what a client reads of a reply: text, tool calls ("id name
// args"; Gemini's SDK gives ids only when set) and output tokens.
type sdkSeen struct {
	Text   string
	Calls  []string
	Output int64
}

func seenOf(m convo.Message) sdkSeen {
	s := sdkSeen{Text: textOf(m), Calls: gwCalls(m)}
	if m.Usage != nil {
		s.Output = m.Usage.Output
	}
	return s
}

// recordedDeltas reads every complete recorded stream of every format into
// deltas, with the message it folds to.
func recordedDeltas(t *testing.T) map[string]struct {
	ds []provider.Delta
	m  convo.Message
} {
	t.Helper()
	out := map[string]struct {
		ds []provider.Delta
		m  convo.Message
	}{}
	for _, s := range []struct{ format, glob string }{
		{"anthropic", "anthropic/testdata/reply/*.sse"},
		{"openai-chat", "openai/testdata/replies/chat/*.sse"},
		{"openai-responses", "openai/testdata/replies/responses/*.sse"},
		{"gemini", "gemini/testdata/replies/*.sse"},
	} {
		files, _ := filepath.Glob(filepath.Join("..", "provider", s.glob))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rc, _ := all.Lookup(s.format)
			dr := provider.NewDeltaReader(rc.NewAccumulator(provider.Options{}))
			var ds []provider.Delta
			for _, ev := range sseEvents(data) {
				if ds, err = dr.Add(ds, ev); err != nil {
					break
				}
			}
			ds, m, _, err := dr.Finish(ds)
			if err != nil {
				continue // failed streams are the encoders' error events, tested in package provider
			}
			out[s.format+"/"+filepath.Base(f)] = struct {
				ds []provider.Delta
				m  convo.Message
			}{ds, m}
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d recorded streams", len(out))
	}
	return out
}

// sseEvents splits an SSE stream into events (comment lines dropped).
func sseEvents(data []byte) []provider.Event {
	var evs []provider.Event
	for _, block := range bytes.Split(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n")), []byte("\n\n")) {
		var ev provider.Event
		for _, line := range bytes.Split(block, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte("event: ")); ok {
				ev.Type = string(v)
			} else if v, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				ev.Data = append(ev.Data, v...)
			}
		}
		if len(ev.Data) > 0 && string(ev.Data) != "[DONE]" {
			evs = append(evs, ev)
		}
	}
	return evs
}

func encodeDeltas(t *testing.T, format string, ds []provider.Delta) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc, err := all.NewStreamEncoder(format, &buf, provider.StreamOptions{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if err := enc.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestStreamEncodersSDKAccumulators: every recorded stream of every
// format, written by each stream encoder, is read by that provider's
// official SDK — openai-go's ChatCompletionAccumulator, its Responses
// events, anthropic-sdk-go's Message.Accumulate, genai's stream — to the
// text, tool calls and usage the recorded stream holds.
func TestStreamEncodersSDKAccumulators(t *testing.T) {
	for name, rec := range recordedDeltas(t) {
		want := seenOf(rec.m)
		t.Run(name+"->openai-chat", func(t *testing.T) {
			var acc openai.ChatCompletionAccumulator
			for _, ev := range sseEvents(encodeDeltas(t, "openai-chat", rec.ds)) {
				var chunk openai.ChatCompletionChunk
				if err := json.Unmarshal(ev.Data, &chunk); err != nil {
					t.Fatal(err)
				}
				if !acc.AddChunk(chunk) {
					t.Fatalf("refused %s", ev.Data)
				}
			}
			got := sdkSeen{Text: acc.Choices[0].Message.Content, Output: acc.Usage.CompletionTokens}
			for _, c := range acc.Choices[0].Message.ToolCalls {
				got.Calls = append(got.Calls, c.ID+" "+c.Function.Name+" "+canon(c.Function.Arguments))
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("\n got %+v\nwant %+v", got, want)
			}
		})
		t.Run(name+"->openai-responses", func(t *testing.T) {
			data := encodeDeltas(t, "openai-responses", rec.ds)
			res := &http.Response{Body: io.NopCloser(bytes.NewReader(data)), Header: http.Header{"Content-Type": {"text/event-stream"}}}
			st := ossestream.NewStream[responses.ResponseStreamEventUnion](ossestream.NewDecoder(res), nil)
			var got sdkSeen
			var final *responses.Response
			for st.Next() {
				if ev := st.Current(); ev.Type == "response.completed" || ev.Type == "response.incomplete" {
					r := ev.Response
					final = &r
				}
			}
			if err := st.Err(); err != nil || final == nil {
				t.Fatalf("%v %v", err, final != nil)
			}
			got.Text, got.Output = final.OutputText(), final.Usage.OutputTokens
			for _, it := range final.Output {
				if it.Type == "function_call" {
					got.Calls = append(got.Calls, it.CallID+" "+it.Name+" "+canon(it.Arguments.OfString))
				}
			}
			w := want
			w.Text = textAndRefusal(rec.m, false)
			if !reflect.DeepEqual(got, w) {
				t.Fatalf("\n got %+v\nwant %+v", got, w)
			}
		})
		t.Run(name+"->anthropic", func(t *testing.T) {
			data := encodeDeltas(t, "anthropic", rec.ds)
			res := &http.Response{Body: io.NopCloser(bytes.NewReader(data)), Header: http.Header{"Content-Type": {"text/event-stream"}}}
			st := ssestream.NewStream[anthropic.MessageStreamEventUnion](ssestream.NewDecoder(res), nil)
			var msg anthropic.Message
			for st.Next() {
				if err := msg.Accumulate(st.Current()); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.Err(); err != nil {
				t.Fatal(err)
			}
			got := sdkSeen{Output: msg.Usage.OutputTokens}
			for _, b := range msg.Content {
				switch b.Type {
				case "text":
					got.Text += b.Text
				case "tool_use":
					got.Calls = append(got.Calls, b.ID+" "+b.Name+" "+canon(string(b.Input)))
				}
			}
			w := want
			w.Text = textAndRefusal(rec.m, true)
			if !reflect.DeepEqual(got, w) {
				t.Fatalf("\n got %+v\nwant %+v", got, w)
			}
		})
		t.Run(name+"->gemini", func(t *testing.T) {
			data := encodeDeltas(t, "gemini", rec.ds)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Write(data)
			}))
			defer srv.Close()
			c, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}})
			if err != nil {
				t.Fatal(err)
			}
			var got sdkSeen
			for resp, err := range c.Models.GenerateContentStream(context.Background(), "m", genai.Text("x"), nil) {
				if err != nil {
					t.Fatal(err)
				}
				if resp.UsageMetadata != nil {
					got.Output = int64(resp.UsageMetadata.CandidatesTokenCount + resp.UsageMetadata.ThoughtsTokenCount)
				}
				if len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
					continue
				}
				for _, p := range resp.Candidates[0].Content.Parts {
					switch {
					case p.FunctionCall != nil:
						b, _ := json.Marshal(p.FunctionCall.Args)
						got.Calls = append(got.Calls, p.FunctionCall.ID+" "+p.FunctionCall.Name+" "+canon(string(b)))
					case !p.Thought:
						got.Text += p.Text
					}
				}
			}
			w := want
			w.Text = textAndRefusal(rec.m, true)
			if !reflect.DeepEqual(got, w) {
				t.Fatalf("\n got %+v\nwant %+v", got, w)
			}
		})
	}
}

// textAndRefusal is the visible text of formats that carry a refusal as
// text (withRefusal) or apart (Responses: OutputText leaves it out).
func textAndRefusal(m convo.Message, withRefusal bool) string {
	var s string
	for _, p := range m.Parts {
		if p.Type == convo.TypeText || withRefusal && p.Type == convo.TypeRefusal {
			s += p.Text
		}
	}
	return s
}
