package ollama

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// think follows what Request.Target says of the model: levels for a model
// that takes them (gpt-oss, which cannot turn thinking off), on or off for
// one that does not.
func TestThinkTarget(t *testing.T) {
	gptOSS := provider.Model{Name: "gpt-oss:20b", Thinking: provider.ThinkingEffort, Efforts: []string{"low", "medium", "high"}}
	qwen3 := provider.Model{Name: "qwen3", Thinking: provider.ThinkingBudget}
	tests := []struct {
		name   string
		target provider.Model
		rs     provider.Reasoning
		want   string
		warns  []string
	}{
		{"level", gptOSS, provider.Reasoning{Effort: provider.EffortHigh}, `"high"`, nil},
		{"minimal to low", gptOSS, provider.Reasoning{Effort: provider.EffortMinimal}, `"low"`, []string{"setting-mapped reasoning.effort"}},
		{"cannot turn off", gptOSS, provider.Reasoning{Effort: provider.EffortNone}, `"low"`, []string{"setting-mapped reasoning.effort"}},
		{"on for a level", qwen3, provider.Reasoning{Effort: provider.EffortHigh}, `true`, []string{"setting-mapped reasoning.effort"}},
		{"off", qwen3, provider.Reasoning{Effort: provider.EffortNone}, `false`, nil},
		{"unknown model", provider.Model{}, provider.Reasoning{Effort: provider.EffortHigh}, `"high"`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := tt.rs
			r := &provider.Request{Model: "m", Target: tt.target, Reasoning: &rs, History: convo.History{convo.User("hi")}}
			body, warns, err := chat{}.EncodeRequest(r, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Think json.RawMessage `json:"think"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			var a, b any
			_ = json.Unmarshal(got.Think, &a)
			_ = json.Unmarshal([]byte(tt.want), &b)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("think %s, want %s", got.Think, tt.want)
			}
			var codes []string
			for _, w := range warns {
				codes = append(codes, string(w.Code)+" "+w.Path)
			}
			if strings.Join(codes, "\n") != strings.Join(tt.warns, "\n") {
				t.Errorf("warnings %v, want %v", warns, tt.warns)
			}
		})
	}
}
