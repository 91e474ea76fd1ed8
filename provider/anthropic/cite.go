package anthropic

import (
	"slices"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider/internal/wire"
)

// docKeys are the members of a document citation, in the API's order,
// with the names of its range.
func docKeys(start, end string) []wire.CiteKey {
	return []wire.CiteKey{{Key: "cited_text", Field: wire.CiteText}, {Key: "document_index", Field: wire.CiteSource},
		{Key: "document_title", Field: wire.CiteTitle}, {Key: start, Field: wire.CiteStart},
		{Key: end, Field: wire.CiteEnd}, {Key: "file_id", Field: wire.CiteFileID}}
}

// cites maps the citations of text blocks (TextCitation: char_location,
// page_location, content_block_location, web_search_result_location,
// search_result_location) to convo citations and back.
var cites = wire.CiteMap{
	Provider: ProviderID,
	Shapes: []wire.CiteShape{
		{Type: "char_location", Kind: convo.CiteDocument, Unit: convo.UnitChar,
			Keys: docKeys("start_char_index", "end_char_index")},
		{Type: "page_location", Kind: convo.CiteDocument, Unit: convo.UnitPage,
			Keys: docKeys("start_page_number", "end_page_number")},
		{Type: "content_block_location", Kind: convo.CiteDocument, Unit: convo.UnitBlock,
			Keys: docKeys("start_block_index", "end_block_index")},
		{Type: "web_search_result_location", Kind: convo.CiteURL,
			Keys: []wire.CiteKey{{Key: "cited_text", Field: wire.CiteText}, {Key: "url", Field: wire.CiteURL},
				{Key: "title", Field: wire.CiteTitle}},
			// Only a citation the API wrote has the encrypted index it wants back.
			Need: []string{"url", "encrypted_index"}},
		{Type: "search_result_location", Kind: convo.CiteDocument, Unit: convo.UnitBlock,
			Keys: []wire.CiteKey{{Key: "cited_text", Field: wire.CiteText}, {Key: "search_result_index", Field: wire.CiteSource},
				{Key: "source", Field: wire.CiteURL}, {Key: "title", Field: wire.CiteTitle},
				{Key: "start_block_index", Field: wire.CiteStart}, {Key: "end_block_index", Field: wire.CiteEnd}}},
	},
	Infer: func(c *convo.Citation) string {
		switch {
		case c.Kind == convo.CiteURL:
			return "web_search_result_location"
		case c.Kind != convo.CiteDocument:
			return ""
		case c.Unit == convo.UnitChar:
			return "char_location"
		case c.Unit == convo.UnitPage:
			return "page_location"
		case c.Unit == convo.UnitBlock:
			return "content_block_location"
		}
		return ""
	},
}

// replyCites is cites for the replies convo writes (EncodeReply, the
// stream encoder): the encrypted index is what the API wants back in a
// request, and a client reading a reply has no use for it, so a web
// citation from another provider (an OpenAI url_citation reaching an
// Anthropic client through the gateway) is written without one.
var replyCites = func() wire.CiteMap {
	m := cites
	m.Shapes = slices.Clone(cites.Shapes)
	for i := range m.Shapes {
		if m.Shapes[i].Type == "web_search_result_location" {
			m.Shapes[i].Need = []string{"url"}
		}
	}
	return m
}()

// liftCitations moves the citations array of a text part's native members
// into Citations when every citation in it maps; otherwise (a citation
// type convo does not know) the array stays native, as read.
func liftCitations(p *convo.Part) {
	if p.Type != convo.TypeText || p.Native[ProviderID] == nil {
		return
	}
	var r jsonx.Reader
	ms, err := wire.ReadNative(p.Native, ProviderID, &r)
	if err != nil {
		return
	}
	raw := ms.Value("citations")
	if len(raw) < 2 || raw[0] != '[' {
		return
	}
	cs, ok := cites.ReadAll(raw, &r)
	if !ok {
		return
	}
	p.Citations = cs
	var left wire.Members
	for _, m := range ms {
		if m.Key != "citations" {
			left = append(left, m)
		}
	}
	n := convo.Native{}
	for k, v := range p.Native {
		n[k] = v
	}
	delete(n, ProviderID)
	if obj := left.Object(); obj != nil {
		n[ProviderID] = obj
	}
	if len(n) == 0 {
		n = nil
	}
	p.Native = n
}

// citedPart returns p with the citations of citations_delta events added,
// after those its content_block_start had.
func citedPart(p convo.Part, deltas [][]byte) convo.Part {
	if p.Citations != nil {
		var r jsonx.Reader
		if cs, ok := cites.ReadAll(appendCitations(nil, deltas), &r); ok {
			p.Citations = append(p.Citations[:len(p.Citations):len(p.Citations)], cs...)
			return p
		}
	}
	p.Native = withCitations(p.Native, deltas)
	liftCitations(&p)
	return p
}

// citeWhy explains why a citation has no Anthropic form.
func citeWhy(c *convo.Citation) string {
	switch c.Kind {
	case convo.CiteURL:
		return " (a web citation needs the encrypted index only Anthropic's own carry)"
	case convo.CiteDocument:
		return " (a document citation needs a char, page or block range)"
	}
	return ""
}

// appendCites writes cs as a "citations" member mapped by m, leaving out
// (and reporting through drop) each one Anthropic has no form for, and the
// member when none is left.
func appendCites(dst []byte, m *wire.CiteMap, cs []convo.Citation, r *jsonx.Reader, drop func(i int, c *convo.Citation)) []byte {
	if len(cs) == 0 {
		return dst
	}
	start := len(dst)
	dst, n := m.AppendArray(append(dst, `,"citations":`...), cs, r, drop)
	if n == 0 {
		return dst[:start]
	}
	return dst
}
