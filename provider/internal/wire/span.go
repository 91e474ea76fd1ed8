package wire

import (
	"unicode/utf8"

	"github.com/convo-go/convo"
)

// A citation's span counts as the provider that wrote it counts: Gemini
// bytes of the part's text, OpenAI characters (runes). Which one wrote it
// is known from the citation itself: every citation read from Gemini
// keeps its support and chunk places (or its source's members) under
// native "gemini", so a span is in bytes exactly when that member is
// there, and in characters otherwise (OpenAI's, or one a program made).
// The format's bytes stay as they were; an encoder converts when its unit
// differs.
const bytesProvider = "gemini"

// SpanInBytes reports whether c's span counts bytes of its part's text
// (Gemini wrote it) rather than characters.
func SpanInBytes(c *convo.Citation) bool {
	_, ok := c.Native[bytesProvider]
	return ok
}

// CharSpan returns c's span in characters of text, the part's text, or
// nil when c has none.
func CharSpan(c *convo.Citation, text string) *convo.Span {
	if c.Span == nil || !SpanInBytes(c) {
		return c.Span
	}
	return &convo.Span{Start: runesAt(text, c.Span.Start), End: runesAt(text, c.Span.End)}
}

// ByteSpan returns c's span in bytes of text, the part's text, or nil
// when c has none.
func ByteSpan(c *convo.Citation, text string) *convo.Span {
	if c.Span == nil || SpanInBytes(c) {
		return c.Span
	}
	return &convo.Span{Start: bytesAt(text, c.Span.Start), End: bytesAt(text, c.Span.End)}
}

// runesAt returns how many characters of text begin before byte b. An
// offset past the text keeps its distance beyond the end, so a range that
// was out of bounds stays so rather than being silently clipped.
func runesAt(text string, b int) int {
	if b <= 0 {
		return b
	}
	if b >= len(text) {
		return utf8.RuneCountInString(text) + b - len(text)
	}
	n := 0
	for i := range text {
		if i >= b {
			break
		}
		n++
	}
	return n
}

// bytesAt returns the byte offset of character n of text; past the text,
// as runesAt, the distance beyond the end is kept.
func bytesAt(text string, n int) int {
	if n <= 0 {
		return n
	}
	k := 0
	for i := range text {
		if k == n {
			return i
		}
		k++
	}
	return len(text) + n - k
}
