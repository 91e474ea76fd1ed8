package bedrock

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

func warnStrings(ws []provider.Warning) []string {
	out := []string{}
	for _, w := range ws {
		out = append(out, w.String())
	}
	return out
}

// TestRoundTrip decodes every request in testdata/requests, checks the
// history is valid and matches its golden canonical form, and encodes it
// back to the same system and messages.
func TestRoundTrip(t *testing.T) {
	files := codectest.Files(t, "testdata/requests/*.json")
	for _, f := range files {
		if strings.HasSuffix(f, ".convo.json") {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			body := codectest.ReadFile(t, f)
			h, warns, err := converse{}.Decode(body, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) > 0 {
				t.Errorf("decode warnings: %v", warns)
			}
			if err := h.Validate(); err != nil {
				t.Errorf("decoded history is not valid: %v", err)
			}
			canon, err := convo.Marshal(h)
			if err != nil {
				t.Fatal(err)
			}
			codectest.Golden(t, strings.TrimSuffix(f, ".json")+".convo.json", canon)

			// The canonical form reloads to the same history.
			back, err := convo.Unmarshal(canon)
			if err != nil {
				t.Fatal(err)
			}
			if !back.Equal(h) {
				t.Error("canonical reload differs")
			}
			out, warns, err := converse{}.Encode(back, provider.Options{Strict: true})
			if err != nil {
				t.Fatalf("encode: %v (warnings %v)", err, warns)
			}
			if !codectest.SameJSON(t, out, codectest.Members(t, body, "system", "messages")) {
				t.Errorf("round trip differs:\ngot  %s\nwant %s", out, codectest.Members(t, body, "system", "messages"))
			}
		})
	}
}

// TestEncode encodes the canonical histories of testdata/encode with
// various options and compares body, warnings and error with golden files.
func TestEncode(t *testing.T) {
	resolve := func(p convo.Part) (convo.Part, error) {
		if p.URL == "https://example.com/cat.png" {
			return convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: "iVBORw0KGgo="}, nil
		}
		return p, nil
	}
	cases := []struct {
		file, variant string
		opts          provider.Options
	}{
		{"alternation", "", provider.Options{}},
		{"starts_with_assistant", "", provider.Options{}},
		{"foreign_reasoning", "", provider.Options{}},
		{"foreign_reasoning", "text", provider.Options{Reasoning: provider.ReasoningText}},
		{"foreign_reasoning", "strict", provider.Options{Strict: true}},
		{"media", "", provider.Options{}},
		{"media_url", "", provider.Options{}},
		{"media_url", "placeholder", provider.Options{Media: provider.MediaPlaceholder}},
		{"media_url", "resolver", provider.Options{Media: provider.MediaPlaceholder, Resolve: resolve}},
		{"tool_ids", "", provider.Options{}},
		{"unpaired", "", provider.Options{}},
		{"unpaired", "repair", provider.Options{Repair: true}},
		{"misc", "", provider.Options{}},
	}
	for _, c := range cases {
		name := c.file
		if c.variant != "" {
			name += "." + c.variant
		}
		t.Run(name, func(t *testing.T) {
			h := codectest.History(t, filepath.Join("testdata/encode", c.file+".convo.json"))
			before, _ := convo.Marshal(h)
			body, warns, err := converse{}.Encode(h, c.opts)
			after, _ := convo.Marshal(h)
			if !bytes.Equal(before, after) {
				t.Error("Encode modified its history")
			}
			type result struct {
				Body     json.RawMessage `json:"body,omitempty"`
				Warnings []string        `json:"warnings"`
				Error    string          `json:"error,omitempty"`
			}
			r := result{Body: body, Warnings: warnStrings(warns)}
			if err != nil {
				r.Error = err.Error()
			} else {
				checkShape(t, body)
				again, _, err := converse{}.Encode(h, c.opts)
				if err != nil || !bytes.Equal(again, body) {
					t.Error("encoding is not deterministic")
				}
			}
			got, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			codectest.Golden(t, filepath.Join("testdata/encode", name+".golden"), codectest.Indent(t, got, "  "))
		})
	}
}

