package growth

import (
	"strconv"

	"github.com/convo-go/convo"
)

// Walk appends to dst the bytes of every string and JSON field of h, and
// the numbers as text, in the order convo's encoder reads them, and returns
// the extended buffer. It is what any encoder of a History must read and
// write, with none of the format's work: no member names, quoting, escaping
// or validation. The growth measurement runs it beside convo's encoder into
// a buffer handed back ("append") as the floor: how much more a message
// costs when the history is read from memory rather than the caches.
func Walk(dst []byte, h convo.History) []byte {
	for i := range h {
		dst = walkMessage(dst, &h[i])
	}
	return dst
}

func walkMessage(dst []byte, m *convo.Message) []byte {
	dst = append(dst, m.Role...)
	dst = append(dst, m.ID...)
	dst = append(dst, m.Name...)
	if !m.Time.IsZero() {
		dst = strconv.AppendInt(dst, m.Time.UnixNano(), 10)
	}
	dst = append(dst, m.Phase...)
	dst = append(dst, m.Effort...)
	dst = append(dst, m.Scope...)
	if m.Compacted != 0 {
		dst = strconv.AppendInt(dst, int64(m.Compacted), 10)
	}
	if o := m.Origin; o != nil {
		dst = append(append(append(dst, o.Provider...), o.Model...), o.ResponseID...)
	}
	if u := m.Usage; u != nil {
		for _, v := range [...]int64{u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Reasoning, u.Total} {
			dst = strconv.AppendInt(dst, v, 10)
		}
	}
	if c := m.Cost; c != nil {
		dst = c.USD.Append(dst)
	}
	dst = append(dst, m.Finish...)
	dst = walkParts(dst, m.Parts)
	dst = append(dst, m.Meta...)
	return walkExtra(dst, m.Native, m.Extra)
}

func walkParts(dst []byte, ps []convo.Part) []byte {
	for i := range ps {
		p := &ps[i]
		dst = append(dst, p.Type...)
		dst = append(dst, p.Raw...)
		for _, s := range [...]string{p.Server, p.ID, p.CallID, p.Name, p.Text, p.MediaType, p.Data, p.URL, p.FileID, p.Detail} {
			dst = append(dst, s...)
		}
		for j := range p.Citations {
			dst = walkCitation(dst, &p.Citations[j])
		}
		dst = append(append(dst, p.Value...), p.Args...)
		dst = append(dst, p.ArgsRaw...)
		dst = walkParts(dst, p.Parts)
		if p.Error || p.Approved {
			dst = append(dst, '!')
		}
		dst = append(dst, p.Reason...)
		for _, s := range p.Summary {
			dst = append(dst, s...)
		}
		for _, s := range [...]string{p.Signature, p.Encrypted, p.Provider, p.Model} {
			dst = append(dst, s...)
		}
		if p.Cache != nil {
			dst = append(dst, p.Cache.TTL...)
		}
		dst = walkExtra(dst, p.Native, p.Extra)
	}
	return dst
}

func walkCitation(dst []byte, c *convo.Citation) []byte {
	dst = append(dst, c.Kind...)
	dst = append(append(append(dst, c.URL...), c.Title...), c.FileID...)
	dst = append(dst, c.Unit...)
	for _, v := range [...]int{c.Source, c.Start, c.End} {
		dst = strconv.AppendInt(dst, int64(v), 10)
	}
	dst = append(dst, c.Text...)
	if c.Span != nil {
		dst = strconv.AppendInt(strconv.AppendInt(dst, int64(c.Span.Start), 10), int64(c.Span.End), 10)
	}
	return walkExtra(dst, c.Native, c.Extra)
}

func walkExtra(dst []byte, n convo.Native, x convo.Fields) []byte {
	for k, v := range n {
		dst = append(append(dst, k...), v...)
	}
	for _, f := range x {
		dst = append(append(dst, f.Key...), f.Value...)
	}
	return dst
}
