package anthropic

import (
	"errors"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

func mustEncode(t *testing.T, h convo.History, opts provider.Options) (string, []provider.Warning) {
	t.Helper()
	out, warns, err := Messages().Encode(h, opts)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return string(out), warns
}

func hasWarning(ws []provider.Warning, path, substr string) bool {
	for _, w := range ws {
		if w.Path == path && strings.Contains(w.Msg, substr) {
			return true
		}
	}
	return false
}

func TestEncodeOptions(t *testing.T) {
	call := convo.ToolCall("toolu_1", "f", []byte(`{}`))
	foreign := convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
		{Type: convo.TypeReasoning, Text: "plan", Signature: "sig", Provider: "bedrock"},
		convo.Text("Done."),
	}}
	tests := []struct {
		name     string
		h        convo.History
		opts     provider.Options
		want     string // substring of the output
		wantErr  string // substring of the error
		wantWarn string // substring of a warning
	}{
		{
			name:    "unpaired call is an error naming the call",
			h:       convo.History{convo.User("hi"), convo.Assistant("", call), convo.User("next")},
			wantErr: `messages[1].parts[0]: tool call "toolu_1" (f) has no result before messages[2]`,
		},
		{
			name:     "repair inserts an error result first in the next user turn",
			h:        convo.History{convo.User("hi"), convo.Assistant("", call), convo.User("next")},
			opts:     provider.Options{Repair: true},
			want:     `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"the tool was not run"}],"is_error":true},{"type":"text","text":"next"}]}`,
			wantWarn: "error result was inserted",
		},
		{
			name:    "orphan result is an error",
			h:       convo.History{convo.User("hi"), convo.ToolResults(convo.ToolResult("nope", "f", "x"))},
			wantErr: `tool result "nope" answers no call`,
		},
		{
			name:    "audio is an error by default",
			h:       convo.History{convo.User("listen", convo.Audio("audio/wav", []byte("RIFF")))},
			wantErr: "messages[0].parts[1]: the target cannot take audio (audio/wav) by inline data",
		},
		{
			name:     "audio becomes a placeholder when asked",
			h:        convo.History{convo.User("listen", convo.Audio("audio/wav", []byte("RIFF")))},
			opts:     provider.Options{Media: provider.MediaPlaceholder},
			want:     `{"type":"text","text":"[audio (audio/wav) by inline data omitted]"}`,
			wantWarn: "placeholder",
		},
		{
			name:    "an image type the API cannot read is an error",
			h:       convo.History{convo.User("see", convo.Image("image/bmp", []byte("BM")))},
			wantErr: "image (image/bmp)",
		},
		{
			name:    "a non-PDF document is an error",
			h:       convo.History{convo.User("see", convo.File("application/msword", "a.doc", []byte("x")))},
			wantErr: "file (application/msword)",
		},
		{
			name: "a resolver may turn a URL into something the API takes",
			h:    convo.History{convo.User("see", convo.Part{Type: convo.TypeVideo, MediaType: "video/mp4", URL: "https://x/v.mp4"})},
			opts: provider.Options{Resolve: func(p convo.Part) (convo.Part, error) {
				return convo.Text("a video of a cat"), nil
			}},
			want: `{"type":"text","text":"a video of a cat"}`,
		},
		{
			name:     "foreign signed reasoning is dropped, never faked",
			h:        convo.History{convo.User("hi"), foreign},
			want:     `{"role":"assistant","content":[{"type":"text","text":"Done."}]}`,
			wantWarn: "signed or encrypted reasoning from bedrock dropped",
		},
		{
			name:     "reasoning=text sends foreign reasoning as text",
			h:        convo.History{convo.User("hi"), foreign},
			opts:     provider.Options{Reasoning: provider.ReasoningText},
			want:     `{"role":"assistant","content":[{"type":"text","text":"plan"},{"type":"text","text":"Done."}]}`,
			wantWarn: "reasoning from bedrock sent as text",
		},
		{
			name:    "strict turns a warning into an error",
			h:       convo.History{convo.User("hi"), foreign},
			opts:    provider.Options{Strict: true},
			wantErr: "strict: messages[1].parts[0]: signed or encrypted reasoning from bedrock dropped",
		},
		{
			name:    "strict also covers the codec's own warnings",
			h:       convo.History{{Role: convo.RoleUser, Name: "bob", Parts: []convo.Part{convo.Text("hi")}}},
			opts:    provider.Options{Strict: true},
			wantErr: `strict: messages[0]: name "bob" not sent`,
		},
		{
			name:    "invalid UTF-8 is an error, never replaced",
			h:       convo.History{convo.User("bad \xff byte")},
			wantErr: "messages[0].parts[0]: invalid UTF-8",
		},
		{
			name:    "invalid JSON arguments are an error",
			h:       convo.History{convo.User("hi"), convo.Assistant("", convo.ToolCall("t", "f", []byte(`{"a":`))), convo.ToolResults(convo.ToolResult("t", "f", "ok"))},
			wantErr: "messages[1].parts[0]: invalid JSON",
		},
		{
			name:     "a later system message becomes user text",
			h:        convo.History{convo.System("S"), convo.User("hi"), convo.Assistant("yo"), convo.System("Now be formal."), convo.User("ok")},
			want:     `"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},{"role":"assistant","content":[{"type":"text","text":"yo"}]},{"role":"user","content":[{"type":"text","text":"Now be formal."},{"type":"text","text":"ok"}]}]`,
			wantWarn: "system message after the conversation started sent as user text",
		},
		{
			name: "json parts are sent as their JSON text",
			h:    convo.History{convo.User("", convo.JSON([]byte(`{"a": [1, 2]}`)))},
			want: `{"type":"text","text":"{\"a\":[1,2]}"}`,
		},
		{
			name: "four cache breakpoints are fine",
			h: convo.History{convo.System("s"), convo.User("", convo.Text("1").WithCache(""), convo.Text("2").WithCache(""), convo.Text("3").WithCache("1h"),
				convo.Text("4").WithCache(""))},
			opts: provider.Options{Strict: true},
			want: `{"type":"text","text":"4","cache_control":{"type":"ephemeral"}}`,
		},
		{
			name: "a fifth cache breakpoint is warned about",
			h: convo.History{convo.User("", convo.Text("1").WithCache(""), convo.Text("2").WithCache(""), convo.Text("3").WithCache("1h"),
				convo.Text("4").WithCache(""), convo.Text("5").WithCache(""))},
			want:     `{"type":"text","text":"5","cache_control":{"type":"ephemeral"}}`,
			wantWarn: "more than 4 cache breakpoints",
		},
		{
			name: "an empty history gives an empty messages array",
			h:    convo.History{},
			want: `{"messages":[]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, warns, err := Messages().Encode(tt.h, tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("output\n%s\nlacks\n%s", out, tt.want)
			}
			if !jsonx.Valid(out) {
				t.Errorf("output is not valid JSON: %s", out)
			}
			found := tt.wantWarn == ""
			for _, w := range warns {
				found = found || strings.Contains(w.Msg, tt.wantWarn)
			}
			if !found {
				t.Errorf("warnings %v lack %q", warns, tt.wantWarn)
			}
		})
	}
}

// TestToolIDs checks that ids are sanitised the same way for a call and its
// result, and that calls without ids get distinct, stable ones.
func TestToolIDs(t *testing.T) {
	h := convo.History{
		convo.User("go"),
		convo.Assistant("", convo.ToolCall("fc.1/a", "f", []byte(`{}`)), convo.ToolCall("", "g", []byte(`{}`)), convo.ToolCall("", "g", []byte(`{"n":2}`))),
		convo.ToolResults(convo.ToolResult("fc.1/a", "f", "F"), convo.Part{Type: convo.TypeToolResult, Name: "g", Parts: []convo.Part{convo.Text("G1")}},
			convo.Part{Type: convo.TypeToolResult, Name: "g", Parts: []convo.Part{convo.Text("G2")}}),
	}
	out, _ := mustEncode(t, h, provider.Options{})
	back, _, err := Messages().Decode([]byte(out), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	calls, results := back[1].ToolCalls(), back[2].ToolResults()
	if len(calls) != 3 || len(results) != 3 {
		t.Fatalf("got %d calls, %d results:\n%s", len(calls), len(results), out)
	}
	seen := map[string]bool{}
	for k := range calls {
		id := calls[k].ID
		if id != provider.SanitizeID(id, 0) || seen[id] {
			t.Errorf("call %d has id %q: not sanitised or not unique", k, id)
		}
		seen[id] = true
		if results[k].ID != id {
			t.Errorf("result %d answers %q, call has %q", k, results[k].ID, id)
		}
	}
	if calls[0].ID == "fc.1/a" {
		t.Errorf("id with '.' and '/' sent unsanitised")
	}
	if results[2].Parts[0].Text != "G2" || calls[2].Args == nil || string(calls[2].Args) != `{"n":2}` {
		t.Errorf("second call of g not paired with its own result")
	}
	again, _ := mustEncode(t, h, provider.Options{})
	if again != out {
		t.Errorf("ids are not deterministic")
	}
}

// TestWarningPaths checks that warnings name places in the caller's history
// even where Prepare removed messages and parts before them.
func TestWarningPaths(t *testing.T) {
	h := convo.History{
		convo.ErrorMessage("failed"), // dropped by Prepare
		convo.User("hi"),
		{Role: convo.RoleAssistant, Parts: []convo.Part{
			{Type: convo.TypeReasoning, Encrypted: "x", Provider: "openai"}, // dropped by Prepare
			convo.Refusal("no"),
		}},
		{Role: convo.RoleUser, Name: "eve", Parts: []convo.Part{
			{Type: convo.TypeAudio, MediaType: "audio/wav", Data: "UklG"}, // placeholder
			{Type: convo.TypeImage, MediaType: "image/png", Data: "iVBORw0KGgo=", Detail: "low"},
		}},
	}
	_, warns := mustEncode(t, h, provider.Options{Media: provider.MediaPlaceholder})
	for _, want := range []struct{ path, msg string }{
		{"messages[0]", "error message left out"},
		{"messages[2].parts[0]", "signed or encrypted reasoning from openai dropped"},
		{"messages[2].parts[1]", "refusal sent as assistant text"},
		{"messages[3]", `name "eve"`},
		{"messages[3].parts[0]", "placeholder"},
		{"messages[3].parts[1]", `image detail "low"`},
	} {
		if !hasWarning(warns, want.path, want.msg) {
			t.Errorf("no warning %q at %s in %v", want.msg, want.path, warns)
		}
	}
}

func TestSeparateTurnMarker(t *testing.T) {
	// Two user turns sent apart stay apart once decoded; the same history
	// built by hand is merged, as the API would merge it.
	body := `{"messages":[{"role":"user","content":[{"type":"text","text":"a"}]},{"role":"user","content":[{"type":"text","text":"b"}]}]}`
	h, _, err := Messages().Decode([]byte(body), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := mustEncode(t, h, provider.Options{})
	codectest.ExpectSameJSON(t, []byte(out), []byte(body))
	merged, _ := mustEncode(t, convo.History{convo.User("a"), convo.User("b")}, provider.Options{})
	want := `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`
	if merged != want {
		t.Errorf("got %s\nwant %s", merged, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"not an object", `[1]`, "want a JSON object"},
		{"empty", ``, "want a JSON object"},
		{"no messages", `{"model":"x"}`, `request has no "messages"`},
		{"messages not an array", `{"messages":{}}`, "messages: want an array of messages"},
		{"message not an object", `{"messages":[3]}`, "messages[0]: want a message object"},
		{"missing role", `{"messages":[{"content":"x"}]}`, `messages[0]: message has no "role"`},
		{"unknown role", `{"messages":[{"role":"robot","content":"x"}]}`, `messages[0].role: unknown role "robot"`},
		{"role not a string", `{"messages":[{"role":1,"content":"x"}]}`, `messages[0].role: want a string`},
		{"missing content", `{"messages":[{"role":"user"}]}`, `messages[0]: message has no "content"`},
		{"content a number", `{"messages":[{"role":"user","content":5}]}`, `messages[0].content: want a string or an array`},
		{"block not an object", `{"messages":[{"role":"user","content":["x"]}]}`, `messages[0].content[0]: want a content block object`},
		{"block without type", `{"messages":[{"role":"user","content":[{"text":"x"}]}]}`, `messages[0].content[0]: content block has no type`},
		{"text not a string", `{"messages":[{"role":"user","content":[{"type":"text","text":1}]}]}`, `messages[0].content[0].text: want a string`},
		{"text missing", `{"messages":[{"role":"user","content":[{"type":"text"}]}]}`, `messages[0].content[0]: text block has no "text"`},
		{"image without source", `{"messages":[{"role":"user","content":[{"type":"image"}]}]}`, `messages[0].content[0]: image block has no source`},
		{"source not an object", `{"messages":[{"role":"user","content":[{"type":"image","source":"x"}]}]}`, `messages[0].content[0].source: want an object`},
		{"bad base64", `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"ab$="}}]}]}`, `messages[0].content[1].source.data: malformed base64 at offset 2`},
		{"base64 without media type", `{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","data":"abcd"}}]}]}`, `messages[0].content[0].source: base64 source has no "media_type"`},
		{"url source without url", `{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"url"}}]}]}`, `messages[0].content[0].source: url source has no "url"`},
		{"tool_use without id", `{"messages":[{"role":"assistant","content":[{"type":"tool_use","name":"f","input":{}}]}]}`, `messages[0].content[0]: tool_use block has no "id"`},
		{"tool_result without id", `{"messages":[{"role":"user","content":[{"type":"tool_result","content":"x"}]}]}`, `messages[0].content[0]: tool_result block has no "tool_use_id"`},
		{"tool_result content a number", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":3}]}]}`, `messages[0].content[0].content: want a string or an array`},
		{"bad block inside a tool result", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"url"}}]}]}]}`, `messages[0].content[0].content[0].source: url source has no "url"`},
		{"is_error not a boolean", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","is_error":"yes"}]}]}`, `messages[0].content[0].is_error: want a boolean`},
		{"signature not a string", `{"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"x","signature":5}]}]}`, `messages[0].content[0].signature: want a string`},
		{"redacted without data", `{"messages":[{"role":"assistant","content":[{"type":"redacted_thinking"}]}]}`, `messages[0].content[0]: redacted_thinking block has no "data"`},
		{"system a number", `{"system":1,"messages":[]}`, `system: want a string or an array of text blocks`},
		{"bad system block", `{"system":[{"type":"text"}],"messages":[]}`, `system[0]: text block has no "text"`},
		{"duplicate key", `{"messages":[{"role":"user","role":"user","content":"x"}]}`, `messages[0]: duplicate key "role"`},
		{"duplicate block key", `{"messages":[{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}]}`, `duplicate key "text"`},
		{"invalid UTF-8", "{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}", `messages[0].content: invalid UTF-8`},
		{"trailing data", `{"messages":[]} x`, "unexpected data after the JSON value"},
		{"truncated", `{"messages":[{"role":"user","content":[{"type":"text","text":"a"}`, "unexpected end of input"},
		{"too deep", `{"messages":[{"role":"user","content":[{"type":"tool_use","id":"t","name":"f","input":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}]}]}`, "nesting deeper than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Messages().Decode([]byte(tt.body), provider.Options{})
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to contain %q", err, tt.want)
			}
			if strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("error spans several lines: %q", err)
			}
		})
	}
}