// checkShape checks what Bedrock requires of every request: messages
// alternate and start with user, no content array is empty, every block
// is a union of one member, tool ids fit, every toolResult answers a
// toolUse of the assistant message before it.
func checkShape(t codectest.TB, body []byte) {
	t.Helper()
	var req struct {
		System   []map[string]json.RawMessage `json:"system"`
		Messages []struct {
			Role    string                       `json:"role"`
			Content []map[string]json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	if req.System != nil && len(req.System) == 0 {
		t.Errorf("empty system array")
	}
	for i, b := range req.System {
		if len(b) != 1 {
			t.Errorf("system[%d] has %d members", i, len(b))
		}
	}
	var calls map[string]bool
	for i, m := range req.Messages {
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if m.Role != want {
			t.Errorf("messages[%d].role = %q, want %q", i, m.Role, want)
		}
		if len(m.Content) == 0 {
			t.Errorf("messages[%d] has no content", i)
		}
		next := map[string]bool{}
		for j, b := range m.Content {
			if len(b) != 1 {
				t.Errorf("messages[%d].content[%d] has %d members", i, j, len(b))
			}
			var id struct {
				ToolUseID *string `json:"toolUseId"`
				Type      string  `json:"type"`
			}
			if raw, ok := b["toolUse"]; ok {
				json.Unmarshal(raw, &id)
				if id.ToolUseID == nil || !validID(*id.ToolUseID) {
					t.Errorf("messages[%d].content[%d]: bad toolUseId %v", i, j, id.ToolUseID)
				} else if id.Type != "server_tool_use" {
					next[*id.ToolUseID] = true
				}
			}
			if raw, ok := b["toolResult"]; ok && m.Role == "user" {
				json.Unmarshal(raw, &id)
				if id.ToolUseID == nil || !calls[*id.ToolUseID] {
					t.Errorf("messages[%d].content[%d]: toolResult %v answers no call of the message before", i, j, id.ToolUseID)
				}
			}
		}
		calls = next
	}
}

func validID(id string) bool {
	if id == "" || len(id) > MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(isAlnum(c) || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func TestEncodeEmpty(t *testing.T) {
	for _, h := range []convo.History{nil, {convo.System("only a system prompt")}} {
		body, warns, err := converse{}.Encode(h, provider.Options{Strict: true})
		if err != nil || len(warns) > 0 {
			t.Fatalf("%v %v", err, warns)
		}
		if !json.Valid(body) || !bytes.Contains(body, []byte(`"messages":[]`)) {
			t.Errorf("body %s", body)
		}
	}
}

func TestEncodeInvalid(t *testing.T) {
	tests := []struct {
		name string
		h    convo.History
		want string
	}{
		{"invalid UTF-8", convo.History{convo.User("bad \xff")}, "messages[0].content[0]: invalid UTF-8"},
		{"invalid UTF-8 in system", convo.History{convo.System("bad \xff"), convo.User("x")}, "system[0]: invalid UTF-8"},
		{"invalid args", convo.History{convo.User("x"),
			convo.Assistant("", convo.ToolCall("t1", "f", json.RawMessage(`{"a":`))),
			convo.ToolResults(convo.ToolResult("t1", "f", "ok"))},
			"messages[1].content[0]: toolUse.input: invalid JSON"},
		{"raw line break in invalid args", convo.History{convo.User("x"),
			convo.Assistant("", convo.ToolCall("t1", "f", json.RawMessage("{\"a\":\"\\\n\"}"))),
			convo.ToolResults(convo.ToolResult("t1", "f", "ok"))},
			`messages[1].content[0]: toolUse.input: invalid JSON: invalid escape "\\\n" in string`},
		{"invalid json result", convo.History{convo.User("x"),
			convo.Assistant("", convo.ToolCall("t1", "f", nil)),
			convo.ToolResults(convo.ToolResultParts("t1", "f", convo.JSON(json.RawMessage(`[1,`))))},
			"messages[2].content[0]: toolResult.content[0]: invalid JSON"},
		{"tool call from the user", convo.History{{Role: convo.RoleUser, Parts: []convo.Part{convo.ToolCall("t1", "f", nil)}}},
			"messages[0].parts[0]: tool_call in a user message"},
		{"tool result from the assistant", convo.History{convo.User("x"), {Role: convo.RoleAssistant, Parts: []convo.Part{convo.ToolResult("t1", "f", "x")}}},
			"messages[1].parts[0]: tool_result in an assistant message"},
		{"reasoning in a tool result", convo.History{convo.User("x"),
			convo.Assistant("", convo.ToolCall("t1", "f", nil)),
			convo.ToolResults(convo.ToolResultParts("t1", "f", convo.Reasoning("hm")))},
			"messages[2].parts[0].parts[0]: reasoning part in a tool result"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := converse{}.Encode(tt.h, provider.Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestEncodeStrict(t *testing.T) {
	h := convo.History{convo.User("hi"), {Role: convo.RoleAssistant, Parts: []convo.Part{convo.Refusal("no")}}}
	_, warns, err := converse{}.Encode(h, provider.Options{Strict: true})
	var se *provider.StrictError
	if !errors.As(err, &se) || len(warns) != 1 || !strings.Contains(se.Error(), "refusal sent as text") {
		t.Fatalf("got %v, %v", err, warns)
	}
}

// TestEncodeSniffsImageFormat: an image without a MIME type is sent with
// the format its magic number says; one of no format Bedrock takes cannot
// be sent.
func TestEncodeSniffsImageFormat(t *testing.T) {
	for _, tc := range []struct{ data, want string }{
		{"iVBORw0KGgoAAAANSUhEUg==", `"format":"png"`},
		{"/9j/4AAQSkZJRg==", `"format":"jpeg"`},
		{"R0lGODlhAQABAIAAAA==", `"format":"gif"`},
		{"UklGRhoAAABXRUJQVlA4IA==", `"format":"webp"`},
		{"UklGRhoAAABXQVZFZm10IA==", ""}, // a WAV file
	} {
		h := convo.History{convo.User("look", convo.Part{Type: convo.TypeImage, Data: tc.data})}
		body, _, err := converse{}.Encode(h, provider.Options{})
		if tc.want == "" {
			if err == nil || !strings.Contains(err.Error(), "messages[0].parts[1]: the target cannot take image") {
				t.Errorf("%s: got %v, %s; want an error", tc.data, err, body)
			}
			continue
		}
		if err != nil || !bytes.Contains(body, []byte(tc.want)) {
			t.Errorf("%s: got %v, %s; want %s", tc.data, err, body, tc.want)
		}
	}
}
