// Package jsonx is a strict, allocation-light JSON reader and writer for the
// hand-written codecs of convo. It exists because the canonical format and the
// provider codecs must reject what encoding/json accepts silently (duplicate
// keys, invalid UTF-8, unbounded nesting) while decoding at least twice as fast.
package jsonx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the kind of the next JSON value, as reported by Reader.Peek.
type Kind byte

// The kinds of JSON values. End means only white space is left.
const (
	End    Kind = 0
	Null   Kind = 'n'
	Bool   Kind = 'b'
	String Kind = '"'
	Number Kind = '0'
	Object Kind = '{'
	Array  Kind = '['
	Bad    Kind = '?'
)

func (k Kind) String() string {
	switch k {
	case End:
		return "end of input"
	case Null:
		return "null"
	case Bool:
		return "boolean"
	case String:
		return "string"
	case Number:
		return "number"
	case Object:
		return "object"
	case Array:
		return "array"
	}
	return "invalid character"
}

// DefaultMaxDepth bounds nesting when a Reader is made with a depth of 0.
const DefaultMaxDepth = 128

// Error is a syntax or type error at a byte offset of the document.
type Error struct {
	Offset int    // byte offset into the document
	Line   int    // 1-based line of Offset
	Column int    // 1-based column (in bytes) of Offset
	Msg    string // what is wrong
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s (line %d, column %d)", e.Msg, e.Line, e.Column)
}

// Reader reads JSON values from an in-memory document. Strings that contain no
// escapes are returned as sub-slices of the document by the *Bytes methods, so
// the document must not be modified while values read from it are in use.
type Reader struct {
	buf      []byte
	pos      int
	depth    int
	maxDepth int
	keys     [][]byte // keys of the objects being read, for duplicate detection
	scratch  []byte   // ReadStringScratch's buffer for strings with escapes
	spaces   int      // white space bytes skipped so far, to spot values already compact
}

// NewReader returns a Reader over buf that refuses nesting deeper than maxDepth
// (DefaultMaxDepth when maxDepth ≤ 0).
func NewReader(buf []byte, maxDepth int) *Reader {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	return &Reader{buf: buf, maxDepth: maxDepth}
}

// Offset is the current byte offset.
func (r *Reader) Offset() int { return r.pos }

// Seek moves r to byte offset off of its document (clamped to it), for a
// caller that knows where a value begins. Nothing else changes: it is for
// reading values that need no enclosing object's state, such as a string.
func (r *Reader) Seek(off int) { r.pos = min(max(off, 0), len(r.buf)) }

// Errorf returns an *Error at the current offset.
func (r *Reader) Errorf(format string, args ...any) error {
	return r.errAt(r.pos, fmt.Sprintf(format, args...))
}

func (r *Reader) errAt(off int, msg string) error {
	if off > len(r.buf) {
		off = len(r.buf)
	}
	line := 1 + bytes.Count(r.buf[:off], []byte{'\n'})
	col := off + 1
	if i := bytes.LastIndexByte(r.buf[:off], '\n'); i >= 0 {
		col = off - i
	}
	return &Error{Offset: off, Line: line, Column: col, Msg: msg}
}

func (r *Reader) skipSpace() {
	for r.pos < len(r.buf) {
		switch r.buf[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
			r.spaces++
		default:
			return
		}
	}
}

// Peek skips white space and reports the kind of the next value without
// consuming it.
func (r *Reader) Peek() Kind {
	r.skipSpace()
	if r.pos >= len(r.buf) {
		return End
	}
	switch c := r.buf[r.pos]; c {
	case 'n':
		return Null
	case 't', 'f':
		return Bool
	case '"':
		return String
	case '{':
		return Object
	case '[':
		return Array
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return Number
		}
	}
	return Bad
}

