package wire

import (
	"encoding/json"
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
)

// Member is one member of a JSON object kept verbatim: a member of a
// provider's Native object, or a wire member convo has no field for.
type Member struct {
	Key string
	Val []byte // compact JSON
}

// Members are object members in the order they were read.
type Members []Member

// Null is the value of a Native member that records an absent wire value:
// convo filled the field in (a synthesised id, a name found by pairing) and
// the encoder leaves it out again. Callers must not modify it.
var Null = []byte("null")

// Get returns the value of the first member named key.
func (ms Members) Get(key string) ([]byte, bool) {
	for _, m := range ms {
		if m.Key == key {
			return m.Val, true
		}
	}
	return nil, false
}

// Value returns the value of the first member named key, or nil.
func (ms Members) Value(key string) []byte {
	v, _ := ms.Get(key)
	return v
}

// Absent reports whether key is recorded as Null: the wire value was absent
// and convo filled the field in.
func (ms Members) Absent(key string) bool {
	v, ok := ms.Get(key)
	return ok && string(v) == "null"
}

// Set returns ms with key set to val, replacing the value of an earlier
// member of that name rather than adding a second one.
func (ms Members) Set(key string, val []byte) Members {
	for i := range ms {
		if ms[i].Key == key {
			ms[i].Val = val
			return ms
		}
	}
	return append(ms, Member{Key: key, Val: val})
}

// Object returns the members as a JSON object, or nil when there are none.
func (ms Members) Object() json.RawMessage {
	if len(ms) == 0 {
		return nil
	}
	n := 2
	for _, m := range ms {
		n += len(m.Key) + len(m.Val) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonx.AppendString(b, m.Key)
		b = append(b, ':')
		b = append(b, m.Val...)
	}
	return append(b, '}')
}

// Native returns a Native holding the members as providerID's object, or
// nil when there are none.
func (ms Members) Native(providerID string) convo.Native {
	if len(ms) == 0 {
		return nil
	}
	return convo.Native{providerID: ms.Object()}
}

// ReadNative returns the members of providerID's object in n; r is the
// reader to use.
func ReadNative(n convo.Native, providerID string, r *jsonx.Reader) (Members, error) {
	raw := n[providerID]
	if raw == nil {
		return nil, nil
	}
	return ReadMembers(raw, providerID, r)
}

// ReadMembers returns the members of the JSON object raw, an object inside
// providerID's Native object (or that object itself): errors are placed
// under native.<providerID>. The values alias raw.
func ReadMembers(raw []byte, providerID string, r *jsonx.Reader) (Members, error) {
	r.Reset(raw, convo.DefaultLimits.MaxDepth)
	var ms Members
	err := r.ReadObject(func(key []byte) error {
		v, err := r.ReadRaw()
		ms = append(ms, Member{Key: string(key), Val: v})
		return err
	})
	if err == nil {
		err = r.ExpectEnd()
	}
	if err != nil {
		return nil, fmt.Errorf("native.%s: %w", providerID, err)
	}
	return ms, nil
}
