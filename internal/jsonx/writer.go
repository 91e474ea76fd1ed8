package jsonx

import (
	"encoding/binary"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

const hexDigits = "0123456789abcdef"

// safe[c] is true for ASCII bytes that need no escaping inside a JSON string.
var safe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// AppendString appends s as a JSON string. HTML characters are not escaped.
// Invalid UTF-8 is written as U+FFFD; callers that must not lose data check
// with ValidString first (AppendStringChecked does both).
func AppendString(dst []byte, s string) []byte {
	dst, _ = appendString(dst, s)
	return dst
}

// AppendStringChecked appends s as a JSON string and reports whether s was
// valid UTF-8.
func AppendStringChecked(dst []byte, s string) ([]byte, bool) {
	return appendString(dst, s)
}

// SWAR constants: a byte-wise test of eight bytes at once.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plain8 reports whether the eight bytes of x need no escaping: none is a
// control character, '"', '\\' or non-ASCII.
func plain8(x uint64) bool { return special8(x) == 0 }

// special8 marks the bytes of x that plain8 refuses with their high bit.
// The lowest marked byte is exact (a borrow only runs upwards from a
// marked byte), so bits.TrailingZeros64(special8(x))/8 is the index of the
// first byte a string scanner must look at.
func special8(x uint64) uint64 {
	ctl := (x - 0x20*lsb) &^ x
	q := x ^ '"'*lsb
	b := x ^ '\\'*lsb
	quote := (q - lsb) &^ q
	slash := (b - lsb) &^ b
	return (ctl | quote | slash | x) & msb
}

func appendString(dst []byte, s string) ([]byte, bool) {
	dst, ok := appendEscaped(append(dst, '"'), s)
	return append(dst, '"'), ok
}

// AppendStringContent appends s escaped as AppendString writes it, without
// the quotes: a long string written in pieces, each cut at a rune boundary
// (the pieces then write what the whole does).
func AppendStringContent(dst []byte, s string) []byte {
	dst, _ = appendEscaped(dst, s)
	return dst
}

// AppendStringContentChecked is AppendStringContent reporting whether s
// was valid UTF-8.
func AppendStringContentChecked(dst []byte, s string) ([]byte, bool) {
	return appendEscaped(dst, s)
}

// appendEscaped appends s escaped for a JSON string and reports whether s
// was valid UTF-8.
func appendEscaped(dst []byte, s string) ([]byte, bool) {
	ok := true
	start := 0
	for i := 0; i < len(s); {
		// Most of a string needs no escaping: skip it eight bytes at a time.
		for i+8 <= len(s) && plain8(binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			ok = false
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	return append(dst, s[start:]...), ok
}

// AppendInt appends n.
func AppendInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }

// AppendKey appends `"key":` for a key that needs no escaping, preceded by a
// comma unless dst ends with '{'.
func AppendKey(dst []byte, key string) []byte {
	if len(dst) > 0 && dst[len(dst)-1] != '{' && dst[len(dst)-1] != '[' {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}
