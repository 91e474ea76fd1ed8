package provider

import (
	"math"
	"slices"

	"github.com/convo-go/convo"
)

// Model is what a request's conversion needs to know about the target
// model: how it thinks, how long it may answer, which settings it refuses
// and which features it has. A model catalogue fills it (Request.Target);
// the zero value means unknown, and encoders then behave as they do
// without it. A Model with a Name is a known model: its false booleans
// then mean "not supported".
type Model struct {
	// Name is the model id the description is for.
	Name string `json:"name,omitempty"`
	// MaxOutput is the model's maximum output in tokens; 0 means unknown.
	// Anthropic's encoder sends it as max_tokens when the request sets
	// none (the Messages API requires the member).
	MaxOutput int `json:"max_output,omitempty"`
	// Thinking is how the model is told to think: "" (unknown),
	// ThinkingNone, ThinkingBudget, ThinkingAdaptive, ThinkingLevel or
	// ThinkingEffort.
	Thinking string `json:"thinking,omitempty"`
	// Efforts are the efforts or levels the model accepts for
	// ThinkingAdaptive, ThinkingLevel and ThinkingEffort, lowest first
	// ("low", "medium", "high", "max"); empty means any.
	Efforts []string `json:"efforts,omitempty"`
	// MinBudget and MaxBudget bound the thinking budget in tokens for
	// ThinkingBudget; 0 means no bound known.
	MinBudget int `json:"min_budget,omitempty"`
	MaxBudget int `json:"max_budget,omitempty"`
	// RefusesWhileThinking names the sampling settings the model refuses
	// while it thinks ("temperature", "top_p", "top_k"): they are left out
	// of a request that thinks, with a warning (CodeSettingRefused).
	RefusesWhileThinking []string `json:"refuses_while_thinking,omitempty"`
	// StructuredOutput means the model takes a JSON Schema for its reply
	// natively. A known model without it gets the schema as a forced tool
	// (OutputTool) where the format has tools.
	StructuredOutput bool `json:"structured_output,omitempty"`
	// StrictTools means the model takes strict tool schemas. A known model
	// without it gets its tools without strict, with a warning.
	StrictTools bool `json:"strict_tools,omitempty"`
}

// The ways a model is told to think (Model.Thinking).
const (
	// ThinkingNone: the model does not think; reasoning settings are left
	// out with a warning.
	ThinkingNone = "none"
	// ThinkingBudget: a thinking budget in tokens (Anthropic
	// budget_tokens, Gemini 2.5 thinkingBudget).
	ThinkingBudget = "budget"
	// ThinkingAdaptive: the model decides how much to think, guided by an
	// effort (Anthropic thinking.type "adaptive" with output_config.effort).
	ThinkingAdaptive = "adaptive"
	// ThinkingLevel: a thinking level (Gemini 3 thinkingLevel).
	ThinkingLevel = "level"
	// ThinkingEffort: a reasoning effort (OpenAI reasoning_effort, Amazon
	// Nova maxReasoningEffort).
	ThinkingEffort = "effort"
)

// OutputTool is the name of the tool that carries a structured reply to a
// model without native structured output: the encoder adds it, with the
// output schema as its parameters, and makes the model call it; the reply
// readers of the same format read a call of it as the reply's text (its
// arguments, a JSON document) and the turn as finished. A request's own
// tool must not have this name.
const OutputTool = "convo_output"

// Known reports whether m describes a model (has a Name).
func (m *Model) Known() bool { return m.Name != "" }

// Refuses reports whether the model refuses the sampling setting (a
// Request.Settings name) while thinking.
func (m *Model) Refuses(setting string) bool { return slices.Contains(m.RefusesWhileThinking, setting) }

