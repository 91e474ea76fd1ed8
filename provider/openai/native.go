package openai

import (
	"bytes"
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
)

// nat is the Native["openai"] object of a message or part, split into its
// members, as an encoder reads it. Keys and values alias the native object.
type nat struct {
	m    []member
	chat bool // written by the Chat decoder ("api":"chat")
}

type member struct{ key, val []byte }

// marker reports whether a member of a native object is one of convo's own
// notes, never sent on the wire.
func marker(key []byte) bool {
	switch string(key) {
	case "api", "from", "data_url", "response", "message":
		return true
	}
	return false
}

// natReader parses native objects for an encoder and holds the buffers an
// encoder reuses from one message to the next.
type natReader struct {
	rd                jsonx.Reader
	keys              [][]byte
	scratch, scratch2 []byte
	// arena holds the members of the native objects of the message being
	// written; each nat is a slice of it.
	arena []member
}

// readNat parses n["openai"] with a throwaway reader, for the rare callers
// outside an encoder.
func readNat(n convo.Native) (nat, error) {
	var nr natReader
	return nr.read(n[ProviderID])
}

// read parses a native object. An object that is not valid JSON is an
// error: the encoder would otherwise send garbage.
func (nr *natReader) read(raw []byte) (nat, error) {
	if len(raw) == 0 {
		return nat{}, nil
	}
	var out nat
	from := len(nr.arena)
	r := &nr.rd
	r.Reset(raw, 0)
	err := r.ReadObject(func(key []byte) error {
		r.Peek()
		start := r.Offset()
		if err := r.Skip(); err != nil {
			return err
		}
		v := raw[start:r.Offset()]
		if string(key) == "api" {
			out.chat = string(v) == `"chat"`
			return nil
		}
		nr.arena = append(nr.arena, member{key, v})
		return nil
	})
	if err == nil {
		err = r.ExpectEnd()
	}
	if err != nil {
		nr.arena = nr.arena[:from]
		return nat{}, fmt.Errorf("native.openai: %w", err)
	}
	if len(nr.arena) > from {
		out.m = nr.arena[from:len(nr.arena):len(nr.arena)]
	}
	return out, nil
}

// reset forgets the native objects read so far: the encoder calls it between
// messages, when none of them is in use any more.
func (nr *natReader) reset() { nr.arena = nr.arena[:0] }

// of parses the provider's entry of a Native.
func (nr *natReader) of(n convo.Native) (nat, error) {
	if n == nil {
		return nat{}, nil
	}
	return nr.read(n[ProviderID])
}

// view returns the members an encoder for the given API may replay: all of
// them when the object was written for that API, otherwise only "role"
// (developer), which both APIs share.
func (n nat) view(chat bool) nat {
	if n.chat == chat || len(n.m) == 0 {
		return n
	}
	for i := range n.m {
		if string(n.m[i].key) == "role" {
			return nat{m: n.m[i : i+1], chat: chat}
		}
	}
	return nat{chat: chat}
}

func (n nat) empty() bool { return len(n.m) == 0 }

// plain reports whether n holds nothing but markers: nothing to send.
func (n nat) plain() bool {
	for i := range n.m {
		if !marker(n.m[i].key) {
			return false
		}
	}
	return true
}

func (n nat) get(key string) ([]byte, bool) {
	for i := range n.m {
		if string(n.m[i].key) == key {
			return n.m[i].val, true
		}
	}
	return nil, false
}

// str returns the member key when it is a JSON string.
func (n nat) str(key string) (string, bool) {
	v, ok := n.get(key)
	if !ok || len(v) == 0 || v[0] != '"' {
		return "", false
	}
	s, err := jsonx.NewReader(v, 0).ReadString()
	return s, err == nil
}

// is reports whether the member key is the JSON string s (s needs no
// escaping).
func (n nat) is(key, s string) bool {
	v, ok := n.get(key)
	return ok && len(v) == len(s)+2 && v[0] == '"' && string(v[1:len(v)-1]) == s
}

// sub returns the member key as a nat when it is an object: the native
// members of a nested wire object such as "image_url".
func (nr *natReader) sub(n nat, key string) nat {
	v, ok := n.get(key)
	if !ok || len(v) == 0 || v[0] != '{' {
		return nat{}
	}
	out, err := nr.read(v)
	if err != nil {
		return nat{}
	}
	out.chat = n.chat
	return out
}

