package gemini

import (
	"bytes"
	"slices"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider/internal/wire"
)

// A Gemini candidate says where its text comes from in two members beside
// its content, not on the parts: groundingMetadata (Google Search, file
// search, Maps and retrieval grounding) and citationMetadata (recitation
// sources). Both are read into canonical citations on the text parts they
// point into, and what citations cannot hold stays in the message's
// Native["gemini"] under the same member name, so that a reply written back
// (EncodeReply, the stream encoder) has the same members.
//
// groundingMetadata: each support's segment names a part (partIndex: the
// wire part in a body; in a stream, whose chunks each count their parts
// from 0, the partIndex-th text part of the accumulated reply) and a byte
// range of its text, and lists the chunks that support it. Each (support,
// chunk) pair is one citation on that part: Span is the segment's
// [startIndex, endIndex) in bytes, and the chunk gives the rest — web and
// maps chunks (and image ones) are url citations (uri → URL, title →
// Title, text → Text), retrievedContext chunks file citations (documentName
// → FileID, title, uri → URL, text). The citation's Native["gemini"] keeps
// the support's and the chunk's places (support, chunk), its confidence
// score, the chunk's other members under its type (web, maps, …), and
// what the segment had that the part does not imply. The other members
// (webSearchQueries, searchEntryPoint, retrievalMetadata, …) stay in the
// message's native groundingMetadata, and so does the whole chunk list
// when a chunk is cited by no support. Metadata convo cannot map whole (a
// segment in a part that is not text or out of its range, a chunk of an
// unknown kind) stays native whole, with no citations made from it.
//
// citationMetadata: each source of citationSources (Vertex AI: citations)
// is a url citation (uri, title, license and publicationDate native) on the
// text part its range falls in, the range counted in bytes of the
// candidate's text parts one after another.

// Native["gemini"] members of a citation read from groundingMetadata.
const (
	citeSupport    = "support"         // index of its groundingSupport
	citeChunk      = "chunk"           // index of its groundingChunk
	citeConfidence = "confidenceScore" // its score in the support's confidenceScores
	citeSegment    = "segment"         // segment members the part does not imply
	citeSupportX   = "groundingSupport"
	citeNoText     = "segmentText" // false: the segment had no text
)

// chunkTypes are the kinds of groundingChunk convo maps, in the order a
// citation's native is searched for one.
var chunkTypes = [...]string{"web", "retrievedContext", "maps", "image"}

// citedPart is a text part as a candidate's metadata points into it.
type citedPart struct {
	index  int    // the segment's partIndex
	offset int    // bytes of the same wire text before the part's (a stream's joined run)
	textAt int    // bytes of the candidate's text parts before it (citationSources)
	text   string // the part's text
	cites  []convo.Citation
}

// groundingPart finds the part a segment's partIndex names; -1 when it is
// not a text part.
func groundingPart(parts []convo.Part, idx int, streamed bool) int {
	if !streamed {
		if idx < len(parts) && parts[idx].Type == convo.TypeText {
			return idx
		}
		return -1
	}
	for j := range parts {
		if parts[j].Type == convo.TypeText {
			if idx == 0 {
				return j
			}
			idx--
		}
	}
	return -1
}

// readGrounding maps the groundingMetadata raw of a candidate to citations
// appended to parts; it returns what stays native, or raw itself and false
// when it cannot map it whole (then no part is changed).
func readGrounding(raw []byte, parts []convo.Part, streamed bool) ([]byte, bool) {
	var r jsonx.Reader
	ms, err := wire.ReadMembers(raw, ProviderID, &r)
	if err != nil {
		return raw, false
	}
	var rest wire.Members
	var chunks, supports []byte
	for _, m := range ms {
		switch m.Key {
		case "groundingChunks":
			chunks = m.Val
		case "groundingSupports":
			supports = m.Val
		default:
			rest = append(rest, m)
		}
	}
	var tmpl []convo.Citation
	if chunks != nil && !eachElement(&r, chunks, func(v []byte) bool {
		c, ok := chunkCite(v, &r)
		tmpl = append(tmpl, c)
		return ok
	}) {
		return raw, false
	}
	used := make([]bool, len(tmpl))
	type placed struct {
		part int
		c    convo.Citation
	}
	var out []placed
	si := 0
	if supports != nil && !eachElement(&r, supports, func(v []byte) bool {
		part, cs, ok := supportCites(v, si, tmpl, used, parts, streamed)
		si++
		for _, c := range cs {
			out = append(out, placed{part, c})
		}
		return ok
	}) {
		return raw, false
	}
	if len(out) == 0 {
		return raw, false // nothing cited: kept as it came
	}
	if slices.Contains(used, false) {
		rest = append(rest, wire.Member{Key: "groundingChunks", Val: chunks})
	}
	for _, p := range out {
		parts[p.part].Citations = append(parts[p.part].Citations, p.c)
	}
	return restObject(rest), true
}

