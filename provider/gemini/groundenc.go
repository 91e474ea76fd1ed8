package gemini

import (
	"bytes"
	"slices"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider/internal/wire"
)

// appendCiteMeta appends a candidate's groundingMetadata and
// citationMetadata members (each with its comma) built from the
// citations of its text parts and what the message's native kept of them
// (native is nil in a stream): the reverse of readGrounding and
// readCitationMeta. Citations of another provider become grounding
// chunks and supports.
func appendCiteMeta(dst []byte, native convo.Native, cited []citedPart) []byte {
	var r jsonx.Reader
	if g := groundingObject(nativeMember(native, "groundingMetadata"), cited, &r); g != nil {
		dst = append(append(dst, `,"groundingMetadata":`...), g...)
	}
	if c := citationMetaObject(nativeMember(native, "citationMetadata"), cited, &r); c != nil {
		dst = append(append(dst, `,"citationMetadata":`...), c...)
	}
	return dst
}

// sourceKey returns the citationMetadata list a citation came from
// ("citationSources", "citations"), or "" for any other citation.
func sourceKey(c *convo.Citation) string {
	for _, k := range [...]string{"citationSources", "citations"} {
		if nativeMember(c.Native, k) != nil {
			return k
		}
	}
	return ""
}

// nativeInt returns the integer member key of a citation's native, or -1.
func nativeInt(c *convo.Citation, key string) int {
	v := nativeMember(c.Native, key)
	if v == nil {
		return -1
	}
	n, ok := nonNegInt(v, &jsonx.Reader{})
	if !ok {
		return -1
	}
	return n
}

// groundRef is one citation written to groundingMetadata.
type groundRef struct {
	cp             *citedPart
	c              *convo.Citation
	support, chunk int // from its native, -1 when absent
	at             int // its chunk in the list written
}

// span returns the citation's range in bytes of the part's text (one
// another provider wrote, in characters, converted), the whole text when
// it has none.
func span(c *convo.Citation, text string) convo.Span {
	if s := wire.ByteSpan(c, text); s != nil {
		return *s
	}
	return convo.Span{End: len(text)}
}

// groundingObject returns the groundingMetadata object, or nil when there
// is none to write.
func groundingObject(restRaw []byte, cited []citedPart, r *jsonx.Reader) []byte {
	var rest wire.Members
	if restRaw != nil {
		var err error
		if rest, err = wire.ReadMembers(restRaw, ProviderID, r); err != nil {
			return nil
		}
		if _, ok := rest.Get("groundingSupports"); ok {
			return restRaw // kept whole: convo could not map it
		}
	}
	var refs []groundRef
	for i := range cited {
		for j := range cited[i].cites {
			c := &cited[i].cites[j]
			if sourceKey(c) == "" {
				refs = append(refs, groundRef{cp: &cited[i], c: c, support: nativeInt(c, citeSupport), chunk: nativeInt(c, citeChunk)})
			}
		}
	}
	if len(refs) == 0 {
		return restRaw
	}
	chunks := groundChunks(rest.Value("groundingChunks"), refs, r)
	out := wire.Obj{Buf: []byte{'{'}}
	for _, m := range rest {
		out.Raw(m.Key, m.Val)
	}
	if !out.Has("groundingChunks") {
		out.Raw("groundingChunks", wire.JoinArray(chunks))
	}
	out.Raw("groundingSupports", groundSupports(refs, r))
	return out.Close()
}

