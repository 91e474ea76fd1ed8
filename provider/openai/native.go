package openai

import (
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
)

// nat is the Native["openai"] object of a message or part, split into its
// members, as an encoder reads it.
type nat struct {
	keys []string
	vals [][]byte
	chat bool // written by the Chat decoder ("api":"chat")
}

// markers are members of a native object that are convo's own notes, never
// sent on the wire.
func marker(key string) bool {
	return key == "api" || key == "from" || key == "data_url"
}

// readNat parses n["openai"]. An object that is not valid JSON is an error:
// the encoder would otherwise send garbage.
func readNat(n convo.Native) (nat, error) {
	raw := n[ProviderID]
	if len(raw) == 0 {
		return nat{}, nil
	}
	var out nat
	r := jsonx.NewReader(raw, 0)
	err := r.ReadObject(func(key []byte) error {
		v, err := r.ReadRaw()
		if err != nil {
			return err
		}
		if string(key) == "api" {
			out.chat = string(v) == `"chat"`
			return nil
		}
		out.keys = append(out.keys, string(key))
		out.vals = append(out.vals, v)
		return nil
	})
	if err == nil {
		err = r.ExpectEnd()
	}
	if err != nil {
		return nat{}, fmt.Errorf("native.openai: %w", err)
	}
	return out, nil
}

// view returns the members an encoder for the given API may replay: all of
// them when the object was written for that API, otherwise only "role"
// (developer), which both APIs share.
func (n nat) view(chat bool) nat {
	if n.chat == chat || len(n.keys) == 0 {
		return n
	}
	for i, k := range n.keys {
		if k == "role" {
			return nat{keys: n.keys[i : i+1], vals: n.vals[i : i+1], chat: chat}
		}
	}
	return nat{chat: chat}
}

func (n nat) empty() bool { return len(n.keys) == 0 }

func (n nat) get(key string) ([]byte, bool) {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i], true
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

// sub returns the member key as a nat when it is an object: the native
// members of a nested wire object such as "image_url".
func (n nat) sub(key string) nat {
	v, ok := n.get(key)
	if !ok || len(v) == 0 || v[0] != '{' {
		return nat{}
	}
	out, err := readNat(convo.Native{ProviderID: v})
	if err != nil {
		return nat{}
	}
	return out
}

// close ends the object that starts at buf[start], first appending the
// native members it does not already hold (markers excepted). Members the
// encoder wrote win: a native member only fills in what convo has no field
// for.
func (n nat) close(buf []byte, start int) []byte {
	if len(n.keys) == 0 {
		return append(buf, '}')
	}
	written := objectKeys(buf[start:])
	for i, k := range n.keys {
		if marker(k) || contains(written, k) {
			continue
		}
		if buf[len(buf)-1] != '{' {
			buf = append(buf, ',')
		}
		buf = jsonx.AppendString(buf, k)
		buf = append(buf, ':')
		buf = append(buf, n.vals[i]...)
	}
	return append(buf, '}')
}

func contains(keys []string, k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// objectKeys lists the member keys of the unfinished object obj (its
// closing brace not yet written), which the encoder itself produced.
func objectKeys(obj []byte) []string {
	doc := make([]byte, 0, len(obj)+1)
	doc = append(append(doc, obj...), '}')
	var keys []string
	r := jsonx.NewReader(doc, 0)
	_ = r.ReadObject(func(key []byte) error {
		keys = append(keys, string(key))
		return r.Skip()
	})
	return keys
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