// restObject is the members left native; an empty object when none are.
func restObject(rest wire.Members) []byte {
	if len(rest) == 0 {
		return []byte("{}")
	}
	return rest.Object()
}

// eachElement calls fn with every element of the JSON array raw; false
// when raw is not an array or fn refuses an element.
func eachElement(r *jsonx.Reader, raw []byte, fn func(v []byte) bool) bool {
	if len(raw) == 0 || raw[0] != '[' {
		return false
	}
	var vs [][]byte
	r.Reset(raw, convo.DefaultLimits.MaxDepth)
	if r.ReadArray(func(int) error {
		v, err := r.ReadRaw()
		vs = append(vs, v)
		return err
	}) != nil {
		return false
	}
	for _, v := range vs {
		if !fn(v) {
			return false
		}
	}
	return true
}

// chunkCite maps one groundingChunk to the citation every support citing
// it starts from.
func chunkCite(raw []byte, r *jsonx.Reader) (convo.Citation, bool) {
	var c convo.Citation
	ms, err := wire.ReadMembers(raw, ProviderID, r)
	if err != nil || len(ms) != 1 || !slices.Contains(chunkTypes[:], ms[0].Key) || !wire.IsObject(ms[0].Val) {
		return c, false
	}
	typ := ms[0].Key
	c.Kind = convo.CiteURL
	if typ == "retrievedContext" {
		c.Kind = convo.CiteFile
	}
	inner, err := wire.ReadMembers(ms[0].Val, ProviderID, r)
	if err != nil {
		return c, false
	}
	var extra wire.Members
	for _, m := range inner {
		dst := map[string]*string{"uri": &c.URL, "title": &c.Title, "text": &c.Text, "documentName": &c.FileID}[m.Key]
		s, err := wire.Str(m.Val)
		if dst == nil || err != nil || s == "" || *dst != "" {
			extra = append(extra, m)
			continue
		}
		*dst = s
	}
	if len(extra) > 0 || typ != defaultChunkType(c.Kind) {
		obj := []byte(extra.Object())
		if obj == nil {
			obj = []byte("{}")
		}
		c.Native = wire.Members{{Key: typ, Val: obj}}.Native(ProviderID)
	}
	return c, true
}

// defaultChunkType is the groundingChunk type a citation of kind k is
// written as when its native names none.
func defaultChunkType(k convo.CitationKind) string {
	if k == convo.CiteURL {
		return "web"
	}
	return "retrievedContext"
}

// segment is a groundingSupport's segment as read.
type segment struct {
	part, start, end int
	text             string
	hasText          bool
	extra            wire.Members // members the part does not imply
}

// readSegment reads a segment: partIndex, startIndex and endIndex as the
// API writes them (left out when 0), text, and any other member.
func readSegment(raw []byte, r *jsonx.Reader) (segment, bool) {
	var s segment
	ms, err := wire.ReadMembers(raw, ProviderID, r)
	if err != nil {
		return s, false
	}
	for _, m := range ms {
		var dst *int
		switch m.Key {
		case "partIndex":
			dst = &s.part
		case "startIndex":
			dst = &s.start
		case "endIndex":
			dst = &s.end
		case "text":
			t, err := wire.Str(m.Val)
			if err != nil {
				return s, false
			}
			s.text, s.hasText = t, true
			continue
		default:
			s.extra = append(s.extra, m)
			continue
		}
		n, ok := nonNegInt(m.Val, r)
		if !ok {
			return s, false
		}
		*dst = n
		if n == 0 {
			s.extra = append(s.extra, m) // an explicit 0 the API leaves out
		}
	}
	return s, true
}

// nonNegInt reads v as an integer of at least 0, spelt as one.
func nonNegInt(v []byte, r *jsonx.Reader) (int, bool) {
	r.Reset(v, 1)
	n, err := r.ReadInt()
	if err != nil || n < 0 || n > 1<<31 || bytes.ContainsAny(v, ".eE") {
		return 0, false
	}
	return int(n), true
}

