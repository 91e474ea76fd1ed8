package fit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/convo-go/convo"
)

// genHistory draws a valid history: system messages, maybe an old summary,
// then turns of user questions, tool rounds (calls answered by results,
// sometimes over several tool messages), reasoning, answers, and now and
// then an error record or a turn-scoped system message. The last turn may
// stop before its answer, as an agent loop does.
func genHistory(t *rapid.T) convo.History {
	var h convo.History
	for i := range rapid.IntRange(0, 2).Draw(t, "systems") {
		h = append(h, convo.System(fmt.Sprintf("Rule %d: %s", i, words(i, rapid.IntRange(1, 30).Draw(t, "syslen")))))
	}
	if rapid.Bool().Draw(t, "oldSummary") {
		h = append(h, convo.Summary("Earlier: "+words(3, 20), rapid.IntRange(1, 9).Draw(t, "compacted")))
	}
	text := func(label string) string {
		return words(rapid.IntRange(0, 50).Draw(t, label+"seed"), rapid.IntRange(1, 60).Draw(t, label+"len"))
	}
	turns := rapid.IntRange(1, 12).Draw(t, "turns")
	call := 0
	for i := range turns {
		u := convo.User(text("user"))
		if rapid.IntRange(0, 5).Draw(t, "named") == 0 {
			u.Name = "ana"
		}
		h = append(h, u)
		if rapid.IntRange(0, 6).Draw(t, "turnScoped") == 0 {
			h = append(h, convo.TurnSystem("For this turn: "+text("ts")))
		}
		for range rapid.IntRange(0, 3).Draw(t, "rounds") {
			var parts []convo.Part
			if rapid.Bool().Draw(t, "reasons") {
				parts = append(parts, convo.Reasoning(text("reasoning")))
			}
			var results []convo.Part
			for range rapid.IntRange(1, 3).Draw(t, "calls") {
				call++
				id := fmt.Sprintf("call_%d", call)
				parts = append(parts, convo.ToolCall(id, "tool", json.RawMessage(`{"n":`+fmt.Sprint(call)+`}`)))
				out := strings.Repeat(text("result")+" ", rapid.IntRange(1, 8).Draw(t, "resultRep"))
				results = append(results, convo.ToolResult(id, "tool", out))
			}
			h = append(h, convo.Message{Role: convo.RoleAssistant, Parts: parts})
			if rapid.Bool().Draw(t, "splitResults") && len(results) > 1 {
				h = append(h, convo.ToolResults(results[:1]...), convo.ToolResults(results[1:]...))
			} else {
				h = append(h, convo.ToolResults(results...))
			}
		}
		if rapid.IntRange(0, 8).Draw(t, "error") == 0 {
			h = append(h, convo.ErrorMessage("upstream failed"))
		}
		if i == turns-1 && rapid.Bool().Draw(t, "openEnd") {
			break
		}
		var parts []convo.Part
		if rapid.Bool().Draw(t, "answerReasons") {
			parts = append(parts, convo.Reasoning(text("answerReasoning")))
		}
		if rapid.IntRange(0, 9).Draw(t, "onlyReasoning") > 0 || len(parts) == 0 {
			parts = append(parts, convo.Text(text("answer")))
		}
		h = append(h, convo.Message{Role: convo.RoleAssistant, Parts: parts})
	}
	return h
}

// TestFitProperties checks, over random histories, budgets and
// strategies: never over budget when fitting is possible, a budget error
// exactly when it is not, groups never split (the result validates),
// system prompt and latest user turn always kept as they were, every
// message either sent or reported, and the input left untouched.
func TestFitProperties(t *testing.T) {
	counters := []Counter{counterFor(t, "gpt-4o"), counterFor(t, "claude-sonnet-4")}
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t)
		if err := h.Validate(); err != nil {
			t.Fatalf("generator made an invalid history: %v", err)
		}
		c := counters[rapid.IntRange(0, len(counters)-1).Draw(t, "counter")]
		total := count(c, h)
		// Mostly budgets between what must be kept and the whole, where
		// fitting has work to do; a few below, to see the budget error.
		need := required(c, h)
		budget := rapid.IntRange(max(1, need-10), total+20).Draw(t, "budget")
		pool := []Strategy{DropReasoning, ShortenResults, DropOldest, Summarize}
		var strategies []Strategy
		for _, i := range rapid.Permutation([]int{0, 1, 2, 3}).Draw(t, "order")[:rapid.IntRange(1, 4).Draw(t, "nstrategies")] {
			strategies = append(strategies, pool[i])
		}
		opts := Options{
			Budget: budget, Counter: c, Strategies: strategies,
			Summarizer: &fakeSummarizer{size: rapid.IntRange(1, 40).Draw(t, "summary")},
			Block:      rapid.IntRange(0, max(1, total/2)).Draw(t, "block"),
			ShortenTo:  rapid.IntRange(0, 300).Draw(t, "shortenTo"),
		}
		if rapid.Bool().Draw(t, "counts") {
			// Counted by the caller, part earlier and part now.
			opts.Counts = CountsFor(c, h, CountsFor(c, h[:len(h)/2], nil))
		}
		before := make(convo.History, len(h))
		for i, m := range h {
			before[i] = m.Clone()
		}
		r, err := Fit(context.Background(), h, opts)
		if !h.Equal(before) {
			t.Fatal("Fit modified its input")
		}
		var be *BudgetError
		switch {
		case errors.As(err, &be):
			if need <= budget || be.Need != need || be.Budget != budget {
				t.Fatalf("budget error %v, but what must be kept takes %d of %d", err, need, budget)
			}
			return
		case err != nil:
			canDrop := false
			for _, s := range strategies {
				canDrop = canDrop || s == DropOldest || s == Summarize
			}
			if canDrop || !strings.Contains(err.Error(), "cannot bring") {
				t.Fatalf("Fit: %v (must keep %d, budget %d, total %d)", err, need, budget, total)
			}
			return
		}
		if need > budget {
			t.Fatalf("fitted although what must be kept takes %d > %d", need, budget)
		}
		checkInvariants(t, h, r, c)
	})
}

// required counts what Fit must keep, independently of it: the leading
// system messages, the latest user turn and what follows, and the request.
func required(c Counter, h convo.History) int {
	lead, from := h.Leading(), latest(h)
	n := c.RequestTokens()
	expired := h.Expired()
	for i, m := range h {
		if (i < lead || i >= from) && !expired[i] && m.Role != convo.RoleError {
			n += c.MessageTokens(m)
		}
	}
	return n
}

// latest is where the latest turn starts: at the last user message, or
// with none, at the last group.
func latest(h convo.History) int {
	lead := h.Leading()
	from := len(h)
	for i := len(h) - 1; i >= lead; i-- {
		if h[i].Role == convo.RoleUser {
			from = i
			break
		}
	}
	if from == len(h) {
		for i := len(h) - 1; i >= lead; i-- {
			if h[i].Role != convo.RoleTool && h.CanCut(i) {
				from = i
				break
			}
		}
	}
	return from
}
