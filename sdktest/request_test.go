package sdktest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/ollama/ollama/api"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"google.golang.org/genai"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// wholeRequests returns every whole request convo's fixtures hold, encoded
// into format by convo: each fixture of provider/all decoded from its own
// format and encoded into this one.
func wholeRequests(t *testing.T, format string) map[string][]byte {
	t.Helper()
	to, err := all.LookupRequest(format)
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join("..", "provider", "all", "testdata", "requests", "*.json"))
	out := map[string][]byte{}
	for _, p := range paths {
		base := strings.TrimSuffix(filepath.Base(p), ".json")
		from, err := all.LookupRequest(strings.SplitN(base, ".", 2)[0])
		if err != nil {
			t.Fatal(err)
		}
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := from.DecodeRequest(body, provider.Options{})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		enc, _, err := to.EncodeRequest(r, provider.Options{Media: provider.MediaPlaceholder})
		if err != nil {
			t.Fatalf("%s to %s: %v", p, format, err)
		}
		out[base] = enc
	}
	if len(out) < 6 {
		t.Fatalf("only %d requests", len(out))
	}
	return out
}

func anyJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return v
}

// settings returns the members of a request body other than the
// conversation (compared, with each SDK's normalisations, by the
// conversation tests) and "stream", which the SDKs set by the method
// called rather than a parameter.
func settings(t *testing.T, body []byte, conv ...string) map[string]any {
	t.Helper()
	m, ok := anyJSON(t, body).(map[string]any)
	if !ok {
		t.Fatalf("not an object: %s", body)
	}
	for _, k := range append(conv, "stream") {
		delete(m, k)
	}
	return dropEmpty(m).(map[string]any)
}

// dropEmpty removes null members and empty strings, which some SDKs write
// for fields a request did not have.
func dropEmpty(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil || e == "" {
				delete(x, k)
				continue
			}
			x[k] = dropEmpty(e)
		}
	case []any:
		for i := range x {
			x[i] = dropEmpty(x[i])
		}
	}
	return v
}

// sdkMember reads one member into its SDK type and writes it back, for
// members whose union type the params type does not unmarshal by itself.
func sdkMember[T any](t *testing.T, raw any) any {
	t.Helper()
	b, _ := json.Marshal(raw)
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("the SDK cannot read %s: %v", b, err)
	}
	back, _ := json.Marshal(v)
	return dropEmpty(anyJSON(t, back))
}

// sdkRoundTrip unmarshals each request into the SDK's params type and
// marshals it back: the SDK must read every member convo wrote and write
// the same JSON.
func sdkRoundTrip[T any](t *testing.T, format string, strict bool, fix func(k string, sdk, convo any) any, conv ...string) {
	for name, body := range wholeRequests(t, format) {
		t.Run(name, func(t *testing.T) {
			var params T
			d := json.NewDecoder(bytes.NewReader(body))
			if strict {
				d.DisallowUnknownFields()
			}
			if err := d.Decode(&params); err != nil {
				t.Fatalf("the SDK cannot read convo's request: %v\n%s", err, body)
			}
			back, err := json.Marshal(params)
			if err != nil {
				t.Fatalf("the SDK cannot write it back: %v", err)
			}
			got, want := settings(t, back, conv...), settings(t, body, conv...)
			for k := range want {
				if fix != nil {
					got[k] = fix(k, got[k], want[k])
				}
				if !reflect.DeepEqual(got[k], want[k]) {
					t.Errorf("%s: the SDK has %v, convo wrote %v", k, got[k], want[k])
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("%s: the SDK added %v", k, got[k])
				}
			}
		})
	}
}

func TestWholeRequestOpenAIChatSDK(t *testing.T) {
	// The params type's tool_choice union does not unmarshal a named
	// function choice (it keeps the type and loses the name): that member
	// is read into the named-choice type itself.
	sdkRoundTrip[openai.ChatCompletionNewParams](t, "openai-chat", false, func(k string, sdk, convo any) any {
		if m, ok := convo.(map[string]any); ok && k == "tool_choice" && m["type"] == "function" {
			return sdkMember[openai.ChatCompletionNamedToolChoiceParam](t, convo)
		}
		return sdk
	}, "messages")
}

