package provider_test

import (
	"strings"
	"testing"

	"github.com/convo-go/convo/provider"
)

func TestDetect(t *testing.T) {
	for _, tt := range []struct {
		body, format string
		sure         bool
	}{
		{`{"format":"convo/v1","messages":[]}`, "convo", true},
		{`[{"role":"user","parts":[{"type":"text","text":"hi"}]}]`, "convo", true},
		{`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, "gemini", true},
		{`{"systemInstruction":{"parts":[{"text":"s"}]},"contents":[]}`, "gemini", true},
		{`{"model":"gpt-5","input":"hi"}`, "openai-responses", true},
		{`{"instructions":"be brief","input":[{"role":"user","content":"hi"}]}`, "openai-responses", true},
		{`[{"role":"user","content":"hi"}]`, "litert", false},
		{`{"model":"claude","system":"be brief","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`, "anthropic", true},
		{`{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}]}`, "anthropic", false},
		{`{"system":[{"text":"be brief"}],"inferenceConfig":{"maxTokens":5},"messages":[{"role":"user","content":[{"text":"hi"}]}]}`, "bedrock", true},
		{`{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`, "bedrock", false},
		{`{"model":"qwen3","options":{"temperature":0},"messages":[{"role":"user","content":"hi","images":["aGk="]}]}`, "ollama", true},
		{`{"model":"gpt-4o","response_format":{"type":"json_object"},"messages":[{"role":"user","content":"hi"}]}`, "openai-chat", true},
		{`{"messages":[{"role":"tool","tool_call_id":"c","content":"1"}]}`, "openai-chat", false},
		{`{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "openai-chat", false},
	} {
		d, err := provider.Detect([]byte(tt.body))
		if err != nil || d.Format != tt.format || d.Sure != tt.sure || d.Reason == "" {
			t.Errorf("%s: got %+v, %v; want %s (sure %v)", tt.body, d, err, tt.format, tt.sure)
		}
	}
	for _, body := range []string{`"hi"`, `[1,2]`, `{"model":"m"}`, `{`,
		`{"system":"s","response_format":{},"messages":[]}`} { // as much anthropic as openai-chat
		if d, err := provider.Detect([]byte(body)); err == nil {
			t.Errorf("%s: got %+v, want an error", body, d)
		}
	}
}

// A request read with the wrong decoder fails, naming the format it looks
// like, instead of losing what that decoder does not look at.
func TestCheckFormat(t *testing.T) {
	anthropic := `{"model":"claude","system":"Be brief.","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`
	err := provider.CheckFormat([]byte(anthropic), "openai-chat")
	if err == nil || !strings.Contains(err.Error(), `this looks like an anthropic request, not openai-chat (top-level "system"): decode it as anthropic`) {
		t.Errorf("got %v", err)
	}
	for _, ok := range []struct{ body, name string }{
		{anthropic, "anthropic"},
		{`{"messages":[{"role":"user","content":"hi"}]}`, "anthropic"},              // nothing sure
		{`{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`, "openai-chat"}, // evidence, not proof: the decoder's own error says more
	} {
		if err := provider.CheckFormat([]byte(ok.body), ok.name); err != nil {
			t.Errorf("%s as %s: %v", ok.body, ok.name, err)
		}
	}
}

// FuzzDetect: whatever the bytes, Detect answers without panicking; a sure
// answer names a format and its evidence, and CheckFormat never refuses a
// body as the format Detect itself names.
func FuzzDetect(f *testing.F) {
	for _, s := range []string{
		`{"format":"convo/v1","messages":[]}`,
		`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
		`{"model":"gpt-5","input":"hi"}`,
		`{"model":"claude","system":"be brief","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`,
		`{"system":[{"text":"be brief"}],"inferenceConfig":{"maxTokens":5},"messages":[]}`,
		`{"model":"qwen3","options":{},"messages":[{"role":"user","content":"hi","images":["aGk="]}]}`,
		`[{"role":"user","content":"hi"}]`, `{`, `"hi"`, `[1,2]`,
		`{"system":"s","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u"}}]}]}`,
		`{"stream_options":{},"messages":[{"role":"user","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := provider.Detect(body)
		// CheckFormat, which reads the messages only when a top-level
		// member could make another format sure, refuses exactly what
		// Detect surely names as another format.
		for _, name := range []string{"anthropic", "bedrock", "gemini", "litert", "ollama", "openai-chat", "openai-responses"} {
			want := err == nil && d.Sure && d.Format != name && d.Format != "convo"
			if got := provider.CheckFormat(body, name); (got != nil) != want {
				t.Fatalf("CheckFormat(%s): %v; Detect: %+v, %v", name, got, d, err)
			}
		}
		if err != nil {
			return
		}
		if d.Sure && (d.Format == "" || d.Reason == "") {
			t.Fatalf("sure without a format or a reason: %+v", d)
		}
		if d.Format != "" {
			if err := provider.CheckFormat(body, d.Format); err != nil {
				t.Fatalf("CheckFormat refuses the format Detect named (%s): %v", d.Format, err)
			}
		}
	})
}
