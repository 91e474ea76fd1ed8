package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/catalog"
	"github.com/convo-go/convo/provider/all"
)

// TestConvertEveryPair converts the shipped example into every format, and
// from each of those into every format: all pairs of names work, and the
// tool call keeps its id and arguments through each of them.
func TestConvertEveryPair(t *testing.T) {
	names := []string{"convo"}
	for _, c := range all.Formats() {
		names = append(names, c.Name())
	}
	if len(names) < 7 {
		t.Fatalf("only %d formats: %v", len(names), names)
	}
	inputs := map[string]string{}
	for _, from := range names {
		out, errs, code := runCLI(t, "", "convert", "--from", "convo", "--to", from, "--media", "placeholder", "../../examples/weather.json")
		if code != 0 {
			t.Fatalf("convo → %s: exit %d: %s", from, code, errs)
		}
		inputs[from] = out
	}
	for _, from := range names {
		for _, to := range names {
			t.Run(from+"→"+to, func(t *testing.T) {
				out, errs, code := runCLI(t, inputs[from], "convert", "--from", from, "--to", to, "--media", "placeholder")
				if code != 0 {
					t.Fatalf("exit %d: %s", code, errs)
				}
				back, errs, code := runCLI(t, out, "convert", "--from", to, "--to", "convo")
				if code != 0 {
					t.Fatalf("reading the %s output back: exit %d: %s", to, code, errs)
				}
				h, err := convo.Unmarshal([]byte(back))
				if err != nil {
					t.Fatal(err)
				}
				var calls []convo.Part
				for _, m := range h {
					calls = append(calls, m.ToolCalls()...)
				}
				if len(calls) != 1 || !strings.Contains(calls[0].ID, "toolu_1") || calls[0].Name != "get_weather" {
					t.Fatalf("tool call lost: %+v\n%s", calls, back)
				}
				var args map[string]string
				if err := json.Unmarshal(calls[0].Args, &args); err != nil || args["city"] != "Paris" {
					t.Fatalf("arguments changed: %s", calls[0].Args)
				}
			})
		}
	}
}

func TestConvertStrict(t *testing.T) {
	_, errs, code := runCLI(t, "", "convert", "--from", "convo", "--to", "openai-chat", "--strict", "../../examples/weather.json")
	if code != 1 || !strings.Contains(errs, "strict: messages[2].parts[0]: signed or encrypted reasoning from anthropic dropped") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, errs, code = runCLI(t, `{"messages":[{"role":"user","content":7}]}`, "convert", "--from", "anthropic", "--to", "convo")
	if code != 1 || !strings.Contains(errs, "messages[0].content") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Fatalf("bad provider input: exit %d: %q", code, errs)
	}
}

// A whole request keeps its model, tools and settings through convert;
// --messages-only keeps only the conversation; to convo, settings are
// warned about.
func TestConvertWholeRequest(t *testing.T) {
	in := `{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"required","temperature":0.2,"seed":1}`
	out, errs, code := runCLI(t, in, "convert", "--from", "openai-chat", "--to", "anthropic")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var body map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &body); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"model", "max_tokens", "messages", "tools", "tool_choice", "temperature"} {
		if body[k] == nil {
			t.Errorf("no %q in %s", k, out)
		}
	}
	if string(body["tool_choice"]) != `{"type":"any"}` {
		t.Errorf("tool_choice = %s", body["tool_choice"])
	}
	if !strings.Contains(errs, "warning: seed: anthropic has no such setting") {
		t.Errorf("no warning for seed: %q", errs)
	}
	out, errs, code = runCLI(t, in, "convert", "--from", "openai-chat", "--to", "anthropic", "--messages-only")
	if code != 0 || strings.Contains(out, "tools") || !strings.Contains(out, "messages") {
		t.Errorf("--messages-only: exit %d: %s", code, out)
	}
	// What --messages-only leaves behind is still named, member by member.
	for _, k := range []string{"model", "tools", "tool_choice", "temperature", "seed"} {
		if !strings.Contains(errs, "warning: "+k+": left out: --messages-only") {
			t.Errorf("--messages-only: no warning for %s: %q", k, errs)
		}
	}
	_, errs, code = runCLI(t, in, "convert", "--from", "openai-chat", "--to", "convo")
	if code != 0 || !strings.Contains(errs, "warning: tools: a convo history has no request settings") {
		t.Errorf("to convo: exit %d: %s", code, errs)
	}
}