func (r *Reader) unexpected(want string) error {
	k := r.Peek()
	if k == Null || k == Bool {
		rest := r.buf[r.pos:]
		if !bytes.HasPrefix(rest, []byte("null")) && !bytes.HasPrefix(rest, []byte("true")) && !bytes.HasPrefix(rest, []byte("false")) {
			return r.errAt(r.pos, "invalid literal, want "+want)
		}
	}
	if k == End {
		return r.errAt(r.pos, "unexpected end of input, want "+want)
	}
	if k == Bad {
		return r.errAt(r.pos, fmt.Sprintf("invalid character %q, want %s", r.buf[r.pos], want))
	}
	return r.errAt(r.pos, fmt.Sprintf("got %s, want %s", k, want))
}

func (r *Reader) literal(lit string) bool {
	if len(r.buf)-r.pos >= len(lit) && string(r.buf[r.pos:r.pos+len(lit)]) == lit {
		r.pos += len(lit)
		return true
	}
	return false
}

// ReadNull consumes a null and reports whether there was one.
func (r *Reader) ReadNull() bool {
	r.skipSpace()
	return r.literal("null")
}

// ReadBool reads true or false.
func (r *Reader) ReadBool() (bool, error) {
	r.skipSpace()
	if r.literal("true") {
		return true, nil
	}
	if r.literal("false") {
		return false, nil
	}
	return false, r.unexpected("boolean")
}

// ReadNumber reads a number and returns its text, validated against the JSON
// grammar.
func (r *Reader) ReadNumber() ([]byte, error) {
	r.skipSpace()
	start := r.pos
	b := r.buf
	i := r.pos
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return nil, r.unexpected("number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return nil, r.errAt(i, "malformed number: no digits after the decimal point")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == j {
			return nil, r.errAt(i, "malformed number: no digits in the exponent")
		}
	}
	r.pos = i
	return b[start:i], nil
}

// ReadInt reads a number that must be an integer within int64.
func (r *Reader) ReadInt() (int64, error) {
	start := r.pos
	num, err := r.ReadNumber()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(string(num), 64)
		if ferr == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return int64(f), nil
		}
		return 0, r.errAt(start, fmt.Sprintf("want an integer, got %s", num))
	}
	return n, nil
}

// ReadString reads a string value.
func (r *Reader) ReadString() (string, error) {
	b, copied, err := r.readString()
	if err != nil {
		return "", err
	}
	if copied {
		// b is a fresh buffer nobody else holds: no second copy needed.
		return unsafeString(b), nil
	}
	return string(b), nil
}

// ReadStringBytes reads a string value. The result aliases the document when
// the string has no escapes.
func (r *Reader) ReadStringBytes() ([]byte, error) {
	b, _, err := r.readString()
	return b, err
}

// ReadStringScratch reads a string value without allocating: the result
// aliases the document when the string has no escapes, and otherwise a
// buffer of r's that the next call overwrites. It is for callers that copy
// the bytes where they keep them (or only look at them).
func (r *Reader) ReadStringScratch() ([]byte, error) {
	b, copied, err := r.readStringInto(r.scratch[:0])
	if copied {
		r.scratch = b
	}
	return b, err
}

// ReadStringLent is ReadStringScratch for a caller that keeps long strings
// without copying them. A string whose JSON is at least long bytes comes
// back with lent set: it aliases the document when it has no escapes, and is
// otherwise a buffer of its own, allocated once at the escaped length rather
// than grown by doubling (for a long text with escapes, that growth and the
// caller's copy after it were three times the text). A shorter string is
// read as ReadStringScratch reads it, lent false: the caller copies it.
// Long strings are scanned twice, once to measure them.
func (r *Reader) ReadStringLent(long int) (b []byte, lent bool, err error) {
	r.skipSpace()
	if r.pos >= len(r.buf) || r.buf[r.pos] != '"' {
		return nil, false, r.unexpected("string")
	}
	start := r.pos
	err = r.skipString()
	n := r.pos - start - 2 // the string's JSON between its quotes
	if err != nil || n < long {
		// A string that does not read fails as ReadStringScratch fails,
		// at the same offset.
		r.pos = start
		b, err := r.ReadStringScratch()
		return b, false, err
	}
	if bytes.IndexByte(r.buf[start+1:r.pos-1], '\\') < 0 {
		// Validated by skipString: no escapes, so the value is the JSON.
		return r.buf[start+1 : r.pos-1], true, nil
	}
	r.pos = start
	b, _, err = r.readStringInto(make([]byte, 0, n))
	return b, err == nil, err
}

