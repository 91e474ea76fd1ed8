package tokencount

import (
	"strconv"
	"testing"

	"github.com/tiktoken-go/tokenizer"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/bench/benchkit"
	"github.com/convo-go/convo/tokens"
)

// model is counted exactly by convo (o200k_base), so both sides must agree
// to the token.
const model = "gpt-4o"

func history(n int) convo.History {
	return benchkit.History(n, benchkit.Options{Flavor: benchkit.OpenAI, NoImages: true})
}

func codec(tb testing.TB) tokenizer.Codec {
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		tb.Fatal(err)
	}
	return enc
}

// TestSameCounts checks that convo's counter and the tokenizer called
// directly count every benchmark history the same.
func TestSameCounts(t *testing.T) {
	enc := codec(t)
	c, err := tokens.NewCounter(model, tokens.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 5, 100, 1000} {
		h := history(n)
		want, err := Direct(enc, h)
		if err != nil {
			t.Fatal(err)
		}
		r := c.Count(h)
		if !r.Exact {
			t.Errorf("n=%d: count is not exact: %v", n, r.Warnings)
		}
		if r.Tokens != want {
			t.Errorf("n=%d: convo counts %d tokens, the tokenizer directly %d", n, r.Tokens, want)
		}
	}
}

// BenchmarkTokens counts each history with convo, with convo's counter
// remembering message counts (counting a history again after a turn, as a
// session does: only the new messages are tokenized), and with the
// tokenizer directly.
func BenchmarkTokens(b *testing.B) {
	enc := codec(b)
	plain, err := tokens.NewCounter(model, tokens.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range benchkit.Sizes {
		h := history(n)
		size := 0
		for _, m := range h {
			size += m.EstimatedBytes()
		}
		run := func(lib string, f func() error) {
			b.Run(lib+"/n="+strconv.Itoa(n), func(b *testing.B) {
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					if err := f(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		run("convo", func() error { plain.Count(h); return nil })
		run("tokenizer", func() error { _, err := Direct(enc, h); return err })
		cached, err := tokens.NewCounter(model, tokens.Options{Cache: true})
		if err != nil {
			b.Fatal(err)
		}
		cached.Count(h)
		run("convo-cached", func() error { cached.Count(h); return nil })
	}
}