// TestConvertCandidates: the number of candidates crosses a whole-request
// conversion (Chat n to Gemini candidateCount), is named when a target
// returns one reply, and --strict makes that loss an error.
func TestConvertCandidates(t *testing.T) {
	in := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"n":3}`
	out, errs, code := runCLI(t, in, "convert", "--from", "openai-chat", "--to", "gemini")
	if code != 0 || !strings.Contains(out, `"generationConfig":{"candidateCount":3}`) || errs != "" {
		t.Errorf("to gemini: exit %d: %s %s", code, out, errs)
	}
	out, _, code = runCLI(t, out, "convert", "--from", "gemini", "--to", "openai-chat")
	if code != 0 || !strings.Contains(out, `"n":3`) {
		t.Errorf("back to chat: exit %d: %s", code, out)
	}
	_, errs, code = runCLI(t, in, "convert", "--from", "openai-chat", "--to", "openai-responses")
	if code != 0 || !strings.Contains(errs, "warning: candidates: openai-responses returns one reply per request") {
		t.Errorf("to responses: exit %d: %q", code, errs)
	}
	if _, _, code = runCLI(t, in, "convert", "--from", "openai-chat", "--to", "openai-responses", "--strict"); code != 1 {
		t.Errorf("--strict: exit %d, want 1", code)
	}
}

// --model sets a converted whole request's model: it names the target.
func TestConvertRequestModel(t *testing.T) {
	in := `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`
	out, errs, code := runCLI(t, in, "convert", "--from", "anthropic", "--to", "openai-chat", "--model", "gpt-5")
	if code != 0 || !strings.Contains(out, `"model":"gpt-5"`) {
		t.Fatalf("code %d\n%s\n%s", code, out, errs)
	}
	out, _, code = runCLI(t, in, "convert", "--from", "anthropic", "--to", "openai-chat")
	if code != 0 || !strings.Contains(out, `"model":"claude-sonnet-4-5"`) {
		t.Fatalf("without --model: code %d\n%s", code, out)
	}
}

// TestConvertTargetFromCatalogue: the target model's facts come from the
// model catalogue (--models laid over it): Anthropic's max_tokens from the
// model's maximum output, temperature left out for a model that refuses it
// while thinking, and a model the catalogue does not know is a warning.
func TestConvertTargetFromCatalogue(t *testing.T) {
	chat := `{"model":"gpt-5","messages":[{"role":"user","content":"hi"}]}`
	maxOut := catalog.Default()
	m, _ := maxOut.Lookup("claude-sonnet-4-5")
	out, errs, code := runCLI(t, chat, "convert", "--from", "openai-chat", "--to", "anthropic", "--model", "claude-sonnet-4-5")
	if code != 0 || !strings.Contains(out, fmt.Sprintf(`"max_tokens":%d`, m.MaxOutput)) {
		t.Fatalf("want max_tokens %d from the catalogue: code %d\n%s\n%s", m.MaxOutput, code, out, errs)
	}
	if strings.Contains(errs, "model-unknown") || strings.Contains(errs, "not in the model catalogue") {
		t.Errorf("a catalogued model warned: %s", errs)
	}

	thinking := `{"model":"gpt-5","reasoning_effort":"high","temperature":0.5,"messages":[{"role":"user","content":"hi"}]}`
	out, errs, code = runCLI(t, thinking, "convert", "--from", "openai-chat", "--to", "anthropic", "--model", "claude-sonnet-4-5")
	if code != 0 || strings.Contains(out, `"temperature"`) || !strings.Contains(errs, "temperature") {
		t.Errorf("temperature while thinking: code %d\n%s\n%s", code, out, errs)
	}

	_, errs, code = runCLI(t, chat, "convert", "--from", "openai-chat", "--to", "anthropic", "--model", "claude-unheard-of-9")
	if code != 0 || !strings.Contains(errs, "not in the model catalogue") {
		t.Errorf("a model the catalogue knows only by family: code %d, stderr %s", code, errs)
	}

	// A catalogue file laid over the shipped one changes the figure.
	file := filepath.Join(t.TempDir(), "models.json")
	doc := `{"format":"convo-catalog/v1","models":[{"name":"claude-sonnet-4-5","provider":"anthropic","family":"anthropic","context":200000,"max_output":1234,"source":["https://example.com/models"],"as_of":"2026-12-05"}]}`
	if err := os.WriteFile(file, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs, code = runCLI(t, chat, "convert", "--from", "openai-chat", "--to", "anthropic", "--model", "claude-sonnet-4-5", "--models", file)
	if code != 0 || !strings.Contains(out, `"max_tokens":1234`) {
		t.Errorf("--models: code %d\n%s\n%s", code, out, errs)
	}
}
