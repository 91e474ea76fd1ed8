package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
)

// TestRequestSettingsRecorded: the conversation's metadata keeps the
// request's settings without its messages or who the user is, passed
// through or translated; not in the metadata mode, not with redaction
// rules.
func TestRequestSettingsRecorded(t *testing.T) {
	body := []byte(`{"model":"m","temperature":0.2,"max_tokens":300,"user":"alice@example.com",
		"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object"}}}],
		"tool_choice":"required","messages":[{"role":"user","content":"Weather in Paris?"}]}`)
	for _, tc := range []struct {
		name, upstream, mode string
		redact               bool
		want                 bool
	}{
		{"pass-through", "openai-chat", "", false, true},
		{"translated", "anthropic", "", false, true},
		{"metadata mode", "openai-chat", "metadata", false, false},
		{"redaction", "openai-chat", "", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rg := newRig(t, tc.upstream, func(o *gateway.Options) {
				if tc.redact {
					o.Config.Record.Redact = gateway.RedactConfig{Rules: []gateway.RedactRule{{Name: "x", Pattern: "secret"}}}
				}
			})
			hdr := map[string]string{"Convo-Conversation": "c1"}
			if tc.mode != "" {
				hdr["Convo-Record"] = tc.mode
			}
			resp := rg.post(t, "openai-chat", "m", body, false, hdr)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			rg.drain(t)
			c, err := rg.st.Get(context.Background(), tenant, "c1")
			if err != nil {
				t.Fatal(err)
			}
			var meta map[string]json.RawMessage
			_ = json.Unmarshal(c.Meta, &meta)
			raw, ok := meta[gateway.RequestMeta]
			if ok != tc.want {
				t.Fatalf("meta %s", c.Meta)
			}
			if !ok {
				return
			}
			var got struct {
				Tools []struct {
					Name, Description string
				}
				ToolChoice  struct{ Mode string } `json:"tool_choice"`
				MaxTokens   int64                 `json:"max_tokens"`
				Temperature float64
				Messages    []convo.Message
				Model, User string
			}
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if len(got.Tools) != 1 || got.Tools[0].Description != "Weather" || got.ToolChoice.Mode != "required" || got.MaxTokens != 300 ||
				got.Temperature != 0.2 || got.Messages != nil || got.Model != "" || got.User != "" {
				t.Errorf("recorded %s", raw)
			}
		})
	}
}
