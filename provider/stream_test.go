package provider_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// encoded are the formats with a stream encoder, with the framing their
// streams use.
var encoded = []struct{ format, framing string }{
	{"openai-chat", "sse"},
	{"openai-responses", "sse"},
	{"anthropic", "sse"},
	{"gemini", "sse"},
	{"ollama", "ndjson"},
}

// view is what every format carries of a reply, and so what a stream
// encoder must keep whatever format the reply came from.
type view struct {
	Text, Reasoning string
	Calls           []viewCall
	Server          []string // provider-run tool parts: kind and type
	Input, Output   int64
	Finish          convo.Finish
}

type viewCall struct {
	ID, Name string
	Args     any
}

func viewOf(m convo.Message) view {
	var v view
	for _, p := range m.Parts {
		switch p.Type {
		case convo.TypeText, convo.TypeRefusal:
			v.Text += p.Text
		case convo.TypeReasoning:
			if p.Text != "" {
				v.Reasoning += p.Text
			} else {
				v.Reasoning += strings.Join(p.Summary, "\n\n")
			}
		case convo.TypeToolCall, convo.TypeToolResult:
			if p.Server != "" {
				v.Server = append(v.Server, p.Server+" "+string(p.Type))
				continue
			}
			if p.Type == convo.TypeToolResult {
				continue
			}
			var args any
			_ = json.Unmarshal(p.Args, &args)
			if p.Args == nil {
				args = p.ArgsRaw
			}
			v.Calls = append(v.Calls, viewCall{p.ID, p.Name, args})
		}
	}
	if m.Usage != nil {
		v.Input, v.Output = m.Usage.Input, m.Usage.Output
	}
	switch m.Finish {
	case convo.FinishStop, convo.FinishLength, convo.FinishToolUse:
		v.Finish = m.Finish
	}
	return v
}

// encode writes deltas with the format's encoder and reads the stream back
// with the same format's reader.
func encode(t *testing.T, format, framing string, ds []provider.Delta) ([]byte, convo.Message, error) {
	t.Helper()
	var buf bytes.Buffer
	enc, err := all.NewStreamEncoder(format, &buf, provider.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if err := enc.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	rc, err := all.Lookup(format)
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := stream.Feed(source(framing, bytes.NewReader(buf.Bytes())), rc.NewAccumulator(provider.Options{}))
	return buf.Bytes(), m, err
}

var replies = []convo.Message{
	{Role: convo.RoleAssistant, Parts: []convo.Part{convo.Text("Hello, «world» 😀\n\"quoted\"")},
		Usage: &convo.Usage{Input: 10, Output: 5}, Finish: convo.FinishStop},
	{Role: convo.RoleAssistant, Parts: []convo.Part{
		{Type: convo.TypeReasoning, Text: "Think about the weather.", Signature: "EqQBsig==", Provider: "anthropic"},
		convo.Text("I'll check."),
		convo.ToolCall("call_1", "get_weather", json.RawMessage(`{"city":"Paris","units":["c"]}`)),
		convo.ToolCall("call_2", "now", json.RawMessage(`{}`)),
	}, Usage: &convo.Usage{Input: 30, Output: 42, CacheRead: 8}, Finish: convo.FinishToolUse},
	{Role: convo.RoleAssistant, Parts: []convo.Part{convo.Text("cut")},
		Usage: &convo.Usage{Input: 3, Output: 1}, Finish: convo.FinishLength},
}

// TestStreamEncoders folds what each encoder writes for a reply back with
// the same format's accumulator and gets the reply.
func TestStreamEncoders(t *testing.T) {
	for _, f := range encoded {
		for i, m := range replies {
			_, got, err := encode(t, f.format, f.framing, provider.MessageDeltas(m))
			if err != nil {
				t.Fatalf("%s reply %d: %v", f.format, i, err)
			}
			if gv, wv := viewOf(got), viewOf(m); !reflect.DeepEqual(gv, wv) {
				t.Errorf("%s reply %d:\n got %+v\nwant %+v", f.format, i, gv, wv)
			}
		}
	}
}

// TestStreamTranscode reads every recorded stream of every format into
// deltas and writes them in every encoded format: the stream each writes
// folds back, with that format's accumulator, to the reply the recorded
// stream gave. A recorded stream that failed gives a stream that fails.
func TestStreamTranscode(t *testing.T) {
	eachStream(t, func(t *testing.T, s recordedStream) {
		dr := provider.NewDeltaReader(s.rc.NewAccumulator(provider.Options{}))
		ds, _ := readDeltas(dr, s.events())
		ds, want, _, wantErr := dr.Finish(ds)
		for _, f := range encoded {
			t.Run("->"+f.format, func(t *testing.T) {
				out, got, err := encode(t, f.format, f.framing, ds)
				if wantErr != nil {
					if err == nil {
						t.Fatalf("source failed (%v), the %s stream did not:\n%s", wantErr, f.format, out)
					}
					return
				}
				if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				// A stream carries the provider-run tools of its own
				// provider only (Anthropic's, OpenAI Responses', Gemini's).
				gv, wv := viewOf(got), viewOf(serverOf(want, carrier[f.format]))
				if wv.Finish == "" {
					gv.Finish = "" // a reason outside stop, length, tool use is mapped as near as the format allows
				}
				if f.format != s.format && f.format != "anthropic" && f.format != "openai-responses" && reasoningParts(want) > 1 {
					// One reasoning channel: interleaved blocks arrive in the order their pieces came.
					if len(gv.Reasoning) == len(wv.Reasoning) {
						gv.Reasoning = wv.Reasoning
					}
				}
				if !reflect.DeepEqual(gv, wv) {
					t.Errorf("\n got %+v\nwant %+v\n%s", gv, wv, out)
				}
				// The whole reply, not streamed, says the same.
				body, err := all.EncodeReply(f.format, want, provider.StreamOptions{})
				if err != nil {
					t.Fatal(err)
				}
				rc, _ := all.Lookup(f.format)
				plain, _, err := rc.DecodeReply(body, provider.Options{})
				if err != nil {
					t.Fatalf("reply: %v\n%s", err, body)
				}
				pv := viewOf(plain)
				if wv.Finish == "" {
					pv.Finish = ""
				}
				if reasoningParts(want) > 1 {
					pv.Reasoning = gv.Reasoning // as above: one channel in some formats
				}
				if !reflect.DeepEqual(pv, gv) {
					t.Errorf("reply:\n got %+v\nwant %+v\n%s", pv, gv, body)
				}
			})
		}
	})
}

// carrier names the provider whose provider-run tools a format's stream
// carries.
var carrier = map[string]string{"anthropic": "anthropic", "openai-responses": "openai", "gemini": "gemini"}

// serverOf returns m without the provider-run tool parts of providers
// other than own.
func serverOf(m convo.Message, own string) convo.Message {
	var ps []convo.Part
	for _, p := range m.Parts {
		if !p.IsServerTool() || (own != "" && p.Provider == own) {
			ps = append(ps, p)
		}
	}
	m.Parts = ps
	return m
}

func reasoningParts(m convo.Message) int {
	n := 0
	for _, p := range m.Parts {
		if p.Type == convo.TypeReasoning && p.Text != "" {
			n++
		}
	}
	return n
}
