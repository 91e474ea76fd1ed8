package fit

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/convo-go/convo"
)

// TestKeepsWhatTheBudgetAllows fits 260 tokens into 200 where the old part
// is one long agent turn. Cutting only where a user turn starts drops that
// whole turn and keeps 40 tokens. Cutting also where a tool group ends (a
// call still goes with all its results) drops only the first rounds: the
// need is 60, rounded up to two blocks of 50 for a stable start, and the
// first group end past 100 tokens keeps 148.
func TestKeepsWhatTheBudgetAllows(t *testing.T) {
	c := counter(t)
	h := convo.History{convo.System("Be brief."), convo.User("Find " + words(1, 6))}
	for i := range 6 {
		id := fmt.Sprintf("call_%d", i)
		h = append(h,
			convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{convo.ToolCall(id, "search", json.RawMessage(`{"q":"x"}`))}},
			convo.ToolResults(convo.ToolResult(id, "search", words(i, 16))))
	}
	h = append(h, convo.Assistant("Found it."), convo.User("And "+words(2, 25)))
	if total := count(c, h); total != 260 {
		t.Fatalf("the history counts %d, want 260", total)
	}
	r := mustFit(t, h, Options{Budget: 200, Counter: c})
	checkInvariants(t, h, r, c)
	// Two blocks (100 tokens) must go; the rest of the budget is kept, less
	// at most the group that crosses the block boundary.
	if r.Level != 2 || r.Tokens < 200-50-10 {
		t.Errorf("kept %d of 200 tokens at level %d, want at least 140 at level 2", r.Tokens, r.Level)
	}
	// The kept part starts where a tool group ended.
	if r.History[1].Role != convo.RoleAssistant || r.History[1].Parts[0].Type != convo.TypeToolCall {
		t.Errorf("kept part starts with %+v", r.History[1])
	}
	for _, e := range r.Excluded {
		if e.Index < 1 || e.Index > len(r.Excluded) {
			t.Errorf("excluded %+v: not among the oldest", e)
		}
	}
}

func TestBudgetErrorPlural(t *testing.T) {
	for _, tc := range []struct {
		e    BudgetError
		want string
	}{
		{BudgetError{Budget: 1, Need: 9}, "budget of 1 token is 8 short: the system prompt and the latest turn alone take 9"},
		{BudgetError{Budget: 2, Need: 9}, "budget of 2 tokens is 7 short: the system prompt and the latest turn alone take 9"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
