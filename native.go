package convo

import (
	"bytes"
	"encoding/json"

	"github.com/convo-go/convo/internal/jsonx"
)

// With returns a copy of n in which the object n[id] has the member key set
// to value: replaced where it stood when n[id] has it, added at the end
// otherwise, the object's other members kept in their order and bytes. A
// missing n[id], or one that is not a JSON object, becomes {key: value}.
// value must be valid JSON. n itself is not changed.
func (n Native) With(id, key string, value json.RawMessage) Native {
	out := make(Native, len(n)+1)
	for k, v := range n {
		out[k] = v
	}
	out[id] = withMember(n[id], key, value)
	return out
}

// withMember returns the object obj with key set to value, or a new object
// when obj is not one.
func withMember(obj []byte, key string, value []byte) []byte {
	obj = bytes.TrimSpace(obj)
	if len(obj) == 0 {
		out := append(jsonx.AppendString(append(make([]byte, 0, len(key)+len(value)+5), '{'), key), ':')
		return append(append(out, value...), '}')
	}
	r := jsonx.NewReader(obj, 0)
	start, end := -1, -1 // where an existing member's value lies
	err := r.ReadObject(func(k []byte) error {
		if string(k) != key {
			return r.Skip()
		}
		r.Peek() // past the space before the value
		start = r.Offset()
		err := r.Skip()
		end = r.Offset()
		return err
	})
	if err != nil || !r.AtEnd() {
		out := append(jsonx.AppendString([]byte{'{'}, key), ':')
		return append(append(out, value...), '}')
	}
	out := make([]byte, 0, len(obj)+len(key)+len(value)+4)
	if start >= 0 {
		out = append(append(append(out, obj[:start]...), value...), obj[end:]...)
		return out
	}
	if body := bytes.TrimSpace(obj[1 : len(obj)-1]); len(body) > 0 {
		out = append(append(out, obj[:len(obj)-1]...), ',')
	} else {
		out = append(out, '{')
	}
	out = jsonx.AppendString(out, key)
	out = append(append(append(out, ':'), value...), '}')
	return out
}