// readString returns the string's bytes and whether they were copied into a
// new buffer (because of escapes).
func (r *Reader) readString() ([]byte, bool, error) { return r.readStringInto(nil) }

// readStringInto is readString unescaping into out's memory when the
// string has escapes (a new buffer when out is nil or too small).
func (r *Reader) readStringInto(out []byte) ([]byte, bool, error) {
	r.skipSpace()
	if r.pos >= len(r.buf) || r.buf[r.pos] != '"' {
		return nil, false, r.unexpected("string")
	}
	start := r.pos + 1
	b := r.buf
	i, ascii := plainRun(b, start)
	switch {
	case i >= len(b):
		return nil, false, r.errAt(len(b), "unexpected end of input in string")
	case b[i] == '"':
		if !ascii && !utf8.Valid(b[start:i]) {
			return nil, false, r.errAt(start+invalidUTF8At(b[start:i]), "invalid UTF-8 in string")
		}
		r.pos = i + 1
		return b[start:i], false, nil
	case b[i] == '\\':
		return r.readEscaped(start, i, out)
	}
	return nil, false, r.errAt(i, "control character in string")
}

// PlainPrefix returns the length of the longest prefix of b that a JSON
// string holds as it is and a reader returns unchanged: ASCII without
// control characters, '"' or '\\'. A scanner for strings written
// without escapes finds their end with it, eight bytes at a time.
func PlainPrefix(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if m := special8(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			break
		}
	}
	return i
}

// skipString validates a string without building its value, so skipping
// or checking JSON with escaped strings allocates nothing.
func (r *Reader) skipString() error {
	r.skipSpace()
	start := r.pos + 1
	b := r.buf
	ascii := true
	for i := start; ; {
		j, a := plainRun(b, i)
		ascii = ascii && a
		if i = j; i >= len(b) {
			return r.errAt(len(b), "unexpected end of input in string")
		}
		switch b[i] {
		case '"':
			if !ascii && !utf8.Valid(b[start:i]) {
				return r.errAt(start+invalidUTF8At(b[start:i]), "invalid UTF-8 in string")
			}
			r.pos = i + 1
			return nil
		case '\\':
			n, err := r.escapeLen(i)
			if err != nil {
				return err
			}
			i += n
		default:
			return r.errAt(i, "control character in string")
		}
	}
}

// escapeLen validates the escape at b[i] (a backslash) with the same rules
// as readEscaped and returns its length in bytes.
func (r *Reader) escapeLen(i int) (int, error) {
	b := r.buf
	if i+1 >= len(b) {
		return 0, r.errAt(i, "unexpected end of input in string")
	}
	switch e := b[i+1]; e {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
		r1, ok := hex4(b, i+2)
		if !ok {
			return 0, r.errAt(i, "malformed \\u escape in string")
		}
		if !utf16.IsSurrogate(r1) {
			return 6, nil
		}
		r2, ok := rune(0), false
		if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
			r2, ok = hex4(b, i+8)
		}
		if !ok || utf16.DecodeRune(r1, r2) == utf8.RuneError {
			return 0, r.errAt(i, "unpaired surrogate in string")
		}
		return 12, nil
	default:
		return 0, r.errAt(i, fmt.Sprintf("invalid escape %q in string", "\\"+string(rune(e))))
	}
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		c, n := utf8.DecodeRune(b[i:])
		if c == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return 0
}