func TestWholeRequestOpenAIResponsesSDK(t *testing.T) {
	sdkRoundTrip[responses.ResponseNewParams](t, "openai-responses", false, func(k string, sdk, convo any) any {
		if m, ok := convo.(map[string]any); ok && k == "tool_choice" && m["type"] == "function" {
			return sdkMember[responses.ToolChoiceFunctionParam](t, convo)
		}
		return sdk
	}, "input", "instructions")
}

func TestWholeRequestAnthropicSDK(t *testing.T) {
	sdkRoundTrip[anthropic.BetaMessageNewParams](t, "anthropic", false, nil, "system", "messages")
}

func TestWholeRequestOllamaSDK(t *testing.T) {
	// keep_alive is a duration the SDK writes in Go's form ("5m0s").
	sdkRoundTrip[api.ChatRequest](t, "ollama", true, func(k string, sdk, convo any) any {
		if k == "tools" {
			// A tool without parameters: the SDK writes "parameters":{}.
			for _, tool := range sdk.([]any) {
				fn := tool.(map[string]any)["function"].(map[string]any)
				if p, ok := fn["parameters"].(map[string]any); ok && len(p) == 0 {
					delete(fn, "parameters")
				}
			}
		}
		if k == "keep_alive" {
			a, errA := time.ParseDuration(sdk.(string))
			b, errB := time.ParseDuration(convo.(string))
			if errA == nil && errB == nil && a == b {
				return convo
			}
		}
		return sdk
	}, "messages")
}

// Gemini's SDK has no type for the request body: GenerateContentConfig
// holds generationConfig's members and the request's other members
// (systemInstruction, tools, toolConfig, safetySettings, cachedContent)
// side by side, and the contents are a []*genai.Content.
func TestWholeRequestGeminiSDK(t *testing.T) {
	for name, body := range wholeRequests(t, "gemini") {
		t.Run(name, func(t *testing.T) {
			var top map[string]json.RawMessage
			if err := json.Unmarshal(body, &top); err != nil {
				t.Fatal(err)
			}
			flat := map[string]json.RawMessage{}
			for k, v := range top {
				switch k {
				case "contents":
				case "generationConfig":
					var gc map[string]json.RawMessage
					if err := json.Unmarshal(v, &gc); err != nil {
						t.Fatal(err)
					}
					for k, v := range gc {
						flat[k] = v
					}
				default:
					flat[k] = v
				}
			}
			flatJSON, _ := json.Marshal(flat)
			var cfg genai.GenerateContentConfig
			d := json.NewDecoder(bytes.NewReader(flatJSON))
			d.DisallowUnknownFields()
			if err := d.Decode(&cfg); err != nil {
				t.Fatalf("GenerateContentConfig cannot read %s: %v", flatJSON, err)
			}
			var contents []*genai.Content
			d = json.NewDecoder(bytes.NewReader(top["contents"]))
			d.DisallowUnknownFields()
			if err := d.Decode(&contents); err != nil {
				t.Fatalf("Content cannot read %s: %v", top["contents"], err)
			}
			back, _ := json.Marshal(&cfg)
			if got, want := anyJSON(t, back), anyJSON(t, flatJSON); !reflect.DeepEqual(got, want) {
				t.Errorf("GenerateContentConfig differs:\n sdk: %s\nconvo: %s", back, flatJSON)
			}
			cb, _ := json.Marshal(contents)
			if got, want := anyJSON(t, cb), anyJSON(t, top["contents"]); !reflect.DeepEqual(got, want) {
				t.Errorf("contents differ:\n sdk: %s\nconvo: %s", cb, top["contents"])
			}
		})
	}
}
