package fit

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/tokens"
)

func counter(t testing.TB) *tokens.Counter { return counterFor(t, "gpt-4o") }

// counterFor returns a caching counter for model; an Anthropic one counts
// reasoning, which OpenAI requests do not carry.
func counterFor(t testing.TB, model string) *tokens.Counter {
	t.Helper()
	c, err := tokens.NewCounter(model, tokens.Options{Cache: true})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// words returns n distinct-looking words, so counts grow with n.
func words(seed, n int) string {
	vocab := []string{"alpha", "river", "quartz", "lantern", "meadow", "copper", "violet", "harbor", "signal", "maple", "ember", "orbit"}
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocab[(seed*7+i*5)%len(vocab)])
	}
	return b.String()
}

// turn builds one user turn: a question, optionally a tool call with its
// result, and a final answer with reasoning.
func turn(i int, tool bool, size int) convo.History {
	h := convo.History{convo.User(fmt.Sprintf("Question %d: %s", i, words(i, size)))}
	if tool {
		id := fmt.Sprintf("call_%d", i)
		h = append(h,
			convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
				convo.Reasoning("I should look this up: " + words(i+1, size/2)),
				convo.ToolCall(id, "search", json.RawMessage(fmt.Sprintf(`{"q":"question %d"}`, i))),
			}},
			convo.ToolResults(convo.ToolResult(id, "search", "Results: "+words(i+2, size*3))),
		)
	}
	h = append(h, convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
		convo.Reasoning("Now answer: " + words(i+3, size/2)),
		convo.Text(fmt.Sprintf("Answer %d: %s", i, words(i+4, size))),
	}})
	return h
}

func session(turns, size int) convo.History {
	h := convo.History{convo.System("You are a careful assistant. " + words(0, 20))}
	for i := range turns {
		h = append(h, turn(i, i%2 == 0, size)...)
	}
	return h
}

func mustFit(t testing.TB, h convo.History, opts Options) *Result {
	t.Helper()
	r, err := Fit(context.Background(), h, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tb is what checkInvariants needs of a *testing.T or a *rapid.T.
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

// checkInvariants checks what every fit must keep, whatever the history.
func checkInvariants(t tb, h convo.History, r *Result, c Counter) {
	t.Helper()
	out := r.History
	if got := count(c, out); got > r.Budget || got != r.Tokens {
		t.Fatalf("fitted history counts %d (report says %d), budget %d", got, r.Tokens, r.Budget)
	}
	lead := h.Leading()
	for i := range lead {
		if !out[i].Equal(h[i]) {
			t.Fatalf("leading system message %d changed", i)
		}
	}
	last := -1
	for i := len(h) - 1; i >= lead; i-- {
		if h[i].Role == convo.RoleUser {
			last = i
			break
		}
	}
	if last >= 0 {
		tail := h[last:]
		if len(out) < len(tail) || !convo.History(out[len(out)-len(tail):]).Equal(tail) {
			t.Fatalf("the latest user turn (messages[%d:]) was not kept as it was", last)
		}
	}
	if h.Validate() == nil {
		if err := out.Validate(); err != nil {
			t.Fatalf("fitted history is invalid: %v", err)
		}
	}
	// Every message is either sent (maybe changed) or reported excluded.
	sent := len(out) - lead
	if r.Summary >= 0 {
		sent--
		if s := out[r.Summary]; s.Role != convo.RoleSummary || s.Compacted <= 0 {
			t.Fatalf("summary at %d: %+v", r.Summary, s)
		}
	}
	if sent+len(r.Excluded) != len(h)-lead {
		t.Fatalf("%d sent + %d excluded != %d messages after the system prompt", sent, len(r.Excluded), len(h)-lead)
	}
	for _, c := range r.Changed {
		if c.At < 0 || c.At >= len(out) || out[c.At].Role != h[c.Index].Role {
			t.Fatalf("changed entry %+v does not point at its message", c)
		}
	}
}

func count(c Counter, h convo.History) int {
	n := c.RequestTokens()
	expired := h.Expired()
	for i, m := range h {
		if !expired[i] && m.Role != convo.RoleError {
			n += c.MessageTokens(m)
		}
	}
	return n
}

// fakeSummarizer writes a short deterministic summary and counts calls.
type fakeSummarizer struct {
	calls atomic.Int32
	size  int
}

func (s *fakeSummarizer) Summarize(_ context.Context, h convo.History) (string, error) {
	s.calls.Add(1)
	n := max(1, s.size)
	return fmt.Sprintf("Summary of %d messages: %s", len(h), words(len(h), n)), nil
}
