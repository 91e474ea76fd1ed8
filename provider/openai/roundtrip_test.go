package openai

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestRoundTrip decodes every request body in testdata/chat and
// testdata/responses, checks the history against its golden canonical form,
// and encodes it again: the conversation fields must come back equal (as
// JSON values), both straight away and after a trip through the canonical
// format.
func TestRoundTrip(t *testing.T) {
	for _, c := range []struct {
		dir   string
		codec provider.Codec
		keys  []string
	}{
		{"chat", Chat(), []string{"messages"}},
		{"responses", Responses(), []string{"instructions", "input"}},
	} {
		for _, file := range glob(t, filepath.Join("testdata", c.dir, "*.json")) {
			name := c.dir + "/" + strings.TrimSuffix(filepath.Base(file), ".json")
			t.Run(name, func(t *testing.T) {
				body := readFile(t, file)
				h, warns, err := c.codec.Decode(body, provider.Options{})
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				if err := h.Validate(); err != nil {
					t.Errorf("decoded history does not validate: %v", err)
				}
				canon := mustMarshal(t, h)
				codectest.Golden(t, strings.TrimSuffix(file, ".json")+".golden", report(t, canon, warns, nil))

				want := project(t, body, c.keys...)
				out, warns, err := c.codec.Encode(h, provider.Options{})
				if err != nil {
					t.Fatalf("Encode: %v", err)
				}
				if len(warns) > 0 {
					t.Errorf("same-provider Encode warned: %v", warns)
				}
				sameJSON(t, "re-encoded request", out, want)

				// Saved and reloaded, the history still encodes the same.
				back := mustUnmarshal(t, canon)
				if !back.Equal(h) {
					t.Errorf("canonical round trip changed the history")
				}
				out2, _, err := c.codec.Encode(back, provider.Options{})
				if err != nil {
					t.Fatalf("Encode after reload: %v", err)
				}
				sameJSON(t, "re-encoded request after reload", out2, want)

				// Decoding what was encoded gives the same history.
				h2, _, err := c.codec.Decode(out, provider.Options{})
				if err != nil {
					t.Fatalf("Decode of the encoded request: %v", err)
				}
				if !h2.Equal(h) {
					t.Errorf("decode(encode(h)) != h:\n%s", codectest.LineDiff(string(canon), string(mustMarshal(t, h2))))
				}
			})
		}
	}
}

// TestNormalised covers the inputs that come back in the form the API
// documents rather than byte for byte: a required member the request left
// out is written with its default.
func TestNormalised(t *testing.T) {
	for _, c := range []struct {
		name      string
		codec     provider.Codec
		in, want  string
		wantWarns int
	}{
		{"chat tool call without type", Chat(),
			`{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`,
			`{"messages":[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`, 0},
		{"responses image without detail", Responses(),
			`{"input":[{"role":"user","content":[{"type":"input_image","image_url":"https://x/a.png"}]}]}`,
			`{"input":[{"role":"user","content":[{"type":"input_image","image_url":"https://x/a.png","detail":"auto"}]}]}`, 0},
		{"responses output_text without annotations", Responses(),
			`{"input":[{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"hi"}]}]}`,
			`{"input":[{"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"hi","annotations":[]}]}]}`, 0},
		{"responses reasoning without summary", Responses(),
			`{"input":[{"type":"reasoning","id":"rs_1","encrypted_content":"e"},{"role":"assistant","content":"x"}]}`,
			`{"input":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"e"},{"role":"assistant","content":"x"}]}`, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, _, err := c.codec.Decode([]byte(c.in), provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			out, warns, err := c.codec.Encode(h, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) != c.wantWarns {
				t.Errorf("warnings %v, want %d", warns, c.wantWarns)
			}
			sameJSON(t, "encoded", out, []byte(c.want))
		})
	}
}

// TestCanonicalOrigin checks that histories written by hand in the
// canonical format encode as the API expects.
func TestCanonicalOrigin(t *testing.T) {
	h := convo.History{
		convo.System("Be brief."),
		convo.User("Weather?"),
		convo.Assistant("", convo.ToolCall("call_1", "get_weather", []byte(`{"city": "Paris"}`))),
		convo.ToolResults(convo.ToolResult("call_1", "get_weather", "18")),
		convo.Assistant("18 °C."),
	}
	out, warns, err := Chat().Encode(h, provider.Options{})
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	sameJSON(t, "chat", out, []byte(`{"messages":[
		{"role":"system","content":"Be brief."},
		{"role":"user","content":"Weather?"},
		{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"18"},
		{"role":"assistant","content":"18 °C."}]}`))
	out, warns, err = Responses().Encode(h, provider.Options{})
	if err != nil || len(warns) > 0 {
		t.Fatal(err, warns)
	}
	sameJSON(t, "responses", out, []byte(`{"input":[
		{"role":"system","content":"Be brief."},
		{"role":"user","content":"Weather?"},
		{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
		{"type":"function_call_output","call_id":"call_1","output":"18"},
		{"role":"assistant","content":"18 °C."}]}`))
}
