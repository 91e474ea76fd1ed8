package jsonx

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// readEscapedRef is readEscaped as it was before it read a string in one
// pass (byte by byte, the value's UTF-8 checked once done): the reference
// FuzzReadEscaped compares the one-pass reader with.
func (r *Reader) readEscapedRef(start, i int, out []byte) ([]byte, bool, error) {
	b := r.buf
	if out == nil {
		out = make([]byte, 0, i-start+16)
	}
	out = append(out[:0], b[start:i]...)
	for i < len(b) {
		c := b[i]
		switch {
		case c == '"':
			if !utf8.Valid(out) {
				return nil, false, r.errAt(start, "invalid UTF-8 in string")
			}
			r.pos = i + 1
			return out, true, nil
		case c == '\\':
			// The escapes themselves are not what the one-pass change
			// touched: decoded by the same unescape.
			var err error
			if out, i, err = r.unescape(out, i); err != nil {
				return nil, false, err
			}
		case c < 0x20:
			return nil, false, r.errAt(i, "control character in string")
		default:
			out = append(out, c)
			i++
		}
	}
	return nil, false, r.errAt(len(b), "unexpected end of input in string")
}

// FuzzReadEscaped: the one-pass readEscaped reads every string exactly as
// the byte-by-byte reader did: the same value, the same error at the same
// offset, the same position after, from the string's start and from its
// first escape, into a new buffer and into a scratch one.
func FuzzReadEscaped(f *testing.F) {
	for _, s := range []string{
		`"a\nb"`, `"\"quoted\" and \\ back\/slash"`, `"tab\there\r\n\b\f"`, `"\u00e9t\u00E9 \ud83d\ude00!"`,
		`"héllo\nwörld – “x”"`, "\"\xff\\n\"", "\"ok\\n\xc3\"", "\"\xc3\\n\xa9\"", `"\ud83d"`, `"\ud83dx"`, `"\udc00\ud83d"`,
		`"\u12g4"`, `"\q"`, "\"a\\n\x01\"", `"a\n`, `"a\`, `"` + strings.Repeat(`0123456789\n`, 30) + `"`,
		"\"**Holiday\\n\\n1. \\\"Merry\\\" – \\u2014 done\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0] != '"' {
			return
		}
		starts := []int{1}
		if i := bytes.IndexByte(b, '\\'); i > 0 && PlainPrefix(b[1:i]) == i-1 {
			starts = append(starts, i) // as readStringInto calls it
		}
		for _, i := range starts {
			for _, n := range []int{-1, 4} {
				var s1, s2 []byte // a new buffer, or a scratch one too short
				if n >= 0 {
					s1, s2 = make([]byte, 0, n), make([]byte, 0, n)
				}
				r1, r2 := NewReader(b, 0), NewReader(b, 0)
				got, gc, gerr := r1.readEscaped(1, i, s1)
				want, wc, werr := r2.readEscapedRef(1, i, s2)
				if fmt.Sprint(gerr) != fmt.Sprint(werr) {
					t.Fatalf("%q from %d: error %v, want %v", b, i, gerr, werr)
				}
				if gerr == nil && (string(got) != string(want) || gc != wc || r1.pos != r2.pos) {
					t.Fatalf("%q from %d: %q %v at %d, want %q %v at %d", b, i, got, gc, r1.pos, want, wc, r2.pos)
				}
			}
		}
	})
}
