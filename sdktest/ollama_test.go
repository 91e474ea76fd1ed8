package sdktest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/ollama"
	"github.com/ollama/ollama/api"
)

func ollamaArgs(kv ...any) api.ToolCallFunctionArguments {
	a := api.NewToolCallFunctionArguments()
	for i := 0; i < len(kv); i += 2 {
		a.Set(kv[i].(string), kv[i+1])
	}
	return a
}

// ollamaRequests are chat requests built with the SDK's own types.
func ollamaRequests() map[string]api.ChatRequest {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	jpeg := []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00")
	stream := false
	return map[string]api.ChatRequest{
		"tool loop": {
			Model:  "qwen3",
			Stream: &stream,
			Think:  &api.ThinkValue{Value: true},
			Messages: []api.Message{
				{Role: "system", Content: "Be brief."},
				{Role: "user", Content: "What is shown, and the weather there?", Images: []api.ImageData{png, jpeg}},
				{Role: "assistant", Thinking: "Paris. Need the tool.", ToolCalls: []api.ToolCall{
					{ID: "call_1", Function: api.ToolCallFunction{Index: 0, Name: "get_weather", Arguments: ollamaArgs("city", "Paris", "unit", "celsius")}},
					{ID: "call_2", Function: api.ToolCallFunction{Index: 1, Name: "get_weather", Arguments: ollamaArgs("city", "Lyon")}},
				}},
				{Role: "tool", ToolName: "get_weather", ToolCallID: "call_1", Content: `{"temp_c":18}`},
				{Role: "tool", ToolName: "get_weather", ToolCallID: "call_2", Content: "Error: timed out"},
				{Role: "assistant", Content: "Paris: 18 °C.", Thinking: "One failed."},
			},
		},
		"no ids": {
			Model: "llama3.2",
			Messages: []api.Message{
				{Role: "user", Content: "Add 2 and 3, then double it."},
				{Role: "assistant", ToolCalls: []api.ToolCall{
					{Function: api.ToolCallFunction{Name: "add", Arguments: ollamaArgs("a", 2, "b", 3)}},
					{Function: api.ToolCallFunction{Index: 1, Name: "double", Arguments: ollamaArgs("x", 5)}},
				}},
				{Role: "tool", ToolName: "add", Content: "5"},
				{Role: "tool", Content: "10"},
				{Role: "assistant", Content: "10"},
			},
		},
		"empty arguments": {
			Model: "x",
			Messages: []api.Message{
				{Role: "user", Content: "now?"},
				{Role: "assistant", ToolCalls: []api.ToolCall{{ID: "t", Function: api.ToolCallFunction{Name: "time"}}}},
				{Role: "tool", ToolCallID: "t", Content: "noon"},
			},
		},
	}
}

// ollamaMessages returns {"messages": body.messages}.
func ollamaMessages(t *testing.T, body []byte) []byte {
	t.Helper()
	var v struct {
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	return []byte(`{"messages":` + string(v.Messages) + `}`)
}

func jsonOf(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return v
}

// TestOllamaSDKRequests: requests built and marshalled by the SDK decode
// with convo and encode back to the same messages.
func TestOllamaSDKRequests(t *testing.T) {
	for name, req := range ollamaRequests() {
		t.Run(name, func(t *testing.T) {
			body, err := json.Marshal(req)
			if err != nil {
				t.Fatal(err)
			}
			h, _, err := ollama.Codec().Decode(body, provider.Options{Strict: true})
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			out, _, err := ollama.Codec().Encode(h, provider.Options{Strict: true})
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if want := ollamaMessages(t, body); !reflect.DeepEqual(jsonOf(t, out), jsonOf(t, want)) {
				t.Errorf("round trip differs:\n got %s\nwant %s", out, want)
			}
			// Images keep their bytes; their media type is sniffed.
			for _, m := range h {
				for _, p := range m.Parts {
					if p.Type == convo.TypeImage && p.MediaType != "image/png" && p.MediaType != "image/jpeg" {
						t.Errorf("image media type %q", p.MediaType)
					}
				}
			}
		})
	}
}

// sdkDefaults adds what the SDK's Message and ToolCallFunction write even
// when convo leaves them out, because those struct fields have no
// omitempty: "content" on every message, "index" and "arguments" on every
// call. These are the SDK's quirks, not differences in meaning.
func sdkDefaults(t *testing.T, body []byte) any {
	v := jsonOf(t, body)
	for _, m := range v.(map[string]any)["messages"].([]any) {
		msg := m.(map[string]any)
		if _, ok := msg["content"]; !ok {
			msg["content"] = ""
		}
		calls, _ := msg["tool_calls"].([]any)
		for _, c := range calls {
			fn := c.(map[string]any)["function"].(map[string]any)
			if _, ok := fn["index"]; !ok {
				fn["index"] = json.Number("0")
			}
			if _, ok := fn["arguments"]; !ok {
				fn["arguments"] = map[string]any{}
			}
		}
	}
	return v
}

// TestOllamaSDKAcceptsEncoded: everything convo encodes for Ollama — the
// cross-provider histories of the codec's tests and the SDK requests above
// — unmarshals into the SDK's request type and marshals back the same:
// nothing unknown, nothing dropped.
func TestOllamaSDKAcceptsEncoded(t *testing.T) {
	histories := map[string]convo.History{}
	files, _ := filepath.Glob("../provider/ollama/testdata/encode/*.convo.json")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h, err := convo.Unmarshal(data)
		if err != nil {
			t.Fatal(err)
		}
		histories[filepath.Base(f)] = h
	}
	if len(histories) == 0 {
		t.Fatal("no histories found")
	}
	for name, req := range ollamaRequests() {
		body, _ := json.Marshal(req)
		h, _, err := ollama.Codec().Decode(body, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		histories[name] = h
	}
	for name, h := range histories {
		t.Run(name, func(t *testing.T) {
			out, _, err := ollama.Codec().Encode(h, provider.Options{Repair: true, Media: provider.MediaPlaceholder})
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			var req api.ChatRequest
			dec := json.NewDecoder(bytes.NewReader(out))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&req); err != nil {
				t.Fatalf("the SDK cannot read %s: %v", out, err)
			}
			back, err := json.Marshal(struct {
				Messages []api.Message `json:"messages"`
			}{req.Messages})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(jsonOf(t, back), sdkDefaults(t, out)) {
				t.Errorf("the SDK changed the request:\nconvo %s\n  sdk %s", out, back)
			}
		})
	}
}

// TestOllamaSDKImageBytes: the SDK decodes convo's images to the bytes
// convo holds.
func TestOllamaSDKImageBytes(t *testing.T) {
	raw := []byte("\x89PNG\r\n\x1a\nbytes")
	h := convo.History{convo.User("see", convo.Image("image/png", raw))}
	out, _, err := ollama.Codec().Encode(h, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var req api.ChatRequest
	if err := json.Unmarshal(out, &req); err != nil {
		t.Fatal(err)
	}
	if got := req.Messages[0].Images[0]; !bytes.Equal(got, raw) {
		t.Errorf("image bytes %q, want %q", got, raw)
	}
	if !strings.Contains(string(out), base64.StdEncoding.EncodeToString(raw)) {
		t.Errorf("image not standard base64 in %s", out)
	}
}
