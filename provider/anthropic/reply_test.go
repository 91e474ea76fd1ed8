package anthropic

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestStreamEqualsReply reads each captured stream and the equivalent
// non-streamed response: the accumulated message must equal the decoded
// one, and both match a golden canonical message.
func TestStreamEqualsReply(t *testing.T) {
	files, _ := filepath.Glob("testdata/reply/*.json")
	var n int
	for _, f := range files {
		if strings.HasSuffix(f, ".convo.json") {
			continue
		}
		n++
		name := strings.TrimSuffix(f, ".json")
		t.Run(filepath.Base(name), func(t *testing.T) {
			body := codectest.ReadFile(t, f)
			want, warns, err := Messages().DecodeReply(body, provider.Options{})
			if err != nil || len(warns) > 0 {
				t.Fatalf("DecodeReply: %v %v", err, warns)
			}
			canon, err := convo.AppendMessage(nil, want)
			if err != nil {
				t.Fatal(err)
			}
			codectest.Golden(t, name+".convo.json", append(canon, '\n'))

			sse, err := os.Open(name + ".sse")
			if err != nil {
				t.Fatal(err)
			}
			defer sse.Close()
			got, warns, err := Messages().ReadStream(sse, provider.Options{})
			if err != nil {
				t.Fatalf("ReadStream: %v", err)
			}
			if len(warns) > 0 {
				t.Errorf("warnings: %v", warns)
			}
			if !got.Equal(want) {
				g, _ := convo.AppendMessage(nil, got)
				t.Errorf("streamed message differs\n got: %s\nwant: %s", g, canon)
			}
			// The reply goes back to Anthropic as the next request's
			// assistant turn, with its reasoning in place.
			h := convo.History{convo.User("q"), got}
			if got.HasToolCalls() {
				var results []convo.Part
				for _, c := range got.ToolCalls() {
					results = append(results, convo.ToolResult(c.ID, c.Name, "ok"))
				}
				h = append(h, convo.ToolResults(results...))
			}
			req, _, err := Messages().Encode(h, provider.Options{Strict: true})
			if err != nil {
				t.Fatalf("the reply cannot be sent back: %v", err)
			}
			// What describes the response stays out of the request.
			for _, key := range []string{`"stop_reason"`, `"usage"`, `"stop_details"`, `"service_tier"`, `"message"`} {
				if bytes.Contains(req, []byte(key)) {
					t.Errorf("request carries the reply's %s: %s", key, req)
				}
			}
			// The assistant turn goes back with its blocks as they came.
			back, _, err := Messages().Decode(req, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range back[1].Parts {
				q := got.Parts[i]
				q.Model = "" // a request does not say which model wrote a block
				if !p.Equal(q) {
					t.Errorf("part %d changed on the way back: %+v, want %+v", i, p, q)
				}
			}
		})
	}
	if n < 5 {
		t.Fatalf("only %d fixtures", n)
	}
}

func TestDecodeReplyFields(t *testing.T) {
	body := `{"id":"msg_9","type":"message","role":"assistant","model":"claude-x",
		"content":[{"type":"thinking","thinking":"hm","signature":"S"},{"type":"text","text":"Hi","citations":null}],
		"stop_reason":"max_tokens","stop_sequence":null,"container":{"id":"c1","expires_at":"2026-01-01T00:00:00Z"},
		"usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":100,"output_tokens":7,
			"output_tokens_details":{"thinking_tokens":3},"service_tier":"standard","inference_geo":null}}`
	m, _, err := Messages().DecodeReply([]byte(body), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Role != convo.RoleAssistant || m.Finish != convo.FinishLength {
		t.Errorf("role %q finish %q", m.Role, m.Finish)
	}
	if *m.Origin != (convo.Origin{Provider: "anthropic", Model: "claude-x", ResponseID: "msg_9"}) {
		t.Errorf("origin %+v", *m.Origin)
	}
	if *m.Usage != (convo.Usage{Input: 115, Output: 7, CacheRead: 100, CacheWrite: 5, Reasoning: 3}) {
		t.Errorf("usage %+v", *m.Usage)
	}
	if r := m.Parts[0]; r.Type != convo.TypeReasoning || r.Signature != "S" || r.Provider != "anthropic" || r.Model != "claude-x" {
		t.Errorf("reasoning part %+v", r)
	}
	if m.Parts[1].Native != nil {
		t.Errorf("null citations kept: %s", m.Parts[1].Native["anthropic"])
	}
	wantNative := `{"stop_reason":"max_tokens","container":{"id":"c1","expires_at":"2026-01-01T00:00:00Z"},"usage":{"output_tokens_details":{"thinking_tokens":3},"service_tier":"standard"}}`
	codectest.ExpectSameJSON(t, m.Native["anthropic"], []byte(wantNative))
}

func TestFinishReasons(t *testing.T) {
	for reason, want := range map[string]convo.Finish{
		"end_turn": convo.FinishStop, "stop_sequence": convo.FinishStop, "max_tokens": convo.FinishLength,
		"model_context_window_exceeded": convo.FinishLength, "tool_use": convo.FinishToolUse,
		"pause_turn": convo.FinishPause, "refusal": convo.FinishRefusal, "something_new": convo.FinishOther,
	} {
		body := `{"type":"message","role":"assistant","content":[],"stop_reason":"` + reason + `"}`
		m, _, err := Messages().DecodeReply([]byte(body), provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if m.Finish != want {
			t.Errorf("%s → %q, want %q", reason, m.Finish, want)
		}
		if !strings.Contains(string(m.Native["anthropic"]), `"stop_reason":"`+reason+`"`) {
			t.Errorf("%s: raw reason not kept: %s", reason, m.Native["anthropic"])
		}
	}
}

func TestDecodeReplyErrors(t *testing.T) {
	_, _, err := Messages().DecodeReply([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), provider.Options{})
	var apiErr *provider.APIError
	if !errors.As(err, &apiErr) || apiErr.Provider != ProviderID || apiErr.Type != "overloaded_error" || apiErr.Message != "Overloaded" {
		t.Errorf("error body: %v", err)
	}
	for _, tt := range []struct{ body, want string }{
		{`[]`, "want a message object"},
		{`{"type":"message","role":"user","content":[]}`, `role: want assistant, got "user"`},
		{`{"type":"completion"}`, `type: want message, got "completion"`},
		{`{"type":"message","content":[{"type":"text"}]}`, `content[0]: text block has no "text"`},
		{`{"type":"message","content":{}}`, "content: want an array of blocks"},
		{`{"type":"message","content":[],"usage":{"input_tokens":"x"}}`, "usage.input_tokens"},
		{`{"type":"message","content":[],"usage":{"output_tokens":-1}}`, "negative token count"},
		{`{"type":"message","content":[]} {}`, "unexpected data after the JSON value"},
	} {
		_, _, err := Messages().DecodeReply([]byte(tt.body), provider.Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.body, err, tt.want)
		}
	}
}

func readStream(t *testing.T, name string) (convo.Message, []provider.Warning, error) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "reply", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Messages().ReadStream(f, provider.Options{})
}

func TestStreamErrorEvent(t *testing.T) {
	m, _, err := readStream(t, "error_event.sse")
	var apiErr *provider.APIError
	if !errors.As(err, &apiErr) || apiErr.Message != "Overloaded" {
		t.Fatalf("error = %v, want the provider's message", err)
	}
	if m.Text() != "Partial ans" || m.Finish != convo.FinishError || m.Origin.ResponseID != "msg_06" {
		t.Errorf("partial message: text %q finish %q origin %+v", m.Text(), m.Finish, m.Origin)
	}
}

func TestStreamTruncated(t *testing.T) {
	m, _, err := readStream(t, "truncated.sse")
	if !errors.Is(err, provider.ErrIncomplete) {
		t.Fatalf("error = %v, want provider.ErrIncomplete", err)
	}
	if m.Text() != "Cut off" {
		t.Errorf("partial text %q", m.Text())
	}
	calls := m.ToolCalls()
	if len(calls) != 1 || calls[0].ArgsRaw != `{"a":` || calls[0].Args != nil {
		t.Errorf("partial tool call %+v", calls)
	}
	if _, _, err := Messages().ReadStream(strings.NewReader(""), provider.Options{}); err == nil ||
		!strings.Contains(err.Error(), "before message_start") {
		t.Errorf("empty stream: %v", err)
	}
}

const msgStart = `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"x","usage":{"input_tokens":1,"output_tokens":1}}}`

func feed(events ...string) (provider.Accumulator, error) {
	acc := Messages().NewAccumulator(provider.Options{})
	for _, e := range events {
		if err := acc.Add(provider.Event{Data: []byte(e)}); err != nil {
			return acc, err
		}
	}
	return acc, nil
}

func TestStreamBadEvents(t *testing.T) {
	textStart := `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	for _, tt := range []struct {
		name   string
		events []string
		want   string
	}{
		{"delta before message_start", []string{`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`}, "before message_start"},
		{"second message_start", []string{msgStart, msgStart}, "second message_start"},
		{"gap in indices", []string{msgStart, `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`}, "block index 1, want 0"},
		{"delta for a block not started", []string{msgStart, `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}`}, "block index 3, but 0 blocks started"},
		{"delta without index", []string{msgStart, textStart, `{"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}`}, `no "index"`},
		{"mismatched delta", []string{msgStart, textStart, `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}`}, "input_json_delta does not fit a text block"},
		{"signature on text", []string{msgStart, textStart, `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"s"}}`}, "signature_delta does not fit a text block"},
		{"delta after stop", []string{msgStart, textStart, `{"type":"content_block_stop","index":0}`, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`}, "already stopped"},
		{"text not a string", []string{msgStart, textStart, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":1}}`}, "delta.text: want a string"},
		{"bad block", []string{msgStart, `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","name":"f"}}`}, `content_block: tool_use block has no "id"`},
		{"not JSON", []string{msgStart, `{"type":`}, "unexpected end of input"},
		{"duplicate key", []string{msgStart, `{"type":"ping","type":"ping"}`}, `duplicate key "type"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := feed(tt.events...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestStreamWarnings(t *testing.T) {
	events := []string{msgStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"shiny_new_delta","x":1}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}`,
		`{"type":"brand_new_event","data":{}}`,
		`{"type":"message_stop"}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`}
	// Options.Strict turns those warnings into an error.
	strict := Messages().NewAccumulator(provider.Options{Strict: true})
	for _, e := range events {
		_ = strict.Add(provider.Event{Data: []byte(e)})
	}
	var se *provider.StrictError
	if _, _, err := strict.Message(); !errors.As(err, &se) {
		t.Errorf("strict: got %v, want a *provider.StrictError", err)
	}
	acc, err := feed(events...)
	if err != nil {
		t.Fatal(err)
	}
	m, warns, err := acc.Message()
	if err != nil {
		t.Fatal(err)
	}
	if m.Text() != "ok" || m.Finish != "" {
		t.Errorf("text %q finish %q", m.Text(), m.Finish)
	}
	var got []string
	for _, w := range warns {
		got = append(got, w.String())
	}
	for _, want := range []string{`unknown delta "shiny_new_delta" ignored`, `unknown event "brand_new_event" ignored`,
		"message_delta event after message_stop ignored", "content block 0: never stopped"} {
		if !strings.Contains(strings.Join(got, "\n"), want) {
			t.Errorf("warnings %q lack %q", got, want)
		}
	}
}

// TestStreamEventNames feeds events whose data has no "type": the SSE event
// name stands in for it.
func TestStreamEventNames(t *testing.T) {
	acc := Messages().NewAccumulator(provider.Options{})
	for _, ev := range []provider.Event{
		{Type: "message_start", Data: []byte(`{"message":{"id":"m","role":"assistant","content":[],"model":"x"}}`)},
		{Type: "content_block_start", Data: []byte(`{"index":0,"content_block":{"type":"text","text":""}}`)},
		{Type: "content_block_delta", Data: []byte(`{"index":0,"delta":{"type":"text_delta","text":"named"}}`)},
		{Type: "content_block_stop", Data: []byte(`{"index":0}`)},
		{Type: "message_stop", Data: []byte(`{}`)},
	} {
		if err := acc.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	m, _, err := acc.Message()
	if err != nil || m.Text() != "named" {
		t.Errorf("message %q, error %v", m.Text(), err)
	}
}

// TestSnapshot checks partial views while a reply streams in, and that
// taking them changes nothing.
func TestSnapshot(t *testing.T) {
	data := codectest.ReadFile(t, "testdata/reply/tool_use.sse")
	src := stream.NewSSE(bytes.NewReader(data))
	acc := Messages().NewAccumulator(provider.Options{})
	var texts []string
	for {
		ev, err := src.Next()
		if err != nil {
			break
		}
		if err := acc.Add(ev); err != nil {
			t.Fatal(err)
		}
		s := acc.Snapshot()
		texts = append(texts, s.Text())
		if calls := s.ToolCalls(); len(calls) == 1 && calls[0].ArgsRaw == `{"city": "Pa` && len(calls[0].Args) != 0 {
			t.Errorf("partial args shown as JSON")
		}
	}
	if !contains(texts, "Let me check ") || !contains(texts, "Let me check the weather.\n") {
		t.Errorf("snapshots %q lack the partial texts", texts)
	}
	m, _, err := acc.Message()
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := Messages().DecodeReply(codectest.ReadFile(t, "testdata/reply/tool_use.json"), provider.Options{})
	if !m.Equal(want) {
		t.Errorf("snapshots changed the final message")
	}
}

// TestStreamInvalidToolInput: a tool_use whose pieces do not make JSON
// keeps them as args_raw, with a warning.
func TestStreamInvalidToolInput(t *testing.T) {
	acc, err := feed(msgStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":1"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":5}}`,
		`{"type":"message_stop"}`)
	if err != nil {
		t.Fatal(err)
	}
	m, warns, err := acc.Message()
	if err != nil {
		t.Fatal(err)
	}
	c := m.Parts[0]
	if c.ArgsRaw != `{"a":1` || c.Args != nil || m.Finish != convo.FinishLength {
		t.Errorf("part %+v finish %q", c, m.Finish)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].Msg, "args_raw") {
		t.Errorf("warnings %v", warns)
	}
	// A tool_use without input pieces keeps the input it started with.
	acc, _ = feed(msgStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}}`,
		`{"type":"content_block_stop","index":0}`, `{"type":"message_stop"}`)
	m, _, _ = acc.Message()
	if string(m.Parts[0].Args) != "{}" {
		t.Errorf("args %s, want {}", m.Parts[0].Args)
	}
}

func TestStreamLimit(t *testing.T) {
	acc := Messages().NewAccumulator(provider.Options{Limits: convo.Limits{MaxBytes: 10}})
	evs := []string{msgStart, `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"0123456789abc"}}`}
	var err error
	for _, e := range evs {
		if err = acc.Add(provider.Event{Data: []byte(e)}); err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "more than 10 bytes") {
		t.Errorf("error %v", err)
	}
}

// TestStreamMessageStartContent: blocks message_start already holds come
// first, and the next block starts at the index after them.
func TestStreamMessageStartContent(t *testing.T) {
	acc, err := feed(
		`{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"x","content":[{"type":"text","text":"Prefilled "}]}}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"and streamed."}}`,
		`{"type":"content_block_stop","index":1}`,
		`{"type":"message_stop"}`)
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := acc.Message()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Parts) != 2 || m.Parts[0].Text != "Prefilled " || m.Parts[1].Text != "and streamed." {
		t.Errorf("parts %+v", m.Parts)
	}
}
