package openai

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
)

// TestDecodeErrors feeds malformed or wrongly shaped bodies: each must give
// one error that starts with the place in the provider's terms.
func TestDecodeErrors(t *testing.T) {
	deep := `{"messages":[{"role":"user","content":"x","extra":` + strings.Repeat("[", 80) + strings.Repeat("]", 80) + `}]}`
	for _, c := range []struct {
		name  string
		codec provider.Codec
		body  string
		want  string // the error starts with it
	}{
		{"chat empty", Chat(), ``, "unexpected end of input"},
		{"chat not an object", Chat(), `[]`, "got array, want object"},
		{"chat no messages", Chat(), `{"model":"x"}`, `request has no "messages"`},
		{"chat messages object", Chat(), `{"messages":{}}`, "messages: want an array"},
		{"chat message number", Chat(), `{"messages":[1]}`, "messages[0]: want a message object"},
		{"chat no role", Chat(), `{"messages":[{"content":"x"}]}`, `messages[0]: message has no "role"`},
		{"chat unknown role", Chat(), `{"messages":[{"role":"wizard","content":"x"}]}`, `messages[0].role: unknown role "wizard"`},
		{"chat role number", Chat(), `{"messages":[{"role":1}]}`, `messages[0].role: got number, want string`},
		{"chat content number", Chat(), `{"messages":[{"role":"user","content":5}]}`, "messages[0].content: want a string, an array of parts or null"},
		{"chat part not object", Chat(), `{"messages":[{"role":"user","content":["x"]}]}`, "messages[0].content[0]: want a content part object"},
		{"chat part no type", Chat(), `{"messages":[{"role":"user","content":[{"text":"x"}]}]}`, `messages[0].content[0]: content part has no "type"`},
		{"chat text no text", Chat(), `{"messages":[{"role":"user","content":[{"type":"text"}]}]}`, `messages[0].content[0]: text part has no "text"`},
		{"chat image no object", Chat(), `{"messages":[{"role":"user","content":[{"type":"image_url"}]}]}`, `messages[0].content[0]: image_url part has no "image_url" object`},
		{"chat image no url", Chat(), `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"detail":"low"}}]}]}`, `messages[0].content[0].image_url: image_url has no "url"`},
		{"chat audio base64", Chat(), `{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"a$b=","format":"wav"}}]}]}`, "messages[0].content[0].input_audio.data: malformed base64 at offset 1"},
		{"chat file no source", Chat(), `{"messages":[{"role":"user","content":[{"type":"file","file":{"filename":"a.pdf"}}]}]}`, `messages[0].content[0].file: file has neither "file_id" nor "file_data"`},
		{"chat file data", Chat(), `{"messages":[{"role":"user","content":[{"type":"file","file":{"file_data":"not base64!"}}]}]}`, "messages[0].content[0].file.file_data: neither a base64 data URL nor base64"},
		{"chat tool no id", Chat(), `{"messages":[{"role":"tool","content":"x"}]}`, `messages[0]: tool message has no "tool_call_id"`},
		{"chat calls in user", Chat(), `{"messages":[{"role":"user","content":"x","tool_calls":[]}]}`, "messages[0].tool_calls: tool calls outside an assistant message"},
		{"chat calls object", Chat(), `{"messages":[{"role":"assistant","tool_calls":{}}]}`, "messages[0].tool_calls: want an array of tool calls"},
		{"chat call no id", Chat(), `{"messages":[{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{}"}}]}]}`, `messages[0].tool_calls[0]: tool call has no "id"`},
		{"chat call no name", Chat(), `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"arguments":"{}"}}]}]}`, `messages[0].tool_calls[0]: function has no "name"`},
		{"chat call no args", Chat(), `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f"}}]}]}`, `messages[0].tool_calls[0]: function has no "arguments"`},
		{"chat call no function", Chat(), `{"messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function"}]}]}`, `messages[0].tool_calls[0]: function tool call has no "function" object`},
		{"chat call no type", Chat(), `{"messages":[{"role":"assistant","tool_calls":[{"id":"c"}]}]}`, `messages[0].tool_calls[0]: tool call has no "type"`},
		{"chat function_call no name", Chat(), `{"messages":[{"role":"assistant","function_call":{"arguments":"{}"}}]}`, `messages[0].function_call: function_call has no "name"`},
		{"chat duplicate key", Chat(), `{"messages":[{"role":"user","role":"user","content":"x"}]}`, `messages[0]: duplicate key "role"`},
		{"chat invalid utf8", Chat(), "{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}", "messages[0].content: invalid UTF-8"},
		{"chat control char", Chat(), "{\"messages\":[{\"role\":\"user\",\"content\":\"a\x01\"}]}", "messages[0].content: control character in string"},
		{"chat trailing data", Chat(), `{"messages":[]} {}`, "unexpected data after the JSON value"},
		{"chat duplicate messages", Chat(), `{"messages":[],"messages":[]}`, `duplicate key "messages"`},
		{"chat too deep", Chat(), deep, "messages[0].extra: nesting deeper than"},
		{"chat bad member elsewhere", Chat(), `{"tools":[1,],"messages":[]}`, "invalid character"},

		{"responses empty object", Responses(), `{}`, `request has neither "input" nor "instructions"`},
		{"responses input number", Responses(), `{"input":5}`, "input: want a string or an array of items"},
		{"responses instructions number", Responses(), `{"instructions":5,"input":"x"}`, "instructions: got number, want string"},
		{"responses item string", Responses(), `{"input":["x"]}`, "input[0]: want an item object"},
		{"responses no type", Responses(), `{"input":[{"content":"x"}]}`, `input[0]: item has no "type"`},
		{"responses message no role", Responses(), `{"input":[{"type":"message","content":"x"}]}`, `input[0]: message has no "role"`},
		{"responses message no content", Responses(), `{"input":[{"role":"user"}]}`, `input[0]: message has no "content"`},
		{"responses unknown role", Responses(), `{"input":[{"role":"wizard","content":"x"}]}`, `input[0].role: unknown role "wizard"`},
		{"responses part no type", Responses(), `{"input":[{"role":"user","content":[{"text":"x"}]}]}`, `input[0].content[0]: content part has no "type"`},
		{"responses text no text", Responses(), `{"input":[{"content":[{"type":"input_text"}],"role":"user"}]}`, `input[0].content[0]: text part has no "text"`},
		{"responses image no source", Responses(), `{"input":[{"role":"user","content":[{"type":"input_image","detail":"low"}]}]}`, `input[0].content[0]: input_image has neither "image_url" nor "file_id"`},
		{"responses file no source", Responses(), `{"input":[{"role":"user","content":[{"type":"input_file"}]}]}`, `input[0].content[0]: input_file has none of`},
		{"responses file data", Responses(), `{"input":[{"role":"user","content":[{"type":"input_file","file_data":"%%"}]}]}`, "input[0].content[0].file_data: neither a base64 data URL nor base64"},
		{"responses call no call_id", Responses(), `{"input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, `input[0]: function call has no "call_id"`},
		{"responses call no name", Responses(), `{"input":[{"type":"function_call","call_id":"c","arguments":"{}"}]}`, `input[0]: function call has no "name"`},
		{"responses call no args", Responses(), `{"input":[{"type":"function_call","call_id":"c","name":"f"}]}`, `input[0]: function call has no "arguments"`},
		{"responses output no call_id", Responses(), `{"input":[{"type":"function_call_output","output":"x"}]}`, `input[0]: function call output has no "call_id"`},
		{"responses output no output", Responses(), `{"input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c"}]}`, `input[1]: function call output has no "output"`},
		{"responses duplicate key", Responses(), `{"input":[{"role":"user","content":"x","content":"y"}]}`, `input[0]: duplicate key "content"`},
		{"responses deferred content error", Responses(), `{"input":[{"content":[{"type":"input_text"}],"type":"message","role":"user"}]}`, `input[0].content[0]: text part has no "text"`},
		{"responses summary bad", Responses(), `{"input":[{"type":"reasoning","id":"rs","summary":[{"type":"summary_text","text":5}]}]}`, ``},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, _, err := c.codec.Decode([]byte(c.body), provider.Options{})
			if c.want == "" {
				// Not an error: kept as it came.
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error; decoded %v", h)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error %q\nwant it to start with %q", err, c.want)
			}
			if strings.Count(err.Error(), "\n") > 0 {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func TestDecodeLimits(t *testing.T) {
	body := []byte(`{"messages":[{"role":"user","content":"` + strings.Repeat("a", 200) + `"}]}`)
	opts := provider.Options{Limits: convo.Limits{MaxBytes: 100}}
	for _, codec := range []provider.Codec{Chat(), Responses()} {
		_, _, err := codec.Decode(body, opts)
		if !errors.Is(err, jsonx.ErrTooLarge) {
			t.Errorf("%s: got %v, want ErrTooLarge", codec.Name(), err)
		}
	}
	_, _, err := DecodeItems([]json.RawMessage{body[:60], body[60:]}, opts)
	if !errors.Is(err, jsonx.ErrTooLarge) {
		t.Errorf("DecodeItems: got %v, want ErrTooLarge", err)
	}
	shallow := provider.Options{Limits: convo.Limits{MaxDepth: 3}}
	if _, _, err := Chat().Decode([]byte(`{"messages":[{"role":"user","content":[{"type":"text","text":"x"}]}]}`), shallow); err == nil ||
		!strings.Contains(err.Error(), "nesting deeper than 3") {
		t.Errorf("depth limit: got %v", err)
	}
}

// TestEncodeErrors checks histories the encoders cannot write: the error
// names the place.
func TestEncodeErrors(t *testing.T) {
	bad := "a\xffb"
	for _, c := range []struct {
		name string
		h    convo.History
		want string
	}{
		{"invalid utf8", convo.History{convo.User(bad)}, "invalid UTF-8"},
		{"invalid args", convo.History{
			convo.Assistant("", convo.ToolCall("c", "f", []byte(`{"a":`))),
			convo.ToolResults(convo.ToolResult("c", "f", "x")),
		}, "args: invalid JSON"},
		{"invalid native", convo.History{{Role: convo.RoleUser, Parts: []convo.Part{convo.Text("x")},
			Native: convo.Native{"openai": []byte(`{"a":`)}}}, "native.openai"},
		{"invalid json part", convo.History{convo.User("", convo.JSON([]byte(`{`)))}, "invalid JSON value"},
	} {
		for _, codec := range []provider.Codec{Chat(), Responses()} {
			_, _, err := codec.Encode(c.h, provider.Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %s: got %v, want %q", codec.Name(), c.name, err, c.want)
			}
		}
	}
}
