package bedrock

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

var (
	opus46 = provider.Model{Name: "anthropic.claude-opus-4-6-v1", MaxOutput: 128000, Thinking: provider.ThinkingAdaptive,
		Efforts: []string{"low", "medium", "high", "max"}, RefusesWhileThinking: []string{"temperature"}, StructuredOutput: true, StrictTools: true}
	sonnet45 = provider.Model{Name: "anthropic.claude-sonnet-4-5", Thinking: provider.ThinkingBudget, MinBudget: 1024, MaxBudget: 32000}
	nova2    = provider.Model{Name: "amazon.nova-2-lite-v1:0", Thinking: provider.ThinkingEffort, Efforts: []string{"low", "medium", "high"},
		RefusesWhileThinking: []string{"temperature", "top_p"}}
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
		{"anthropic adaptive", provider.Request{Model: "us.anthropic.claude-opus-4-6-v1", Target: opus46, Reasoning: &provider.Reasoning{Effort: provider.EffortMinimal}},
			map[string]string{"additionalModelRequestFields": `{"thinking":{"type":"adaptive"}}`, "outputConfig": `{"effort":"low"}`},
			[]string{"setting-mapped reasoning.effort"}},
		{"anthropic adaptive off", provider.Request{Model: "us.anthropic.claude-opus-4-6-v1", Target: opus46, Reasoning: &provider.Reasoning{Effort: provider.EffortNone}},
			map[string]string{"additionalModelRequestFields": `null`, "outputConfig": `null`}, nil},
		{"anthropic budget clamped", provider.Request{Model: "anthropic.claude-sonnet-4-5", Target: sonnet45, Reasoning: &provider.Reasoning{Budget: 64000}},
			map[string]string{"additionalModelRequestFields": `{"thinking":{"type":"enabled","budget_tokens":32000}}`},
			[]string{"setting-mapped reasoning.budget"}},
		{"nova effort", provider.Request{Model: "us.amazon.nova-2-lite-v1:0", Target: nova2, Reasoning: &provider.Reasoning{Budget: 30000},
			Temperature: provider.Float(0.2), TopP: provider.Float(0.5), MaxTokens: 100},
			map[string]string{"additionalModelRequestFields": `{"reasoningConfig":{"type":"enabled","maxReasoningEffort":"high"}}`,
				"inferenceConfig": `{"maxTokens":100}`},
			[]string{"setting-refused temperature", "setting-refused top_p", "setting-mapped reasoning.budget"}},
		{"nova off", provider.Request{Model: "us.amazon.nova-2-lite-v1:0", Reasoning: &provider.Reasoning{Effort: provider.EffortNone}},
			map[string]string{"additionalModelRequestFields": `{"reasoningConfig":{"type":"disabled"}}`}, nil},
		{"native structured output", provider.Request{Model: "anthropic.claude-sonnet-4-5", Output: provider.Output{Type: provider.OutputJSONSchema, Schema: schema, Name: "a"}},
			map[string]string{"outputConfig": `{"textFormat":{"type":"json_schema","structure":{"jsonSchema":{"schema":` + jsonString(schema) + `,"name":"a"}}}}`}, nil},
		{"structured output as a forced tool", provider.Request{Model: "anthropic.claude-sonnet-4-5", Target: sonnet45, Output: provider.Output{Type: provider.OutputJSONSchema, Schema: schema}},
			map[string]string{"outputConfig": `null`,
				"toolConfig": `{"tools":[{"toolSpec":{"name":"convo_output","description":"Give your final answer by calling this tool once, with the answer as its input.","inputSchema":{"json":` + string(schema) + `}}}],"toolChoice":{"tool":{"name":"convo_output"}}}`},
			[]string{"setting-mapped output"}},
		{"strict carried", provider.Request{Model: "anthropic.claude-opus-4-6-v1", Target: opus46, Tools: []provider.Tool{{Name: "f", Strict: true}}},
			map[string]string{"toolConfig": `{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object","properties":{}}},"strict":true}}]}`}, nil},
		{"strict refused", provider.Request{Model: "anthropic.claude-sonnet-4-5", Target: sonnet45, Tools: []provider.Tool{{Name: "f", Strict: true}}},
			map[string]string{"toolConfig": `{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object","properties":{}}}}}]}`},
			[]string{"setting-dropped tools[0].strict"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.History = convo.History{convo.User("hi")}
			body, warns, err := converse{}.EncodeRequest(&tt.r, provider.Options{})
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

func jsonString(b []byte) string {
	s, _ := json.Marshal(string(b))
	return string(s)
}

func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// Bedrock refuses text blocks of white space only: they are left out with
// a warning, and so is a message left with nothing.
func TestBlankText(t *testing.T) {
	h := convo.History{
		convo.System(" \n"),
		convo.System("Be brief."),
		convo.User("hi", convo.Text("  ")),
		convo.Assistant("\t"),
		convo.User("again"),
	}
	body, warns, err := converse{}.Encode(h, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"system":[{"text":"Be brief."}],"messages":[{"role":"user","content":[{"text":"hi"},{"text":"again"}]}]}`
	if !sameJSON(body, []byte(want)) {
		t.Errorf("got %s\nwant %s", body, want)
	}
	var got []string
	for _, w := range warns {
		got = append(got, string(w.Code)+" "+w.Path)
	}
	wantW := []string{"text-trimmed messages[0].parts[0]", "message-dropped messages[0]", "text-trimmed messages[2].parts[1]",
		"text-trimmed messages[3].parts[0]", "message-dropped messages[3]"}
	if !reflect.DeepEqual(got, wantW) {
		t.Errorf("warnings %v\nwant %v", got, wantW)
	}
}

// A call of the output tool is read back as the reply's text, and the turn
// as finished.
func TestReplyOutputTool(t *testing.T) {
	body := `{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"convo_output","input":{"a":1}}}]}},` +
		`"stopReason":"tool_use","usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3}}`
	m, _, err := converse{}.DecodeReply([]byte(body), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Parts) != 1 || m.Parts[0].Type != convo.TypeText || m.Parts[0].Text != `{"a":1}` || m.Finish != convo.FinishStop {
		t.Errorf("got %+v, finish %q", m.Parts, m.Finish)
	}
}

// Blank text is left out before the prefill rule looks at the end of the
// conversation: an assistant message it leaves last is trimmed too.
func TestBlankTextThenPrefill(t *testing.T) {
	h := convo.History{convo.User("hi"), convo.Assistant("ok\t"), convo.User(" ")}
	body, _, err := converse{}.Encode(h, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"text":"ok"}]}]}`
	if !sameJSON(body, []byte(want)) {
		t.Errorf("got %s\nwant %s", body, want)
	}
}
