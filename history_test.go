package convo_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/convo-go/convo"
)

var text = []convo.Part{convo.Text("x")}

func call(id string) convo.Part { return convo.ToolCall(id, "f", json.RawMessage(`{}`)) }

func TestValidate(t *testing.T) {
	okTurn := convo.History{
		convo.System("s"),
		convo.User("q"),
		convo.Assistant("", call("a"), call("b")),
		convo.ToolResults(convo.ToolResult("b", "f", "2")),
		convo.ToolResults(convo.ToolResult("a", "f", "1")),
		convo.Assistant("done"),
	}
	if err := okTurn.Validate(); err != nil {
		t.Fatalf("valid history: %v", err)
	}
	// Pending calls at the end are what an agent holds before running
	// its tools: valid, whether none or some of the results are in.
	for _, h := range []convo.History{
		{convo.User("q"), convo.Assistant("", call("a"))},
		{convo.User("q"), convo.Assistant("", call("a"), call("b")), convo.ToolResults(convo.ToolResult("b", "f", "2"))},
		{convo.User("q"), {Role: convo.RoleAssistant, Effort: "high"}},
		{convo.User("q"), {Role: convo.RoleAssistant, Finish: convo.FinishContentFilter}},
	} {
		if err := h.Validate(); err != nil {
			t.Errorf("%d messages: %v", len(h), err)
		}
	}
	tests := []struct {
		name string
		h    convo.History
		want []string
	}{
		{"unanswered call", convo.History{convo.Assistant("", call("a")), convo.User("next")},
			[]string{`messages[0].parts[0]: tool call "a" (f) has no result before messages[1]`}},
		{"unanswered in the middle", convo.History{convo.User("q"), convo.Assistant("", call("a"), call("b")), convo.ToolResults(convo.ToolResult("a", "f", "1")), convo.Assistant("so")},
			[]string{`messages[1].parts[1]: tool call "b" (f) has no result before messages[3] (Options.Repair repairs it when converting)`}},
		{"user without parts", convo.History{{Role: convo.RoleUser}}, []string{"messages[0]: user message has no parts"}},
		{"system without parts", convo.History{{Role: convo.RoleSystem}}, []string{"messages[0]: system message has no parts"}},
		{"tool without parts", convo.History{convo.Assistant("", call("a")), {Role: convo.RoleTool}}, []string{"messages[1]: tool message has no parts"}},
		{"assistant without parts", convo.History{convo.User("q"), {Role: convo.RoleAssistant}}, []string{"messages[1]: assistant message has no parts"}},
		{"meta not an object", convo.History{{Role: convo.RoleUser, Parts: []convo.Part{convo.Text("q")}, Meta: json.RawMessage(`[1]`)}},
			[]string{"messages[0].meta: meta must be a JSON object"}},
		{"answered twice", convo.History{convo.Assistant("", call("a")), convo.ToolResults(convo.ToolResult("a", "f", "1"), convo.ToolResult("a", "f", "2"))},
			[]string{`messages[1].parts[1]: tool result "a" answers no open call`}},
		{"result without call", convo.History{convo.User("x"), convo.ToolResults(convo.ToolResult("zz", "f", "1"))},
			[]string{`messages[1].parts[0]: tool result "zz" answers no`}},
		{"result after a user message", convo.History{convo.Assistant("", call("a")), convo.User("x"), convo.ToolResults(convo.ToolResult("a", "f", "1"))},
			[]string{`messages[0].parts[0]: tool call "a" (f) has no result before messages[1]`, `messages[2].parts[0]: tool result "a" answers no`}},
		{"tool_call outside assistant", convo.History{{Role: convo.RoleUser, Parts: []convo.Part{call("a")}}},
			[]string{"messages[0].parts[0]: tool_call in a user message"}},
		{"tool_result outside tool", convo.History{{Role: convo.RoleAssistant, Parts: []convo.Part{convo.ToolResult("a", "f", "x")}}},
			[]string{"messages[0].parts[0]: tool_result in a assistant message"}},
		{"text in tool message", convo.History{convo.Assistant("", call("a")), {Role: convo.RoleTool, Parts: []convo.Part{convo.ToolResult("a", "f", "1"), convo.Text("x")}}},
			[]string{"messages[1].parts[1]: text part in a tool message"}},
		{"phase on user", convo.History{{Role: convo.RoleUser, Phase: convo.PhaseFinal, Parts: text}}, []string{"messages[0]: phase on a user message"}},
		{"unknown phase", convo.History{{Role: convo.RoleAssistant, Phase: "draft", Parts: text}}, []string{`messages[0].phase: unknown phase "draft"`}},
		{"compacted on user", convo.History{{Role: convo.RoleUser, Compacted: 2, Parts: text}}, []string{"messages[0]: compacted on a user message"}},
		{"scope on user", convo.History{{Role: convo.RoleUser, Scope: convo.ScopeTurn, Parts: text}}, []string{"messages[0]: scope on a user message"}},
		{"unknown finish", convo.History{{Role: convo.RoleAssistant, Finish: "tired"}}, []string{`messages[0].finish: unknown finish reason "tired"`}},
		{"two media sources", convo.History{convo.User("", convo.Part{Type: convo.TypeImage, MediaType: "image/png", URL: "u", FileID: "f"})},
			[]string{"messages[0].parts[0]: image part has 2 sources"}},
		{"no media source", convo.History{convo.User("", convo.Part{Type: convo.TypeAudio})}, []string{"messages[0].parts[0]: audio part has 0 sources"}},
		{"text source on an image", convo.History{convo.User("", convo.Part{Type: convo.TypeImage, Text: "x"})}, []string{"image part with a text source"}},
		{"malformed base64", convo.History{convo.User("", convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: "ab!d"})},
			[]string{"messages[0].parts[0].data: malformed base64 at offset 2"}},
		{"duplicate ids", convo.History{{Role: convo.RoleUser, ID: "x", Parts: text}, {Role: convo.RoleUser, ID: "x", Parts: text}}, []string{`messages[1]: id "x" is already used by messages[0]`}},
		{"unknown role", convo.History{{Role: "robot"}}, []string{`messages[0]: unknown role "robot"`}},
		{"call without id", convo.History{convo.Assistant("", convo.ToolCall("", "f", nil)), convo.ToolResults(convo.ToolResult("", "f", "x"))},
			[]string{"messages[0].parts[0]: tool call has no id", "messages[1].parts[0]: tool result has no id"}},
		{"empty reasoning", convo.History{{Role: convo.RoleAssistant, Parts: []convo.Part{{Type: convo.TypeReasoning}}}}, []string{"reasoning part is empty"}},
		{"json without value", convo.History{{Role: convo.RoleUser, Parts: []convo.Part{{Type: convo.TypeJSON}}}}, []string{"json part has no value"}},
		{"nested tool result", convo.History{convo.Assistant("", call("a")), convo.ToolResults(convo.ToolResultParts("a", "f", convo.ToolResult("b", "g", "x")))},
			[]string{"messages[1].parts[0].parts[0]: tool_result part inside a tool result"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.h.Validate()
			var ve *convo.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("got %v, want problems %q", err, tt.want)
			}
			if len(ve.Problems) < len(tt.want) {
				t.Fatalf("got %v, want %q", ve.Problems, tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(ve.Problems[i].String(), w) {
					t.Errorf("problem %d = %q, want %q (all: %v)", i, ve.Problems[i], w, ve.Problems)
				}
			}
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	h := convo.History{{Role: "x"}, {Role: convo.RoleUser, Phase: "final", Parts: text}, {Role: convo.RoleUser, Compacted: 1, Parts: text}}
	var ve *convo.ValidationError
	if !errors.As(h.Validate(), &ve) || len(ve.Problems) != 3 {
		t.Fatalf("got %v", h.Validate())
	}
	if !strings.Contains(ve.Error(), "and 2 more problems") {
		t.Fatalf("error text %q", ve.Error())
	}
}

func TestCompact(t *testing.T) {
	h := convo.History{
		convo.System("s"),
		convo.User("q1"),
		convo.Assistant("", call("a")),
		convo.ToolResults(convo.ToolResult("a", "f", "1")),
		convo.Assistant("a1"),
		convo.User("q2"),
	}
	out, err := h.Compact(4, "q1 answered with a1")
	if err != nil {
		t.Fatal(err)
	}
	want := convo.History{convo.System("s"), convo.Summary("q1 answered with a1", 4), convo.User("q2")}
	if !out.Equal(want) {
		t.Fatalf("got %v", out)
	}
	if err := out.Validate(); err != nil {
		t.Fatalf("compacted history invalid: %v", err)
	}
	if len(h) != 6 || h[1].Text() != "q1" {
		t.Fatal("Compact modified its input")
	}
	if _, err := h.Compact(2, "x"); !errors.Is(err, convo.ErrSplitsToolCall) {
		t.Fatalf("cut between call and result: %v", err)
	}
	for _, n := range []int{0, 6} {
		if _, err := h.Compact(n, "x"); err == nil {
			t.Fatalf("Compact(%d) accepted", n)
		}
	}
}

func TestCurated(t *testing.T) {
	h := convo.History{
		convo.System("always"),
		convo.TurnSystem("only turn 1"),
		convo.User("q1"),
		convo.Assistant("", call("a")),
		convo.ToolResults(convo.ToolResult("a", "f", "1")),
		convo.ErrorMessage("overloaded"),
		convo.Assistant("a1"),
		convo.User("q2"),
		convo.TurnSystem("only turn 2"),
	}
	got := h.Curated()
	texts := []string{}
	for _, m := range got {
		texts = append(texts, m.Text())
	}
	if strings.Join(texts, "|") != "always|q1|||a1|q2|only turn 2" {
		// the tool call and its result have no visible text
		t.Fatalf("curated: %q", texts)
	}
	if len(h) != 9 {
		t.Fatal("Curated modified the full history")
	}
	if plain := (convo.History{convo.User("x")}); &plain.Curated()[0] != &plain[0] {
		t.Fatal("Curated copied a history with nothing to leave out")
	}
}

// A document in a provider's shape parses as format v1 (unknown members are
// kept aside), so Validate is where it must fail, saying what it looks like.
func TestValidateForeignShape(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{`[{"role":"user","content":"hi"}]`, `messages[0]: user message has no parts; its "content" member is not format v1: this looks like an OpenAI Chat or Anthropic message`},
		{`[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[]}]`, `messages[1]: assistant message has no parts`},
		{`[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u"}}]}]`, `OpenAI Chat message (format openai-chat)`},
		{`[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t"}]}]`, `Anthropic message (format anthropic)`},
		{`[{"role":"user","parts":[{"text":"hi"}]}]`, `messages[0].parts[0]: part has no type; a part with "text" and no "type" looks like a Gemini part (format gemini)`},
	} {
		h, err := convo.Unmarshal([]byte(tt.doc))
		if err == nil {
			err = h.Validate()
		}
		var ve *convo.ValidationError
		if errors.As(err, &ve) {
			err = errors.New(fmt.Sprint(ve.Problems))
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s:\n got %v\nwant %q", tt.doc, err, tt.want)
		}
	}
}

func TestMarshalRefusesMetaThatIsNotAnObject(t *testing.T) {
	m := convo.User("hi")
	for _, meta := range []string{`[1]`, `"x"`, `null`, `3`} {
		m.Meta = json.RawMessage(meta)
		if _, err := convo.Marshal(convo.History{m}); err == nil || !strings.Contains(err.Error(), "messages[0].meta: meta must be a JSON object") {
			t.Errorf("meta %s: got %v", meta, err)
		}
	}
	m.Meta = json.RawMessage(` {"k":1}`)
	b, err := convo.Marshal(convo.History{m})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := convo.Unmarshal(b); err != nil {
		t.Fatalf("written meta does not read back: %v", err)
	}
}

func TestPending(t *testing.T) {
	a, b := call("a"), call("b")
	for _, tt := range []struct {
		name string
		h    convo.History
		want []string
	}{
		{"none", convo.History{convo.User("q"), convo.Assistant("hi")}, nil},
		{"all", convo.History{convo.User("q"), convo.Assistant("", a, b)}, []string{"a", "b"}},
		{"some answered", convo.History{convo.User("q"), convo.Assistant("", a, b), convo.ToolResults(convo.ToolResult("a", "f", "1"))}, []string{"b"}},
		{"all answered", convo.History{convo.Assistant("", a), convo.ToolResults(convo.ToolResult("a", "f", "1"))}, nil},
		{"user after", convo.History{convo.Assistant("", a), convo.User("?")}, nil},
		{"empty", nil, nil},
	} {
		var got []string
		for _, p := range tt.h.Pending() {
			got = append(got, p.ID)
		}
		if strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestValidateCallOutsideAssistant: a tool call in a user message is one
// problem, not also an open call that the next message leaves unanswered:
// only an assistant message's calls wait for results.
func TestValidateCallOutsideAssistant(t *testing.T) {
	h := convo.History{{Role: convo.RoleUser, Parts: []convo.Part{call("a")}}, convo.User("next")}
	var ve *convo.ValidationError
	if !errors.As(h.Validate(), &ve) || len(ve.Problems) != 1 ||
		ve.Problems[0].String() != "messages[0].parts[0]: tool_call in a user message (only assistant messages call tools)" {
		t.Fatalf("got %v", h.Validate())
	}
}
