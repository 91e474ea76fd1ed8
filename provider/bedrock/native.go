package bedrock

import (
	"encoding/json"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
)

// Native fields: members of a Bedrock object that convo has no field for
// are kept, in Bedrock's own wire names, in the Native object of the part
// or message under "bedrock", and written back into the same object when
// encoding for Bedrock. A few members record what a convo field cannot say
// by itself: "format" when a MIME type has several Bedrock formats,
// "status" when a successful tool result said so explicitly. Members are
// gathered as wire.Members and written with their Object method.

// withNative returns n with the Bedrock object set to obj (nil: n as is).
func withNative(n convo.Native, obj json.RawMessage) convo.Native {
	if obj == nil {
		return n
	}
	if n == nil {
		n = convo.Native{}
	}
	n[ProviderID] = obj
	return n
}

// nativeRaw returns the value of key in the Bedrock native object of n, or
// nil. A native object that is not valid JSON counts as empty.
func nativeRaw(n convo.Native, key string) []byte {
	obj := n[ProviderID]
	if len(obj) == 0 {
		return nil
	}
	var val []byte
	r := jsonx.NewReader(obj, 0)
	err := r.ReadObject(func(k []byte) error {
		if val != nil || string(k) != key {
			return r.Skip()
		}
		var err error
		val, err = r.ReadRaw()
		return err
	})
	if err != nil {
		return nil
	}
	return val
}

// nativeString returns the string value of key in the Bedrock native
// object of n, or "".
func nativeString(n convo.Native, key string) string {
	raw := nativeRaw(n, key)
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	s, err := jsonx.NewReader(raw, 0).ReadString()
	if err != nil {
		return ""
	}
	return s
}

// appendNative appends the members of the Bedrock native object of n to the
// object being written in dst, leaving out the members the encoder writes
// itself (skip reports those) so no key is written twice.
func appendNative(dst []byte, n convo.Native, skip func(key string) bool) []byte {
	obj := n[ProviderID]
	if len(obj) == 0 {
		return dst
	}
	r := jsonx.NewReader(obj, 0)
	out := dst
	err := r.ReadObject(func(k []byte) error {
		if skip(string(k)) {
			return r.Skip()
		}
		out = comma(out)
		out = jsonx.AppendString(out, string(k))
		out = append(out, ':')
		var err error
		out, err = r.AppendRaw(out)
		return err
	})
	if err != nil {
		return dst // a damaged native object is left out rather than corrupting the request
	}
	return out
}

// comma starts a new member or element of the object or array being
// written in dst.
func comma(dst []byte) []byte {
	if len(dst) > 0 && dst[len(dst)-1] != '{' && dst[len(dst)-1] != '[' {
		dst = append(dst, ',')
	}
	return dst
}
