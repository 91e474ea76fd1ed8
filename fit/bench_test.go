package fit

import (
	"context"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/tokens"
)

// benchHistory is a 10,000-message session: some 3,300 turns, half of them
// with a tool round.
func benchHistory(b *testing.B) convo.History {
	h := session(3400, 30)
	end := 10000
	for h[end].Role != convo.RoleUser {
		end--
	}
	h = h[:end]
	for i := 0; len(h) < 10000; i++ {
		h = append(h, convo.User(words(i, 30)))
		if len(h) < 10000 {
			h = append(h, convo.Assistant(words(i+1, 30)))
		}
	}
	if len(h) != 10000 || h.Validate() != nil {
		b.Fatalf("%d messages", len(h))
	}
	return h
}

// BenchmarkMarshal is the yardstick: encoding the history once.
func BenchmarkMarshal(b *testing.B) {
	h := benchHistory(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := convo.Marshal(h); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFit fits the 10,000-message history into 100,000 tokens, as a
// session re-fits before every request (in blocks of 25,000): with a
// counter that remembers the messages it counted before (warm), and, for
// reference, with counters that must tokenize everything (cold), and
// keeping as much as the budget allows (no block).
func BenchmarkFit(b *testing.B) {
	h := benchHistory(b)
	run := func(b *testing.B, c Counter, strategies []Strategy, warm bool) {
		opts := Options{Budget: 100000, Block: 25000, Counter: c, Strategies: strategies}
		if strings.HasSuffix(b.Name(), "keep-most") {
			opts.Block = 0
		}
		if warm {
			// The counter has seen the messages before: the state of a
			// session that fits before every request.
			if _, err := Fit(context.Background(), h, opts); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			r, err := Fit(context.Background(), h, opts)
			if err != nil || r.Level == 0 {
				b.Fatal(err, r.Level)
			}
		}
	}
	for _, model := range []string{"gpt-4o", "claude-sonnet-4"} {
		b.Run("warm/"+model, func(b *testing.B) {
			c, err := tokens.NewCounter(model, tokens.Options{Cache: true})
			if err != nil {
				b.Fatal(err)
			}
			run(b, c, nil, true)
		})
	}
	b.Run("warm/gpt-4o/drop-only", func(b *testing.B) {
		c, _ := tokens.NewCounter("gpt-4o", tokens.Options{Cache: true})
		run(b, c, []Strategy{DropOldest}, true)
	})
	b.Run("warm/gpt-4o/keep-most", func(b *testing.B) {
		c, _ := tokens.NewCounter("gpt-4o", tokens.Options{Cache: true})
		run(b, c, nil, true)
	})
	b.Run("counted/gpt-4o", func(b *testing.B) {
		// The caller kept each message's count as it was added: Fit only
		// counts what it shortens (from the counter's memory after the
		// first run).
		c, _ := tokens.NewCounter("gpt-4o", tokens.Options{Cache: true})
		counts := make([]int, len(h))
		for i, m := range h {
			counts[i] = c.MessageTokens(m)
		}
		if _, err := Fit(context.Background(), h, Options{Budget: 100000, Block: 25000, Counter: c, Counts: counts}); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			r, err := Fit(context.Background(), h, Options{Budget: 100000, Block: 25000, Counter: c, Counts: counts})
			if err != nil || r.Level == 0 {
				b.Fatal(err)
			}
		}
	})
	b.Run("cold/gpt-4o", func(b *testing.B) {
		c, _ := tokens.NewCounter("gpt-4o", tokens.Options{})
		run(b, c, nil, false)
	})
}
