package wire

import (
	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
)

// AppendValue appends the single JSON value v to dst, compact, reading it
// with r. When v is not exactly one valid JSON value it returns dst as it
// was and the error.
func AppendValue(r *jsonx.Reader, dst, v []byte) ([]byte, error) {
	return r.AppendCompact(dst, v, convo.DefaultLimits.MaxDepth)
}

// AppendEscaped appends s escaped as JSON string content, without the
// quotes: a piece of a string being written. ok is false when s is not
// valid UTF-8.
func AppendEscaped(dst []byte, s string) (out []byte, ok bool) {
	mark := len(dst)
	dst, ok = jsonx.AppendStringChecked(dst, s)
	copy(dst[mark:], dst[mark+1:len(dst)-1])
	return dst[:len(dst)-2], ok
}

// JoinArray returns the JSON values vs, each already valid, as one array.
func JoinArray(vs [][]byte) []byte {
	n := 2
	for _, v := range vs {
		n += len(v) + 1
	}
	out := append(make([]byte, 0, n), '[')
	for i, v := range vs {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, v...)
	}
	return append(out, ']')
}
