package openai

import (
	"slices"
	"unicode/utf8"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider/internal/wire"
)

// respCites maps the annotations of Responses output_text parts
// (url_citation, file_citation, container_file_citation, file_path) to
// convo citations and back, members in the API's order.
var respCites = wire.CiteMap{
	Provider: ProviderID,
	Shapes: []wire.CiteShape{
		{Type: "url_citation", Kind: convo.CiteURL,
			Keys: []wire.CiteKey{{Key: "end_index", Field: wire.CiteSpanEnd}, {Key: "start_index", Field: wire.CiteSpanStart},
				{Key: "title", Field: wire.CiteTitle}, {Key: "url", Field: wire.CiteURL}},
			Need: []string{"url"}},
		{Type: "file_citation", Kind: convo.CiteFile,
			Keys: []wire.CiteKey{{Key: "file_id", Field: wire.CiteFileID}, {Key: "filename", Field: wire.CiteTitle},
				{Key: "index", Field: wire.CiteAt}},
			Need: []string{"file_id"}},
		{Type: "container_file_citation", Kind: convo.CiteFile,
			Keys: []wire.CiteKey{{Key: "container_id"}, {Key: "end_index", Field: wire.CiteSpanEnd},
				{Key: "file_id", Field: wire.CiteFileID}, {Key: "filename", Field: wire.CiteTitle},
				{Key: "start_index", Field: wire.CiteSpanStart}},
			Need: []string{"container_id", "file_id"}},
		{Type: "file_path", Kind: convo.CiteFile,
			Keys: []wire.CiteKey{{Key: "file_id", Field: wire.CiteFileID}, {Key: "index", Field: wire.CiteAt}},
			Need: []string{"file_id"}},
	},
	Infer: func(c *convo.Citation) string {
		switch c.Kind {
		case convo.CiteURL:
			return "url_citation"
		case convo.CiteFile:
			return "file_citation"
		}
		return ""
	},
}

// readAnnotations maps an output_text's annotations; ok is false when one
// of them has no canonical form (the array then stays native).
func readAnnotations(raw []byte) ([]convo.Citation, bool) {
	if len(raw) < 3 || raw[0] != '[' {
		return nil, false
	}
	var r jsonx.Reader
	return respCites.ReadAll(raw, &r)
}

// appendAnnotations writes cs, the citations of a part with text text, as
// an annotations array, leaving out (and reporting through drop) each
// citation Responses has no form for. Spans count characters: one Gemini
// counted in bytes is converted against the text.
func appendAnnotations(dst []byte, cs []convo.Citation, text string, r *jsonx.Reader, drop func(i int, c *convo.Citation)) []byte {
	conv := cs // cloned before the first span it converts
	for i := range cs {
		if s := wire.CharSpan(&cs[i], text); s != cs[i].Span {
			if len(conv) > 0 && &conv[0] == &cs[0] {
				conv = slices.Clone(cs)
			}
			conv[i].Span = s
		}
	}
	dst, _ = respCites.AppendArray(dst, conv, r, drop)
	return dst
}

// Chat Completions annotations nest the citation under a member named by
// its type: {"type":"url_citation","url_citation":{…}}. The nested object
// maps as a flat citation of that type. OpenAI writes its members in
// alphabetical order and has no quoted text; OpenRouter adds the page's
// text as "content" and writes url, title, start_index, end_index, content.
// A citation with a quoted text is written in OpenRouter's order, one
// without in OpenAI's, so a citation either wrote goes back byte for byte.
var (
	chatCites = wire.CiteMap{
		Provider: ProviderID,
		Shapes: []wire.CiteShape{{Type: "url_citation", Kind: convo.CiteURL,
			Keys: []wire.CiteKey{{Key: "end_index", Field: wire.CiteSpanEnd}, {Key: "start_index", Field: wire.CiteSpanStart},
				{Key: "title", Field: wire.CiteTitle}, {Key: "url", Field: wire.CiteURL}},
			Need: []string{"url"}}},
		Infer: chatCiteType,
	}
	routerCites = wire.CiteMap{
		Provider: ProviderID,
		Shapes: []wire.CiteShape{{Type: "url_citation", Kind: convo.CiteURL,
			Keys: []wire.CiteKey{{Key: "url", Field: wire.CiteURL}, {Key: "title", Field: wire.CiteTitle},
				{Key: "start_index", Field: wire.CiteSpanStart}, {Key: "end_index", Field: wire.CiteSpanEnd},
				{Key: "content", Field: wire.CiteText}},
			Need: []string{"url"}}},
		Infer: chatCiteType,
	}
)

