package gemini

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// indent pretty-prints JSON for golden files people read.
func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("encoder wrote invalid JSON: %v\n%s", err, b)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return append(out, '\n')
}

// TestEncodeForeign encodes a history written by other providers: their
// signed, encrypted and plain reasoning is dropped with warnings (never sent
// as Gemini thoughts), names, cache breakpoints, image detail and malformed
// arguments are dropped with warnings, refusals and JSON become text, a
// later system message becomes user text, and the error message is left out.
func TestEncodeForeign(t *testing.T) {
	h := codectest.History(t, "testdata/cross/foreign.convo.json")
	opts := provider.Options{Media: provider.MediaPlaceholder}
	out, warns, err := GenerateContent().Encode(h, opts)
	if err != nil {
		t.Fatal(err)
	}
	codectest.Golden(t, "testdata/cross/foreign.gemini.json", indent(t, out))
	codectest.Golden(t, "testdata/cross/foreign.warnings.txt", codectest.WarningText(warns))

	// Nothing bound to another provider reaches the request.
	for _, leak := range []string{"EqQBanthropic", "RUNSWVBURUQ=", "gAAAAB", "rs_1", "thought"} {
		if strings.Contains(string(out), leak) {
			t.Errorf("request carries %q", leak)
		}
	}

	// The same history with reasoning=text sends the visible reasoning as
	// text and says so.
	opts.Reasoning = provider.ReasoningText
	out, warns, err = GenerateContent().Encode(h, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"text":"Use the tool."`, `"text":"Need forecast."`, `"text":"Plain thinking from Ollama."`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("reasoning=text: %s missing from %s", want, out)
		}
	}
	if strings.Contains(string(out), "EqQBanthropic") || !strings.Contains(string(codectest.WarningText(warns)), "sent as text") {
		t.Errorf("reasoning=text: signature sent or no warning:\n%s", string(codectest.WarningText(warns)))
	}

	// Strict turns the first warning into an error.
	_, _, err = GenerateContent().Encode(h, provider.Options{Strict: true, Media: provider.MediaPlaceholder})
	var se *provider.StrictError
	if !errors.As(err, &se) {
		t.Fatalf("strict: got %v, want a StrictError", err)
	}
}

func TestEncodeStrictOwnWarnings(t *testing.T) {
	// Nothing for Prepare to warn about; only Encode's own rule fires.
	h := convo.History{convo.User("hi"), {Role: convo.RoleAssistant, Parts: []convo.Part{convo.Refusal("no")}}}
	_, warns, err := GenerateContent().Encode(h, provider.Options{Strict: true})
	var se *provider.StrictError
	if !errors.As(err, &se) || len(warns) != 1 || !strings.Contains(warns[0].String(), "contents[1].parts[0]: refusal sent as text") {
		t.Fatalf("got %v, %v", err, warns)
	}
}

func enc(t *testing.T, h convo.History, opts provider.Options) (string, string) {
	t.Helper()
	out, warns, err := GenerateContent().Encode(h, opts)
	if err != nil {
		t.Fatal(err)
	}
	return string(out), string(codectest.WarningText(warns))
}

// TestEncodeToolResults checks how results from other providers become
// functionResponse objects: the SDK convention of {"output":…} /
// {"error":…}, or the object itself.
func TestEncodeToolResults(t *testing.T) {
	img := convo.Image("image/png", []byte("png"))
	tests := []struct {
		name   string
		result convo.Part
		want   string
	}{
		{"text", convo.ToolResult("c1", "f", "done"), `{"id":"c1","name":"f","response":{"output":"done"}}`},
		{"texts joined", convo.ToolResultParts("c1", "f", convo.Text("a"), convo.Text("b")), `{"id":"c1","name":"f","response":{"output":"a\nb"}}`},
		{"object is the output", convo.ToolResultParts("c1", "f", convo.JSON([]byte(`{ "temp": 18 }`))), `{"id":"c1","name":"f","response":{"temp":18}}`},
		{"object with output key wrapped", convo.ToolResultParts("c1", "f", convo.JSON([]byte(`{"output":1}`))), `{"id":"c1","name":"f","response":{"output":{"output":1}}}`},
		{"array wrapped", convo.ToolResultParts("c1", "f", convo.JSON([]byte(`[1,2]`))), `{"id":"c1","name":"f","response":{"output":[1,2]}}`},
		{"mixed as array", convo.ToolResultParts("c1", "f", convo.Text("n"), convo.JSON([]byte(`3`))), `{"id":"c1","name":"f","response":{"output":["n",3]}}`},
		{"error text", convo.ToolError("c1", "f", "boom"), `{"id":"c1","name":"f","response":{"error":"boom"}}`},
		{"error object", convo.Part{Type: convo.TypeToolResult, ID: "c1", Name: "f", Error: true, Parts: []convo.Part{convo.JSON([]byte(`{"code":1}`))}}, `{"id":"c1","name":"f","response":{"error":{"code":1}}}`},
		{"empty", convo.ToolResultParts("c1", "f"), `{"id":"c1","name":"f","response":{}}`},
		{"empty error", convo.Part{Type: convo.TypeToolResult, ID: "c1", Name: "f", Error: true}, `{"id":"c1","name":"f","response":{"error":{}}}`},
		{"media in parts", convo.ToolResultParts("c1", "f", convo.Text("see"), img), `{"id":"c1","name":"f","response":{"output":"see"},"parts":[{"inlineData":{"mimeType":"image/png","data":"cG5n"}}]}`},
		{"name from the call", convo.ToolResult("c1", "", "x"), `{"id":"c1","name":"f","response":{"output":"x"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := convo.History{
				convo.User("go"),
				convo.Assistant("", convo.ToolCall("c1", "f", json.RawMessage(`{}`))),
				convo.ToolResults(tt.result),
			}
			out, warns := enc(t, h, provider.Options{})
			want := `{"role":"user","parts":[{"functionResponse":` + tt.want + `}]}`
			if !strings.HasSuffix(out, want+"]}") {
				t.Errorf("got  %s\nwant …%s", out, want)
			}
			if warns != "" {
				t.Errorf("warnings: %s", warns)
			}
		})
	}
}

