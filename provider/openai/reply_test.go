package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// replyCodecs are the two reply codecs with their fixture directories.
var replyCodecs = []struct {
	dir   string
	codec provider.ReplyCodec
}{
	{"chat", Chat()},
	{"responses", Responses()},
}

// TestReplies decodes every recorded reply in testdata/replies/<format>
// (name.json, read whole) and its stream (name.sse): the accumulated message
// must equal the decoded one, and both match the golden file.
func TestReplies(t *testing.T) {
	for _, c := range replyCodecs {
		for _, file := range glob(t, filepath.Join("testdata", "replies", c.dir, "*.json")) {
			base := strings.TrimSuffix(file, ".json")
			t.Run(c.dir+"/"+filepath.Base(base), func(t *testing.T) {
				body := readFile(t, file)
				m, warns, err := c.codec.DecodeReply(body, provider.Options{})
				codectest.Golden(t, base+".golden", replyReport(t, m, warns, err))
				if err != nil {
					return
				}
				sse := readFile(t, base+".sse")
				got, swarns, err := c.codec.ReadStream(bytes.NewReader(sse), provider.Options{})
				if err != nil {
					t.Fatalf("ReadStream: %v", err)
				}
				if !got.Equal(m) {
					t.Errorf("streamed message differs from the reply read whole:\n%s", codectest.LineDiff(msgJSON(t, m), msgJSON(t, got)))
				}
				if len(swarns) != len(warns) {
					t.Errorf("stream warnings %v, reply warnings %v", swarns, warns)
				}

				// Event by event, with a snapshot after each: the same result.
				acc := c.codec.NewAccumulator(provider.Options{})
				src := stream.NewSSE(bytes.NewReader(sse))
				for {
					ev, err := src.Next()
					if err != nil {
						break
					}
					if err := acc.Add(ev); err != nil {
						t.Fatal(err)
					}
					snap := acc.Snapshot()
					if snap.Role != convo.RoleAssistant {
						t.Fatalf("snapshot role %q", snap.Role)
					}
				}
				final, _, err := acc.Message()
				if err != nil || !final.Equal(m) {
					t.Errorf("event by event: %v\n%s", err, codectest.LineDiff(msgJSON(t, m), msgJSON(t, final)))
				}
			})
		}
	}
}

