package tokens

import (
	"unicode"
	"unicode/utf8"
)

// chunkBytes is about the size of the pieces a long text is tokenized in.
// The tokenizer library holds several times its input while it works (its
// regular expressions run over a []rune copy, and each match allocates):
// one 50 MiB message once took 1.5 GB. Pieces keep that to a few times
// chunkBytes, at no cost in speed.
const chunkBytes = 64 << 10

// countChunked counts s with count, a piece of about size bytes at a time,
// cut only where the tokenizer's pre-tokenization always splits, so the
// total is the count of s whole: at a single space between two characters
// that are not white space. Every BPE vocabulary convo uses (cl100k_base,
// o200k_base) splits there: a piece may begin with a space but never ends
// with one unless it is all white space, and BPE never merges across
// pieces. A text with no such place (a run with no spaces, such as base64)
// is counted whole.
func countChunked(count func(string) (int, error), s string, size int) int {
	total := 0
	for len(s) > size {
		cut := safeCut(s, size)
		if cut <= 0 {
			break
		}
		n, _ := count(s[:cut])
		total += n
		s = s[cut:]
	}
	n, _ := count(s)
	return total + n
}

// safeCut returns the first index at or after size where s may be cut (a
// space with a character that is not white space on either side), or -1.
func safeCut(s string, size int) int {
	for i := size; i < len(s)-1; i++ {
		if s[i] != ' ' {
			continue
		}
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+1:])
		if !unicode.IsSpace(before) && !unicode.IsSpace(after) {
			return i
		}
	}
	return -1
}
