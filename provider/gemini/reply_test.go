package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestReplies decodes recorded replies: the non-streamed body against a
// golden message, and the same reply streamed — as SSE, read one byte at a
// time, and as the JSON array streamGenerateContent sends without alt=sse —
// must give exactly the same message.
func TestReplies(t *testing.T) {
	files := codectest.Files(t, "testdata/replies/*.sse")
	for _, file := range files {
		name := strings.TrimSuffix(file, ".sse")
		t.Run(filepath.Base(name), func(t *testing.T) {
			body := codectest.ReadFile(t, name+".json")
			want, warns, err := GenerateContent().DecodeReply(body, provider.Options{})
			if err != nil || len(warns) > 0 {
				t.Fatalf("DecodeReply: %v %v", err, warns)
			}
			codectest.Golden(t, name+".convo.json", codectest.MessageJSON(t, want))

			sse := codectest.ReadFile(t, file)
			array := append([]byte("[\n"), bytes.Join(codectest.SSEData(sse), []byte(",\n"))...)
			array = append(array, "\n]\n"...)
			for _, in := range []struct {
				name string
				r    io.Reader
			}{
				{"sse", bytes.NewReader(sse)},
				{"sse one byte at a time", iotest.OneByteReader(bytes.NewReader(sse))},
				{"json array", bytes.NewReader(array)},
			} {
				got, warns, err := GenerateContent().ReadStream(in.r, provider.Options{})
				if err != nil || len(warns) > 0 {
					t.Fatalf("%s: %v %v", in.name, err, warns)
				}
				if !got.Equal(want) {
					t.Errorf("%s: streamed message differs\n got: %s\nwant: %s", in.name, codectest.MessageJSON(t, got), codectest.MessageJSON(t, want))
				}
			}
		})
	}
}

