package ollama

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
)

// member is one member of a JSON object kept verbatim: a Native member or a
// wire member convo has no field for.
type member struct {
	key string
	val []byte // compact JSON
}

// members are object members in the order they were read.
type members []member

func (ms members) get(key string) ([]byte, bool) {
	for _, m := range ms {
		if m.key == key {
			return m.val, true
		}
	}
	return nil, false
}

// absent reports whether key is recorded as null: the wire value was absent
// and convo filled the field in (a synthesised id, a name found by pairing).
func (ms members) absent(key string) bool {
	v, ok := ms.get(key)
	return ok && string(v) == "null"
}

// object returns the members as a JSON object, or nil when there are none.
func (ms members) object() json.RawMessage {
	if len(ms) == 0 {
		return nil
	}
	n := 2
	for _, m := range ms {
		n += len(m.key) + len(m.val) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonx.AppendString(b, m.key)
		b = append(b, ':')
		b = append(b, m.val...)
	}
	return append(b, '}')
}

// native returns Native holding ms under this provider's id, or nil.
func (ms members) native() convo.Native {
	if len(ms) == 0 {
		return nil
	}
	return convo.Native{ProviderID: ms.object()}
}

var nullJSON = []byte("null")

// readNative returns the members of n's object for this provider.
func readNative(n convo.Native, r *jsonx.Reader) (members, error) {
	raw := n[ProviderID]
	if raw == nil {
		return nil, nil
	}
	return readMembers(raw, r)
}

func readMembers(raw []byte, r *jsonx.Reader) (members, error) {
	r.Reset(raw, convo.DefaultLimits.MaxDepth)
	var ms members
	err := r.ReadObject(func(key []byte) error {
		v, err := r.ReadRaw()
		ms = append(ms, member{key: string(key), val: v})
		return err
	})
	if err == nil {
		err = r.ExpectEnd()
	}
	if err != nil {
		return nil, fmt.Errorf("native.%s: %w", ProviderID, err)
	}
	return ms, nil
}

func index(name string, i int) string { return name + "[" + strconv.Itoa(i) + "]" }

func msgPath(i int) string { return index("messages", i) }

func partPath(i, j int) string { return msgPath(i) + "." + index("parts", j) }
