package all

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestRequestMappings converts every whole request in testdata/requests
// (named <format>.<name>.json) to every format that takes whole requests,
// and compares the body and its warnings with golden files: the mapping of
// every setting, and what each target says it could not carry.
func TestRequestMappings(t *testing.T) {
	for _, tr := range testRequests(t) {
		base, r := tr.base, tr.r
		for _, c := range Formats() {
			to, ok := c.(provider.RequestCodec)
			if !ok {
				continue
			}
			t.Run(base+"/"+to.Name(), func(t *testing.T) {
				body, warns, err := to.EncodeRequest(r, provider.Options{})
				var out []byte
				if err != nil {
					out = []byte("error: " + err.Error() + "\n")
				} else {
					out = codectest.Indent(t, body, "  ")
				}
				out = append(out, codectest.WarningText(warns)...)
				codectest.Golden(t, filepath.Join("testdata/requests", base+".to."+to.Name()+".txt"), out)
			})
		}
	}
}

// testRequest is a request of testdata/requests, decoded by its format.
type testRequest struct {
	base string // the file's name without .json: <format>.<name>
	r    *provider.Request
}

func testRequests(t *testing.T) []testRequest {
	t.Helper()
	var out []testRequest
	for _, path := range codectest.Files(t, "testdata/requests/*.json") {
		base := strings.TrimSuffix(filepath.Base(path), ".json")
		if strings.Contains(base, ".to.") {
			continue
		}
		from, err := LookupRequest(strings.SplitN(base, ".", 2)[0])
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := from.DecodeRequest(codectest.ReadFile(t, path), provider.Options{})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, testRequest{base, r})
	}
	return out
}

// TestEncodeRequestOneBody checks that every format builds a whole request
// in one buffer: settings before the history (the model), the history, and
// settings after it (tools, stop) without copying the history's encoding
// into a body of its own, which doubles what a long conversation costs on
// every turn. It counts the bytes one EncodeRequest allocates (the least of
// three calls, as another test's allocations only add) against the body's
// size; the room made for the settings must also hold a large tool schema.
func TestEncodeRequestOneBody(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are not counted under the race detector")
	}
	text := strings.Repeat("lorem ipsum dolor sit amet, ", 40)
	var h convo.History
	for range 400 {
		h = append(h, convo.User(text), convo.Assistant(text))
	}
	schema := `{"type":"object","properties":{`
	for i := range 8 {
		schema += `"p` + strconv.Itoa(i) + `":{"type":"string","description":"` + text + `"},`
	}
	schema += `"q":{"type":"number"}}}`
	r := &provider.Request{Model: "a-model", MaxTokens: 64, History: h, Stop: []string{"END"},
		Tools: []provider.Tool{{Name: "look", Description: text, Parameters: json.RawMessage(schema)}}}
	for _, c := range Formats() {
		to, ok := c.(provider.RequestCodec)
		if !ok {
			continue
		}
		t.Run(to.Name(), func(t *testing.T) {
			var body []byte
			least := uint64(math.MaxUint64)
			for range 3 {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				b, _, err := to.EncodeRequest(r, provider.Options{})
				runtime.ReadMemStats(&after)
				if err != nil {
					t.Fatal(err)
				}
				body, least = b, min(least, after.TotalAlloc-before.TotalAlloc)
			}
			if ratio := float64(least) / float64(len(body)); ratio > 1.5 {
				t.Errorf("allocated %d bytes for a body of %d (%.2f×): the body was copied", least, len(body), ratio)
			} else {
				t.Logf("allocated %.2f× the body", ratio)
			}
			// Handed back a buffer large enough, the body takes no new memory.
			buf := make([]byte, 0, 2*len(body))
			least = math.MaxUint64
			for range 3 {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				b, _, err := to.(provider.RequestAppender).AppendRequest(buf[:0], r, provider.Options{})
				runtime.ReadMemStats(&after)
				if err != nil || !bytes.Equal(b, body) || &b[0] != &buf[:1][0] {
					t.Fatalf("AppendRequest into a buffer handed back: %v, same body %v, same buffer %v", err, bytes.Equal(b, body), &b[0] == &buf[:1][0])
				}
				least = min(least, after.TotalAlloc-before.TotalAlloc)
			}
			if ratio := float64(least) / float64(len(body)); ratio > 0.5 {
				t.Errorf("AppendRequest into a buffer handed back allocated %.2f× the body", ratio)
			} else {
				t.Logf("handed a buffer back: %.2f× the body", ratio)
			}
		})
	}
}

