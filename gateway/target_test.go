package gateway_test

import (
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/catalog"
	"github.com/convo-go/convo/gateway"
)

// TestTranslateTarget: a translated request is built for the model it goes
// to, from the model catalogue (Options.Models): Anthropic's max_tokens is
// the model's maximum output when the client set none, temperature is left
// out while a model that refuses it thinks, and a model the catalogue does
// not know gets the gateway's default.
func TestTranslateTarget(t *testing.T) {
	sonnet, _ := catalog.Default().Lookup("claude-sonnet-4-5")
	doc, err := catalog.Parse(strings.NewReader(`{"format":"convo-catalog/v1","models":[{"name":"m-1","provider":"anthropic","family":"anthropic","context":8000,"max_output":1234,"source":["https://example.com/m-1"],"as_of":"2026-12-05"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	own := catalog.Default().Merge(doc)
	tests := []struct {
		name, model, extra string
		models             *catalog.Catalog
		maxTokens          int
		temperature        bool
	}{
		{"catalogued", "claude-sonnet-4-5", "", nil, sonnet.MaxOutput, false},
		{"dated id", "claude-sonnet-4-5-20250929", "", nil, sonnet.MaxOutput, false},
		{"not in the catalogue", "m-1", "", nil, 4096, false},
		{"an operator's catalogue", "m-1", "", own, 1234, false},
		{"thinking refuses temperature", "claude-sonnet-4-5", `"reasoning_effort":"high","temperature":0.5,`, nil, 0, false},
		{"no thinking keeps temperature", "claude-sonnet-4-5", `"temperature":0.5,`, nil, sonnet.MaxOutput, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rg := newRig(t, "anthropic", func(o *gateway.Options) { o.Models = tt.models })
			body := requestBody(t, "openai-chat", tt.model, convo.History{convo.User("hi")}, false)
			body = append([]byte(`{`+tt.extra), body[1:]...)
			resp := rg.post(t, "openai-chat", tt.model, body, false, nil)
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, got)
			}
			var sent struct {
				MaxTokens   int      `json:"max_tokens"`
				Temperature *float64 `json:"temperature"`
			}
			if err := json.Unmarshal(*rg.up.lastBody.Load(), &sent); err != nil {
				t.Fatal(err)
			}
			if tt.maxTokens != 0 && sent.MaxTokens != tt.maxTokens {
				t.Errorf("max_tokens %d, want %d", sent.MaxTokens, tt.maxTokens)
			}
			if (sent.Temperature != nil) != tt.temperature {
				t.Errorf("temperature sent: %v, want %v\n%s", sent.Temperature != nil, tt.temperature, *rg.up.lastBody.Load())
			}
		})
	}
}