// TestRepliesReplay: a decoded reply, put in a history and encoded for
// Gemini again, sends back the parts the model produced — each signature on
// its part, no invented ids.
func TestRepliesReplay(t *testing.T) {
	for _, name := range []string{"thinking", "tools", "signed", "media", "safety", "length", "recitation"} {
		t.Run(name, func(t *testing.T) {
			body := codectest.ReadFile(t, "testdata/replies/"+name+".json")
			m, _, err := GenerateContent().ReadStream(bytes.NewReader(codectest.ReadFile(t, "testdata/replies/"+name+".sse")), provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			out, _, err := GenerateContent().Encode(convo.History{convo.User("q"), m}, provider.Options{Repair: true})
			if err != nil {
				t.Fatal(err)
			}
			var req struct {
				Contents []struct {
					Parts json.RawMessage `json:"parts"`
				} `json:"contents"`
			}
			var resp struct {
				Candidates []struct {
					Content struct {
						Parts json.RawMessage `json:"parts"`
					} `json:"content"`
				} `json:"candidates"`
			}
			if err := json.Unmarshal(out, &req); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(body, &resp); err != nil {
				t.Fatal(err)
			}
			var got, want any
			json.Unmarshal(req.Contents[1].Parts, &got)
			json.Unmarshal(resp.Candidates[0].Content.Parts, &want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("replayed parts differ\n got: %s\nwant: %s", req.Contents[1].Parts, resp.Candidates[0].Content.Parts)
			}
		})
	}
}

func TestReplyFinish(t *testing.T) {
	tests := []struct {
		reason  string
		toolUse bool
		blocked bool
		want    convo.Finish
	}{
		{"STOP", false, false, convo.FinishStop},
		{"STOP", true, false, convo.FinishToolUse},
		{"MAX_TOKENS", false, false, convo.FinishLength},
		{"SAFETY", false, false, convo.FinishContentFilter},
		{"RECITATION", false, false, convo.FinishContentFilter},
		{"BLOCKLIST", false, false, convo.FinishContentFilter},
		{"PROHIBITED_CONTENT", false, false, convo.FinishContentFilter},
		{"SPII", false, false, convo.FinishContentFilter},
		{"IMAGE_SAFETY", false, false, convo.FinishContentFilter},
		{"MALFORMED_FUNCTION_CALL", false, false, convo.FinishOther},
		{"UNEXPECTED_TOOL_CALL", true, false, convo.FinishOther},
		{"TOO_MANY_TOOL_CALLS", true, false, convo.FinishOther},
		{"LANGUAGE", false, false, convo.FinishOther},
		{"OTHER", false, false, convo.FinishOther},
		{"SOMETHING_NEW", false, false, convo.FinishOther},
		{"", false, true, convo.FinishContentFilter},
		{"", false, false, ""},
	}
	for _, tt := range tests {
		if got := finish(tt.reason, tt.toolUse, tt.blocked); got != tt.want {
			t.Errorf("finish(%q, %v, %v) = %q, want %q", tt.reason, tt.toolUse, tt.blocked, got, tt.want)
		}
	}
}

func TestReplyUsage(t *testing.T) {
	m, _, err := GenerateContent().DecodeReply(codectest.ReadFile(t, "testdata/replies/tools.json"), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// input = prompt + tool-use prompt; output = candidates + thoughts.
	want := convo.Usage{Input: 125, Output: 58, CacheRead: 100, Reasoning: 40, Total: 183}
	if *m.Usage != want {
		t.Errorf("usage %+v, want %+v", *m.Usage, want)
	}
	if m.Origin == nil || *m.Origin != (convo.Origin{Provider: "gemini", Model: "gemini-3-flash", ResponseID: "resp-tools-7"}) {
		t.Errorf("origin %+v", m.Origin)
	}
	calls := m.ToolCalls()
	if len(calls) != 2 || calls[0].ID == calls[1].ID || calls[0].ID == "" {
		t.Errorf("synthesised ids: %+v", calls)
	}
	// The same call in another reply gets another id.
	other := bytes.Replace(codectest.ReadFile(t, "testdata/replies/tools.json"), []byte("resp-tools-7"), []byte("resp-tools-8"), 1)
	m2, _, err := GenerateContent().DecodeReply(other, provider.Options{})
	if err != nil || m2.ToolCalls()[0].ID == calls[0].ID {
		t.Errorf("ids repeat across replies: %v", err)
	}
}

func TestDecodeReplyErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"api error", `{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}`, "gemini: Resource has been exhausted (429 RESOURCE_EXHAUSTED)"},
		{"not JSON", `{"candidates":[`, "response: candidates[0]: unexpected end of input"},
		{"not an object", `[]`, "response: got array, want a JSON object"},
		{"no candidates", `{"modelVersion":"m"}`, "response has no candidate"},
		{"bad part", `{"candidates":[{"content":{"parts":[{"text":1}]}}]}`, "response: candidates[0].content.parts[0].text: got number, want string"},
		{"bad usage", `{"candidates":[],"usageMetadata":{"promptTokenCount":-1}}`, "response: usageMetadata.promptTokenCount: negative token count -1"},
		{"bad index", `{"candidates":[{"index":"0"}]}`, "response: candidates[0].index: got string, want number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := GenerateContent().DecodeReply([]byte(tt.body), provider.Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
	_, _, err := GenerateContent().DecodeReply([]byte(`{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}`), provider.Options{})
	var ae *provider.APIError
	if !errors.As(err, &ae) || ae.Provider != ProviderID || ae.Status != 400 || ae.Type != "INVALID_ARGUMENT" {
		t.Errorf("APIError: %#v", err)
	}
}

// TestReplyCandidates: only the first candidate is the reply; the others
// are reported, in either order they come.
func TestReplyCandidates(t *testing.T) {
	body := `{"candidates":[{"content":{"parts":[{"text":"second"}]},"index":1,"finishReason":"MAX_TOKENS"},{"content":{"parts":[{"text":"first"}]},"finishReason":"STOP"}]}`
	m, warns, err := GenerateContent().DecodeReply([]byte(body), provider.Options{})
	if err != nil || m.Text() != "first" || m.Finish != convo.FinishStop || !strings.Contains(string(codectest.WarningText(warns)), "1 candidates besides the first left out") {
		t.Errorf("got %q %q %v %v", m.Text(), m.Finish, warns, err)
	}
	sse := "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\"}]}},{\"content\":{\"parts\":[{\"text\":\"x\"}]},\"index\":1}]}\n\n" +
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"y\"}]},\"index\":1}]}\n\n" +
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"b\"}]},\"finishReason\":\"STOP\"}]}\n\n"
	m, warns, err = GenerateContent().ReadStream(strings.NewReader(sse), provider.Options{})
	if err != nil || m.Text() != "ab" || len(warns) != 1 {
		t.Errorf("stream: got %q %v %v", m.Text(), warns, err)
	}
}

// TestStreamError: an error event mid-stream ends the stream with the
// provider's message, and the partial message is still there.
func TestStreamError(t *testing.T) {
	sse := "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Partial an\"}]}}],\"responseId\":\"r\"}\n\n" +
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"swer\"}]}}]}\n\n" +
		"data: {\"error\":{\"code\":503,\"message\":\"The model is overloaded. Please try again later.\",\"status\":\"UNAVAILABLE\"}}\n\n" +
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"never\"}]},\"finishReason\":\"STOP\"}]}\n\n"
	m, _, err := GenerateContent().ReadStream(strings.NewReader(sse), provider.Options{})
	var ae *provider.APIError
	if !errors.As(err, &ae) || ae.Message != "The model is overloaded. Please try again later." || !strings.Contains(err.Error(), "event 2") {
		t.Fatalf("got %v", err)
	}
	if m.Text() != "Partial answer" || m.Finish != convo.FinishError || !strings.Contains(string(m.Native["gemini"]), `"status":"UNAVAILABLE"`) {
		t.Errorf("partial message: %s", codectest.MessageJSON(t, m))
	}
}

// TestStreamTruncated: a stream cut before its finishReason — between
// events or inside one — is an error, with the partial message.
func TestStreamTruncated(t *testing.T) {
	full := string(codectest.ReadFile(t, "testdata/replies/thinking.sse"))
	cut := strings.Index(full, `data: {"candidates": [{"content": {"parts": [{"text": ""`)
	for _, in := range []string{full[:cut], full[:cut+40], ""} {
		m, _, err := GenerateContent().ReadStream(strings.NewReader(in), provider.Options{})
		if !errors.Is(err, provider.ErrIncomplete) {
			t.Errorf("got %v, want provider.ErrIncomplete", err)
		}
		if in != "" && !strings.HasPrefix(m.Text(), "Waves fold into silver light") {
			t.Errorf("partial message: %s", codectest.MessageJSON(t, m))
		}
	}
	// A read error is returned as it is, with the partial message.
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader(full[:cut]), iotest.ErrReader(boom))
	m, _, err := GenerateContent().ReadStream(r, provider.Options{})
	if !errors.Is(err, boom) || m.Text() == "" {
		t.Errorf("read error: %v %q", err, m.Text())
	}
}

