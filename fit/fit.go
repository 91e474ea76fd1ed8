// Package fit makes a conversation fit a token budget — a model's context
// window minus room for the reply — without breaking it: a tool call is
// never separated from its results, the leading system messages and the
// latest user turn are always kept, and the stored history is never
// changed. Fit returns the history to send and a report of what it left out
// or changed, and why.
//
// Room is made by strategies applied in the order given: drop the reasoning
// of old assistant messages, shorten old tool results (marked as
// shortened), drop the oldest turns, and summarise what was dropped into
// one summary message.
//
// By default Fit keeps as much as the budget allows: it leaves out whole
// turns and tool groups only as far as it must after the other strategies
// have trimmed all that is kept, so no cut keeping more of them fits.
//
// Providers cache the start of a request, and a request whose start moves
// on every turn pays full price every turn. A session that fits before
// every request therefore sets Options.Block: Fit then trims in blocks of
// tokens measured from the start of the conversation, and as the
// conversation grows what it sends keeps the same beginning until the
// conversation has grown by a whole block. The price is the room it leaves
// to grow into: less than a block (and the group crossing the block's end)
// per strategy. docs/tokens.md explains both.
package fit

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/tokens"
)

// Counter counts what a message costs in a request. *tokens.Counter is one;
// build it with tokens.Options{Upper: true} to budget with the upper end of
// an estimate. A counter that also has a CountsReasoning() bool method
// returning false says requests carry no reasoning; Fit then does not count
// what dropping it would save.
type Counter interface {
	// MessageTokens is the cost of m in a request, framing included; 0 for
	// a message that is not sent.
	MessageTokens(m convo.Message) int
	// RequestTokens is what a request costs once, whatever its messages.
	RequestTokens() int
}

// Strategy is one way of making room.
type Strategy string

// The strategies, in the order DefaultStrategies applies them.
const (
	// DropReasoning removes the reasoning parts of old assistant messages.
	DropReasoning Strategy = "reasoning"
	// ShortenResults cuts old tool results to Options.ShortenTo bytes and
	// says so in the result's text.
	ShortenResults Strategy = "shorten"
	// DropOldest leaves out the oldest turns.
	DropOldest Strategy = "drop"
	// Summarize replaces the turns DropOldest leaves out with one summary
	// message written by Options.Summarizer. It implies DropOldest.
	Summarize Strategy = "summarize"
)

// DefaultStrategies are used when Options.Strategies is nil.
var DefaultStrategies = []Strategy{DropReasoning, ShortenResults, DropOldest}

// Summarizer writes the summary that replaces left-out messages.
type Summarizer interface {
	Summarize(ctx context.Context, left convo.History) (string, error)
}

// SummarizerFunc adapts a function to Summarizer.
type SummarizerFunc func(ctx context.Context, left convo.History) (string, error)

// Summarize calls f.
func (f SummarizerFunc) Summarize(ctx context.Context, left convo.History) (string, error) {
	return f(ctx, left)
}

// Options configure Fit.
type Options struct {
	// Budget is how many tokens the request's prompt may take. Required.
	Budget int
	// Counter counts messages. Required.
	Counter Counter
	// Strategies to apply, in order; nil means DefaultStrategies.
	Strategies []Strategy
	// Summarizer writes summaries for the Summarize strategy.
	Summarizer Summarizer
	// Block is the step, in tokens, in which the history is trimmed so
	// that successive fits of a growing conversation keep the same start
	// (a quarter of Budget is a good choice for a session). A larger block
	// keeps the start the same for longer and leaves more of the budget
	// unused. 0 means no steps: keep as much as the budget allows.
	Block int
	// ShortenTo is how many bytes of a shortened tool result are kept; 0
	// means 1024. Results no longer than that are left alone.
	ShortenTo int
	// SummaryReserve is the room, in tokens, kept for a summary until its
	// real size is known; 0 means an eighth of Block (of a quarter of
	// Budget when Block is 0).
	SummaryReserve int
	// Counts, when not nil, holds each message's count as Counter gives it,
	// kept by a caller that counts messages as they are added: Fit then
	// counts only the messages it shortens. It must have one entry per
	// message.
	Counts []int
}

// Result is a fitted history and the report of how it was fitted.
type Result struct {
	// History is what to send. It shares unchanged messages with the
	// history given to Fit, which is left as it was.
	History convo.History
	// Tokens is History's count, as the counter counts; Budget the budget.
	Tokens int
	Budget int
	// Original is the count of the history given to Fit.
	Original int
	// Level is how many blocks had to be trimmed: 0 when the history fitted
	// as it was; with Block 0, 1 when anything was trimmed.
	Level int
	// Excluded lists the messages left out, in order, with why.
	Excluded []Excluded
	// Changed lists the messages sent shortened, in order.
	Changed []Changed
	// Summary is the index in History of the summary Fit wrote, or -1.
	Summary int
	// Notes are remarks on the fit (a summary that did not fit, fitting
	// that fell back to a less stable cut).
	Notes []string
}

