package anthropic

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

var (
	opus46 = provider.Model{Name: "claude-opus-4-6", MaxOutput: 128000, Thinking: provider.ThinkingAdaptive,
		Efforts: []string{"low", "medium", "high", "max"}, RefusesWhileThinking: []string{"temperature", "top_k"},
		StructuredOutput: true, StrictTools: true}
	sonnet45 = provider.Model{Name: "claude-sonnet-4-5", MaxOutput: 64000, Thinking: provider.ThinkingBudget,
		MinBudget: 1024, MaxBudget: 32000, RefusesWhileThinking: []string{"temperature", "top_k"}, StructuredOutput: true}
	haiku3 = provider.Model{Name: "claude-3-haiku", MaxOutput: 4096, Thinking: provider.ThinkingNone}
)

var schema = json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}}}`)

// The encoder follows what Request.Target says of the model: each case
// gives the members of the body that matter (absent ones as null) and the
// codes of the warnings at their paths.
func TestRequestTarget(t *testing.T) {
	tests := []struct {
		name  string
		r     provider.Request
		want  map[string]string
		warns []string // "code path"
	}{
		{"adaptive effort", provider.Request{Target: opus46, MaxTokens: 1000, Reasoning: &provider.Reasoning{Effort: provider.EffortHigh}},
			map[string]string{"thinking": `{"type":"adaptive"}`, "output_config": `{"effort":"high"}`}, nil},
		{"adaptive minimal to low", provider.Request{Target: opus46, MaxTokens: 1000, Reasoning: &provider.Reasoning{Effort: provider.EffortMinimal}},
			map[string]string{"thinking": `{"type":"adaptive"}`, "output_config": `{"effort":"low"}`},
			[]string{"setting-mapped reasoning.effort"}},
		{"adaptive budget to effort", provider.Request{Target: opus46, MaxTokens: 1000, Reasoning: &provider.Reasoning{Budget: 20000}},
			map[string]string{"thinking": `{"type":"adaptive"}`, "output_config": `{"effort":"high"}`},
			[]string{"setting-mapped reasoning.budget"}},
		{"adaptive dynamic", provider.Request{Target: opus46, MaxTokens: 1000, Reasoning: &provider.Reasoning{Budget: -1}},
			map[string]string{"thinking": `{"type":"adaptive"}`, "output_config": `null`}, nil},
		{"adaptive off", provider.Request{Target: opus46, MaxTokens: 1000, Reasoning: &provider.Reasoning{Effort: provider.EffortNone}},
			map[string]string{"thinking": `null`, "output_config": `null`}, nil},
		{"budget off", provider.Request{Target: sonnet45, MaxTokens: 1000, Reasoning: &provider.Reasoning{Effort: provider.EffortNone}},
			map[string]string{"thinking": `{"type":"disabled"}`}, nil},
		{"budget clamped", provider.Request{Target: sonnet45, MaxTokens: 64000, Reasoning: &provider.Reasoning{Budget: 50000}},
			map[string]string{"thinking": `{"type":"enabled","budget_tokens":32000}`},
			[]string{"setting-mapped reasoning.budget"}},
		{"max output", provider.Request{Target: sonnet45},
			map[string]string{"max_tokens": `64000`}, []string{"setting-mapped max_tokens"}},
		{"max tokens above a mapped budget", provider.Request{Reasoning: &provider.Reasoning{Effort: provider.EffortHigh}},
			map[string]string{"max_tokens": `28672`, "thinking": `{"type":"enabled","budget_tokens":24576}`},
			[]string{"setting-mapped max_tokens", "setting-mapped reasoning"}},
		{"mapped budget below max tokens", provider.Request{MaxTokens: 4000, Reasoning: &provider.Reasoning{Effort: provider.EffortHigh}},
			map[string]string{"max_tokens": `4000`, "thinking": `{"type":"enabled","budget_tokens":3999}`},
			[]string{"setting-mapped reasoning", "setting-mapped reasoning.budget"}},
		{"sampling refused while thinking", provider.Request{Target: sonnet45, MaxTokens: 4000, Temperature: provider.Float(0.5),
			TopP: provider.Float(0.9), TopK: provider.Int(5), Reasoning: &provider.Reasoning{Budget: 2000}},
			map[string]string{"temperature": `null`, "top_k": `null`, "top_p": `0.9`},
			[]string{"setting-refused temperature", "setting-refused top_k"}},
		{"sampling kept without thinking", provider.Request{Target: sonnet45, MaxTokens: 4000, Temperature: provider.Float(0.5)},
			map[string]string{"temperature": `0.5`}, nil},
		{"no thinking model", provider.Request{Target: haiku3, MaxTokens: 10, Reasoning: &provider.Reasoning{Effort: provider.EffortHigh}},
			map[string]string{"thinking": `null`}, []string{"setting-refused reasoning"}},
		{"native structured output", provider.Request{Target: sonnet45, MaxTokens: 10, Output: provider.Output{Type: provider.OutputJSONSchema, Schema: schema}},
			map[string]string{"output_config": `{"format":{"type":"json_schema","schema":` + string(schema) + `}}`, "tools": `null`}, nil},
		{"structured output as a forced tool", provider.Request{Target: haiku3, MaxTokens: 10, Output: provider.Output{Type: provider.OutputJSONSchema, Schema: schema}},
			map[string]string{"output_config": `null`,
				"tools":       `[{"name":"convo_output","description":"Give your final answer by calling this tool once, with the answer as its input.","input_schema":` + string(schema) + `}]`,
				"tool_choice": `{"type":"tool","name":"convo_output"}`},
			[]string{"setting-mapped output"}},
		{"forced tool beside the request's tools", provider.Request{Target: haiku3, MaxTokens: 10, Output: provider.Output{Type: provider.OutputJSONSchema, Schema: schema, Description: "The answer."},
			Tools: []provider.Tool{{Name: "f"}}, ParallelToolCalls: provider.Bool(false)},
			map[string]string{"tools": `[{"name":"f","input_schema":{"type":"object","properties":{}}},{"name":"convo_output","description":"The answer.","input_schema":` + string(schema) + `}]`,
				"tool_choice": `{"type":"any","disable_parallel_tool_use":true}`},
			[]string{"setting-mapped output"}},
		{"allowed tools", provider.Request{MaxTokens: 10, Tools: []provider.Tool{{Name: "f"}, {Name: "g"}},
			ToolChoice: provider.ToolChoice{Mode: provider.ToolChoiceRequired, Allowed: []string{"f"}}},
			map[string]string{"tool_choice": `{"type":"any"}`}, []string{"setting-dropped tool_choice.allowed"}},
		{"strict and parallel carried", provider.Request{Target: opus46, MaxTokens: 10, Tools: []provider.Tool{{Name: "f", Strict: true}}, ParallelToolCalls: provider.Bool(false)},
			map[string]string{"tools": `[{"name":"f","input_schema":{"type":"object","properties":{}},"strict":true}]`,
				"tool_choice": `{"type":"auto","disable_parallel_tool_use":true}`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.Model = "m"
			tt.r.History = convo.History{convo.User("hi")}
			body, warns, err := messages{}.EncodeRequest(&tt.r, provider.Options{})
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
				if !sameJSON(g, []byte(want)) {
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

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// A call of the output tool is read back as the reply's text, and the
// turn as finished.
func TestReplyOutputTool(t *testing.T) {
	body := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-3-haiku","content":[` +
		`{"type":"tool_use","id":"toolu_1","name":"convo_output","input":{"a":1}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":2}}`
	m, _, err := messages{}.DecodeReply([]byte(body), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Parts) != 1 || m.Parts[0].Type != convo.TypeText || m.Parts[0].Text != `{"a":1}` || m.Finish != convo.FinishStop {
		t.Errorf("got %+v, finish %q", m.Parts, m.Finish)
	}
	stream := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"convo_output\",\"input\":{}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":1}\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":2}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	m, _, err = messages{}.ReadStream(strings.NewReader(stream), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Parts) != 1 || m.Parts[0].Type != convo.TypeText || m.Parts[0].Text != `{"a":1}` || m.Finish != convo.FinishStop {
		t.Errorf("stream: got %+v, finish %q", m.Parts, m.Finish)
	}
}

// TestMaxTokensWarning checks the words of the max_tokens warning a
// request without max_tokens gets (made without fmt): the number sent,
// and the model whose maximum output it is.
func TestMaxTokensWarning(t *testing.T) {
	for _, c := range []struct {
		r    provider.Request
		want string
	}{
		{provider.Request{Target: sonnet45}, "anthropic requires max_tokens: the maximum output of claude-sonnet-4-5, 64000, sent"},
		{provider.Request{}, "anthropic requires max_tokens: 4096 sent"},
	} {
		c.r.History = convo.History{convo.User("hi")}
		_, warns, err := Messages().EncodeRequest(&c.r, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if len(warns) != 1 || warns[0].Msg != c.want || warns[0].Path != "max_tokens" || warns[0].Code != provider.CodeSettingMapped {
			t.Errorf("%s: warnings %+v, want one: max_tokens: %s", c.r.Target.Name, warns, c.want)
		}
	}
}
