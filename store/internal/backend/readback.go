package backend

import (
	"bytes"

	"github.com/convo-go/convo"
)

// maxPartNesting is how deep convo's decoder takes tool_result parts
// inside tool_result parts (decode.go: parts at a depth above it are
// refused).
const maxPartNesting = 4

// readsBackAs reports whether m, which convo.AppendMessage has just
// encoded into n bytes without an error, surely decodes from them (by
// convo.UnmarshalMessage) to a message the store cannot tell from m: the
// same role, parts, arguments, times, usage, cost and origin, so that its
// search text, usage row and tool-call pairing are m's. Encode then skips
// reading the message back, a tenth of a recorded exchange's CPU.
//
// It answers false for whatever it does not prove, and the message is
// read back as before: members that are not the format's own (Extra),
// metadata, parts kept whole or of types this version does not know,
// approvals (their members are sorted out after reading), citations, JSON
// values, and anything the decoder refuses though the encoder writes it:
// a time outside years 0–9999, negative counts, a native member that is
// not an object, empty slices and maps that are not nil (left out, so
// read back as nil), inline data that is not standard base64, raw JSON nested
// past the decoder's depth (the encoder checks each value's own depth,
// the decoder the document's), parts nested too deep. Arguments must be
// written as they are (compact, not null), since the decoder's are what
// the search text holds. TestReadsBackAs and FuzzReadsBackAs compare it
// with the read-back.
func readsBackAs(m *convo.Message, n int) bool {
	if int64(n) > convo.DefaultLimits.MaxBytes || m.Extra != nil || m.Meta != nil ||
		m.Compacted < 0 || m.Compacted > 1<<31 || emptied(m.Parts) {
		return false
	}
	if !m.Time.IsZero() {
		if y := m.Time.UTC().Year(); y < 0 || y > 9999 {
			return false
		}
	}
	if u := m.Usage; u != nil && (u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheWrite < 0 || u.Reasoning < 0 || u.Total < 0) {
		return false
	}
	// The message is the document's first level, its native member the
	// second.
	return nativeFits(m.Native, 2) && partsRead(m.Parts, 0)
}

// partsRead is readsBackAs for the parts of a message (level 0) or of a
// part at level-1. A part object of level L is at depth 3+2L of the
// document: message, parts array, part, then a parts array and a part a
// level.
func partsRead(ps []convo.Part, level int) bool {
	if len(ps) > 0 && level > maxPartNesting {
		return false
	}
	depth := 3 + 2*level
	for i := range ps {
		p := &ps[i]
		switch {
		case p.Raw != nil || !p.Type.Known() || p.Type == convo.TypeApprovalRequest || p.Type == convo.TypeApproval ||
			p.Extra != nil || p.Value != nil || p.Citations != nil || p.CallID != "" || p.Reason != "" || p.Approved:
			return false
		case emptied(p.Parts) || emptied(p.Summary):
			return false // not written: read back as nil, which Validate tells apart
		case p.Server != "" && p.Type != convo.TypeToolCall && p.Type != convo.TypeToolResult:
			return false // read into Extra on other parts
		case p.Data != "" && convo.CheckBase64(p.Data) != nil:
			return false
		case p.Args != nil && (!compact(p.Args) || string(p.Args) == "null" || !fits(p.Args, depth)):
			return false
		case !nativeFits(p.Native, depth+1) || !partsRead(p.Parts, level+1):
			return false
		}
	}
	return true
}

// emptied reports whether s is empty but not nil: the encoder leaves it
// out, and it reads back as nil.
func emptied[S ~[]E, E any](s S) bool { return s != nil && len(s) == 0 }

// nativeFits reports whether the members of n, whose object is at depth
// in the document, read back: objects, nested no deeper than the decoder
// takes, and n nil if it has none.
func nativeFits(n convo.Native, depth int) bool {
	if n != nil && len(n) == 0 {
		return false
	}
	for _, v := range n {
		if len(v) == 0 || v[0] != '{' || !fits(v, depth) {
			return false
		}
	}
	return true
}

// fits reports whether v, a JSON value the encoder validated, read as a
// member of an object at depth in the document, stays within the
// decoder's depth. Each level of v opens with a '{' or '[', so their
// count (in strings too) bounds v's depth from above.
func fits(v []byte, depth int) bool {
	return depth+bytes.Count(v, []byte{'{'})+bytes.Count(v, []byte{'['}) <= convo.DefaultLimits.MaxDepth
}

// compact reports whether v, a JSON value the encoder validated, has no
// white space outside its strings: the encoder writes it as it is, and
// the decoder reads it back as it is (jsonx's RawSpan), not compacted
// into other bytes.
func compact(v []byte) bool {
	in := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case in && c == '\\':
			i++ // the escaped byte, a quote perhaps
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}
