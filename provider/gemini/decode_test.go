package gemini

import (
	"errors"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

func dec(t *testing.T, body string) (convo.History, string) {
	t.Helper()
	h, warns, err := GenerateContent().Decode([]byte(body), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h, string(codectest.WarningText(warns))
}

func canon(t *testing.T, h convo.History) string {
	t.Helper()
	b, err := convo.MarshalLines(h)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestDecodeAliases: protobuf JSON accepts snake_case field names, and the
// Gemini documentation's own curl examples use them (and a single object
// where a list of parts is expected); they decode like the camelCase form.
func TestDecodeAliases(t *testing.T) {
	snake := `{"system_instruction":{"parts":{"text":"Be brief."}},
	 "contents":[{"parts":[{"text":"hi"},{"inline_data":{"mime_type":"image/png","data":"cG5n"}},{"file_data":{"mime_type":"video/mp4","file_uri":"gs://b/v.mp4"}}]},
	 {"role":"model","parts":[{"function_call":{"name":"f","args":{"a":1}},"thought_signature":"U0lH"}]},
	 {"role":"user","parts":[{"function_response":{"name":"f","response":{"output":"ok"}}}]}]}`
	camel := `{"systemInstruction":{"parts":[{"text":"Be brief."}]},
	 "contents":[{"role":"user","parts":[{"text":"hi"},{"inlineData":{"mimeType":"image/png","data":"cG5n"}},{"fileData":{"mimeType":"video/mp4","fileUri":"gs://b/v.mp4"}}]},
	 {"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":1}},"thoughtSignature":"U0lH"}]},
	 {"role":"user","parts":[{"functionResponse":{"name":"f","response":{"output":"ok"}}}]}]}`
	a, _ := dec(t, snake)
	b, _ := dec(t, camel)
	if !a.Equal(b) {
		t.Errorf("snake_case decodes differently:\n%s\n%s", canon(t, a), canon(t, b))
	}
	out, _ := enc(t, a, provider.Options{})
	sameJSON(t, []byte(out), []byte(camel))
}

// TestDecodeBase64: bytes in protobuf JSON may be URL-safe or unpadded;
// convo keeps standard base64.
func TestDecodeBase64(t *testing.T) {
	for _, data := range []string{"-_8=", "-_8", "+/8"} {
		h, _ := dec(t, `{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"image/png","data":"`+data+`"}}]}]}`)
		if got := h[0].Parts[0].Data; got != "+/8=" {
			t.Errorf("%s: got %q, want +/8=", data, got)
		}
	}
}

func TestDecodeReorder(t *testing.T) {
	h, warns := dec(t, `{"contents":[{"role":"user","parts":[{"text":"q"}]},
	 {"role":"model","parts":[{"functionCall":{"name":"f"}}]},
	 {"role":"user","parts":[{"text":"here:"},{"functionResponse":{"name":"f","response":{}}}]}]}`)
	if len(h) != 4 || h[2].Role != convo.RoleTool || h[3].Role != convo.RoleUser || h[3].Parts[0].Text != "here:" {
		t.Fatalf("got %s", canon(t, h))
	}
	if !strings.Contains(warns, "contents[2]: function responses moved before the other parts") {
		t.Errorf("warnings: %s", warns)
	}
	if err := h.Validate(); err != nil {
		t.Errorf("reordered history does not validate: %v", err)
	}
}

// TestDecodePairing: responses without ids take the ids of the calls they
// answer, by name and order; a response that answers no call keeps its own.
func TestDecodePairing(t *testing.T) {
	h, _ := dec(t, `{"contents":[{"role":"user","parts":[{"text":"q"}]},
	 {"role":"model","parts":[{"functionCall":{"name":"f","args":{"n":1}}},{"functionCall":{"id":"x","name":"g"}},{"functionCall":{"name":"f","args":{"n":2}}}]},
	 {"role":"user","parts":[{"functionResponse":{"name":"f","response":{"n":1}}},{"functionResponse":{"name":"f","response":{"n":2}}},{"functionResponse":{"name":"g","response":{}}}]}]}`)
	calls, results := h[1].ToolCalls(), h[2].ToolResults()
	if results[0].ID != calls[0].ID || results[1].ID != calls[2].ID || results[2].ID != "x" || calls[0].ID == calls[2].ID {
		t.Errorf("pairing: %s", canon(t, h))
	}
	if err := h.Validate(); err != nil {
		t.Error(err)
	}
	// Same input, same ids.
	h2, _ := dec(t, `{"contents":[{"role":"user","parts":[{"text":"q"}]},
	 {"role":"model","parts":[{"functionCall":{"name":"f","args":{"n":1}}},{"functionCall":{"id":"x","name":"g"}},{"functionCall":{"name":"f","args":{"n":2}}}]},
	 {"role":"user","parts":[{"functionResponse":{"name":"f","response":{"n":1}}},{"functionResponse":{"name":"f","response":{"n":2}}},{"functionResponse":{"name":"g","response":{}}}]}]}`)
	if !h.Equal(h2) {
		t.Error("ids are not deterministic")
	}
	h, _ = dec(t, `{"contents":[{"role":"user","parts":[{"functionResponse":{"id":"lost","name":"f","response":{}}}]}]}`)
	if h[0].Parts[0].ID != "lost" {
		t.Errorf("orphan: %s", canon(t, h))
	}
}

func TestDecodeDefaults(t *testing.T) {
	// No role means user; other request members are ignored; a content
	// member Gemini does not define is ignored with a warning.
	h, warns := dec(t, `{"model":"m","contents":[{"parts":[{"text":"hi"}],"extra":1}],"tools":[{"x":1}],"generationConfig":{}}`)
	if len(h) != 1 || h[0].Role != convo.RoleUser || h[0].Text() != "hi" {
		t.Errorf("got %s", canon(t, h))
	}
	if !strings.Contains(warns, `contents[0]: member "extra" of a content ignored`) {
		t.Errorf("warnings: %s", warns)
	}
	// Null members are unset fields.
	h, _ = dec(t, `{"systemInstruction":null,"contents":[{"role":null,"parts":[{"text":"a","thought":null,"inlineData":null}]}]}`)
	if len(h) != 1 || h[0].Parts[0].Type != convo.TypeText || h[0].Parts[0].Native != nil {
		t.Errorf("nulls: %s", canon(t, h))
	}
	h, _ = dec(t, `{"contents":[]}`)
	if h == nil || len(h) != 0 {
		t.Errorf("empty contents: %#v", h)
	}
	// Strict decoding fails on the first warning.
	_, _, err := GenerateContent().Decode([]byte(`{"contents":[{"parts":[],"x":1}]}`), provider.Options{Strict: true})
	var se *provider.StrictError
	if !errors.As(err, &se) {
		t.Errorf("strict: %v", err)
	}
}

// TestDecodeErrors: every malformed or wrongly shaped body is one error
// naming the place in Gemini's terms.
func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"not JSON", `{"contents":[`, "contents[0]: unexpected end of input, want object"},
		{"array body", `[]`, "request body: got array, want a JSON object"},
		{"no contents", `{"model":"x"}`, `request has no "contents"`},
		{"trailing data", `{"contents":[]} {}`, "unexpected data after the JSON value"},
		{"duplicate key", `{"contents":[],"contents":[]}`, `duplicate key "contents"`},
		{"system twice", `{"systemInstruction":{},"system_instruction":{}}`, "system_instruction: systemInstruction set twice"},
		{"bad role", `{"contents":[{"role":"assistant","parts":[]}]}`, `contents[0].role: unknown role "assistant" (want user or model)`},
		{"role not a string", `{"contents":[{"role":1}]}`, "contents[0].role: got number, want string"},
		{"parts not an array", `{"contents":[{"parts":"x"}]}`, "contents[0].parts: got string, want array"},
		{"two data fields", `{"contents":[{"parts":[{"text":"a","functionCall":{"name":"f"}}]}]}`, "contents[0].parts[0].functionCall: part sets both text and functionCall"},
		{"text not a string", `{"contents":[{"parts":[{"text":5}]}]}`, "contents[0].parts[0].text: got number, want string"},
		{"thought not a bool", `{"contents":[{"parts":[{"text":"a","thought":"yes"}]}]}`, "contents[0].parts[0].thought: got string, want boolean"},
		{"signature twice", `{"contents":[{"parts":[{"text":"a","thoughtSignature":"A","thought_signature":"B"}]}]}`, "contents[0].parts[0].thought_signature: thoughtSignature set twice"},
		{"signature not a string", `{"contents":[{"parts":[{"text":"a","thoughtSignature":1}]}]}`, "contents[0].parts[0].thoughtSignature: got number, want string"},
		{"inline without data", `{"contents":[{"parts":[{"inlineData":{"mimeType":"image/png"}}]}]}`, "contents[0].parts[0].inlineData: inlineData has no data"},
		{"inline without mime", `{"contents":[{"parts":[{"inlineData":{"data":"cG5n"}}]}]}`, "contents[0].parts[0].inlineData: inlineData has no mimeType"},
		{"inline bad base64", `{"contents":[{"parts":[{"inlineData":{"mimeType":"image/png","data":"not base64!"}}]}]}`, "contents[0].parts[0].inlineData.data: data is not base64"},
		{"mime twice", `{"contents":[{"parts":[{"inlineData":{"mimeType":"a","mime_type":"b","data":""}}]}]}`, "contents[0].parts[0].inlineData.mime_type: mimeType set twice"},
		{"file without uri", `{"contents":[{"parts":[{"fileData":{"mimeType":"video/mp4"}}]}]}`, "contents[0].parts[0].fileData: fileData has no fileUri"},
		{"call without name", `{"contents":[{"role":"model","parts":[{"functionCall":{"args":{}}}]}]}`, "contents[0].parts[0].functionCall: functionCall has no name"},
		{"args not an object", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":[1]}}]}]}`, "contents[0].parts[0].functionCall.args: args must be a JSON object, got array"},
		{"response not an object", `{"contents":[{"parts":[{"functionResponse":{"name":"f","response":"ok"}}]}]}`, "contents[0].parts[0].functionResponse.response: response must be a JSON object, got string"},
		{"response without name", `{"contents":[{"parts":[{"functionResponse":{"response":{}}}]}]}`, "contents[0].parts[0].functionResponse: functionResponse has no name"},
		{"text in response parts", `{"contents":[{"parts":[{"functionResponse":{"name":"f","parts":[{"text":"x"}]}}]}]}`, "contents[0].parts[0].functionResponse.parts[0].text: text in functionResponse.parts"},
		{"empty response part", `{"contents":[{"parts":[{"functionResponse":{"name":"f","parts":[{}]}}]}]}`, "contents[0].parts[0].functionResponse.parts[0]: functionResponse part has no inlineData or fileData"},
		{"call in user content", `{"contents":[{"role":"user","parts":[{"text":"a"},{"functionCall":{"name":"f"}}]}]}`, "contents[0].parts[1]: functionCall in a user content"},
		{"response in model content", `{"contents":[{"role":"model","parts":[{"functionResponse":{"name":"f"}}]}]}`, "contents[0].parts[0]: functionResponse in a model content"},
		{"call in system", `{"systemInstruction":{"parts":[{"functionCall":{"name":"f"}}]},"contents":[]}`, "systemInstruction.parts[0]: functionCall in systemInstruction"},
		{"invalid UTF-8", "{\"contents\":[{\"parts\":[{\"text\":\"\xff\"}]}]}", "contents[0].parts[0].text: invalid UTF-8 in string"},
		{"second content", `{"contents":[{"parts":[{"text":"a"}]},{"parts":[{"text":1}]}]}`, "contents[1].parts[0].text: got number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := GenerateContent().Decode([]byte(tt.body), provider.Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v\nwant an error containing %q", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

func TestDecodeLimits(t *testing.T) {
	body := []byte(`{"contents":[{"parts":[{"text":"` + strings.Repeat("x", 100) + `"}]}]}`)
	_, _, err := GenerateContent().Decode(body, provider.Options{Limits: convo.Limits{MaxBytes: 50}})
	if !errors.Is(err, jsonx.ErrTooLarge) {
		t.Errorf("size: got %v", err)
	}
	deep := `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":` + strings.Repeat(`{"a":`, 40) + `1` + strings.Repeat(`}`, 40) + `}}]}]}`
	_, _, err = GenerateContent().Decode([]byte(deep), provider.Options{Limits: convo.Limits{MaxDepth: 20}})
	if err == nil || !strings.Contains(err.Error(), "nesting deeper than 20") {
		t.Errorf("depth: got %v", err)
	}
	if _, _, err := GenerateContent().Decode([]byte(deep), provider.Options{}); err != nil {
		t.Errorf("default depth: %v", err)
	}
}
