package ollama

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// messagesOf returns {"messages": body.messages}.
func messagesOf(t codectest.TB, body []byte) []byte {
	t.Helper()
	var req struct {
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("%v", err)
	}
	return []byte(`{"messages":` + string(req.Messages) + `}`)
}

// TestRoundTrip decodes every request in testdata/requests, checks the
// history against its golden canonical form, and encodes it back: the
// messages must be the same JSON.
func TestRoundTrip(t *testing.T) {
	codectest.RoundTrip(t, Chat(), "testdata/requests/*.json", messagesOf)
}

// TestEncode encodes the canonical histories in testdata/encode, which hold
// what other providers produce, and compares request and warnings with
// their golden files. Each file name says the options: *.strict, *.repair,
// *.placeholder, *.text (reasoning sent as text).
func TestEncode(t *testing.T) {
	codectest.EncodeGoldens(t, Chat(), "testdata/encode/*.convo.json")
}

func TestStrict(t *testing.T) {
	h := convo.History{
		{Role: convo.RoleUser, Name: "alice", Parts: []convo.Part{convo.Text("hi")}},
	}
	_, warns, err := Chat().Encode(h, provider.Options{})
	if err != nil || len(warns) != 1 {
		t.Fatalf("lenient: err %v, warnings %v", err, warns)
	}
	_, _, err = Chat().Encode(h, provider.Options{Strict: true})
	var se *provider.StrictError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), `messages[0]: name "alice" dropped`) {
		t.Fatalf("strict: got %v", err)
	}
	// A warning from the shared rules is an error too, and the format's own
	// warnings are listed with it.
	h = append(h, convo.Message{Role: convo.RoleError, Parts: []convo.Part{convo.Text("boom")}})
	_, warns, err = Chat().Encode(h, provider.Options{Strict: true})
	if !errors.As(err, &se) || len(se.Warnings) != 2 || len(warns) != 2 {
		t.Fatalf("strict with shared warnings: %v %v", err, warns)
	}
}