// groundChunks returns the chunk list, setting each ref's place in it:
// the list kept native when there is one, else the chunks of the
// citations in the order of their native places; a citation without one
// (another provider's) cites the chunk equal to its own, added at the end
// when there is none.
func groundChunks(kept []byte, refs []groundRef, r *jsonx.Reader) [][]byte {
	var chunks [][]byte
	remap := map[int]int{}
	if kept != nil {
		eachElement(r, kept, func(v []byte) bool {
			remap[len(chunks)] = len(chunks)
			chunks = append(chunks, v)
			return true
		})
	} else {
		var olds []int
		for _, ref := range refs {
			if ref.chunk >= 0 {
				olds = append(olds, ref.chunk)
			}
		}
		slices.Sort(olds)
		for _, o := range slices.Compact(olds) {
			remap[o] = len(chunks)
			for _, ref := range refs {
				if ref.chunk == o {
					chunks = append(chunks, chunkJSON(ref.c, r))
					break
				}
			}
		}
	}
	for i := range refs {
		ref := &refs[i]
		if k, ok := remap[ref.chunk]; ok && ref.chunk >= 0 {
			ref.at = k
			continue
		}
		js := chunkJSON(ref.c, r)
		ref.at = slices.IndexFunc(chunks, func(c []byte) bool { return bytes.Equal(c, js) })
		if ref.at < 0 {
			ref.at = len(chunks)
			chunks = append(chunks, js)
		}
	}
	return chunks
}

// chunkJSON is the groundingChunk a citation stands for.
func chunkJSON(c *convo.Citation, r *jsonx.Reader) []byte {
	typ := chunkTypeOf(c)
	var ms wire.Members
	for _, f := range [...]struct{ key, val string }{{"uri", c.URL}, {"title", c.Title}, {"text", c.Text}, {"documentName", c.FileID}} {
		if f.val != "" {
			ms = append(ms, wire.Member{Key: f.key, Val: jsonx.AppendString(nil, f.val)})
		}
	}
	if extra := nativeMember(c.Native, typ); extra != nil {
		if xs, err := wire.ReadMembers(extra, ProviderID, r); err == nil {
			for _, m := range xs {
				ms = ms.Set(m.Key, m.Val)
			}
		}
	}
	inner := []byte(ms.Object())
	if inner == nil {
		inner = []byte("{}")
	}
	return wire.Members{{Key: typ, Val: inner}}.Object()
}

// groundSupports returns the groundingSupports array: one support for
// each run of citations of the same support (or, for citations without
// one, of the same part and span), in the order of their native places,
// the others after.
func groundSupports(refs []groundRef, r *jsonx.Reader) []byte {
	type group struct {
		key  int
		refs []groundRef
	}
	var groups []group
	for i, ref := range refs {
		if i > 0 {
			g := &groups[len(groups)-1]
			prev := g.refs[len(g.refs)-1]
			if prev.cp == ref.cp && prev.support == ref.support &&
				span(prev.c, prev.cp.text) == span(ref.c, ref.cp.text) {
				g.refs = append(g.refs, ref)
				continue
			}
		}
		key := ref.support
		if key < 0 {
			key = 1<<40 + i
		}
		groups = append(groups, group{key: key, refs: []groundRef{ref}})
	}
	slices.SortStableFunc(groups, func(a, b group) int { return a.key - b.key })
	var sups [][]byte
	for _, g := range groups {
		sups = append(sups, supportJSON(g.refs, r))
	}
	return wire.JoinArray(sups)
}

// supportJSON is one groundingSupport for the citations refs.
func supportJSON(refs []groundRef, r *jsonx.Reader) []byte {
	first := refs[0]
	o := wire.Obj{Buf: []byte{'{'}}
	o.Raw("segment", segmentJSON(first.cp, first.c, r))
	idx := []byte{'['}
	var scores []byte
	for i, ref := range refs {
		if i > 0 {
			idx = append(idx, ',')
		}
		idx = jsonx.AppendInt(idx, int64(ref.at))
		if v := nativeMember(ref.c.Native, citeConfidence); v != nil {
			if scores == nil {
				scores = []byte{'['}
			} else {
				scores = append(scores, ',')
			}
			scores = append(scores, v...)
		}
	}
	o.Raw("groundingChunkIndices", append(idx, ']'))
	if scores != nil {
		o.Raw("confidenceScores", append(scores, ']'))
	}
	if x := nativeMember(first.c.Native, citeSupportX); x != nil {
		if xs, err := wire.ReadMembers(x, ProviderID, r); err == nil {
			for _, m := range xs {
				o.Raw(m.Key, m.Val)
			}
		}
	}
	return o.Close()
}