// TestAppendRequest: every format appends to a buffer the very body and
// warnings EncodeRequest returns, and leaves the buffer as it was on an
// error (every request in testdata/requests, to every format, every other
// one Strict so that some fail). TestEncodeRequestOneBody counts what a
// buffer handed back saves.
func TestAppendRequest(t *testing.T) {
	reqs := testRequests(t)
	failed := 0
	for _, c := range Formats() {
		to, ok := c.(provider.RequestAppender)
		if !ok {
			t.Errorf("%s is no RequestAppender", c.Name())
			continue
		}
		for i, tr := range reqs {
			want, wantWarns, wantErr := to.EncodeRequest(tr.r, provider.Options{Strict: i%2 == 1})
			got, warns, err := to.AppendRequest([]byte("kept"), tr.r, provider.Options{Strict: i%2 == 1})
			if wantErr != nil {
				failed++
				if err == nil || err.Error() != wantErr.Error() || string(got) != "kept" {
					t.Errorf("%s, %s: %q, %v; want the buffer as it was and %v", to.Name(), tr.base, got, err, wantErr)
				}
				continue
			}
			if err != nil || string(got) != "kept"+string(want) || !reflect.DeepEqual(warns, wantWarns) {
				t.Errorf("%s, %s: %v\n got %s\nwant kept%s", to.Name(), tr.base, err, got, want)
			}
		}
	}
	if failed == 0 {
		t.Error("no request failed: the error case went untested")
	}
}

// TestRequestNullSettings: a setting whose value is null is absent, as
// JSON APIs read it — SDKs write members they have no value for as null
// (the Ollama SDK's "options") — and the request encodes back as read
// without them.
func TestRequestNullSettings(t *testing.T) {
	for format, body := range map[string]string{
		"ollama":           `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":null,"format":null,"options":null,"stream":false}`,
		"openai-chat":      `{"model":"m","messages":[{"role":"user","content":"hi"}],"temperature":null,"tools":null,"stop":null}`,
		"openai-responses": `{"model":"m","input":"hi","temperature":null,"tools":null,"reasoning":null}`,
		"anthropic":        `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"temperature":null,"tools":null}`,
		"gemini":           `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":null,"generationConfig":null}`,
		"bedrock":          `{"messages":[{"role":"user","content":[{"text":"hi"}]}],"inferenceConfig":null,"toolConfig":null}`,
	} {
		c, err := LookupRequest(format)
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := c.DecodeRequest([]byte(body), provider.Options{})
		if err != nil {
			t.Errorf("%s: %v", format, err)
			continue
		}
		if r.Temperature != nil || r.Tools != nil || r.MaxTokens > 5 {
			t.Errorf("%s: a null read as a value: %+v", format, r)
		}
		out, _, err := c.EncodeRequest(r, provider.Options{})
		var got any
		want := map[string]any{}
		if err := json.Unmarshal([]byte(body), &want); err != nil {
			t.Fatal(err)
		}
		for k, v := range want {
			if v == nil {
				delete(want, k)
			}
		}
		if err != nil || json.Unmarshal(out, &got) != nil || !reflect.DeepEqual(got, any(want)) {
			t.Errorf("%s: encoded back as %s (%v), read %s", format, out, err, body)
		}
	}
}