func TestPairing(t *testing.T) {
	h := convo.History{
		convo.User("weather?"),
		convo.Assistant("", convo.ToolCall("c1", "get_weather", json.RawMessage(`{"city":"Paris"}`))),
		convo.User("never mind"),
	}
	_, _, err := Chat().Encode(h, provider.Options{})
	if err == nil || !strings.Contains(err.Error(), "messages[1].parts[0]") || !strings.Contains(err.Error(), "messages[2]") {
		t.Fatalf("unpaired call: got %v", err)
	}
	out, warns, err := Chat().Encode(h, provider.Options{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[{"role":"user","content":"weather?"},` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"c1","function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},` +
		`{"role":"tool","content":"Error: the tool was not run","tool_name":"get_weather","tool_call_id":"c1"},` +
		`{"role":"user","content":"never mind"}]}`
	if string(out) != want || len(warns) != 1 {
		t.Errorf("repair:\n got %s %v\nwant %s", out, warns, want)
	}
}

func TestResolve(t *testing.T) {
	h := convo.History{convo.User("look", convo.ImageURL("image/png", "https://example.com/cat.png"))}
	_, _, err := Chat().Encode(h, provider.Options{})
	if err == nil || !strings.Contains(err.Error(), "messages[0].parts[1]") {
		t.Fatalf("URL image: got %v", err)
	}
	calls := 0
	opts := provider.Options{Resolve: func(p convo.Part) (convo.Part, error) {
		calls++
		if p.URL != "https://example.com/cat.png" {
			return p, errors.New("unexpected")
		}
		return convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: "iVBORw0KGgo="}, nil
	}}
	out, warns, err := Chat().Encode(h, opts)
	if err != nil || calls != 1 || len(warns) != 0 {
		t.Fatalf("resolve: %v, %d calls, %v", err, calls, warns)
	}
	if want := `{"messages":[{"role":"user","content":"look","images":["iVBORw0KGgo="]}]}`; string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
	opts.Resolve = func(p convo.Part) (convo.Part, error) { return p, errors.New("offline") }
	if _, _, err := Chat().Encode(h, opts); err == nil || !strings.Contains(err.Error(), "offline") {
		t.Errorf("failing resolver: got %v", err)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		body, want string
	}{
		{``, "empty ollama request"},
		{`"hi"`, "not an ollama request"},
		{`{"model":"x"}`, `no "messages"`},
		{`{"messages":{}}`, "messages: got object, want array"},
		{`{"messages":[{"content":"hi"}]}`, "messages[0]: missing role"},
		{`{"messages":[{"role":"developer","content":"hi"}]}`, `messages[0].role: unknown role "developer"`},
		{`{"messages":[{"role":"user","content":[{"type":"text"}]}]}`, "messages[0].content: got array, want a string"},
		{`{"messages":[{"role":"user","content":"a","content":"b"}]}`, `duplicate key "content"`},
		{`{"messages":[{"role":"user","images":["data:image/png;base64,iVBO"]}]}`, "messages[0].images[0]: malformed base64 at offset 4"},
		{`{"messages":[{"role":"user","images":["iVBORw0KGgo"]}]}`, "messages[0].images[0]: malformed base64"},
		{`{"messages":[{"role":"user","images":[1]}]}`, "messages[0].images[0]"},
		{`{"messages":[{"role":"assistant","tool_calls":[{"id":"c"}]}]}`, `messages[0].tool_calls[0]: tool call has no "function"`},
		{`{"messages":[{"role":"assistant","tool_calls":[{"function":{"arguments":{}}}]}]}`, "messages[0].tool_calls[0].function.name: missing function name"},
		{`{"messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}]}`, "messages[0].tool_calls[0].function.arguments: got string, want a JSON object"},
		{`{"messages":[{"role":"assistant","tool_calls":[{"function":{"name":"f","index":"0"}}]}]}`, "messages[0].tool_calls[0].function.index"},
		{"{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}", "messages[0].content: invalid UTF-8"},
		{`{"messages":[]} x`, "unexpected data after the JSON value"},
		{`{"messages":[{"role":"user","content":"hi"}`, "unexpected end of input"},
		{`{"tools":[}],"messages":[]}`, "tools"},
		{`{"messages":[{"role":"user","x":` + strings.Repeat("[", 100), "messages[0].x: nesting deeper than 64"},
	} {
		_, _, err := Chat().Decode([]byte(tc.body), provider.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%.40q):\n got %v\nwant …%s…", tc.body, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("Decode(%.40q): error is not one line: %q", tc.body, err)
		}
	}
	_, _, err := Chat().Decode([]byte(`{"messages":[]}`), provider.Options{Limits: convo.Limits{MaxBytes: 4}})
	if err == nil || !strings.Contains(err.Error(), "more than 4 bytes") {
		t.Errorf("size limit: got %v", err)
	}
}

func TestDecodeUnpairedResult(t *testing.T) {
	body := `{"messages":[{"role":"user","content":"hi"},{"role":"tool","tool_name":"f","content":"x"}]}`
	h, warns, err := Chat().Decode([]byte(body), provider.Options{})
	if err != nil || len(warns) != 1 || warns[0].Path != "messages[1]" {
		t.Fatalf("got %v %v", err, warns)
	}
	if _, _, err := Chat().Decode([]byte(body), provider.Options{Strict: true}); err == nil {
		t.Error("strict decode accepted an unpaired result")
	}
	if r := h[1].Parts[0]; r.Type != convo.TypeToolResult || r.ID != "" || r.Name != "f" {
		t.Errorf("result %+v", r)
	}
}

func TestSniffImage(t *testing.T) {
	for _, tc := range []struct{ b64, want string }{
		{"iVBORw0KGgoAAAANSUhEUg==", "image/png"},
		{"/9j/4AAQSkZJRg==", "image/jpeg"},
		{"R0lGODlhAQABAIAAAA==", "image/gif"},
		{"UklGRhoAAABXRUJQVlA4IA==", "image/webp"},
		{"UklGRhoAAABXQVZFZm10IA==", octetStream}, // a WAV file
		{"Qk0eAAAAAAA=", octetStream},             // BMP
		{"", octetStream},
		{"iVBO", octetStream}, // too short to tell
	} {
		if got := sniffImage(tc.b64); got != tc.want {
			t.Errorf("sniffImage(%q) = %s, want %s", tc.b64, got, tc.want)
		}
	}
}

// TestImageBase64: images must be standard padded base64; the error names
// the image and the offset of the first bad byte.
func TestImageBase64(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want int // offset of the error, -1 for none
	}{
		{"", -1}, {"QQ==", -1}, {"QUI=", -1}, {"QUJD", -1}, {"QUJ", 0}, {"Q===", 1},
		{"QQ=A", 2}, {"QU JD", 2}, {"QUJDRA", 4}, {"QUJD-A==", 4},
	} {
		body := `{"messages":[{"role":"user","images":["` + tc.s + `"]}]}`
		_, _, err := Chat().Decode([]byte(body), provider.Options{})
		want := ""
		if tc.want >= 0 {
			want = fmt.Sprintf("messages[0].images[0]: malformed base64 at offset %d (Ollama images are bare standard base64)", tc.want)
		}
		if got := fmt.Sprint(err); (err != nil || want != "") && got != want {
			t.Errorf("image %q: got %v, want %s", tc.s, got, want)
		}
	}
}

// TestResultNames: a result without a name of its own (OpenAI results have
// none) is sent with its call's name.
func TestResultNames(t *testing.T) {
	h := convo.History{
		convo.User("weather?"),
		convo.Assistant("", convo.ToolCall("c1", "get_weather", json.RawMessage(`{"city":"Paris"}`))),
		convo.ToolResults(convo.Part{Type: convo.TypeToolResult, ID: "c1", Parts: []convo.Part{convo.Text("18")}}),
	}
	out, _, err := Chat().Encode(h, provider.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`"get_weather"`)) || bytes.Count(out, []byte(`"get_weather"`)) != 2 {
		t.Errorf("result not named after its call: %s", out)
	}
}

// TestEncodeErrorPath: an error while mapping names the caller's message,
// even after Prepare left messages out before it.
func TestEncodeErrorPath(t *testing.T) {
	h := convo.History{
		convo.ErrorMessage("rate limited"),
		convo.User("bad \xff text"),
	}
	_, _, err := Chat().Encode(h, provider.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "messages[1].parts[0]: invalid UTF-8") {
		t.Errorf("got %v", err)
	}
}