func msgJSON(t testing.TB, m convo.Message) string {
	t.Helper()
	b, err := convo.AppendMessage(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func replyReport(t testing.TB, m convo.Message, warns []provider.Warning, err error) []byte {
	t.Helper()
	var doc []byte
	if m.Role != "" {
		var e error
		doc, e = convo.AppendMessage(nil, m)
		if e != nil {
			t.Fatal(e)
		}
		doc = append(doc, '\n')
	}
	var b bytes.Buffer
	b.Write(doc)
	if err != nil {
		b.WriteString("error: " + err.Error() + "\n")
	}
	for _, w := range warns {
		b.WriteString("warning: " + w.String() + "\n")
	}
	return b.Bytes()
}

// TestBrokenStreams covers streams that end badly: an error event keeps the
// partial message and carries the provider's message; a cut-off stream is
// an provider.ErrIncomplete with what arrived.
func TestBrokenStreams(t *testing.T) {
	for _, c := range []struct {
		name    string
		codec   provider.ReplyCodec
		file    string
		want    string // error text
		partial string // text of the partial message
		api     bool   // an *provider.APIError
	}{
		{"chat error event", Chat(), "chat/error.stream", "openai: The server had an error while processing your request. (server_error)", "The answer is", true},
		{"chat cut off", Chat(), "chat/cutoff.stream", "the stream was cut off after 3 chunks", "The answer is 4", false},
		{"chat empty", Chat(), "chat/empty.stream", "the stream held no chunk", "", false},
		{"responses error event", Responses(), "responses/error.stream", "openai: Rate limit reached (rate_limit_exceeded)", "Partial ans", true},
		{"responses failed", Responses(), "responses/failed.stream", "openai: The model crashed (server_error)", "Half", true},
		{"responses cut off", Responses(), "responses/cutoff.stream", "before its terminal response event", "Half an answ", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := readFile(t, filepath.Join("testdata", "replies", c.file))
			m, _, err := c.codec.ReadStream(bytes.NewReader(data), provider.Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
			var ae *provider.APIError
			if errors.As(err, &ae) != c.api {
				t.Errorf("APIError: %v, want %v", errors.As(err, &ae), c.api)
			}
			if !c.api && !errors.Is(err, provider.ErrIncomplete) {
				t.Errorf("not provider.ErrIncomplete: %v", err)
			}
			if m.Text() != c.partial {
				t.Errorf("partial text %q, want %q", m.Text(), c.partial)
			}
		})
	}
}

// TestReplyReplays checks that a decoded reply goes back to its API as the
// same conversation items: Responses output items become the next request's
// input items unchanged; a Chat reply message becomes the assistant message
// of the next request, without the response-only fields.
func TestReplyReplays(t *testing.T) {
	for _, file := range glob(t, filepath.Join("testdata", "replies", "responses", "*.json")) {
		body := readFile(t, file)
		m, _, err := Responses().DecodeReply(body, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		h := convo.History{m}
		for _, p := range m.ToolCalls() {
			h = append(h, convo.ToolResults(convo.ToolResult(p.ID, p.Name, "ok")))
		}
		out, warns, err := Responses().Encode(h, provider.Options{})
		if err != nil || len(warns) > 0 {
			t.Fatalf("%s: %v %v", file, err, warns)
		}
		var resp struct{ Output []json.RawMessage }
		var req struct{ Input []json.RawMessage }
		if err := json.Unmarshal(body, &resp); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &req); err != nil {
			t.Fatal(err)
		}
		if len(req.Input) != len(resp.Output)+len(m.ToolCalls()) {
			t.Fatalf("%s: %d items for %d output items:\n%s", file, len(req.Input), len(resp.Output), out)
		}
		for i := range resp.Output {
			sameJSON(t, filepath.Base(file)+" "+itoa(i), req.Input[i], resp.Output[i])
		}
	}
	for _, c := range []struct{ file, want string }{
		{"tools.json", `{"role":"assistant","content":null,"refusal":null,"tool_calls":[
			{"id":"call_Paris","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
			{"id":"call_Oslo","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Oslo\", \"unit\": \"c\"}"}}]}`},
		{"reasoning.json", `{"role":"assistant","content":"Paris is 18 °C.\nOslo is 9 °C.","refusal":null,"reasoning_content":"Both lookups came back; compare them.\n"}`},
		{"audio.json", `{"role":"assistant","content":null,"refusal":null,"audio":{"id":"audio_68a"}}`},
	} {
		m, _, err := Chat().DecodeReply(readFile(t, filepath.Join("testdata", "replies", "chat", c.file)), provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		h := convo.History{convo.User("q"), m}
		if m.HasToolCalls() {
			for _, p := range m.ToolCalls() {
				h = append(h, convo.ToolResults(convo.ToolResult(p.ID, p.Name, "ok")))
			}
		}
		out, _, err := Chat().Encode(h, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var req struct{ Messages []json.RawMessage }
		if err := json.Unmarshal(out, &req); err != nil {
			t.Fatal(err)
		}
		sameJSON(t, c.file, req.Messages[1], []byte(c.want))
	}
}

func TestReplyErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		codec provider.ReplyCodec
		body  string
		want  string
	}{
		{"chat error body", Chat(), `{"error":{"message":"Invalid API key","type":"invalid_request_error","code":"invalid_api_key"}}`, "openai: Invalid API key (invalid_api_key)"},
		{"chat no choices", Chat(), `{"id":"c","choices":[]}`, "reply has no choice with index 0"},
		{"chat choices object", Chat(), `{"choices":{}}`, "choices: want an array of choices"},
		{"chat choice no message", Chat(), `{"choices":[{"index":0}]}`, `choices[0]: choice has no "message"`},
		{"chat bad message", Chat(), `{"choices":[{"index":0,"message":{"role":"assistant","content":5}}]}`, "choices[0].message.content: want a string"},
		{"chat user message", Chat(), `{"choices":[{"index":0,"message":{"role":"user","content":"x"}}]}`, `choices[0].message: role "user", want assistant`},
		{"chat not json", Chat(), `{"choices":[`, "choices[0]: unexpected end of input"},
		{"chat negative usage", Chat(), `{"choices":[{"index":0,"message":{"role":"assistant","content":"x"}}],"usage":{"prompt_tokens":-1}}`, "usage.prompt_tokens: negative token count"},
		{"responses failed", Responses(), `{"id":"r","status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}`, "openai: boom (server_error)"},
		{"responses error body", Responses(), `{"error":{"message":"No such model","type":"invalid_request_error"}}`, "openai: No such model (invalid_request_error)"},
		{"responses not a response", Responses(), `{"object":"list"}`, "not a response object"},
		{"responses bad item", Responses(), `{"id":"r","status":"completed","output":[{"type":"function_call","name":"f","arguments":"{}"}]}`, `output[0]: function call has no "call_id"`},
		{"responses output object", Responses(), `{"id":"r","output":{}}`, "output: want an array of items"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := c.codec.DecodeReply([]byte(c.body), provider.Options{})
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
	// A failed response still gives the message it has, with Finish error.
	m, _, err := Responses().DecodeReply([]byte(`{"id":"r","status":"failed","error":{"code":"server_error","message":"boom"},"output":[{"type":"message","role":"assistant","content":"Half"}]}`), provider.Options{})
	if err == nil || m.Finish != convo.FinishError || m.Text() != "Half" {
		t.Errorf("failed response: %v %q %q", err, m.Finish, m.Text())
	}
}

func TestFinishReasons(t *testing.T) {
	for _, c := range []struct {
		reason string
		calls  bool
		want   convo.Finish
	}{
		{"stop", false, convo.FinishStop}, {"stop", true, convo.FinishToolUse}, {"length", false, convo.FinishLength},
		{"tool_calls", true, convo.FinishToolUse}, {"function_call", true, convo.FinishToolUse},
		{"content_filter", false, convo.FinishContentFilter}, {"insufficient_system_resource", false, convo.FinishOther},
	} {
		if got := chatFinish(c.reason, c.calls); got != c.want {
			t.Errorf("chat %q: %q, want %q", c.reason, got, c.want)
		}
	}
	for _, c := range []struct {
		status, details string
		calls           bool
		want            convo.Finish
	}{
		{"completed", "", false, convo.FinishStop}, {"completed", "", true, convo.FinishToolUse},
		{"incomplete", `{"reason":"max_output_tokens"}`, false, convo.FinishLength},
		{"incomplete", `{"reason":"content_filter"}`, false, convo.FinishContentFilter},
		{"incomplete", `{"reason":"other"}`, false, convo.FinishOther},
		{"failed", "", false, convo.FinishError}, {"cancelled", "", false, convo.FinishOther}, {"in_progress", "", false, ""},
	} {
		var d []byte
		if c.details != "" {
			d = []byte(c.details)
		}
		if got := respFinish(c.status, d, c.calls); got != c.want {
			t.Errorf("responses %q %s: %q, want %q", c.status, c.details, got, c.want)
		}
	}
}

func feed(t *testing.T, acc provider.Accumulator, events ...string) {
	t.Helper()
	for _, e := range events {
		if err := acc.Add(provider.Event{Data: []byte(e)}); err != nil {
			t.Fatalf("%v\n%s", err, e)
		}
	}
}

// TestResponsesOverride checks the hard cases of a Responses stream: the
// output_item.done copy replaces what the deltas built (text and the
// encrypted reasoning payload), a .done text replaces its deltas, and items
// without a done copy are rebuilt from their deltas.
func TestResponsesOverride(t *testing.T) {
	acc := Responses().NewAccumulator(provider.Options{})
	feed(t, acc,
		`{"type":"response.created","response":{"id":"r","status":"in_progress","model":"m","output":[]}}`,
		`{"type":"response.output_item.added","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"partial"}}`,
		`{"type":"response.reasoning_summary_text.delta","output_index":0,"summary_index":0,"delta":"thinking"}`,
		`{"type":"response.output_item.added","output_index":1,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","output_index":1,"content_index":0,"delta":"draft"}`,
	)
	snap := acc.Snapshot()
	if snap.Text() != "draft" || len(snap.Parts) != 2 || snap.Parts[0].Encrypted != "partial" || snap.Parts[0].Summary[0] != "thinking" {
		t.Fatalf("snapshot: %s", msgJSON(t, snap))
	}
	if snap.Finish != "" {
		t.Errorf("unfinished snapshot has finish %q", snap.Finish)
	}
	feed(t, acc,
		`{"type":"response.output_text.done","output_index":1,"content_index":0,"text":"final text"}`,
	)
	if got := acc.Snapshot().Text(); got != "final text" {
		t.Errorf(".done text did not replace the deltas: %q", got)
	}
	feed(t, acc,
		`{"type":"response.output_item.done","output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"Thinking, done."}],"encrypted_content":"FULL"}}`,
		`{"type":"response.output_item.added","output_index":2,"item":{"id":"fc_1","type":"function_call","call_id":"c1","name":"f","arguments":""}}`,
		`{"type":"response.function_call_arguments.delta","output_index":2,"delta":"{\"a\":"}`,
		`{"type":"response.function_call_arguments.delta","output_index":2,"delta":"1}"}`,
		`{"type":"response.completed","response":{"id":"r","status":"completed","model":"m","output":null,"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}}`,
	)
	m, warns, err := acc.Message()
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	want := `{"role":"assistant","origin":{"provider":"openai","model":"m","response_id":"r"},"usage":{"input":1,"output":2,"total":3},"finish":"tool_use","parts":[` +
		`{"type":"reasoning","id":"rs_1","summary":["Thinking, done."],"encrypted":"FULL","provider":"openai"},` +
		`{"type":"text","text":"final text"},` +
		`{"type":"tool_call","id":"c1","name":"f","args":{"a":1},"native":{"openai":{"id":"fc_1"}}}],` +
		`"native":{"openai":{"type":"message","id":"msg_1","status":"in_progress","response":{"status":"completed"}}}}`
	if got := msgJSON(t, m); got != want {
		t.Errorf("final message:\n got %s\nwant %s", got, want)
	}
}

func TestChatAccumulatorCases(t *testing.T) {
	acc := Chat().NewAccumulator(provider.Options{})
	feed(t, acc,
		`{"id":"a","model":"m","created":1,"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"}},{"index":1,"delta":{"content":"other choice"}}]}`,
		`{"id":"a","choices":[{"delta":{"tool_calls":[{"index":-1,"id":"c1","type":"function","function":{"name":"f","arguments":"{\"x\""}}]},"index":0}]}`,
		`{"id":"b","choices":[{"index":0,"delta":{"content":"lo","tool_calls":[{"index":-1,"function":{"arguments":":1}"}}]}}]}`,
	)
	if got := acc.Snapshot().Text(); got != "Hello" {
		t.Errorf("snapshot text %q", got)
	}
	if _, _, err := acc.Message(); !errors.Is(err, provider.ErrIncomplete) {
		t.Errorf("no finish reason yet: %v", err)
	}
	feed(t, acc, `{"id":"a","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, `[DONE]`, `{"id":"a","choices":[]}`)
	m, warns, err := acc.Message()
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 3 {
		t.Errorf("want warnings for the other choice, the other id and data after [DONE]: %v", warns)
	}
	calls := m.ToolCalls()
	if m.Text() != "Hello" || len(calls) != 1 || string(calls[0].Args) != `{"x":1}` || m.Finish != convo.FinishToolUse {
		t.Errorf("message: %s", msgJSON(t, m))
	}
	// Strict makes the warnings an error.
	strict := Chat().NewAccumulator(provider.Options{Strict: true})
	feed(t, strict, `{"id":"a","choices":[{"index":1,"delta":{"content":"x"}},{"index":0,"delta":{"content":"y"},"finish_reason":"stop"}]}`)
	var se *provider.StrictError
	if _, _, err := strict.Message(); !errors.As(err, &se) {
		t.Errorf("strict: %v", err)
	}
}

func TestStreamLimits(t *testing.T) {
	for _, c := range replyCodecs {
		acc := c.codec.NewAccumulator(provider.Options{Limits: convo.Limits{MaxBytes: 64}})
		big := provider.Event{Data: []byte(`{"type":"response.output_text.delta","delta":"` + strings.Repeat("x", 100) + `"}`)}
		if err := acc.Add(big); err == nil || !strings.Contains(err.Error(), "more than 64 bytes") {
			t.Errorf("%s: %v", c.dir, err)
		}
		if _, _, err := acc.Message(); err == nil {
			t.Errorf("%s: message after the limit without error", c.dir)
		}
	}
	acc := Responses().NewAccumulator(provider.Options{})
	feed(t, acc, `{"type":"response.created","response":{"id":"r","status":"in_progress"}}`, `{"type":"session.update"}`,
		`{"type":"response.completed","response":{"id":"r","status":"completed","output":[]}}`)
	if _, warns, err := acc.Message(); err != nil || len(warns) != 1 || !strings.Contains(warns[0].Msg, "session.update") {
		t.Errorf("unknown event: %v %v", warns, err)
	}
	for _, bad := range []string{`{"type":"response.output_text.delta","output_index":-1,"delta":"x"}`, `{"delta":"x"}`, `not json`, `{"type":"response.completed"}`} {
		acc := Responses().NewAccumulator(provider.Options{})
		if err := acc.Add(provider.Event{Data: []byte(bad)}); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// TestResponsesTerminalMerge: a terminal response.completed whose output is
// empty or partial (as some compatible servers and proxies send it) loses
// nothing the events streamed; the terminal copy of an item is preferred.
func TestResponsesTerminalMerge(t *testing.T) {
	stream := string(codectest.ReadFile(t, "testdata/replies/responses/tools.sse"))
	whole, _, err := Responses().ReadStream(strings.NewReader(stream), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// withOutput returns the stream with the terminal response's output
	// changed by edit.
	withOutput := func(edit func([]any) []any) string {
		var out []string
		for _, line := range strings.Split(stream, "\n") {
			if rest, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(rest, `"type":"response.completed"`) {
				var ev map[string]any
				if err := json.Unmarshal([]byte(rest), &ev); err != nil {
					t.Fatal(err)
				}
				resp := ev["response"].(map[string]any)
				resp["output"] = edit(resp["output"].([]any))
				b, _ := json.Marshal(ev)
				line = "data: " + string(b)
			}
			out = append(out, line)
		}
		return strings.Join(out, "\n")
	}
	read := func(s string) convo.Message {
		t.Helper()
		m, _, err := Responses().ReadStream(strings.NewReader(s), provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	if n := len(whole.Parts); n < 3 {
		t.Fatalf("fixture has %d parts, want several items", n)
	}
	for name, edit := range map[string]func([]any) []any{
		"empty":        func([]any) []any { return []any{} },
		"last only":    func(o []any) []any { return o[len(o)-1:] },
		"first only":   func(o []any) []any { return o[:1] },
		"out of order": func(o []any) []any { return append(o[1:len(o):len(o)], o[0]) },
	} {
		if got := read(withOutput(edit)); !got.Equal(whole) {
			t.Errorf("%s terminal output: got %s\nwant %s", name, codectest.MessageJSON(t, got), codectest.MessageJSON(t, whole))
		}
	}
	// The terminal copy wins where it has one.
	got := read(withOutput(func(o []any) []any {
		for _, it := range o {
			item := it.(map[string]any)
			if item["type"] == "function_call" {
				item["arguments"] = `{"city":"Terminal"}`
				return []any{item}
			}
		}
		t.Fatal("no function_call in the fixture")
		return nil
	}))
	if !strings.Contains(string(codectest.MessageJSON(t, got)), `"Terminal"`) || len(got.Parts) != len(whole.Parts) {
		t.Errorf("terminal copy not preferred: %s", codectest.MessageJSON(t, got))
	}
}
