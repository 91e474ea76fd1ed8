// Package tokens compares the two Go tokenizer libraries that embed
// OpenAI's vocabularies, to back the choice documented in docs/tokens.md.
// It lives in its own module so the main module never depends on the
// library it did not choose.
package tokens

import (
	"os"
	"strings"
	"sync"
	"testing"

	pkoukk "github.com/pkoukk/tiktoken-go"
	loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/tiktoken-go/tokenizer"
)

var pkoukkOnce sync.Once

func pkoukkEncoding(tb testing.TB, name string) *pkoukk.Tiktoken {
	pkoukkOnce.Do(func() { pkoukk.SetBpeLoader(loader.NewOfflineLoader()) })
	enc, err := pkoukk.GetEncoding(name)
	if err != nil {
		tb.Fatal(err)
	}
	return enc
}

func tiktokenGo(tb testing.TB, name string) tokenizer.Codec {
	enc, err := tokenizer.Get(tokenizer.Encoding(name))
	if err != nil {
		tb.Fatal(err)
	}
	return enc
}

func corpus(tb testing.TB) []string {
	b, err := os.ReadFile("../../tokens/testdata/multilingual.txt")
	if err != nil {
		tb.Fatal(err)
	}
	return strings.SplitAfter(string(b), "\n")
}

// TestSameCounts checks that both libraries agree on every line of the
// multilingual corpus, so the comparison is between equals.
func TestSameCounts(t *testing.T) {
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		a, b := tiktokenGo(t, name), pkoukkEncoding(t, name)
		for i, line := range corpus(t) {
			n, err := a.Count(line)
			if err != nil {
				t.Fatal(err)
			}
			if m := len(b.EncodeOrdinary(line)); n != m {
				t.Errorf("%s line %d: tiktoken-go/tokenizer %d, pkoukk/tiktoken-go %d: %q", name, i+1, n, m, line)
			}
		}
	}
}

func benchCount(b *testing.B, count func(string) int) {
	lines := corpus(b)
	size := 0
	for _, l := range lines {
		size += len(l)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			count(l)
		}
	}
}

func BenchmarkCount(b *testing.B) {
	for _, name := range []string{"o200k_base", "cl100k_base"} {
		b.Run("tiktoken-go-tokenizer/"+name, func(b *testing.B) {
			enc := tiktokenGo(b, name)
			benchCount(b, func(s string) int { n, _ := enc.Count(s); return n })
		})
		b.Run("pkoukk-tiktoken-go/"+name, func(b *testing.B) {
			enc := pkoukkEncoding(b, name)
			benchCount(b, func(s string) int { return len(enc.EncodeOrdinary(s)) })
		})
	}
}
