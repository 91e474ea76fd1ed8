package fit

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/convo-go/convo"
)

// simTurn is one turn of the simulated session: a question, now and then a
// tool round with a long result, and an answer with reasoning.
func simTurn(rng *rand.Rand, i int) convo.History {
	n := func(lo, hi int) int { return lo + rng.IntN(hi-lo+1) }
	h := convo.History{convo.User(fmt.Sprintf("Turn %d. %s", i, words(rng.IntN(50), n(10, 60))))}
	if rng.IntN(3) == 0 {
		id := fmt.Sprintf("call_%d", i)
		h = append(h,
			convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
				convo.Reasoning(words(rng.IntN(50), n(10, 40))),
				convo.ToolCall(id, "search", json.RawMessage(fmt.Sprintf(`{"q":"turn %d"}`, i))),
			}},
			convo.ToolResults(convo.ToolResult(id, "search", words(rng.IntN(50), n(40, 160)))),
		)
	}
	return append(h, convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
		convo.Reasoning(words(rng.IntN(50), n(10, 40))),
		convo.Text(words(rng.IntN(50), n(10, 60))),
	}})
}

func isPrefix(a, b convo.History) bool {
	return len(a) <= len(b) && a.Equal(b[:len(a)])
}

// TestCacheStablePrefix simulates a 500-turn session under a fixed budget,
// fitting before every request: the request must never exceed the budget,
// and its start (what providers cache) may change at most once in any 20
// turns.
func TestCacheStablePrefix(t *testing.T) {
	const turns = 500
	for _, tc := range []struct {
		name       string
		model      string
		budget     int
		strategies []Strategy
	}{
		// OpenAI requests carry no reasoning, so its turns are smaller.
		{"default/gpt-4o", "gpt-4o", 25000, nil},
		{"default/claude", "claude-sonnet-4", 40000, nil},
		{"summarize/claude", "claude-sonnet-4", 40000, []Strategy{DropReasoning, ShortenResults, Summarize}},
		{"drop/gpt-4o", "gpt-4o", 25000, []Strategy{DropOldest}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, budget := counterFor(t, tc.model), tc.budget
			rng := rand.New(rand.NewPCG(1, 2))
			opts := Options{Budget: budget, Counter: c, Strategies: tc.strategies, Block: budget / 4,
				Summarizer: Memo(&fakeSummarizer{size: 60}), ShortenTo: 200}
			h := convo.History{convo.System("You are a careful assistant. " + words(1, 40))}
			var prev convo.History
			var changes []int
			maxGrowth, trimmed := 0, 0
			for turn := 1; turn <= turns; turn++ {
				next := simTurn(rng, turn)
				growth := 0
				for _, m := range next {
					growth += c.MessageTokens(m)
				}
				maxGrowth = max(maxGrowth, growth)
				h = append(h, next...)
				r, err := Fit(context.Background(), h, opts)
				if err != nil {
					t.Fatalf("turn %d: %v", turn, err)
				}
				if got := count(c, r.History); got > budget || got != r.Tokens {
					t.Fatalf("turn %d: request counts %d (report %d), budget %d", turn, got, r.Tokens, budget)
				}
				if len(r.Notes) > 0 {
					t.Fatalf("turn %d: %q", turn, r.Notes)
				}
				if r.Level > 0 {
					trimmed++
				}
				if prev != nil && !isPrefix(prev, r.History) {
					changes = append(changes, turn)
				}
				prev = r.History
			}
			// The scheme promises one change per block of growth; the test
			// means something only if a turn is well under a twentieth of a
			// block.
			if block := budget / 4; maxGrowth*20 > block {
				t.Fatalf("a turn grew by %d tokens: too much for block %d", maxGrowth, block)
			}
			if trimmed < turns/2 || len(changes) < 5 {
				t.Fatalf("trimmed on %d turns, %d prefix changes: the session never got long", trimmed, len(changes))
			}
			for i := 1; i < len(changes); i++ {
				if gap := changes[i] - changes[i-1]; gap < 20 {
					t.Fatalf("prefix changed at turns %d and %d (all changes: %v)", changes[i-1], changes[i], changes)
				}
			}
			t.Logf("%d turns, %d trimmed, prefix changed %d times at %v (largest turn %d tokens)", turns, trimmed, len(changes), changes, maxGrowth)
		})
	}
}
