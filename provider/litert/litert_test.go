package litert

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"pgregory.net/rapid"
)

func TestStrict(t *testing.T) {
	h := convo.History{
		{Role: convo.RoleUser, Name: "alice", Parts: []convo.Part{convo.Text("hi")}},
	}
	_, warns, err := Conversation().Encode(h, provider.Options{})
	if err != nil || len(warns) != 1 {
		t.Fatalf("lenient: err %v, warnings %v", err, warns)
	}
	_, _, err = Conversation().Encode(h, provider.Options{Strict: true})
	var se *provider.StrictError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), `messages[0]: name "alice" dropped`) {
		t.Fatalf("strict: got %v", err)
	}
}

func TestPairing(t *testing.T) {
	h := convo.History{
		convo.User("weather?"),
		convo.Assistant("", convo.ToolCall("c1", "get_weather", json.RawMessage(`{"city":"Paris"}`))),
		convo.User("never mind"),
	}
	_, _, err := Conversation().Encode(h, provider.Options{})
	if err == nil || !strings.Contains(err.Error(), "messages[1].parts[0]") || !strings.Contains(err.Error(), "messages[2]") {
		t.Fatalf("unpaired call: got %v", err)
	}
	out, warns, err := Conversation().Encode(h, provider.Options{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"user","content":[{"type":"text","text":"weather?"}]},` +
		`{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":{"city":"Paris"}},"id":"c1"}]},` +
		`{"role":"tool","content":[{"type":"tool_response","name":"get_weather","response":{"error":"the tool was not run"},"id":"c1"}]},` +
		`{"role":"user","content":[{"type":"text","text":"never mind"}]}]`
	if string(out) != want || len(warns) != 1 {
		t.Errorf("repair:\n got %s %v\nwant %s", out, warns, want)
	}
}

func TestResolve(t *testing.T) {
	h := convo.History{convo.User("look", convo.ImageURL("image/png", "https://example.com/cat.png"))}
	_, _, err := Conversation().Encode(h, provider.Options{})
	if err == nil || !strings.Contains(err.Error(), "messages[0].parts[1]") {
		t.Fatalf("URL image: got %v", err)
	}
	// A resolver may download the image, or point at a local copy.
	opts := provider.Options{Resolve: func(p convo.Part) (convo.Part, error) {
		return convo.Part{Type: convo.TypeImage, MediaType: "image/png", URL: "file:///cache/cat.png"}, nil
	}}
	out, warns, err := Conversation().Encode(h, opts)
	if err != nil || len(warns) != 0 {
		t.Fatalf("resolve: %v, %v", err, warns)
	}
	if want := `[{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","path":"/cache/cat.png"}]}]`; string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		body, want string
	}{
		{``, "empty litert messages"},
		{`"hi"`, "not litert messages"},
		{`{"model":"x"}`, `want a messages array, or an object with "messages"`},
		{`[{"content":"hi"}]`, "messages[0]: missing role"},
		{`[{"role":"developer","content":"hi"}]`, `messages[0].role: unknown role "developer"`},
		{`[{"role":"user","content":3}]`, "messages[0].content: want a string, an array of parts or a part object"},
		{`[{"role":"user","content":[{"type":"text"}]}]`, `messages[0].content[0]: text part has no "text" string`},
		{`[{"role":"user","content":[{"type":"image"}]}]`, `messages[0].content[0]: image part has neither "path" nor "blob"`},
		{`[{"role":"user","content":[{"type":"audio","blob":"UklGR"}]}]`, "messages[0].content[0].blob: malformed base64 at offset 4"},
		{`[{"role":"user","content":[{"type":"audio","blob":""}]}]`, "messages[0].content[0]: audio part has an empty blob"},
		{`[{"role":"user","content":[{"type":"image","path":""}]}]`, "messages[0].content[0]: image part has an empty path"},
		{`[{"role":"assistant","tool_calls":[{"id":"c"}]}]`, `messages[0].tool_calls[0]: tool call has no "function"`},
		{`[{"role":"assistant","tool_calls":[{"function":{"arguments":{}}}]}]`, "messages[0].tool_calls[0].function.name: missing function name"},
		{`[{"role":"assistant","tool_calls":[{"function":{"name":1}}]}]`, "messages[0].tool_calls[0].function.name: got number, want string"},
		{`[{"role":"assistant","channels":{"thought":1}}]`, "messages[0].channels.thought: got number, want string"},
		{`[{"role":"assistant","type":"function","function":{"arguments":{}}}]`, "messages[0].function.name: missing function name"},
		{"[{\"role\":\"user\",\"content\":\"\xff\"}]", "messages[0].content: invalid UTF-8"},
		{`[{"role":"user","content":"a","content":"b"}]`, `duplicate key "content"`},
		{`[] x`, "unexpected data after the JSON value"},
		{`[{"role":"user","x":` + strings.Repeat("[", 100), "messages[0].x: nesting deeper than 64"},
	} {
		_, _, err := Conversation().Decode([]byte(tc.body), provider.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Decode(%.50q):\n got %v\nwant …%s…", tc.body, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("Decode(%.40q): error is not one line: %q", tc.body, err)
		}
	}
	_, _, err := Conversation().Decode([]byte(`[]`), provider.Options{Limits: convo.Limits{MaxBytes: 1}})
	if err == nil || !strings.Contains(err.Error(), "more than 1 bytes") {
		t.Errorf("size limit: got %v", err)
	}
}

func TestDecodeUnpairedResult(t *testing.T) {
	body := `[{"role":"user","content":"hi"},{"role":"tool","content":[{"type":"tool_response","name":"f","response":1}]}]`
	h, warns, err := Conversation().Decode([]byte(body), provider.Options{})
	if err != nil || len(warns) != 1 || warns[0].Path != "messages[1]" {
		t.Fatalf("got %v %v", err, warns)
	}
	if r := h[1].Parts[0]; r.Type != convo.TypeToolResult || r.ID != "" || r.Name != "f" {
		t.Errorf("result %+v", r)
	}
}

func TestFileURL(t *testing.T) {
	for _, tc := range []struct{ path, url string }{
		{"/data/clip.wav", "file:///data/clip.wav"},
		{"/data/clip one.wav", "file:///data/clip%20one.wav"},
		{"/a/100%/b?c#d.png", "file:///a/100%25/b%3Fc%23d.png"},
		{"photos/cat.jpg", "file:photos%2Fcat.jpg"},
		{`C:\pics\cat.png`, `file:C:%5Cpics%5Ccat.png`},
	} {
		if got := fileURL(tc.path); got != tc.url {
			t.Errorf("fileURL(%q) = %q, want %q", tc.path, got, tc.url)
		}
		if got, ok := pathOf(tc.url); !ok || got != tc.path {
			t.Errorf("pathOf(%q) = %q %v, want %q", tc.url, got, ok, tc.path)
		}
	}
	for _, u := range []string{"https://x/a.png", "file://host/a.png", "file:///a?b=1", "file:", "data:image/png;base64,AAAA"} {
		if p, ok := pathOf(u); ok {
			t.Errorf("pathOf(%q) = %q, want not a path", u, p)
		}
	}
	if p, ok := pathOf("file://localhost/a.png"); !ok || p != "/a.png" {
		t.Errorf("localhost: %q %v", p, ok)
	}
	rapid.Check(t, func(t *rapid.T) {
		p := rapid.StringMatching(`/?[a-zA-Z0-9 %?#:;,@&=+$!'()*\[\]\\é/._-]{1,20}`).Draw(t, "path")
		got, ok := pathOf(fileURL(p))
		if !ok || got != p {
			t.Fatalf("path %q -> %q -> %q %v", p, fileURL(p), got, ok)
		}
	})
}

func TestSniff(t *testing.T) {
	for _, tc := range []struct{ b64, want string }{
		{"iVBORw0KGgoAAAANSUhEUg==", "image/png"},
		{"/9j/4AAQSkZJRg==", "image/jpeg"},
		{"R0lGODlhAQABAIAAAA==", "image/gif"},
		{"UklGRhoAAABXRUJQVlA4IA==", "image/webp"},
		{"UklGRiQAAABXQVZFZm10IBAAAAA=", "audio/wav"},
		{"ZkxhQwAAACI=", "audio/flac"},
		{"T2dnUwACAAAAAAAA", "audio/ogg"},
		{"SUQzBAAAAAAA", "audio/mpeg"},
		{"//uQxAAAAAAA", "audio/mpeg"},
		{"AAAAIGZ0eXBNNEEgAAAAAA==", "audio/mp4"},
		{"Qk0eAAAAAAAAAAAAAAAA", "image/bmp"},
		{"AAAA", octetStream},
		{"", octetStream},
	} {
		if got := sniff(tc.b64); got != tc.want {
			t.Errorf("sniff(%q) = %s, want %s", tc.b64, got, tc.want)
		}
	}
}
