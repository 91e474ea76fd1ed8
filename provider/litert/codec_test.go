package litert

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n got: %s\nwant: %s", path, got, want)
	}
}

// jsonValue decodes b keeping number text, for semantic comparison.
func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return v
}

func sameJSON(t *testing.T, got, want []byte) bool {
	t.Helper()
	return reflect.DeepEqual(jsonValue(t, got), jsonValue(t, want))
}

func warnText(ws []provider.Warning) []byte {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString(w.String())
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// messagesOf returns the messages array of body: body itself, or its
// "messages" member.
func messagesOf(t *testing.T, body []byte) []byte {
	t.Helper()
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '[' {
		return b
	}
	var req struct {
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	return req.Messages
}

// TestRoundTrip decodes every request in testdata/requests, checks the
// history against its golden canonical form, and encodes it back: the
// messages must be the same JSON.
func TestRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("testdata/requests/*.json")
	n := 0
	for _, file := range files {
		if strings.Count(filepath.Base(file), ".") > 1 {
			continue // a golden file
		}
		n++
		base := strings.TrimSuffix(file, ".json")
		t.Run(filepath.Base(base), func(t *testing.T) {
			body, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			h, warns, err := Codec().Decode(body, provider.Options{})
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			canon, err := convo.Marshal(h)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, base+".convo.json", canon)
			golden(t, base+".decode-warnings.txt", warnText(warns))

			// The canonical form is lossless too: reading it back and
			// encoding gives the same request.
			h2, err := convo.Unmarshal(canon)
			if err != nil {
				t.Fatal(err)
			}
			out, ewarns, err := Codec().Encode(h2, provider.Options{Strict: true})
			if err != nil {
				t.Fatalf("encode: %v (warnings %v)", err, ewarns)
			}
			if want := messagesOf(t, body); !sameJSON(t, out, want) {
				t.Errorf("round trip differs:\n got: %s\nwant: %s", out, want)
			}
			// Same input, same bytes.
			again, _, _ := Codec().Encode(h2, provider.Options{})
			if !bytes.Equal(out, again) {
				t.Error("encoding is not deterministic")
			}
		})
	}
	if n == 0 {
		t.Fatal("no requests in testdata/requests")
	}
}

// TestEncode encodes the canonical histories in testdata/encode, which hold
// what other providers produce, and compares request and warnings with
// their golden files. Each file name says the options: *.strict, *.repair,
// *.placeholder, *.text (reasoning sent as text).
func TestEncode(t *testing.T) {
	files, _ := filepath.Glob("testdata/encode/*.convo.json")
	if len(files) == 0 {
		t.Fatal("no histories in testdata/encode")
	}
	for _, file := range files {
		base := strings.TrimSuffix(file, ".convo.json")
		t.Run(filepath.Base(base), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			h, err := convo.Unmarshal(data)
			if err != nil {
				t.Fatal(err)
			}
			opts := provider.Options{}
			name := filepath.Base(base)
			opts.Strict = strings.Contains(name, ".strict")
			opts.Repair = strings.Contains(name, ".repair")
			if strings.Contains(name, ".placeholder") {
				opts.Media = provider.MediaPlaceholder
			}
			if strings.Contains(name, ".text") {
				opts.Reasoning = provider.ReasoningText
			}
			out, warns, err := Codec().Encode(h, opts)
			var got bytes.Buffer
			if err != nil {
				got.WriteString("error: " + err.Error() + "\n")
			} else {
				var pretty bytes.Buffer
				if err := json.Indent(&pretty, out, "", " "); err != nil {
					t.Fatalf("invalid JSON: %v\n%s", err, out)
				}
				got.Write(pretty.Bytes())
				got.WriteByte('\n')
			}
			got.WriteString("-- warnings --\n")
			got.Write(warnText(warns))
			golden(t, base+".golden", got.Bytes())
		})
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
	out, _, err := Codec().Encode(h, provider.Options{Strict: true})
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
	_, _, err := Codec().Encode(h, provider.Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "messages[1].parts[0].text: invalid UTF-8") {
		t.Errorf("got %v", err)
	}
}