func (r *Reader) readEscaped(start, i int, out []byte) ([]byte, bool, error) {
	b := r.buf
	if out == nil {
		out = make([]byte, 0, i-start+16)
	}
	// One pass: the runs between escapes are found eight bytes at a time
	// and appended whole, and their UTF-8 checked as they are (an escape
	// writes whole runes, so the value is valid UTF-8 exactly when every
	// run is). The error for invalid UTF-8 is still made last, at the
	// closing quote, as when the value was checked once done.
	out = append(out[:0], b[start:i]...)
	valid := utf8.Valid(out)
	for {
		j, ascii := plainRun(b, i)
		if j > i {
			if valid && !ascii {
				valid = utf8.Valid(b[i:j])
			}
			out = append(out, b[i:j]...)
		}
		if i = j; i >= len(b) {
			return nil, false, r.errAt(len(b), "unexpected end of input in string")
		}
		switch c := b[i]; {
		case c == '"':
			if !valid {
				return nil, false, r.errAt(start, "invalid UTF-8 in string")
			}
			r.pos = i + 1
			return out, true, nil
		case c == '\\':
			var err error
			if out, i, err = r.unescape(out, i); err != nil {
				return nil, false, err
			}
		default:
			return nil, false, r.errAt(i, "control character in string")
		}
	}
}