// Excluded is a message Fit left out.
type Excluded struct {
	Index  int // in the history given to Fit
	Role   convo.Role
	Tokens int
	Reason string
}

// Changed is a message Fit sent in a shortened form.
type Changed struct {
	Index int // in the history given to Fit
	At    int // in Result.History
	Role  convo.Role
	What  string
	Saved int // tokens
}

// BudgetError is returned when even the leading system messages and the
// latest turn do not fit the budget.
type BudgetError struct {
	Budget int
	Need   int // tokens of what must be kept
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("budget of %s is %d short: the system prompt and the latest turn alone take %d", tokenCount(e.Budget), e.Need-e.Budget, e.Need)
}

// tokenCount is n with "token" or "tokens", as n asks.
func tokenCount(n int) string {
	if n == 1 {
		return "1 token"
	}
	return strconv.Itoa(n) + " tokens"
}

// Short is by how many tokens the budget falls short.
func (e *BudgetError) Short() int { return e.Need - e.Budget }

// BudgetFor returns the prompt budget of model m: its context window less
// reserve tokens for the reply. A negative reserve means the default: the
// model's maximum output when that is less than half its window (so a
// request may ask for the full reply), else a fifth of the window.
func BudgetFor(m tokens.Model, reserve int) (int, error) {
	if m.Context <= 0 {
		return 0, fmt.Errorf("model %s: its context window is not known (give a budget)", m.Name)
	}
	if reserve < 0 {
		reserve = m.Context / 5
		if m.MaxOutput > 0 && m.MaxOutput < m.Context/2 {
			reserve = m.MaxOutput
		}
	}
	if reserve >= m.Context {
		return 0, fmt.Errorf("model %s: a reserve of %d leaves nothing of its %d-token window", m.Name, reserve, m.Context)
	}
	return m.Context - reserve, nil
}

// Fit returns h fitted to opts.Budget, with a report of what was left out or
// changed. h is not modified. It fails with a *BudgetError when the leading
// system messages, the latest user turn and what follows it do not fit,
// and with the summarizer's error when summarising fails.
func Fit(ctx context.Context, h convo.History, opts Options) (*Result, error) {
	f, err := newFitter(h, opts)
	if err != nil {
		return nil, err
	}
	return f.run(ctx)
}

// CountsFor returns the count of every message of h for Options.Counts,
// reusing counts, the counts of h's first len(counts) messages made
// before, and counting only the messages added since. A session keeps the
// result and passes it back on its next turn.
func CountsFor(c Counter, h convo.History, counts []int) []int {
	if len(counts) > len(h) {
		counts = counts[:0]
	}
	out := append(make([]int, 0, len(h)), counts...)
	for _, m := range h[len(counts):] {
		out = append(out, c.MessageTokens(m))
	}
	return out
}

func (o *Options) check() error {
	switch {
	case o.Counter == nil:
		return errors.New("fit: no counter")
	case o.Budget <= 0:
		return fmt.Errorf("fit: budget must be positive, got %d", o.Budget)
	case o.Block < 0 || o.ShortenTo < 0 || o.SummaryReserve < 0:
		return errors.New("fit: block, shorten-to and summary reserve must not be negative")
	}
	for _, s := range o.Strategies {
		switch s {
		case DropReasoning, ShortenResults, DropOldest:
		case Summarize:
			if o.Summarizer == nil {
				return errors.New("fit: the summarize strategy needs a Summarizer")
			}
		default:
			return fmt.Errorf("fit: unknown strategy %q (want reasoning, shorten, drop or summarize)", s)
		}
	}
	return nil
}

// ParseStrategies reads a comma-separated list of strategy names
// ("reasoning,shorten,drop").
func ParseStrategies(s string) ([]Strategy, error) {
	var out []Strategy
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != ',' {
			continue
		}
		name := Strategy(trimSpace(s[start:i]))
		start = i + 1
		switch name {
		case DropReasoning, ShortenResults, DropOldest, Summarize:
			out = append(out, name)
		default:
			return nil, fmt.Errorf("unknown strategy %q (want reasoning, shorten, drop or summarize)", name)
		}
	}
	return out, nil
}

func trimSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

func msgPath(i int) string { return "messages[" + strconv.Itoa(i) + "]" }
