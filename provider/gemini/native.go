package gemini

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"unsafe"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
)

// PathError is a problem in a Gemini document at a place named in the
// format's own terms, such as contents[2].parts[0].inlineData.data. It is
// convo.DecodeError, the error every convo decoder returns for bad input.
type PathError = convo.DecodeError

// atKey is convo.ErrorAt for an object key, converted only when there is
// an error.
func atKey(err error, key []byte) error {
	if err == nil {
		return nil
	}
	return convo.ErrorAt(err, string(key))
}

// atIndex is convo.ErrorAt for name[i], built only when there is an error.
func atIndex(err error, name string, i int) error {
	if err == nil {
		return nil
	}
	return convo.ErrorAt(err, index(name, i))
}

func index(name string, i int) string { return name + "[" + strconv.Itoa(i) + "]" }

// bstr views b as a string for a call that does not keep it.
func bstr(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// members builds the body of a JSON object (without braces) member by
// member: the Native["gemini"] objects Decode records.
type members []byte

func (m members) add(key string, raw []byte) members {
	if len(m) > 0 {
		m = append(m, ',')
	}
	m = jsonx.AppendString(m, key)
	m = append(m, ':')
	return append(m, raw...)
}

func (m members) object() []byte {
	if len(m) == 0 {
		return nil
	}
	out := make([]byte, 0, len(m)+2)
	out = append(out, '{')
	out = append(out, m...)
	return append(out, '}')
}

// withNative returns n with Native["gemini"] set to obj (nil: removed).
func withNative(n convo.Native, obj []byte) convo.Native {
	if obj == nil {
		if n[ProviderID] == nil {
			return n
		}
		delete(n, ProviderID)
		if len(n) == 0 {
			return nil
		}
		return n
	}
	if n == nil {
		n = convo.Native{}
	}
	n[ProviderID] = obj
	return n
}

// addMember returns the JSON object obj with "key":raw added at its end;
// obj may be nil (no object yet).
func addMember(obj []byte, key string, raw []byte) []byte {
	if len(obj) < 2 {
		return members(nil).add(key, raw).object()
	}
	out := make([]byte, 0, len(obj)+len(key)+len(raw)+4)
	out = append(out, obj[:len(obj)-1]...)
	if len(obj) > 2 {
		out = append(out, ',')
	}
	out = jsonx.AppendString(out, key)
	out = append(out, ':')
	out = append(out, raw...)
	return append(out, '}')
}

// note reports whether the convo note key is set on p: in its
// Native["gemini"], or for an opaque part in the wire part it keeps.
func note(p *convo.Part, key string) bool {
	if p.Raw != nil {
		if !bytes.Contains(p.Raw, []byte(key)) {
			return false
		}
		block, ok := provider.OpaqueBlock(ProviderID, *p)
		return ok && nativeFlag(convo.Native{ProviderID: block}, key)
	}
	return nativeFlag(p.Native, key)
}

// isNote reports whether a Native["gemini"] member is one of convo's notes.
func isNote(key []byte) bool {
	switch string(key) {
	case SyntheticID, NewContent, ResponseWrap:
		return true
	}
	return false
}

// nativeFlag reports whether Native["gemini"] of n has key set to true.
func nativeFlag(n convo.Native, key string) bool {
	v := nativeMember(n, key)
	return len(v) == 4 && string(v) == "true"
}

// nativeMember returns the raw value of key in Native["gemini"] of n, or
// nil.
func nativeMember(n convo.Native, key string) []byte {
	obj := n[ProviderID]
	// Most parts carry only a signature, if anything: a look for the key
	// settles most questions without parsing.
	if len(obj) <= 2 || !bytes.Contains(obj, []byte(key)) {
		return nil
	}
	var out []byte
	r := jsonx.NewReader(obj, 0)
	_ = r.ReadObject(func(k []byte) error {
		if out != nil || string(k) != key {
			return r.Skip()
		}
		v, err := r.ReadRaw()
		out = v
		return err
	})
	return out
}

// stdBase64 returns s as standard padded base64. Protobuf JSON, which the
// Gemini API speaks, also accepts URL-safe and unpadded base64 for bytes
// fields; those are re-encoded so convo's Data is always standard. ok is
// false when s is not base64 at all.
func stdBase64(s string) (string, bool) {
	// Checked without decoding: large inline media cost one pass and no
	// allocation.
	if convo.CheckBase64(s) == nil {
		return s, true
	}
	for _, enc := range []*base64.Encoding{base64.URLEncoding, base64.RawURLEncoding, base64.RawStdEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return base64.StdEncoding.EncodeToString(b), true
		}
	}
	return "", false
}
