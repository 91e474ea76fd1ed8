package openai

import (
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

// appendAnnotations writes cs as an annotations array, leaving out (and
// reporting through drop) each citation Responses has no form for.
func appendAnnotations(dst []byte, cs []convo.Citation, r *jsonx.Reader, drop func(i int, c *convo.Citation)) []byte {
	dst, _ = respCites.AppendArray(dst, cs, r, drop)
	return dst
}
