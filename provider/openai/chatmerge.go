package openai

import (
	"strconv"

	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider/internal/wire"
)

// mergeDelta returns what a streamed message member the reader has no
// field for (OpenRouter's reasoning and reasoning_details, say) becomes
// when the piece next arrives after old, as the OpenAI SDKs accumulate
// such members: strings are joined; objects are merged member by member,
// with "index" and "type" replaced rather than joined; array elements that
// are objects with an "index" are merged into the element at that place,
// others appended; any other value replaces the old one.
func mergeDelta(old, next []byte) []byte {
	if len(old) == 0 || string(old) == "null" || len(next) == 0 {
		return next
	}
	switch {
	case old[0] == '"' && next[0] == '"':
		a, err1 := jsonx.NewReader(old, 0).ReadString()
		b, err2 := jsonx.NewReader(next, 0).ReadString()
		if err1 == nil && err2 == nil {
			return jsonx.AppendString(nil, a+b)
		}
	case old[0] == '{' && next[0] == '{':
		ms, ok1 := rawMembers(old)
		add, ok2 := rawMembers(next)
		if ok1 && ok2 {
			for _, m := range add {
				if m.Key == "index" || m.Key == "type" {
					ms = ms.Set(m.Key, m.Val)
				} else {
					ms = ms.Set(m.Key, mergeDelta(ms.Value(m.Key), m.Val))
				}
			}
			return ms.Object()
		}
	case old[0] == '[' && next[0] == '[':
		elems, ok1 := rawElems(old)
		add, ok2 := rawElems(next)
		if ok1 && ok2 {
			for _, e := range add {
				if i, ok := elemIndex(e); ok && i < len(elems) {
					elems[i] = mergeDelta(elems[i], e)
				} else {
					elems = append(elems, e)
				}
			}
			return wire.JoinArray(elems)
		}
	}
	return next
}

// rawMembers returns the members of the JSON object raw in order.
func rawMembers(raw []byte) (wire.Members, bool) {
	r := jsonx.NewReader(raw, 0)
	var ms wire.Members
	err := r.ReadObject(func(key []byte) error {
		v, err := r.ReadRaw()
		ms = append(ms, wire.Member{Key: string(key), Val: v})
		return err
	})
	return ms, err == nil
}

// rawElems returns the elements of the JSON array raw.
func rawElems(raw []byte) ([][]byte, bool) {
	r := jsonx.NewReader(raw, 0)
	var out [][]byte
	err := r.ReadArray(func(int) error {
		v, err := r.ReadRaw()
		out = append(out, v)
		return err
	})
	return out, err == nil
}

// elemIndex returns the "index" of an array element that is an object
// with a non-negative integer one.
func elemIndex(e []byte) (int, bool) {
	if len(e) == 0 || e[0] != '{' {
		return 0, false
	}
	ms, ok := rawMembers(e)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(string(ms.Value("index")))
	return i, err == nil && i >= 0
}
