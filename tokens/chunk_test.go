package tokens

import (
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer"
	"pgregory.net/rapid"
)

// TestCountChunked: a text counted in pieces, cut where countChunked cuts
// it, has the count of the whole text, for both vocabularies and any piece
// size, on texts made of the characters that decide where BPE splits.
func TestCountChunked(t *testing.T) {
	for _, enc := range []tokenizer.Encoding{tokenizer.O200kBase, tokenizer.Cl100kBase} {
		codec, err := tokenizer.Get(enc)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(string(enc), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				atoms := []string{" ", "  ", "\n", "\t", "word", "Word", "'s", "123", "4567", ".", "!?", "é", "日本", "😀", "\u00a0", " ,", "-", "/", "\r\n", "x"}
				var b strings.Builder
				for _, a := range rapid.SliceOfN(rapid.SampledFrom(atoms), 0, 200).Draw(t, "atoms") {
					b.WriteString(a)
				}
				s := b.String()
				size := rapid.IntRange(1, 64).Draw(t, "size")
				whole, _ := codec.Count(s)
				if got := countChunked(codec.Count, s, size); got != whole {
					t.Fatalf("%q in pieces of %d: %d tokens, whole %d", s, size, got, whole)
				}
			})
		})
	}
}
