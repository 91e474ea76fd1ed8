package sdktest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	openaisdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// The members the model-aware rules write are the SDKs' own: each is read
// into the SDK's type and written back unchanged.
func TestTargetMembersSDK(t *testing.T) {
	h := convo.History{convo.User("hi")}
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}}}`)
	adaptive := &provider.Request{Model: "claude-opus-4-6", History: h, Reasoning: &provider.Reasoning{Effort: provider.EffortHigh},
		Output: provider.Output{Type: provider.OutputJSONSchema, Schema: schema},
		Target: provider.Model{Name: "claude-opus-4-6", MaxOutput: 128000, Thinking: provider.ThinkingAdaptive, StructuredOutput: true}}
	allowed := &provider.Request{Model: "gpt-5", History: h, Tools: []provider.Tool{{Name: "f"}, {Name: "g"}},
		ToolChoice: provider.ToolChoice{Mode: provider.ToolChoiceAuto, Allowed: []string{"g"}}}
	for _, tt := range []struct {
		name   string
		codec  string
		r      *provider.Request
		member string
		sdk    func(t *testing.T, v any) any
	}{
		{"anthropic thinking", "anthropic", adaptive, "thinking", func(t *testing.T, v any) any {
			return sdkMember[anthropic.ThinkingConfigAdaptiveParam](t, v)
		}},
		{"anthropic output_config", "anthropic", adaptive, "output_config", func(t *testing.T, v any) any {
			return sdkMember[anthropic.OutputConfigParam](t, v)
		}},
		{"chat allowed_tools", "openai-chat", allowed, "tool_choice", func(t *testing.T, v any) any {
			return sdkMember[openaisdk.ChatCompletionAllowedToolChoiceParam](t, v)
		}},
		{"responses allowed_tools", "openai-responses", allowed, "tool_choice", func(t *testing.T, v any) any {
			return sdkMember[responses.ToolChoiceAllowedParam](t, v)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			codec, err := all.LookupRequest(tt.codec)
			if err != nil {
				t.Fatal(err)
			}
			body, _, err := codec.EncodeRequest(tt.r, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			m := settings(t, body)
			v, ok := m[tt.member]
			if !ok {
				t.Fatalf("no %s in %s", tt.member, body)
			}
			if got := tt.sdk(t, v); !reflect.DeepEqual(got, v) {
				t.Errorf("the SDK has %v, convo wrote %v", got, v)
			}
		})
	}
}