// close ends the object that starts at buf[start], first appending the
// native members it does not already hold (markers excepted). Members the
// encoder wrote win: a native member only fills in what convo has no field
// for.
func (nr *natReader) close(n nat, buf []byte, start int) []byte {
	if len(n.m) == 0 {
		return append(buf, '}')
	}
	written := topKeys(buf[start:], nr.keys[:0])
	nr.keys = written
	for i := range n.m {
		k := n.m[i].key
		if marker(k) || containsKey(written, k) {
			continue
		}
		if buf[len(buf)-1] != '{' {
			buf = append(buf, ',')
		}
		buf = jsonx.AppendString(buf, string(k))
		buf = append(buf, ':')
		buf = append(buf, n.m[i].val...)
	}
	return append(buf, '}')
}

// topKeys appends to keys the member keys of the unfinished object obj,
// which the encoder itself wrote (valid JSON so far, keys without escapes).
// It scans bytes without decoding strings, so a long text or encrypted
// payload costs a pass of a simple loop and no allocation.
func topKeys(obj []byte, keys [][]byte) [][]byte {
	depth, expectKey := 0, false
	for i := 0; i < len(obj); i++ {
		switch c := obj[i]; c {
		case '"':
			j := stringEnd(obj, i+1)
			if depth == 1 && expectKey {
				keys = append(keys, obj[i+1:min(j, len(obj))])
				expectKey = false
			}
			i = j
		case '{', '[':
			depth++
			expectKey = c == '{' && depth == 1
		case '}', ']':
			depth--
		case ',':
			expectKey = depth == 1
		}
	}
	return keys
}

// stringEnd returns the index of the quote that ends the string whose
// contents start at obj[from] (len(obj) when it does not end). Long texts
// and payloads are skipped with IndexByte, not byte by byte.
func stringEnd(obj []byte, from int) int {
	for j := from; j < len(obj); {
		k := bytes.IndexByte(obj[j:], '"')
		if k < 0 {
			return len(obj)
		}
		q := j + k
		n := 0 // backslashes right before the quote
		for b := q - 1; b >= from && obj[b] == '\\'; b-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		j = q + 1
	}
	return len(obj)
}

func containsKey(keys [][]byte, k []byte) bool {
	for _, x := range keys {
		if string(x) == string(k) {
			return true
		}
	}
	return false
}

// natBuilder collects the native members of one message or part while it is
// decoded.
type natBuilder struct {
	buf     []byte // `"key":value` members separated by commas
	nonRole bool   // a member other than "role" was added
}

func (b *natBuilder) add(key string, raw []byte) {
	if len(b.buf) > 0 {
		b.buf = append(b.buf, ',')
	}
	b.buf = jsonx.AppendString(b.buf, key)
	b.buf = append(b.buf, ':')
	b.buf = append(b.buf, raw...)
	if key != "role" {
		b.nonRole = true
	}
}

func (b *natBuilder) addKey(key []byte, raw []byte) {
	if len(b.buf) > 0 {
		b.buf = append(b.buf, ',')
	}
	b.buf = append(b.buf, '"')
	b.buf = appendInner(b.buf, string(key))
	b.buf = append(b.buf, '"', ':')
	b.buf = append(b.buf, raw...)
	if string(key) != "role" {
		b.nonRole = true
	}
}

func (b *natBuilder) addString(key, s string) {
	b.add(key, jsonx.AppendString(nil, s))
}

// native returns the collected members as a Native, or nil when there are
// none. chat marks an object of Chat Completions fields; an object holding
// only "role" needs no mark, since both APIs read it.
func (b *natBuilder) native(chat bool) convo.Native {
	if len(b.buf) == 0 {
		return nil
	}
	obj := make([]byte, 0, len(b.buf)+16)
	obj = append(obj, '{')
	if chat && b.nonRole {
		obj = append(obj, `"api":"chat",`...)
	}
	obj = append(obj, b.buf...)
	obj = append(obj, '}')
	return convo.Native{ProviderID: obj}
}
