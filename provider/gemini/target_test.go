package gemini

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

var (
	gemini3Pro = provider.Model{Name: "gemini-3-pro-preview", Thinking: provider.ThinkingLevel, Efforts: []string{"low", "high"}, StrictTools: true}
	gemini25   = provider.Model{Name: "gemini-2.5-pro", Thinking: provider.ThinkingBudget, MinBudget: 128, MaxBudget: 32768, StrictTools: true}
	flash2     = provider.Model{Name: "gemini-2.0-flash", Thinking: provider.ThinkingNone}
)

// The encoder follows what Request.Target says of the model: each case
// gives generationConfig.thinkingConfig and toolConfig (absent as null)
// and the codes of the warnings at their paths.
func TestRequestTarget(t *testing.T) {
	tools := []provider.Tool{{Name: "f", Strict: true}}
	tests := []struct {
		name              string
		r                 provider.Request
		thinking, toolCfg string
		warns             []string // "code path"
	}{
		{"level", provider.Request{Model: "gemini-3-pro-preview", Target: gemini3Pro, Reasoning: &provider.Reasoning{Effort: provider.EffortHigh}},
			`{"thinkingLevel":"high"}`, `null`, nil},
		{"level mapped to the model's", provider.Request{Model: "gemini-3-pro-preview", Target: gemini3Pro, Reasoning: &provider.Reasoning{Effort: provider.EffortMedium}},
			`{"thinkingLevel":"high"}`, `null`, []string{"setting-mapped reasoning.effort"}},
		{"budget to level", provider.Request{Model: "gemini-3-pro-preview", Target: gemini3Pro, Reasoning: &provider.Reasoning{Budget: 1000}},
			`{"thinkingLevel":"low"}`, `null`, []string{"setting-mapped reasoning.budget"}},
		{"dynamic is the default level", provider.Request{Model: "gemini-3-pro-preview", Target: gemini3Pro, Reasoning: &provider.Reasoning{Budget: -1, Summary: "auto"}},
			`{"includeThoughts":true}`, `null`, nil},
		{"level cannot turn off", provider.Request{Model: "gemini-3-pro-preview", Target: gemini3Pro, Reasoning: &provider.Reasoning{Effort: provider.EffortNone}},
			`{"thinkingLevel":"low"}`, `null`, []string{"setting-mapped reasoning.effort"}},
		{"effort to budget", provider.Request{Model: "gemini-2.5-pro", Target: gemini25, Reasoning: &provider.Reasoning{Effort: provider.EffortHigh}},
			`{"thinkingBudget":24576}`, `null`, []string{"setting-mapped reasoning.effort"}},
		{"budget clamped", provider.Request{Model: "gemini-2.5-pro", Target: gemini25, Reasoning: &provider.Reasoning{Budget: 50000}},
			`{"thinkingBudget":32768}`, `null`, []string{"setting-mapped reasoning.budget"}},
		{"budget cannot turn off", provider.Request{Model: "gemini-2.5-pro", Target: gemini25, Reasoning: &provider.Reasoning{Effort: provider.EffortNone}},
			`{"thinkingBudget":128}`, `null`, []string{"setting-mapped reasoning"}},
		{"no thinking model", provider.Request{Model: "gemini-2.0-flash", Target: flash2, Reasoning: &provider.Reasoning{Effort: provider.EffortLow}},
			`null`, `null`, []string{"setting-refused reasoning"}},
		{"strict tools validated", provider.Request{Model: "gemini-2.5-pro", Target: gemini25, Tools: tools},
			`null`, `{"functionCallingConfig":{"mode":"VALIDATED"}}`, nil},
		{"strict tools any", provider.Request{Model: "gemini-2.5-pro", Target: gemini25, Tools: tools, ToolChoice: provider.ToolChoice{Mode: provider.ToolChoiceRequired}},
			`null`, `{"functionCallingConfig":{"mode":"ANY"}}`, []string{"setting-mapped tools[0].strict"}},
		{"strict refused", provider.Request{Model: "gemini-2.0-flash", Target: flash2, Tools: tools},
			`null`, `null`, []string{"setting-dropped tools[0].strict"}},
		{"allowed tools", provider.Request{Model: "gemini-2.5-pro", Tools: []provider.Tool{{Name: "f"}, {Name: "g"}, {Name: "h"}},
			ToolChoice: provider.ToolChoice{Mode: provider.ToolChoiceRequired, Allowed: []string{"f", "g"}}},
			`null`, `{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["f","g"]}}`, nil},
		{"allowed tools auto", provider.Request{Model: "gemini-2.5-pro", Tools: []provider.Tool{{Name: "f"}, {Name: "g"}},
			ToolChoice: provider.ToolChoice{Mode: provider.ToolChoiceAuto, Allowed: []string{"f"}}},
			`null`, `{"functionCallingConfig":{"mode":"VALIDATED","allowedFunctionNames":["f"]}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.History = convo.History{convo.User("hi")}
			body, warns, err := generateContent{}.EncodeRequest(&tt.r, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				GenerationConfig struct {
					ThinkingConfig json.RawMessage `json:"thinkingConfig"`
				} `json:"generationConfig"`
				ToolConfig json.RawMessage `json:"toolConfig"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				name      string
				got, want []byte
			}{{"thinkingConfig", got.GenerationConfig.ThinkingConfig, []byte(tt.thinking)}, {"toolConfig", got.ToolConfig, []byte(tt.toolCfg)}} {
				if c.got == nil {
					c.got = []byte("null")
				}
				if !equalJSON(c.got, c.want) {
					t.Errorf("%s: got %s, want %s", c.name, c.got, c.want)
				}
			}
			var codes []string
			for _, w := range warns {
				codes = append(codes, string(w.Code)+" "+w.Path)
			}
			if strings.Join(codes, "\n") != strings.Join(tt.warns, "\n") {
				t.Errorf("warnings:\n%v\nwant\n%v", warns, tt.warns)
			}
		})
	}
}

func equalJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// VALIDATED reads back as auto with strict function tools, and several
// allowed names with ANY as required with allowed tools.
func TestDecodeValidated(t *testing.T) {
	body := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"f"},{"name":"g"}]}],` +
		`"toolConfig":{"functionCallingConfig":{"mode":"VALIDATED","allowedFunctionNames":["f"]}}}`
	r, _, err := generateContent{}.DecodeRequest([]byte(body), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Tools[0].Strict || !r.Tools[1].Strict || r.ToolChoice.Mode != provider.ToolChoiceAuto || !reflect.DeepEqual(r.ToolChoice.Allowed, []string{"f"}) {
		t.Errorf("got %+v, %+v", r.Tools, r.ToolChoice)
	}
	out, _, err := generateContent{}.EncodeRequest(r, provider.Options{})
	if err != nil || !equalJSON(out, []byte(body)) {
		t.Errorf("round trip: %s %v", out, err)
	}
}
