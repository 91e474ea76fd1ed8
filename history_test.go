package convo_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/convo-go/convo"
)

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
	tests := []struct {
		name string
		h    convo.History
		want []string
	}{
		{"unanswered call", convo.History{convo.Assistant("", call("a")), convo.User("next")},
			[]string{`messages[0].parts[0]: tool call "a" (f) has no result before messages[1]`}},
		{"unanswered at end", convo.History{convo.Assistant("", call("a"))},
			[]string{`messages[0].parts[0]: tool call "a" (f) has no result before messages[1]`}},
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
		{"phase on user", convo.History{{Role: convo.RoleUser, Phase: convo.PhaseFinal}}, []string{"messages[0]: phase on a user message"}},
		{"unknown phase", convo.History{{Role: convo.RoleAssistant, Phase: "draft"}}, []string{`messages[0].phase: unknown phase "draft"`}},
		{"compacted on user", convo.History{{Role: convo.RoleUser, Compacted: 2}}, []string{"messages[0]: compacted on a user message"}},
		{"scope on user", convo.History{{Role: convo.RoleUser, Scope: convo.ScopeTurn}}, []string{"messages[0]: scope on a user message"}},
		{"unknown finish", convo.History{{Role: convo.RoleAssistant, Finish: "tired"}}, []string{`messages[0].finish: unknown finish reason "tired"`}},
		{"two media sources", convo.History{convo.User("", convo.Part{Type: convo.TypeImage, MediaType: "image/png", URL: "u", FileID: "f"})},
			[]string{"messages[0].parts[0]: image part has 2 sources"}},
		{"no media source", convo.History{convo.User("", convo.Part{Type: convo.TypeAudio})}, []string{"messages[0].parts[0]: audio part has 0 sources"}},
		{"text source on an image", convo.History{convo.User("", convo.Part{Type: convo.TypeImage, Text: "x"})}, []string{"image part with a text source"}},
		{"malformed base64", convo.History{convo.User("", convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: "ab!d"})},
			[]string{"messages[0].parts[0].data: malformed base64 at offset 2"}},
		{"duplicate ids", convo.History{{Role: convo.RoleUser, ID: "x"}, {Role: convo.RoleUser, ID: "x"}}, []string{`messages[1]: id "x" is already used by messages[0]`}},
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
	h := convo.History{{Role: "x"}, {Role: convo.RoleUser, Phase: "final"}, {Role: convo.RoleUser, Compacted: 1}}
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