// Effort returns the accepted effort nearest e by the order of the
// reasoning table (minimal, low, medium, high, then any higher level the
// model lists), and whether it differs from e. With no Efforts listed, e
// is returned as it is.
func (m *Model) Effort(e Effort) (Effort, bool) {
	if len(m.Efforts) == 0 || slices.Contains(m.Efforts, string(e)) {
		return e, false
	}
	want := effortRank(e)
	best, bestD := Effort(m.Efforts[0]), math.MaxInt
	for _, s := range m.Efforts {
		d := effortRank(Effort(s)) - want
		if d < 0 {
			d = -d
		}
		// Ties go to the higher effort: less thinking than asked is the
		// surprising side.
		if d < bestD || (d == bestD && effortRank(Effort(s)) > effortRank(best)) {
			best, bestD = Effort(s), d
		}
	}
	return best, true
}

// effortRank orders efforts from least to most thinking.
func effortRank(e Effort) int {
	switch e {
	case EffortNone:
		return 0
	case EffortMinimal:
		return 1
	case EffortLow:
		return 2
	case EffortMedium:
		return 3
	case EffortHigh:
		return 4
	case "xhigh":
		return 5
	case "max":
		return 6
	}
	return 3 // an effort the table does not know: the middle
}

// Budget returns b within the model's budget bounds, and whether it
// changed. -1 (let the model decide) and 0 are returned as they are.
func (m *Model) Budget(b int64) (int64, bool) {
	if b <= 0 {
		return b, false
	}
	switch {
	case m.MinBudget > 0 && b < int64(m.MinBudget):
		return int64(m.MinBudget), true
	case m.MaxBudget > 0 && b > int64(m.MaxBudget):
		return int64(m.MaxBudget), true
	}
	return b, false
}

// Thinks reports whether r asks the model to think: a reasoning effort
// other than none, or a budget other than 0.
func (r *Request) Thinks() bool {
	rs := r.Reasoning
	return rs != nil && rs.Effort != EffortNone && (rs.Effort != "" || rs.Budget != 0)
}

// OutputCallsAsText turns the calls of OutputTool in a reply back into
// what the caller asked for, the reply's text: each becomes a text part
// holding its arguments (the structured answer), and a turn that ended to
// run tools ends as finished when no other call is left. It reports
// whether it changed m. Reply readers of the formats that send OutputTool
// call it; m is changed in place, its parts slice copied first.
func OutputCallsAsText(m *convo.Message) bool {
	changed, calls := false, false
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Type != convo.TypeToolCall || p.Server != "" {
			continue
		}
		if p.Name != OutputTool {
			calls = true
			continue
		}
		if !changed {
			m.Parts = slices.Clone(m.Parts)
			p = &m.Parts[i]
			changed = true
		}
		text := string(p.Args)
		if p.Args == nil {
			text = p.ArgsRaw
		}
		*p = convo.Text(text)
	}
	if changed && !calls && m.Finish == convo.FinishToolUse {
		m.Finish = convo.FinishStop
	}
	return changed
}

// IsOutputCall reports whether p is a call of OutputTool (a client tool's
// call: a server tool of that name is the provider's own).
func IsOutputCall(p *convo.Part) bool {
	return p.Type == convo.TypeToolCall && p.Server == "" && p.Name == OutputTool
}

// OutputStream is the text a streamed call of OutputTool shows while its
// arguments arrive: what OutputCallsAsText makes of the call at the end,
// shown as it grows, so that a client that asked for structured output
// gets text deltas and never a tool call it did not ask for. The pieces
// are kept without the white space outside JSON strings: what streams is
// then a prefix of the compact arguments the finished call holds, and of
// the text it becomes. The stream accumulators of the formats that send
// OutputTool keep one per such call, show the call as a text part holding
// Text until it ends, and report each piece as the DeltaText Add returns.
type OutputStream struct {
	text    []byte
	in, esc bool // the text ends in a JSON string, after a backslash there
}

// Add appends a piece of the call's arguments and returns what it added
// to the text.
func (o *OutputStream) Add(piece string) string {
	s := stripSpaceFrom(piece, &o.in, &o.esc)
	o.text = append(o.text, s...)
	return s
}

// Text returns the text so far.
func (o *OutputStream) Text() string { return string(o.text) }
