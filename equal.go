package convo

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
)

// Equal reports whether m and o hold the same message. JSON fields (Args,
// Value, Meta, Native, Extra) are compared as JSON values, so white space and
// the order of object members do not matter; nil and empty slices are equal.
func (m Message) Equal(o Message) bool {
	if m.Role != o.Role || m.ID != o.ID || m.Name != o.Name || !m.Time.Equal(o.Time) ||
		m.Phase != o.Phase || m.Effort != o.Effort || m.Scope != o.Scope ||
		m.Compacted != o.Compacted || m.Finish != o.Finish {
		return false
	}
	if (m.Origin == nil) != (o.Origin == nil) || (m.Origin != nil && *m.Origin != *o.Origin) {
		return false
	}
	if (m.Usage == nil) != (o.Usage == nil) || (m.Usage != nil && *m.Usage != *o.Usage) {
		return false
	}
	if (m.Cost == nil) != (o.Cost == nil) || (m.Cost != nil && *m.Cost != *o.Cost) {
		return false
	}
	return jsonEqual(m.Meta, o.Meta) && m.Native.equal(o.Native) && m.Extra.equal(o.Extra) &&
		partsEqual(m.Parts, o.Parts)
}

// Equal reports whether h and o hold equal messages in the same order.
func (h History) Equal(o History) bool {
	return slices.EqualFunc(h, o, Message.Equal)
}

// Equal reports whether p and q are the same part, comparing JSON fields as
// JSON values.
func (p Part) Equal(q Part) bool {
	if p.Type != q.Type || p.Text != q.Text || p.MediaType != q.MediaType || p.Data != q.Data ||
		p.URL != q.URL || p.FileID != q.FileID || p.Name != q.Name || p.Detail != q.Detail ||
		p.ID != q.ID || p.ArgsRaw != q.ArgsRaw || p.Error != q.Error || p.Signature != q.Signature ||
		p.Encrypted != q.Encrypted || p.Provider != q.Provider || p.Model != q.Model ||
		p.CallID != q.CallID || p.Approved != q.Approved || p.Reason != q.Reason || p.Server != q.Server {
		return false
	}
	if (p.Cache == nil) != (q.Cache == nil) || (p.Cache != nil && *p.Cache != *q.Cache) {
		return false
	}
	if !slices.Equal(p.Summary, q.Summary) {
		return false
	}
	return jsonEqual(p.Value, q.Value) && jsonEqual(p.Args, q.Args) && jsonEqual(p.Raw, q.Raw) &&
		p.Native.equal(q.Native) && p.Extra.equal(q.Extra) && partsEqual(p.Parts, q.Parts) &&
		slices.EqualFunc(p.Citations, q.Citations, Citation.Equal)
}

func partsEqual(a, b []Part) bool { return slices.EqualFunc(a, b, Part.Equal) }

func (n Native) equal(o Native) bool {
	if len(n) != len(o) {
		return false
	}
	for k, v := range n {
		w, ok := o[k]
		if !ok || !jsonEqual(v, w) {
			return false
		}
	}
	return true
}

func (f Fields) equal(o Fields) bool {
	if len(f) != len(o) {
		return false
	}
	for _, x := range f {
		if v := o.Get(x.Key); v == nil || !jsonEqual(x.Value, v) {
			return false
		}
	}
	return true
}

// jsonEqual compares two JSON values; the byte comparison settles the common
// case without decoding.
func jsonEqual(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if a == nil || b == nil {
		return false
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