func chatCiteType(c *convo.Citation) string {
	if c.Kind == convo.CiteURL {
		return "url_citation"
	}
	return ""
}

// readChatAnnotations maps a Chat message's annotations array; ok is false
// when one of them has no canonical form (the array then stays native).
func readChatAnnotations(raw []byte) ([]convo.Citation, bool) {
	return wire.ReadCitations(raw, &jsonx.Reader{}, readChatAnnotation)
}

// readChatAnnotation maps one annotation: exactly a type and the object
// named by it, anything else is not mapped.
func readChatAnnotation(raw []byte, r *jsonx.Reader) (convo.Citation, bool) {
	ms, err := wire.ReadMembers(raw, ProviderID, r)
	if err != nil || len(ms) != 2 || ms[0].Key != "type" {
		return convo.Citation{}, false
	}
	typ, err := wire.Str(ms[0].Val)
	inner := ms[1].Val
	if err != nil || ms[1].Key != typ || len(inner) < 2 || inner[0] != '{' {
		return convo.Citation{}, false
	}
	in, err := wire.ReadMembers(inner, ProviderID, r)
	if err != nil {
		return convo.Citation{}, false
	}
	m := &chatCites
	if _, ok := in.Get("content"); ok {
		m = &routerCites
	}
	flat := append(append(make([]byte, 0, len(raw)), `{"type":`...), ms[0].Val...)
	if len(inner) > 2 {
		flat = append(append(flat, ','), inner[1:]...)
	} else {
		flat = append(flat, '}')
	}
	c, ok := m.Read(flat, r)
	if ok {
		// One Chat could not write back (no url) stays as it came.
		_, ok = appendChatAnnotation(nil, &c, r)
	}
	return c, ok
}

// appendChatAnnotation writes c as a Chat annotation; ok is false when
// Chat has no form for it (a document or file citation).
func appendChatAnnotation(dst []byte, c *convo.Citation, r *jsonx.Reader) ([]byte, bool) {
	m := &chatCites
	if c.Text != "" {
		m = &routerCites
	} else if ms, err := wire.ReadNative(c.Native, ProviderID, r); err == nil {
		if _, ok := ms.Get("content"); ok {
			m = &routerCites
		}
	}
	flat, ok := m.Append(nil, c, r)
	const head = `{"type":"url_citation"`
	if !ok || len(flat) < len(head)+1 || string(flat[:len(head)]) != head {
		return dst, false
	}
	rest := flat[len(head) : len(flat)-1] // the members after the type, each led by a comma
	dst = append(dst, head+`,"url_citation":{`...)
	if len(rest) > 0 {
		dst = append(dst, rest[1:]...)
	}
	return append(dst, "}}"...), true
}

// appendChatCites appends, comma-separated, the Chat annotations of the
// citations of a text part, text, that begins at rune offset at of the
// message's content: a span (in characters; one Gemini counted in bytes
// is converted against the text) moves by at, and a citation without one
// (it supports the whole part) gets the part's stretch, since Chat
// requires start_index and end_index. A citation Chat has no form for is
// left out. It returns how many it wrote.
func appendChatCites(dst []byte, cs []convo.Citation, text string, at int, r *jsonx.Reader) ([]byte, int) {
	k := 0
	for i := range cs {
		c := cs[i]
		s := convo.Span{Start: at, End: at + utf8.RuneCountInString(text)}
		if cv := wire.CharSpan(&c, text); cv != nil {
			s = convo.Span{Start: cv.Start + at, End: cv.End + at}
		}
		c.Span = &s
		mark := len(dst)
		if k > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = appendChatAnnotation(dst, &c, r); !ok {
			dst = dst[:mark]
			continue
		}
		k++
	}
	return dst, k
}
