package all_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// A history that ends on calls without results is what every agent holds
// between the model's reply and the tool run: every codec encodes it, and
// those whose provider refuses such a request say so in a warning.
func TestPendingCalls(t *testing.T) {
	h := convo.History{convo.User("weather?"), convo.Assistant("", convo.ToolCall("call_1", "get_weather", json.RawMessage(`{"city":"Paris"}`)))}
	if err := h.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	refuses := map[string]bool{"openai-chat": true, "openai-responses": true, "anthropic": true, "bedrock": true}
	for _, c := range all.Formats() {
		t.Run(c.Name(), func(t *testing.T) {
			body, warns, err := c.Encode(h, provider.Options{})
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if !strings.Contains(string(body), "get_weather") {
				t.Errorf("the pending call is not in %s", body)
			}
			var pending []string
			for _, w := range warns {
				if strings.Contains(w.Msg, "ends on tool calls without results") {
					pending = append(pending, w.String())
				}
			}
			if refuses[c.Name()] != (len(pending) == 1) {
				t.Errorf("refuses=%v, pending warnings %q", refuses[c.Name()], pending)
			}
			back, _, err := c.Decode(body, provider.Options{})
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if p := back.Pending(); len(p) != 1 || p[0].Name != "get_weather" {
				t.Errorf("decoded pending calls %+v", p)
			}
		})
	}
}

// Anthropic and Bedrock refuse a prefill that ends in white space: their
// codecs trim it with a warning; every other codec sends it as it is.
func TestPrefillWhiteSpace(t *testing.T) {
	h := convo.History{convo.User("Capital of France?"), convo.Assistant("The capital is ")}
	trims := map[string]bool{"anthropic": true, "bedrock": true}
	for _, c := range all.Formats() {
		t.Run(c.Name(), func(t *testing.T) {
			body, warns, err := c.Encode(h, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			trimmed := strings.Contains(string(body), `"The capital is"`)
			if trimmed != trims[c.Name()] || trimmed == strings.Contains(string(body), `"The capital is "`) {
				t.Errorf("trimmed=%v in %s", trimmed, body)
			}
			if trims[c.Name()] != (len(warns) == 1) {
				t.Errorf("warnings %v", warns)
			}
		})
	}
}

// Every codec's Decode refuses a request that is surely another format,
// naming it, and Detect finds every codec's own fixtures' format.
func TestWrongFormat(t *testing.T) {
	anthropic := []byte(`{"model":"claude-sonnet-4-5","system":"Answer in French.","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`)
	for _, c := range all.Formats() {
		if c.Name() == "anthropic" {
			continue
		}
		_, _, err := c.Decode(anthropic, provider.Options{})
		if err == nil || !strings.Contains(err.Error(), "looks like an anthropic request") {
			t.Errorf("%s.Decode of an anthropic request: %v", c.Name(), err)
		}
	}
	h := convo.History{convo.System("Be brief."), convo.User("hi"), convo.Assistant("", convo.ToolCall("c1", "f", json.RawMessage(`{"a":1}`))),
		convo.ToolResults(convo.ToolResult("c1", "f", "ok")), convo.Assistant("done")}
	for _, c := range all.Formats() {
		body, _, err := c.Encode(h, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, d, err := all.Detect(body)
		if err != nil || got == nil || got.Name() != c.Name() {
			name := ""
			if got != nil {
				name = got.Name()
			}
			t.Errorf("Detect of what %s encodes: %s (%+v), %v", c.Name(), name, d, err)
		}
	}
}
