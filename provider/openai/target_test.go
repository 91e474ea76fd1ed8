package openai

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// Allowed tools take each API's own tool_choice shape: Chat nests mode
// and tools under allowed_tools and names functions in a function object;
// Responses puts them beside the type.
func TestAllowedToolsShapes(t *testing.T) {
	r := &provider.Request{Model: "gpt-5", History: convo.History{convo.User("hi")},
		Tools:      []provider.Tool{{Name: "f"}, {Name: "g"}},
		ToolChoice: provider.ToolChoice{Mode: provider.ToolChoiceRequired, Allowed: []string{"g"}}}
	for _, tt := range []struct {
		codec provider.RequestCodec
		want  string
	}{
		{chat{}, `{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"g"}}]}}`},
		{responses{}, `{"type":"allowed_tools","mode":"required","tools":[{"type":"function","name":"g"}]}`},
	} {
		body, warns, err := tt.codec.EncodeRequest(r, provider.Options{})
		if err != nil || len(warns) > 0 {
			t.Fatalf("%s: %v %v", tt.codec.Name(), warns, err)
		}
		var got struct {
			ToolChoice json.RawMessage `json:"tool_choice"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if !equalJSON(got.ToolChoice, []byte(tt.want)) {
			t.Errorf("%s: got %s, want %s", tt.codec.Name(), got.ToolChoice, tt.want)
		}
		back, _, err := tt.codec.DecodeRequest(body, provider.Options{})
		if err != nil || !reflect.DeepEqual(back.ToolChoice, r.ToolChoice) {
			t.Errorf("%s: read back %+v, %v", tt.codec.Name(), back.ToolChoice, err)
		}
	}
}

// A Chat request's allowed tools reach Responses in Responses' shape.
func TestAllowedToolsAcrossAPIs(t *testing.T) {
	body := `{"model":"gpt-5","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"g"}}],` +
		`"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"f"}}]}}}`
	r, _, err := chat{}.DecodeRequest([]byte(body), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, warns, err := responses{}.EncodeRequest(r, provider.Options{})
	if err != nil || len(warns) > 0 {
		t.Fatalf("%v %v", warns, err)
	}
	if !strings.Contains(string(out), `"tool_choice":{"type":"allowed_tools","mode":"auto","tools":[{"type":"function","name":"f"}]}`) {
		t.Errorf("got %s", out)
	}
}

// What Request.Target says of the model: strict tools it does not take
// are sent without strict, and efforts it does not take as the nearest
// it does.
func TestRequestTarget(t *testing.T) {
	gpt4 := provider.Model{Name: "gpt-3.5-turbo", Thinking: provider.ThinkingNone}
	gpt5 := provider.Model{Name: "gpt-5", Thinking: provider.ThinkingEffort, Efforts: []string{"minimal", "low", "medium", "high"},
		RefusesWhileThinking: []string{"temperature", "top_p"}, StructuredOutput: true, StrictTools: true}
	tests := []struct {
		name  string
		r     provider.Request
		want  map[string]string
		warns []string
	}{
		{"strict refused", provider.Request{Target: gpt4, Tools: []provider.Tool{{Name: "f", Strict: true, Parameters: json.RawMessage(`{"type":"object"}`)}}},
			map[string]string{"tools": `[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}]`},
			[]string{"setting-dropped tools[0].strict"}},
		{"effort none to minimal", provider.Request{Target: gpt5, Reasoning: &provider.Reasoning{Effort: provider.EffortNone}},
			map[string]string{"reasoning_effort": `"minimal"`}, []string{"setting-mapped reasoning.effort"}},
		{"sampling refused while thinking", provider.Request{Target: gpt5, Temperature: provider.Float(0.3), Reasoning: &provider.Reasoning{Effort: provider.EffortLow}},
			map[string]string{"temperature": `null`, "reasoning_effort": `"low"`}, []string{"setting-refused temperature"}},
		{"reasoning for a model that does not think", provider.Request{Target: gpt4, Reasoning: &provider.Reasoning{Effort: provider.EffortLow}},
			map[string]string{"reasoning_effort": `null`}, []string{"setting-refused reasoning"}},
		{"parallel carried", provider.Request{Target: gpt5, Tools: []provider.Tool{{Name: "f"}}, ParallelToolCalls: provider.Bool(false)},
			map[string]string{"parallel_tool_calls": `false`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.Model = tt.r.Target.Name
			tt.r.History = convo.History{convo.User("hi")}
			body, warns, err := chat{}.EncodeRequest(&tt.r, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]json.RawMessage
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			for k, want := range tt.want {
				g := got[k]
				if g == nil {
					g = json.RawMessage("null")
				}
				if !equalJSON(g, []byte(want)) {
					t.Errorf("%s: got %s, want %s", k, g, want)
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