func TestDecodeLimits(t *testing.T) {
	body := `{"messages":[{"role":"user","content":"` + strings.Repeat("a", 1000) + `"}]}`
	_, _, err := Messages().Decode([]byte(body), provider.Options{Limits: convo.Limits{MaxBytes: 100}})
	if !errors.Is(err, jsonx.ErrTooLarge) {
		t.Errorf("error = %v, want ErrTooLarge", err)
	}
	deep := `{"messages":[{"role":"user","content":[{"type":"tool_use","id":"t","name":"f","input":[[[[1]]]]}]}]}`
	if _, _, err := Messages().Decode([]byte(deep), provider.Options{Limits: convo.Limits{MaxDepth: 6}}); err == nil {
		t.Errorf("depth limit not applied")
	}
	if _, _, err := Messages().Decode([]byte(deep), provider.Options{}); err != nil {
		t.Errorf("default limits: %v", err)
	}
}

func TestDecodeError_IsDecodeError(t *testing.T) {
	_, _, err := Messages().Decode([]byte(`{"messages":[{"role":"user","content":[{"type":"text"}]}]}`), provider.Options{})
	var de *convo.DecodeError
	if !errors.As(err, &de) || de.Path != "messages[0].content[0]" {
		t.Errorf("error %v: want a *convo.DecodeError at messages[0].content[0], got %+v", err, de)
	}
}

func TestNames(t *testing.T) {
	c := Messages()
	if c.Name() != "anthropic" || c.Provider() != "anthropic" {
		t.Errorf("Name/Provider = %q/%q", c.Name(), c.Provider())
	}
}