// TestEncodeContents checks how messages are grouped into contents.
func TestEncodeContents(t *testing.T) {
	call := convo.ToolCall("c1", "f", json.RawMessage(`{"a":1}`))
	tests := []struct {
		name string
		h    convo.History
		want string
	}{
		{
			"tool results of one call per message share one content, with the user text after them",
			convo.History{
				convo.User("go"),
				convo.Assistant("", call, convo.ToolCall("c2", "g", nil)),
				convo.ToolResults(convo.ToolResult("c1", "f", "1")),
				convo.ToolResults(convo.ToolResult("c2", "g", "2")),
				convo.User("next"),
			},
			`{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"functionCall":{"id":"c1","name":"f","args":{"a":1}}},{"functionCall":{"id":"c2","name":"g"}}]},{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"f","response":{"output":"1"}}},{"functionResponse":{"id":"c2","name":"g","response":{"output":"2"}}},{"text":"next"}]}]}`,
		},
		{
			"consecutive user and assistant messages stay apart",
			convo.History{convo.User("a"), convo.User("b"), convo.Assistant("c"), convo.Assistant("d")},
			`{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"user","parts":[{"text":"b"}]},{"role":"model","parts":[{"text":"c"}]},{"role":"model","parts":[{"text":"d"}]}]}`,
		},
		{
			"summary becomes user text; an empty assistant message is left out",
			convo.History{convo.Summary("before", 2), {Role: convo.RoleAssistant}, convo.User("now")},
			`{"contents":[{"role":"user","parts":[{"text":"before"}]},{"role":"user","parts":[{"text":"now"}]}]}`,
		},
		{
			"inline text document goes as text/plain bytes",
			convo.History{convo.User("", convo.Part{Type: convo.TypeFile, Text: "hello"})},
			`{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"text/plain","data":"` + base64.StdEncoding.EncodeToString([]byte("hello")) + `"}}]}]}`,
		},
		{
			"null arguments are no arguments",
			convo.History{convo.User("go"), convo.Assistant("", convo.ToolCall("c1", "f", json.RawMessage(`null`))), convo.ToolResults(convo.ToolResult("c1", "f", "ok"))},
			`{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"functionCall":{"id":"c1","name":"f"}}]},{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"f","response":{"output":"ok"}}}]}]}`,
		},
		{
			"a thought whose signature is only in its native fields keeps it",
			convo.History{{Role: convo.RoleAssistant, Parts: []convo.Part{{Type: convo.TypeReasoning, Text: "t", Provider: ProviderID,
				Native: convo.Native{"gemini": json.RawMessage(`{"thoughtSignature":"U0lH","thought":false}`)}}}}},
			`{"contents":[{"role":"model","parts":[{"text":"t","thought":true,"thoughtSignature":"U0lH"}]}]}`,
		},
		{
			"empty history",
			convo.History{},
			`{"contents":[]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := enc(t, tt.h, provider.Options{})
			if out != tt.want {
				t.Errorf("got  %s\nwant %s", out, tt.want)
			}
		})
	}
}

// TestEncodeWarnings checks each thing Encode itself drops or changes.
func TestEncodeWarnings(t *testing.T) {
	tests := []struct {
		name string
		part convo.Part
		role convo.Role
		want string
	}{
		{"cache", convo.Text("x").WithCache("5m"), convo.RoleUser, "contents[0].parts[0]: cache breakpoint dropped"},
		{"detail", convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: "cG5n", Detail: "low"}, convo.RoleUser, `contents[0].parts[0]: image detail "low" dropped`},
		{"name", convo.File("application/pdf", "a.pdf", []byte("%PDF")), convo.RoleUser, `contents[0].parts[0]: file name "a.pdf" dropped`},
		{"json", convo.JSON([]byte(`{"a":1}`)), convo.RoleUser, "contents[0].parts[0]: json part sent as text"},
		{"refusal", convo.Refusal("no"), convo.RoleAssistant, "contents[0].parts[0]: refusal sent as text"},
		{"native clash", convo.Part{Type: convo.TypeText, Text: "x", Native: convo.Native{"gemini": json.RawMessage(`{"functionCall":{"name":"f"}}`)}}, convo.RoleUser, `native member "functionCall" ignored`},
		{"array args", convo.ToolCall("c", "f", json.RawMessage(`[1]`)), convo.RoleAssistant, "arguments of f dropped"},
		{"malformed args", convo.Part{Type: convo.TypeToolCall, ID: "c", Name: "f", ArgsRaw: `{"a":`}, convo.RoleAssistant, "malformed arguments of f dropped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := convo.History{{Role: tt.role, Parts: []convo.Part{tt.part}}}
			if tt.part.Type == convo.TypeToolCall {
				h = append(h, convo.ToolResults(convo.ToolResult("c", "f", "r")))
			}
			_, warns := enc(t, h, provider.Options{})
			if !strings.Contains(warns, tt.want) {
				t.Errorf("warnings %q do not contain %q", warns, tt.want)
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	tests := []struct {
		name string
		h    convo.History
		want string
	}{
		{"tool call in a user message", convo.History{{Role: convo.RoleUser, Parts: []convo.Part{convo.ToolCall("c", "f", nil)}}}, "contents[0].parts[0]: tool_call in a user message"},
		{"invalid UTF-8", convo.History{convo.User("bad \xff")}, "contents[0].parts[0].text: invalid UTF-8"},
		{"invalid args", convo.History{convo.Assistant("", convo.ToolCall("c", "f", json.RawMessage(`{bad`))), convo.ToolResults(convo.ToolResult("c", "f", "r"))}, "contents[0].parts[0].functionCall.args: invalid JSON"},
		{"invalid native", convo.History{{Role: convo.RoleUser, Parts: []convo.Part{{Type: convo.TypeText, Text: "x", Native: convo.Native{"gemini": json.RawMessage(`[1]`)}}}}}, "contents[0].parts[0].native.gemini"},
		{"unpaired call", convo.History{convo.User("go"), convo.Assistant("", convo.ToolCall("c", "f", nil)), convo.User("?")}, `messages[1].parts[0]: tool call "c" (f) has no result before messages[2]`},
		{"foreign file id", convo.History{convo.User("", convo.Part{Type: convo.TypeFile, MediaType: "application/pdf", FileID: "file-abc"})}, "messages[0].parts[0]: the target cannot take file (application/pdf) by file id file-abc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := GenerateContent().Encode(tt.h, provider.Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestEncodeRepair(t *testing.T) {
	h := convo.History{convo.User("go"), convo.Assistant("", convo.ToolCall("c", "f", nil)), convo.User("?")}
	out, warns := enc(t, h, provider.Options{Repair: true})
	want := `{"role":"user","parts":[{"functionResponse":{"id":"c","name":"f","response":{"error":"` + provider.NotRun + `"}}},{"text":"?"}]}`
	if !strings.Contains(out, want) || !strings.Contains(warns, "error result was inserted") {
		t.Errorf("got %s\n%s", out, warns)
	}
	// A call whose id Decode made up went without it; so does the result
	// Repair inserts for it, which carries no note of its own.
	h, _, err := GenerateContent().Decode([]byte(`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f"}}]},{"role":"user","parts":[{"text":"?"}]}]}`), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, _ = enc(t, h, provider.Options{Repair: true})
	want = `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f"}}]},{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"error":"` + provider.NotRun + `"}}},{"text":"?"}]}]}`
	if out != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	// A call at the end is pending, not unpaired: Gemini takes it, and
	// Repair has nothing to repair.
	h = convo.History{convo.User("go"), convo.Assistant("", convo.ToolCall("c", "f", nil))}
	out, warns = enc(t, h, provider.Options{Repair: true})
	if want := `{"contents":[{"role":"user","parts":[{"text":"go"}]},{"role":"model","parts":[{"functionCall":{"id":"c","name":"f"}}]}]}`; out != want || warns != "" {
		t.Errorf("pending call: got %s (warnings %q), want %s", out, warns, want)
	}
}

func TestEncodeMedia(t *testing.T) {
	foreign := convo.History{convo.User("see", convo.Part{Type: convo.TypeImage, MediaType: "image/png", FileID: "file-abc"})}
	out, warns := enc(t, foreign, provider.Options{Media: provider.MediaPlaceholder})
	if !strings.Contains(out, `{"text":"[image (image/png) by file id file-abc omitted]"}`) || !strings.Contains(warns, "replaced by a text placeholder") {
		t.Errorf("placeholder: %s\n%s", out, warns)
	}
	resolve := func(p convo.Part) (convo.Part, error) {
		return convo.Image(p.MediaType, []byte("fetched")), nil
	}
	out, warns = enc(t, foreign, provider.Options{Resolve: resolve})
	if !strings.Contains(out, `"inlineData":{"mimeType":"image/png","data":"ZmV0Y2hlZA=="}`) || warns != "" {
		t.Errorf("resolver: %s\n%s", out, warns)
	}
	// URLs and Files API ids go as fileData; nothing is fetched.
	own := convo.History{convo.User("",
		convo.ImageURL("image/png", "https://example.com/a.png"),
		convo.Part{Type: convo.TypeVideo, MediaType: "video/mp4", FileID: FilesPrefix + "v1beta/files/x"})}
	out, _ = enc(t, own, provider.Options{})
	want := `[{"fileData":{"mimeType":"image/png","fileUri":"https://example.com/a.png"}},{"fileData":{"mimeType":"video/mp4","fileUri":"https://generativelanguage.googleapis.com/v1beta/files/x"}}]`
	if !strings.Contains(out, want) {
		t.Errorf("got %s", out)
	}
}

// TestEncodeBypass checks Options.GeminiBypass: the bypass signature goes on
// the first functionCall of every step without a signature, and nowhere
// else; without the option nothing is faked.
func TestEncodeBypass(t *testing.T) {
	signed := convo.ToolCall("g1", "f", nil)
	signed.Native = convo.Native{"gemini": json.RawMessage(`{"thoughtSignature":"REAL"}`)}
	unsignedSecond := convo.ToolCall("g2", "f", nil)
	h := convo.History{
		convo.User("go"),
		convo.Assistant("thinking aloud", convo.ToolCall("a1", "f", nil), convo.ToolCall("a2", "f", nil)),
		convo.ToolResults(convo.ToolResult("a1", "f", "1"), convo.ToolResult("a2", "f", "2")),
		convo.Assistant("", signed, unsignedSecond),
		convo.ToolResults(convo.ToolResult("g1", "f", "3"), convo.ToolResult("g2", "f", "4")),
		convo.Assistant("", convo.ToolCall("b1", "f", nil)),
		convo.ToolResults(convo.ToolResult("b1", "f", "5")),
	}
	out, _ := enc(t, h, provider.Options{GeminiBypass: true})
	sig := `"thoughtSignature":"` + BypassSignature + `"`
	if n := strings.Count(out, sig); n != 2 {
		t.Errorf("%d bypass signatures, want 2: %s", n, out)
	}
	for _, want := range []string{
		`{"text":"thinking aloud"},{"functionCall":{"id":"a1","name":"f"},` + sig + `},{"functionCall":{"id":"a2","name":"f"}}`,
		`{"functionCall":{"id":"g1","name":"f"},"thoughtSignature":"REAL"},{"functionCall":{"id":"g2","name":"f"}}`,
		`{"functionCall":{"id":"b1","name":"f"},` + sig + `}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in %s", want, out)
		}
	}
	out, _ = enc(t, h, provider.Options{})
	if strings.Contains(out, BypassSignature) {
		t.Errorf("bypass without the option: %s", out)
	}
	out, _ = enc(t, h, provider.Options{Model: "gemini-2.5-pro"})
	if strings.Contains(out, BypassSignature) {
		t.Errorf("bypass for Gemini 2.5: %s", out)
	}
	// A Gemini 3 model gets it without the option, with one warning for
	// the whole request.
	for _, model := range []string{"gemini-3-pro-preview", "models/gemini-3-flash-preview"} {
		got, warns := enc(t, h, provider.Options{Model: model})
		if n := strings.Count(got, sig); n != 2 {
			t.Errorf("%s: %d bypass signatures, want 2: %s", model, n, got)
		}
		want := `contents[1].parts[1]: model "` + model + `" is a Gemini 3 model, which refuses function calls of the current turn without a thought signature: Google's documented bypass signature was put on 2 function calls from another provider (contents[1].parts[1], contents[5].parts[0])`
		if warns != want+"\n" {
			t.Errorf("%s: warnings\n got %s\nwant %s", model, warns, want)
		}
	}
}

func TestGemini3(t *testing.T) {
	for model, want := range map[string]bool{
		"gemini-3-pro-preview": true, "gemini-3-flash": true, "gemini-3": true, "gemini-3.1-pro-preview": true,
		"models/gemini-3-pro-preview": true, "projects/p/locations/global/publishers/google/models/gemini-3-pro-preview": true,
		"Gemini-3-Pro":   true,
		"gemini-2.5-pro": false, "gemini-30": false, "gemini-1.5-flash": false, "": false, "gemma-3-27b-it": false, "models/gemini-2.0-flash": false,
	} {
		if got := Gemini3(model); got != want {
			t.Errorf("Gemini3(%q) = %v, want %v", model, got, want)
		}
	}
}

// TestEncodeBypassSplitStep: a step that Decode read from several model
// contents gets a bypass on each content's first call, since each content
// is checked on its own.
func TestEncodeBypassSplitStep(t *testing.T) {
	body := `{"contents":[{"role":"user","parts":[{"text":"go"}]},
	 {"role":"model","parts":[{"functionCall":{"name":"f"}}]},
	 {"role":"model","parts":[{"functionCall":{"name":"f"}}]},
	 {"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}},{"functionResponse":{"name":"f","response":{}}}]}]}`
	h, _, err := GenerateContent().Decode([]byte(body), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := enc(t, h, provider.Options{GeminiBypass: true})
	if n := strings.Count(out, BypassSignature); n != 2 {
		t.Errorf("%d bypass signatures, want 2: %s", n, out)
	}
}
