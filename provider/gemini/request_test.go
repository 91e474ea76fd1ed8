package gemini

import (
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

func TestRequestRoundTrip(t *testing.T) {
	codectest.RequestRoundTrip(t, generateContent{}, "testdata/requests/*.json")
}

func TestFromOpenAPI(t *testing.T) {
	got, err := FromOpenAPI([]byte(`{"type":"OBJECT","properties":{"a":{"type":"STRING","nullable":true},"b":{"type":"ARRAY","items":{"type":"INTEGER"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	codectest.ExpectSameJSON(t, got, []byte(`{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"type":"array","items":{"type":"integer"}}}}`))
}

// Gemini 2.x takes a budget, later models a level.
func TestThinkingByModel(t *testing.T) {
	for model, want := range map[string]string{
		"gemini-2.5-flash": `{"contents":[],"generationConfig":{"thinkingConfig":{"thinkingBudget":1024}}}`,
		"gemini-3-pro":     `{"contents":[],"generationConfig":{"thinkingConfig":{"thinkingLevel":"low"}}}`,
	} {
		r := &provider.Request{Model: model, Reasoning: &provider.Reasoning{Effort: provider.EffortLow}}
		got, _, err := generateContent{}.EncodeRequest(r, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		codectest.ExpectSameJSON(t, got, []byte(want))
	}
}

var _ provider.RequestCodec = generateContent{}
