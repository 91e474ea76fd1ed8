// Package textbuf holds Text, a text gathered from streamed pieces in
// chunks rather than one slice grown by append, for the reply
// accumulators of the codecs.
package textbuf

import (
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/convo-go/convo/internal/jsonx"
)

// textChunk is the size of the chunks a long Text is kept in.
const textChunk = 64 << 10

// Text gathers a text that arrives in pieces: the deltas of a streamed
// reply. A short text is one slice grown by append; a long one is kept in
// chunks of textChunk bytes or more, so it is never copied as it grows (a
// slice grown by append copies a 40 MB text about twenty times over, and
// holds it twice at each step). String joins it once, at its final length.
// Chunks end at rune boundaries (a rune cut by a piece's end moves to the
// next chunk), so AppendJSON can escape them one by one. Once joined, a
// long text is held as the string String returned, not beside it. The
// zero Text is empty.
type Text struct {
	full   [][]byte // the chunks before cur, full
	cur    []byte
	n      int  // bytes in all
	joined bool // cur is the memory of the string String returned
}

// Len returns the text's length in bytes.
func (t *Text) Len() int { return t.n }

// Append adds p to the end of the text.
func (t *Text) Append(p []byte) {
	if len(t.cur) > 0 && len(t.cur)+len(p) > max(cap(t.cur), textChunk) {
		cut := len(t.cur) - partialRune(t.cur)
		next := make([]byte, 0, max(textChunk, len(t.cur)-cut+len(p)))
		t.full = append(t.full, t.cur[:cut])
		t.cur = append(next, t.cur[cut:]...)
		t.joined = false
	}
	t.cur = AppendPiece(t.cur, p)
	t.n += len(p)
}

// AppendPiece appends a streamed piece to b, giving a b still nil room for
// a few pieces rather than growing it from the first one's length by the
// next ones (pieces are mostly a few words).
func AppendPiece(b, p []byte) []byte {
	if b == nil && len(p) > 0 {
		b = make([]byte, 0, max(firstRoom, len(p)))
	}
	return append(b, p...)
}

// firstRoom is the room AppendPiece first gives.
const firstRoom = 64

// AppendString adds s to the end of the text.
func (t *Text) AppendString(s string) { t.Append(unsafe.Slice(unsafe.StringData(s), len(s))) }

// Tail returns the last n bytes appended, n at most the length of the
// last Append's piece, as a string that shares the text's memory rather
// than copying it. Append never writes over bytes it wrote before, so
// the string stays as it is until Set, which must not be called while it
// is in use.
func (t *Text) Tail(n int) string { return Tail(t.cur, n) }

// Tail returns the last n bytes of b as a string sharing b's memory: for a
// buffer only ever appended to, whose bytes once written never change.
func Tail(b []byte, n int) string {
	if n <= 0 {
		return ""
	}
	return unsafe.String(&b[len(b)-n], n)
}

// Set replaces the text with p.
func (t *Text) Set(p []byte) {
	if t.full != nil || t.joined {
		*t = Text{}
	}
	t.cur, t.n = append(t.cur[:0], p...), len(p)
}

// partialRune returns how many bytes at the end of b are the beginning of
// a rune that more bytes could complete.
func partialRune(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(b[i]) {
			if utf8.FullRune(b[i:]) {
				return 0
			}
			return len(b) - i
		}
	}
	return 0
}

// String returns the text, joined in one allocation. A long text is then
// held as that string, and its chunks are let go: a 40 MB reply would
// otherwise be held twice until the Text is dropped. Append after it
// starts a new chunk, as it never writes over bytes it wrote before.
func (t *Text) String() string {
	if t.joined {
		return unsafeString(t.cur)
	}
	if len(t.full) == 0 {
		return string(t.cur)
	}
	var b strings.Builder
	b.Grow(t.n)
	for _, c := range t.full {
		b.Write(c)
	}
	b.Write(t.cur)
	s := b.String()
	// cap is len: an Append of anything reallocates rather than writing
	// into the string.
	t.full, t.cur, t.joined = nil, unsafe.Slice(unsafe.StringData(s), len(s)), true
	return s
}

// HasPrefix reports whether the text begins with s.
func (t *Text) HasPrefix(s string) bool {
	if len(s) > t.n {
		return false
	}
	for i := 0; s != "" && i <= len(t.full); i++ {
		c := t.cur
		if i < len(t.full) {
			c = t.full[i]
		}
		k := min(len(c), len(s))
		if string(c[:k]) != s[:k] {
			return false
		}
		s = s[k:]
	}
	return true
}

// EqualBytes reports whether the text is p.
func (t *Text) EqualBytes(p []byte) bool { return t.n == len(p) && t.HasPrefix(unsafeString(p)) }

// Since returns the text after its first n bytes.
func (t *Text) Since(n int) string {
	if before := t.n - len(t.cur); n >= before {
		return string(t.cur[n-before:]) // a delta: most often all in cur
	}
	var b strings.Builder
	b.Grow(t.n - n)
	for _, c := range t.full {
		if n >= len(c) {
			n -= len(c)
			continue
		}
		b.Write(c[n:])
		n = 0
	}
	b.Write(t.cur)
	return b.String()
}

// AppendJSON appends the text as a JSON string, as jsonx.AppendString
// writes it whole, without joining it first.
func (t *Text) AppendJSON(dst []byte) []byte {
	dst = append(dst, '"')
	for _, c := range t.full {
		dst = jsonx.AppendStringContent(dst, unsafeString(c))
	}
	dst = jsonx.AppendStringContent(dst, unsafeString(t.cur))
	return append(dst, '"')
}

// unsafeString is b as a string, for reading only while b is not written.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