// segmentJSON is the segment of a citation on part cp: the part's index,
// the span's bytes (the API leaves out zeros) and text, then the members
// the citation's native keeps (an explicit 0, a text that differed).
func segmentJSON(cp *citedPart, c *convo.Citation, r *jsonx.Reader) []byte {
	sp := span(c, cp.text)
	var ms wire.Members
	for _, f := range [...]struct {
		key string
		n   int
	}{{"partIndex", cp.index}, {"startIndex", cp.offset + sp.Start}, {"endIndex", cp.offset + sp.End}} {
		if f.n != 0 {
			ms = append(ms, wire.Member{Key: f.key, Val: jsonx.AppendInt(nil, int64(f.n))})
		}
	}
	if sp.Start >= 0 && sp.Start <= sp.End && sp.End <= len(cp.text) && sp.End > sp.Start &&
		string(nativeMember(c.Native, citeNoText)) != "false" {
		ms = append(ms, wire.Member{Key: "text", Val: jsonx.AppendString(nil, cp.text[sp.Start:sp.End])})
	}
	if x := nativeMember(c.Native, citeSegment); x != nil {
		if xs, err := wire.ReadMembers(x, ProviderID, r); err == nil {
			for _, m := range xs {
				ms = ms.Set(m.Key, m.Val)
			}
		}
	}
	if len(ms) == 0 {
		return []byte("{}")
	}
	return ms.Object()
}

// citationMetaObject returns the citationMetadata object, or nil when
// there is none to write.
func citationMetaObject(restRaw []byte, cited []citedPart, r *jsonx.Reader) []byte {
	key := ""
	var list [][]byte
	for i := range cited {
		cp := &cited[i]
		for j := range cp.cites {
			c := &cp.cites[j]
			k := sourceKey(c)
			if k == "" {
				continue
			}
			if key == "" {
				key = k
			}
			list = append(list, sourceJSON(cp, c, k, r))
		}
	}
	if key == "" {
		return restRaw
	}
	o := wire.Obj{Buf: []byte{'{'}}
	if restRaw != nil {
		if rest, err := wire.ReadMembers(restRaw, ProviderID, r); err == nil {
			for _, m := range rest {
				o.Raw(m.Key, m.Val)
			}
		}
	}
	o.Raw(key, wire.JoinArray(list))
	return o.Close()
}

// sourceJSON is one citation source: its range in bytes of the
// candidate's text parts (zeros left out), uri and title, then what the
// citation's native keeps (license, publicationDate, an explicit 0).
func sourceJSON(cp *citedPart, c *convo.Citation, key string, r *jsonx.Reader) []byte {
	sp := span(c, cp.text)
	var ms wire.Members
	if n := cp.textAt + sp.Start; n != 0 {
		ms = append(ms, wire.Member{Key: "startIndex", Val: jsonx.AppendInt(nil, int64(n))})
	}
	if n := cp.textAt + sp.End; n != 0 {
		ms = append(ms, wire.Member{Key: "endIndex", Val: jsonx.AppendInt(nil, int64(n))})
	}
	if c.URL != "" {
		ms = append(ms, wire.Member{Key: "uri", Val: jsonx.AppendString(nil, c.URL)})
	}
	if c.Title != "" {
		ms = append(ms, wire.Member{Key: "title", Val: jsonx.AppendString(nil, c.Title)})
	}
	if xs, err := wire.ReadMembers(nativeMember(c.Native, key), ProviderID, r); err == nil {
		for _, m := range xs {
			ms = ms.Set(m.Key, m.Val)
		}
	}
	if len(ms) == 0 {
		return []byte("{}")
	}
	return ms.Object()
}
