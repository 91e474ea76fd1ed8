package redact

import (
	"bytes"
	"encoding/json"
)

// json redacts a JSON value held verbatim: the contents of its strings, and
// numbers a rule matches (a card number written as a JSON number), which
// become strings holding the marker. Everything else — key order, number
// spelling, escapes of strings left alone — is kept, and the result is valid
// JSON whenever v was. It returns v itself and nil when nothing matched.
func (r *Redactor) json(v json.RawMessage) (json.RawMessage, Counts) {
	var out []byte
	var total Counts
	last := 0
	for i := 0; i < len(v); {
		c := v[i]
		var end int
		switch {
		case c == '"':
			end = stringEnd(v, i)
		case c == '-' || (c >= '0' && c <= '9'):
			end = i + 1
			for end < len(v) && bytes.IndexByte([]byte("0123456789+-.eE"), v[end]) >= 0 {
				end++
			}
		default:
			i++
			continue
		}
		tok := v[i:end]
		var s string
		if c == '"' {
			if json.Unmarshal(tok, &s) != nil {
				i = end
				continue
			}
		} else {
			s = string(tok)
		}
		ns, n := r.String(s)
		if n != nil {
			out = append(out, v[last:i]...)
			out = appendString(out, ns)
			last = end
			total = total.add(n)
		}
		i = end
	}
	if total == nil {
		return v, nil
	}
	return append(out, v[last:]...), total
}

// stringEnd returns the index after the string literal starting at v[i].
func stringEnd(v []byte, i int) int {
	for j := i + 1; j < len(v); j++ {
		switch v[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(v)
}

// appendString appends s as a JSON string, escaping only what JSON
// requires, as convo's canonical writer does.
func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