func TestStreamBadChunk(t *testing.T) {
	acc := GenerateContent().NewAccumulator(provider.Options{})
	if err := acc.Add(provider.Event{Data: []byte(`{"candidates":[{"content":{"parts":[{"text":"ok"}]}}]}`)}); err != nil {
		t.Fatal(err)
	}
	err := acc.Add(provider.Event{Data: []byte(`{"candidates":[{"content":{"parts":[{"inlineData":{"data":"eA=="}}]}}]}`)})
	if err == nil || err.Error() != "chunk 1: candidates[0].content.parts[0].inlineData: inlineData has no mimeType" {
		t.Fatalf("got %v", err)
	}
	if err := acc.Add(provider.Event{Data: []byte(`{}`)}); err == nil {
		t.Error("Add after a failure must fail")
	}
	m, _, err := acc.Message()
	if err == nil || m.Text() != "ok" {
		t.Errorf("Message: %q %v", m.Text(), err)
	}
}

// TestSnapshot: a snapshot shows the text so far and is not changed by
// what arrives later.
func TestSnapshot(t *testing.T) {
	acc := GenerateContent().NewAccumulator(provider.Options{})
	add := func(s string) {
		t.Helper()
		if err := acc.Add(provider.Event{Data: []byte(s)}); err != nil {
			t.Fatal(err)
		}
	}
	add(`{"candidates":[{"content":{"parts":[{"text":"Hello"}]}}]}`)
	s1 := acc.Snapshot()
	add(`{"candidates":[{"content":{"parts":[{"text":", world"}]}}]}`)
	s2 := acc.Snapshot()
	add(`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f"}}]},"finishReason":"STOP"}]}`)
	m, _, err := acc.Message()
	if err != nil {
		t.Fatal(err)
	}
	if s1.Text() != "Hello" || s2.Text() != "Hello, world" || len(s2.Parts) != 1 || len(m.Parts) != 2 || m.Finish != convo.FinishToolUse {
		t.Errorf("s1 %q, s2 %q (%d parts), final %s", s1.Text(), s2.Text(), len(s2.Parts), codectest.MessageJSON(t, m))
	}
	if s := acc.Snapshot(); !s.Equal(m) {
		t.Error("snapshot after the end differs from the message")
	}
}

