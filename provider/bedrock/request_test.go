package bedrock

import (
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

func TestRequestRoundTrip(t *testing.T) {
	codectest.RequestRoundTrip(t, converse{}, "testdata/whole/*.json")
}

// Reasoning goes where the model family takes it.
func TestReasoningByFamily(t *testing.T) {
	for model, want := range map[string]string{
		"us.anthropic.claude-sonnet-4-5-20250929-v1:0": `{"messages":[],"additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":24576}}}`,
		"openai.gpt-oss-120b-1:0":                      `{"messages":[],"additionalModelRequestFields":{"reasoning_effort":"high"}}`,
		"amazon.nova-pro-v1:0":                         `{"messages":[]}`,
		"us.amazon.nova-2-lite-v1:0":                   `{"messages":[],"additionalModelRequestFields":{"reasoningConfig":{"type":"enabled","maxReasoningEffort":"high"}}}`,
	} {
		r := &provider.Request{Model: model, Reasoning: &provider.Reasoning{Effort: provider.EffortHigh}}
		got, warns, err := converse{}.EncodeRequest(r, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		codectest.ExpectSameJSON(t, got, []byte(want))
		if len(warns) == 0 && model != "openai.gpt-oss-120b-1:0" && model != "us.amazon.nova-2-lite-v1:0" {
			t.Errorf("%s: no warning", model)
		}
	}
}

var _ provider.RequestCodec = converse{}