// plainRun returns the end of the bytes from b[i] on that a string holds
// as they are (none of '"', '\\' or a control character), found eight at
// a time, and whether they are all ASCII.
func plainRun(b []byte, i int) (int, bool) {
	ascii := true
	for i < len(b) {
		if i+8 <= len(b) {
			m := special8(binary.LittleEndian.Uint64(b[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		}
		c := b[i]
		if c == '"' || c == '\\' || c < 0x20 {
			break
		}
		if c >= 0x80 {
			ascii = false
		}
		i++
	}
	return i, ascii
}

// unescape appends the value of the escape at b[i] (a backslash) to out
// and returns the index after it.
func (r *Reader) unescape(out []byte, i int) ([]byte, int, error) {
	b := r.buf
	if i+1 >= len(b) {
		return nil, 0, r.errAt(i, "unexpected end of input in string")
	}
	switch e := b[i+1]; e {
	case '"', '\\', '/':
		return append(out, e), i + 2, nil
	case 'b':
		return append(out, '\b'), i + 2, nil
	case 'f':
		return append(out, '\f'), i + 2, nil
	case 'n':
		return append(out, '\n'), i + 2, nil
	case 'r':
		return append(out, '\r'), i + 2, nil
	case 't':
		return append(out, '\t'), i + 2, nil
	case 'u':
		r1, ok := hex4(b, i+2)
		if !ok {
			return nil, 0, r.errAt(i, "malformed \\u escape in string")
		}
		i += 6
		if utf16.IsSurrogate(r1) {
			r2, ok := rune(0), false
			if i+1 < len(b) && b[i] == '\\' && b[i+1] == 'u' {
				r2, ok = hex4(b, i+2)
			}
			dec := utf16.DecodeRune(r1, r2)
			if !ok || dec == utf8.RuneError {
				return nil, 0, r.errAt(i-6, "unpaired surrogate in string")
			}
			i += 6
			r1 = dec
		}
		return utf8.AppendRune(out, r1), i, nil
	default:
		return nil, 0, r.errAt(i, fmt.Sprintf("invalid escape %q in string", "\\"+string(rune(e))))
	}
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var v rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | rune(c)
	}
	return v, true
}

func (r *Reader) enter() error {
	r.depth++
	if r.depth > r.maxDepth {
		return r.errAt(r.pos, fmt.Sprintf("nesting deeper than %d levels", r.maxDepth))
	}
	return nil
}

// ReadObject reads an object, calling fn for each member with its key; fn must
// read the member's value. A repeated key is an error.
func (r *Reader) ReadObject(fn func(key []byte) error) error {
	r.skipSpace()
	if r.pos >= len(r.buf) || r.buf[r.pos] != '{' {
		return r.unexpected("object")
	}
	if err := r.enter(); err != nil {
		return err
	}
	r.pos++
	if r.keys == nil {
		// Room for the keys of a few small objects at once, instead of
		// growing from nothing (1, 2, 4, 8: four allocations) in every
		// Reader that reads an object.
		r.keys = make([][]byte, 0, 8)
	}
	mark := len(r.keys)
	var many map[string]struct{}
	defer func() { r.keys = r.keys[:mark] }()
	r.skipSpace()
	if r.pos < len(r.buf) && r.buf[r.pos] == '}' {
		r.pos++
		r.depth--
		return nil
	}
	for {
		keyAt := r.pos
		key, err := r.ReadStringBytes()
		if err != nil {
			if r.Peek() != String {
				return r.unexpected("object key")
			}
			return err
		}
		// Small objects are checked by a linear scan; large ones switch to a
		// map so a hostile object with many keys stays linear.
		if many != nil {
			if _, dup := many[string(key)]; dup {
				return r.errAt(keyAt, fmt.Sprintf("duplicate key %q", key))
			}
			many[string(key)] = struct{}{}
		} else {
			for _, k := range r.keys[mark:] {
				if bytes.Equal(k, key) {
					return r.errAt(keyAt, fmt.Sprintf("duplicate key %q", key))
				}
			}
			r.keys = append(r.keys, key)
			if len(r.keys)-mark > 32 {
				many = make(map[string]struct{}, 64)
				for _, k := range r.keys[mark:] {
					many[string(k)] = struct{}{}
				}
			}
		}
		r.skipSpace()
		if r.pos >= len(r.buf) || r.buf[r.pos] != ':' {
			return r.unexpected("':' after object key")
		}
		r.pos++
		if err := fn(key); err != nil {
			return err
		}
		r.skipSpace()
		if r.pos >= len(r.buf) {
			return r.errAt(r.pos, "unexpected end of input in object")
		}
		switch r.buf[r.pos] {
		case ',':
			r.pos++
			r.skipSpace()
		case '}':
			r.pos++
			r.depth--
			return nil
		default:
			return r.unexpected("',' or '}' in object")
		}
	}
}

// ReadArray reads an array, calling fn with the index of each element; fn
// must read the element.
func (r *Reader) ReadArray(fn func(i int) error) error {
	r.skipSpace()
	if r.pos >= len(r.buf) || r.buf[r.pos] != '[' {
		return r.unexpected("array")
	}
	if err := r.enter(); err != nil {
		return err
	}
	r.pos++
	r.skipSpace()
	if r.pos < len(r.buf) && r.buf[r.pos] == ']' {
		r.pos++
		r.depth--
		return nil
	}
	for i := 0; ; i++ {
		if err := fn(i); err != nil {
			return err
		}
		r.skipSpace()
		if r.pos >= len(r.buf) {
			return r.errAt(r.pos, "unexpected end of input in array")
		}
		switch r.buf[r.pos] {
		case ',':
			r.pos++
		case ']':
			r.pos++
			r.depth--
			return nil
		default:
			return r.unexpected("',' or ']' in array")
		}
	}
}

// ReadRaw reads any value and returns it compacted (insignificant white space
// removed; everything else, including key order and number text, unchanged)
// in a new slice.
func (r *Reader) ReadRaw() ([]byte, error) {
	r.skipSpace()
	start := r.pos
	span, compact, err := r.RawSpan()
	if err != nil {
		return nil, err
	}
	if compact {
		// The usual case for machine-written JSON: one exact-size copy.
		return append(make([]byte, 0, len(span)), span...), nil
	}
	r.pos = start
	return r.AppendRaw(make([]byte, 0, len(span)))
}

// RawSpan reads any value, validating it as ReadRaw does, and returns the
// bytes of the document it spans (not a copy) and whether they are already
// compact. A caller that keeps the value copies it, or compacts it with
// Compact when it is not compact yet.
func (r *Reader) RawSpan() (span []byte, compact bool, err error) {
	r.skipSpace()
	start, spaces := r.pos, r.spaces
	if err := r.Skip(); err != nil {
		return nil, false, err
	}
	return r.buf[start:r.pos], r.spaces == spaces, nil
}

// AppendRaw is ReadRaw appending to dst.
func (r *Reader) AppendRaw(dst []byte) ([]byte, error) {
	switch r.Peek() {
	case Null:
		if r.literal("null") {
			return append(dst, "null"...), nil
		}
	case Bool:
		v, err := r.ReadBool()
		if err != nil {
			return nil, err
		}
		return strconv.AppendBool(dst, v), nil
	case Number:
		num, err := r.ReadNumber()
		if err != nil {
			return nil, err
		}
		return append(dst, num...), nil
	case String:
		start := r.pos
		if _, err := r.ReadStringBytes(); err != nil {
			return nil, err
		}
		// The original escapes are kept: they are valid and semantically equal.
		return append(dst, r.buf[start:r.pos]...), nil
	case Object:
		dst = append(dst, '{')
		n := 0
		err := r.ReadObject(func(key []byte) error {
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = AppendString(dst, unsafeString(key))
			dst = append(dst, ':')
			var err error
			dst, err = r.AppendRaw(dst)
			return err
		})
		if err != nil {
			return nil, err
		}
		return append(dst, '}'), nil
	case Array:
		dst = append(dst, '[')
		err := r.ReadArray(func(i int) error {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			dst, err = r.AppendRaw(dst)
			return err
		})
		if err != nil {
			return nil, err
		}
		return append(dst, ']'), nil
	}
	return nil, r.unexpected("JSON value")
}

// Skip reads and discards one value, validating it without copying.
func (r *Reader) Skip() error {
	switch r.Peek() {
	case Object:
		return r.ReadObject(func([]byte) error { return r.Skip() })
	case Array:
		return r.ReadArray(func(int) error { return r.Skip() })
	case String:
		return r.skipString()
	case Number:
		_, err := r.ReadNumber()
		return err
	case Bool:
		_, err := r.ReadBool()
		return err
	case Null:
		if r.ReadNull() {
			return nil
		}
	}
	return r.unexpected("JSON value")
}

// Reset makes r read buf from the start, keeping its buffers for reuse.
func (r *Reader) Reset(buf []byte, maxDepth int) {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	r.buf, r.pos, r.depth, r.maxDepth, r.keys = buf, 0, 0, maxDepth, r.keys[:0]
}

// AtEnd reports whether only white space is left.
func (r *Reader) AtEnd() bool {
	r.skipSpace()
	return r.pos >= len(r.buf)
}

// ExpectEnd returns an error if anything but white space is left.
func (r *Reader) ExpectEnd() error {
	if !r.AtEnd() {
		return r.errAt(r.pos, "unexpected data after the JSON value")
	}
	return nil
}

// ErrTooLarge is returned (wrapped) when a document exceeds a size limit.
var ErrTooLarge = errors.New("document too large")

// Valid reports whether b is exactly one JSON value (with surrounding white
// space) that passes the Reader's strict checks.
func Valid(b []byte) bool {
	r := NewReader(b, 0)
	return r.Skip() == nil && r.AtEnd()
}

// Compact returns the single JSON value in b, compacted and validated.
func Compact(b []byte, maxDepth int) ([]byte, error) {
	r := NewReader(b, maxDepth)
	out, err := r.ReadRaw()
	if err != nil {
		return nil, err
	}
	if err := r.ExpectEnd(); err != nil {
		return nil, err
	}
	return out, nil
}

// Bytes returns the whole document being read.
func (r *Reader) Bytes() []byte { return r.buf }

// AppendCompact appends the single JSON value v to dst, validated and with
// insignificant white space removed, reusing r. A value that is already
// compact is checked and copied in one pass.
func (r *Reader) AppendCompact(dst, v []byte, maxDepth int) ([]byte, error) {
	r.Reset(v, maxDepth)
	r.skipSpace()
	start, spaces := r.pos, r.spaces
	if err := r.Skip(); err != nil {
		return dst, err
	}
	end, compact := r.pos, r.spaces == spaces
	if err := r.ExpectEnd(); err != nil {
		return dst, err
	}
	if compact {
		return append(dst, v[start:end]...), nil
	}
	r.Reset(v, maxDepth)
	out, err := r.AppendRaw(dst)
	if err != nil {
		return dst, err
	}
	return out, nil
}