// TestStreamedArgs: a functionCall streamed in pieces (partialArgs) shows
// its arguments so far in every snapshot, and malformed pieces fail with
// the place named.
func TestStreamedArgs(t *testing.T) {
	chunk := func(fc string) provider.Event {
		return provider.Event{Data: []byte(`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":` + fc + `}]},"index":0}]}`)}
	}
	acc := GenerateContent().NewAccumulator(provider.Options{})
	for _, fc := range []string{
		`{"name":"search","willContinue":true}`,
		`{"partialArgs":[{"jsonPath":"$.q","stringValue":"conv","willContinue":true}],"willContinue":true}`,
	} {
		if err := acc.Add(chunk(fc)); err != nil {
			t.Fatal(err)
		}
	}
	// A snapshot shows the arguments so far as the JSON text they begin
	// with, as other providers stream them.
	if p := acc.Snapshot().Parts[0]; p.ArgsRaw != `{"q":"conv` || p.Args != nil {
		t.Errorf("snapshot args %s / %q", p.Args, p.ArgsRaw)
	}
	if err := acc.Add(chunk(`{"partialArgs":[{"jsonPath":"$.q","stringValue":"o"}]}`)); err != nil {
		t.Fatal(err)
	}
	if err := acc.Add(provider.Event{Data: []byte(`{"candidates":[{"content":{"role":"model","parts":[{"text":"x"}]},"finishReason":"STOP","index":0}]}`)}); err != nil {
		t.Fatal(err)
	}
	m, warns, err := acc.Message()
	if err != nil || len(warns) != 0 || string(m.Parts[0].Args) != `{"q":"convo"}` || m.Parts[0].Name != "search" {
		t.Fatalf("message %+v, %v, %v", m.Parts, warns, err)
	}

	// Never closed: kept as it stood, with a warning.
	acc = GenerateContent().NewAccumulator(provider.Options{})
	_ = acc.Add(chunk(`{"name":"f","willContinue":true}`))
	_ = acc.Add(chunk(`{"partialArgs":[{"jsonPath":"$.a","numberValue":1}],"willContinue":true}`))
	_ = acc.Add(provider.Event{Data: []byte(`{"candidates":[{"finishReason":"STOP","index":0}]}`)})
	m, warns, err = acc.Message()
	if err != nil || string(m.Parts[0].Args) != `{"a":1}` || len(warns) != 1 || !strings.Contains(warns[0].String(), `streamed functionCall "f" never closed`) {
		t.Errorf("unclosed: %s %v %v", m.Parts[0].Args, warns, err)
	}

	for _, tt := range []struct {
		name   string
		pieces []string
		want   string
	}{
		{"piece without a call", []string{`{"partialArgs":[{"jsonPath":"$.a","numberValue":1}]}`}, "functionCall has no name and no streamed call is open"},
		{"no path", []string{`{"name":"f","willContinue":true}`, `{"partialArgs":[{"numberValue":1}]}`}, "partialArgs[0]: partial argument has no jsonPath"},
		{"two values", []string{`{"name":"f","willContinue":true}`, `{"partialArgs":[{"jsonPath":"$.a","numberValue":1,"boolValue":true}]}`}, "has 2 values, want one"},
		{"bad path", []string{`{"name":"f","willContinue":true}`, `{"partialArgs":[{"jsonPath":"a.b","numberValue":1}]}`}, `jsonPath "a.b" does not start with $`},
		{"huge index", []string{`{"name":"f","willContinue":true}`, `{"partialArgs":[{"jsonPath":"$.a[99999999]","numberValue":1}]}`}, "bad index"},
		{"object then array", []string{`{"name":"f","willContinue":true}`, `{"partialArgs":[{"jsonPath":"$.a.b","numberValue":1},{"jsonPath":"$.a[0]","numberValue":2}]}`}, "$.a[0]: the path needs an object"},
		{"through a value", []string{`{"name":"f","willContinue":true}`, `{"partialArgs":[{"jsonPath":"$.a","numberValue":1},{"jsonPath":"$.a.b","numberValue":2}]}`}, "the path goes through a value"},
		{"second call while open", []string{`{"name":"f","willContinue":true}`, `{"name":"g"}`}, `call "g" began before the streamed call "f" was closed`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			acc := GenerateContent().NewAccumulator(provider.Options{})
			var err error
			for _, p := range tt.pieces {
				if err = acc.Add(chunk(p)); err != nil {
					break
				}
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "parts[0].functionCall") {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
	// A request's functionCall still needs its name.
	if _, _, err := GenerateContent().Decode([]byte(`{"contents":[{"role":"model","parts":[{"functionCall":{"partialArgs":[]}}]}]}`), provider.Options{}); err == nil || !strings.Contains(err.Error(), "functionCall has no name") {
		t.Errorf("request decode: %v", err)
	}
}
