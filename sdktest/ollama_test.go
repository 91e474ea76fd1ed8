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
	"time"

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
			h, _, err := ollama.Chat().Decode(body, provider.Options{Strict: true})
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			out, _, err := ollama.Chat().Encode(h, provider.Options{Strict: true})
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
		h, _, err := ollama.Chat().Decode(body, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		histories[name] = h
	}
	for name, h := range histories {
		t.Run(name, func(t *testing.T) {
			out, _, err := ollama.Chat().Encode(h, provider.Options{Repair: true, Media: provider.MediaPlaceholder})
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
	out, _, err := ollama.Chat().Encode(h, provider.Options{})
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

// TestOllamaSDKReadsReplyFixtures: every recorded reply line convo's tests
// use is a ChatResponse the SDK reads with nothing unknown.
func TestOllamaSDKReadsReplyFixtures(t *testing.T) {
	files, _ := filepath.Glob("../provider/ollama/testdata/replies/*.*json")
	if len(files) == 0 {
		t.Fatal("no reply fixtures")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var values [][]byte
		if strings.HasSuffix(f, ".ndjson") {
			for _, l := range bytes.Split(data, []byte("\n")) {
				if l = bytes.TrimSpace(l); len(l) > 0 {
					values = append(values, l)
				}
			}
		} else {
			values = [][]byte{data}
		}
		for i, v := range values {
			if bytes.HasPrefix(v, []byte(`{"error"`)) {
				var se api.StatusError
				if err := json.Unmarshal(v, &se); err != nil || se.ErrorMessage == "" {
					t.Errorf("%s:%d: not an Ollama error: %v", f, i+1, err)
				}
				continue
			}
			var resp api.ChatResponse
			dec := json.NewDecoder(bytes.NewReader(v))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&resp); err != nil {
				t.Errorf("%s:%d: the SDK cannot read it: %v", f, i+1, err)
			}
		}
	}
}

// TestOllamaSDKReplies: replies built and marshalled with the SDK's own
// types, whole and as a stream of chunks, decode to the same message, and
// that message holds what the SDK values hold.
func TestOllamaSDKReplies(t *testing.T) {
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	calls := []api.ToolCall{
		{ID: "call_1", Function: api.ToolCallFunction{Index: 0, Name: "get_weather", Arguments: ollamaArgs("city", "Paris")}},
		{Function: api.ToolCallFunction{Index: 1, Name: "get_time", Arguments: ollamaArgs("tz", "Europe/Paris", "format", 24)}},
	}
	metrics := api.Metrics{TotalDuration: 2 * time.Second, LoadDuration: time.Millisecond, PromptEvalCount: 31, PromptEvalDuration: 300 * time.Millisecond, EvalCount: 17, EvalDuration: time.Second}
	whole := api.ChatResponse{
		Model: "qwen3", CreatedAt: at.Add(3 * time.Second),
		Message:    api.Message{Role: "assistant", Content: "Checking both.", Thinking: "Two tools.", ToolCalls: calls},
		Done:       true,
		DoneReason: "stop",
		Metrics:    metrics,
	}
	chunks := []api.ChatResponse{
		{Model: "qwen3", CreatedAt: at, Message: api.Message{Role: "assistant", Thinking: "Two "}},
		{Model: "qwen3", CreatedAt: at.Add(time.Second), Message: api.Message{Role: "assistant", Thinking: "tools."}},
		{Model: "qwen3", CreatedAt: at.Add(time.Second), Message: api.Message{Role: "assistant", Content: "Checking "}},
		{Model: "qwen3", CreatedAt: at.Add(2 * time.Second), Message: api.Message{Role: "assistant", Content: "both.", ToolCalls: calls[:1]}},
		{Model: "qwen3", CreatedAt: at.Add(2 * time.Second), Message: api.Message{Role: "assistant", ToolCalls: calls[1:]}},
		{Model: "qwen3", CreatedAt: at.Add(3 * time.Second), Message: api.Message{Role: "assistant"}, Done: true, DoneReason: "stop", Metrics: metrics},
	}
	body, err := json.Marshal(whole)
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := ollama.Chat().DecodeReply(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	for _, c := range chunks {
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		stream.Write(b)
		stream.WriteByte('\n')
	}
	sm, _, err := ollama.Chat().ReadStream(&stream, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !sm.Equal(m) {
		a, _ := convo.AppendMessage(nil, m)
		b, _ := convo.AppendMessage(nil, sm)
		t.Errorf("stream and whole reply differ:\nwhole  %s\nstream %s", a, b)
	}
	if m.Text() != whole.Message.Content || m.Parts[0].Text != whole.Message.Thinking ||
		m.Finish != convo.FinishToolUse || m.Origin.Model != "qwen3" || !m.Time.Equal(whole.CreatedAt) ||
		*m.Usage != (convo.Usage{Input: 31, Output: 17}) {
		t.Errorf("message %+v", m)
	}
	got := m.ToolCalls()
	if len(got) != 2 || got[0].ID != "call_1" || got[1].ID == "" {
		t.Fatalf("calls %+v", got)
	}
	for i, c := range calls {
		var args map[string]any
		if err := json.Unmarshal(got[i].Args, &args); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{}
		for k, v := range c.Function.Arguments.All() {
			b, _ := json.Marshal(v)
			var x any
			json.Unmarshal(b, &x)
			want[k] = x
		}
		if got[i].Name != c.Function.Name || !reflect.DeepEqual(args, want) {
			t.Errorf("call %d: %s %s, want %s %v", i, got[i].Name, got[i].Args, c.Function.Name, want)
		}
	}
	if !strings.Contains(string(m.Native["ollama"]), `"total_duration":2000000000`) {
		t.Errorf("durations not kept: %s", m.Native["ollama"])
	}
}