// supportCites maps groundingSupports[si] to one citation per chunk it
// lists, on the part its segment names, marking the chunks used.
func supportCites(raw []byte, si int, tmpl []convo.Citation, used []bool, parts []convo.Part, streamed bool) (int, []convo.Citation, bool) {
	var r jsonx.Reader
	ms, err := wire.ReadMembers(raw, ProviderID, &r)
	if err != nil {
		return 0, nil, false
	}
	var seg segment
	var indices []int
	var scores [][]byte
	var extra wire.Members
	hasSeg := false
	for _, m := range ms {
		ok := true
		switch m.Key {
		case "segment":
			seg, ok = readSegment(m.Val, &r)
			hasSeg = true
		case "groundingChunkIndices":
			ok = eachElement(&r, m.Val, func(v []byte) bool {
				n, ok := nonNegInt(v, &jsonx.Reader{})
				indices = append(indices, n)
				return ok && n < len(tmpl)
			})
		case "confidenceScores":
			ok = eachElement(&r, m.Val, func(v []byte) bool {
				scores = append(scores, v)
				return len(v) > 0 && v[0] != '"' && v[0] != '{' && v[0] != '['
			})
		default:
			extra = append(extra, m)
		}
		if !ok {
			return 0, nil, false
		}
	}
	j := groundingPart(parts, seg.part, streamed)
	if !hasSeg || j < 0 || len(indices) == 0 || (scores != nil && len(scores) != len(indices)) ||
		seg.start > seg.end || seg.end > len(parts[j].Text) {
		return 0, nil, false
	}
	if seg.hasText && seg.text != parts[j].Text[seg.start:seg.end] {
		seg.extra = append(seg.extra, wire.Member{Key: "text", Val: jsonx.AppendString(nil, seg.text)})
	}
	cs := make([]convo.Citation, len(indices))
	for k, ci := range indices {
		used[ci] = true
		c := tmpl[ci]
		c.Span = &convo.Span{Start: seg.start, End: seg.end}
		n := wire.Members{
			{Key: citeSupport, Val: jsonx.AppendInt(nil, int64(si))},
			{Key: citeChunk, Val: jsonx.AppendInt(nil, int64(ci))},
		}
		if scores != nil {
			n = append(n, wire.Member{Key: citeConfidence, Val: scores[k]})
		}
		if c.Native != nil {
			n = append(n, wire.Member{Key: chunkTypeOf(&c), Val: nativeMember(c.Native, chunkTypeOf(&c))})
		}
		if k == 0 {
			n = appendObj(n, citeSegment, seg.extra)
			n = appendObj(n, citeSupportX, extra)
			if !seg.hasText {
				n = append(n, wire.Member{Key: citeNoText, Val: []byte("false")})
			}
		}
		c.Native = n.Native(ProviderID)
		cs[k] = c
	}
	return j, cs, true
}

func appendObj(n wire.Members, key string, ms wire.Members) wire.Members {
	if len(ms) == 0 {
		return n
	}
	return append(n, wire.Member{Key: key, Val: ms.Object()})
}

// chunkTypeOf returns the groundingChunk type a citation is written as.
func chunkTypeOf(c *convo.Citation) string {
	for _, t := range chunkTypes {
		if nativeMember(c.Native, t) != nil {
			return t
		}
	}
	return defaultChunkType(c.Kind)
}

// readCitationMeta maps the citationMetadata raw of a candidate to
// citations appended to parts, as readGrounding does.
func readCitationMeta(raw []byte, parts []convo.Part) ([]byte, bool) {
	var r jsonx.Reader
	ms, err := wire.ReadMembers(raw, ProviderID, &r)
	if err != nil {
		return raw, false
	}
	var rest wire.Members
	var list []byte
	key := ""
	for _, m := range ms {
		if (m.Key == "citationSources" || m.Key == "citations") && key == "" {
			key, list = m.Key, m.Val
			continue
		}
		rest = append(rest, m)
	}
	type placed struct {
		part int
		c    convo.Citation
	}
	var out []placed
	if list != nil && !eachElement(&r, list, func(v []byte) bool {
		j, c, ok := sourceCite(v, key, parts)
		out = append(out, placed{j, c})
		return ok
	}) || len(out) == 0 {
		return raw, false
	}
	for _, p := range out {
		parts[p.part].Citations = append(parts[p.part].Citations, p.c)
	}
	return restObject(rest), true
}

// sourceCite maps one citation source (key is the list's name) to a
// citation on the text part its range falls in.
func sourceCite(raw []byte, key string, parts []convo.Part) (int, convo.Citation, bool) {
	var r jsonx.Reader
	var c convo.Citation
	seg, ok := readSegment(raw, &r)
	if !ok || seg.start > seg.end || seg.hasText || seg.part != 0 {
		return 0, c, false
	}
	c.Kind = convo.CiteURL
	var extra wire.Members
	for _, m := range seg.extra {
		dst := map[string]*string{"uri": &c.URL, "title": &c.Title}[m.Key]
		s, err := wire.Str(m.Val)
		if dst == nil || err != nil || s == "" {
			extra = append(extra, m)
			continue
		}
		*dst = s
	}
	at := 0
	for j := range parts {
		if parts[j].Type != convo.TypeText {
			continue
		}
		n := len(parts[j].Text)
		if seg.start < at || seg.end > at+n {
			at += n
			continue
		}
		c.Span = &convo.Span{Start: seg.start - at, End: seg.end - at}
		obj := []byte(extra.Object())
		if obj == nil {
			obj = []byte("{}")
		}
		c.Native = wire.Members{{Key: key, Val: obj}}.Native(ProviderID)
		return j, c, true
	}
	return 0, c, false
}
