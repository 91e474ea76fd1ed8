package convo

import (
	"errors"
	"fmt"
	"slices"

	"github.com/convo-go/convo/internal/jsonx"
)

// CitationKind says what a citation points at.
type CitationKind string

// The citation kinds of canonical format v1.
const (
	// CiteURL cites a web page (a web search result, a grounding source).
	CiteURL CitationKind = "url"
	// CiteDocument cites a document the request gave (by its index among
	// the request's documents or search results) or a search result.
	CiteDocument CitationKind = "document"
	// CiteFile cites an uploaded file by its id (OpenAI file search).
	CiteFile CitationKind = "file"
)

// The units a citation's range in its source is counted in.
const (
	UnitChar  = "char"  // characters of a plain-text document
	UnitPage  = "page"  // pages of a PDF
	UnitBlock = "block" // content blocks of a custom-content document or search result
)

// Span is a range of a text part's text, Start inclusive and End exclusive,
// counted as the provider that wrote it counts: bytes when the citation's
// Native has a "gemini" member (Gemini wrote it), characters (runes, as
// OpenAI counts) otherwise. Encoders convert a span counted in the other
// unit against the part's text.
type Span struct {
	Start, End int
}

// Citation is one source a text part's text draws on. Which fields are
// meaningful depends on Kind:
//
//   - url: URL, Title, Text (the quoted passage)
//   - document: Source (the cited document's index among those the
//     request gave, from 0), Title, URL (a search result's source), Text,
//     and a range Start–End counted in Unit
//   - file: FileID, Title (the file name), Text
//
// Span, when set, is the stretch of the part's text the citation supports;
// nil means the whole text. Native holds provider-only members (Anthropic's
// encrypted_index, …) by provider id; Extra keeps members a newer writer
// added.
type Citation struct {
	Kind   CitationKind
	URL    string
	Title  string
	FileID string
	Source int // document: index of the cited document, from 0
	Unit   string
	Start  int // first unit cited
	End    int // end of the cited range, as the provider gives it
	Text   string
	Span   *Span
	Native Native
	Extra  Fields
}

// Equal reports whether c and d are the same citation.
func (c Citation) Equal(d Citation) bool {
	if c.Kind != d.Kind || c.URL != d.URL || c.Title != d.Title || c.FileID != d.FileID ||
		c.Source != d.Source || c.Unit != d.Unit || c.Start != d.Start || c.End != d.End ||
		c.Text != d.Text || (c.Span == nil) != (d.Span == nil) || (c.Span != nil && *c.Span != *d.Span) {
		return false
	}
	return c.Native.equal(d.Native) && c.Extra.equal(d.Extra)
}

// citationsMember moves a text part's "citations" member out of Extra,
// where the part reader put it (it reads members before it may know the
// type), into Citations. On any other part it stays an extra member, as
// before citations existed.
func citationsMember(p *Part) error {
	for i, f := range p.Extra {
		if f.Key != "citations" {
			continue
		}
		cs, err := readCitations(f.Value)
		if err != nil {
			return at(err, "citations")
		}
		p.Citations = cs
		p.Extra = slices.Delete(p.Extra, i, i+1)
		if len(p.Extra) == 0 {
			p.Extra = nil
		}
		return nil
	}
	return nil
}

// readCitations reads a citations array already checked for syntax.
func readCitations(raw []byte) ([]Citation, error) {
	d := decoder{r: jsonx.NewReader(raw, DefaultLimits.MaxDepth), single: true}
	if d.r.ReadNull() {
		return nil, nil
	}
	var cs []Citation
	err := d.r.ReadArray(func(i int) error {
		var c Citation
		err := d.r.ReadObject(func(key []byte) error { return d.citationMember(&c, key) })
		if err == nil && c.Kind == "" {
			err = errors.New("citation has no kind")
		}
		cs = append(cs, c)
		return at(err, index("", i))
	})
	return cs, err
}

// citationMember reads member key of a citation into c.
func (d *decoder) citationMember(c *Citation, key []byte) error {
	var dst *int
	switch string(key) {
	case "kind":
		return d.optString((*string)(&c.Kind), key)
	case "url":
		return d.optString(&c.URL, key)
	case "title":
		return d.optString(&c.Title, key)
	case "file_id":
		return d.optString(&c.FileID, key)
	case "unit":
		return d.optString(&c.Unit, key)
	case "text":
		return d.optString(&c.Text, key)
	case "source":
		dst = &c.Source
	case "start":
		dst = &c.Start
	case "end":
		dst = &c.End
	case "span":
		return at(d.span(c), "span")
	case "native":
		n, err := d.native()
		c.Native = n
		return at(err, "native")
	default:
		raw, err := d.r.ReadRaw()
		c.Extra = append(c.Extra, Field{Key: string(key), Value: raw})
		return atKey(err, key)
	}
	if d.r.ReadNull() {
		return nil
	}
	n, err := d.r.ReadInt()
	*dst = int(n)
	return atKey(err, key)
}

// span reads a citation's span, [start, end].
func (d *decoder) span(c *Citation) error {
	if d.r.ReadNull() {
		return nil
	}
	var v []int
	err := d.r.ReadArray(func(i int) error {
		n, err := d.r.ReadInt()
		v = append(v, int(n))
		return at(err, index("", i))
	})
	if err != nil {
		return err
	}
	if len(v) != 2 {
		return fmt.Errorf("want [start, end], got %d numbers", len(v))
	}
	c.Span = &Span{Start: v[0], End: v[1]}
	return nil
}

// citations writes a text part's citations, if it has any.
func (e *encoder) citations(cs []Citation) error {
	if len(cs) == 0 {
		return nil
	}
	e.buf = jsonx.AppendKey(e.buf, "citations")
	e.buf = append(e.buf, '[')
	for i := range cs {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.citation(&cs[i]); err != nil {
			return at(err, index("citations", i))
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

func (e *encoder) citation(c *Citation) error {
	if c.Kind == "" {
		return errors.New("citation has no kind")
	}
	e.buf = append(e.buf, '{')
	for _, f := range [...]struct{ key, val string }{
		{"kind", string(c.Kind)}, {"url", c.URL}, {"title", c.Title}, {"file_id", c.FileID},
	} {
		if err := e.str(f.key, f.val); err != nil {
			return err
		}
	}
	// A source or range the decoder read is written whatever the kind or
	// unit, so that no document that reads is changed by a round trip.
	if c.Kind == CiteDocument || c.Source != 0 {
		e.buf = jsonx.AppendInt(jsonx.AppendKey(e.buf, "source"), int64(c.Source))
	}
	if err := e.str("unit", c.Unit); err != nil {
		return err
	}
	if c.Unit != "" || c.Start != 0 || c.End != 0 {
		e.buf = jsonx.AppendInt(jsonx.AppendKey(e.buf, "start"), int64(c.Start))
		e.buf = jsonx.AppendInt(jsonx.AppendKey(e.buf, "end"), int64(c.End))
	}
	if err := e.str("text", c.Text); err != nil {
		return err
	}
	if c.Span != nil {
		e.buf = append(jsonx.AppendKey(e.buf, "span"), '[')
		e.buf = jsonx.AppendInt(e.buf, int64(c.Span.Start))
		e.buf = jsonx.AppendInt(append(e.buf, ','), int64(c.Span.End))
		e.buf = append(e.buf, ']')
	}
	if err := e.native(c.Native); err != nil {
		return err
	}
	if err := e.extra(c.Extra); err != nil {
		return err
	}
	e.buf = append(e.buf, '}')
	return nil
}

// citationsSize estimates the encoded size of cs.
func citationsSize(cs []Citation) int {
	if len(cs) == 0 {
		return 0
	}
	n := 14
	for i := range cs {
		c := &cs[i]
		n += 12 + len(c.Kind) + str("url", c.URL) + str("title", c.Title) + str("file_id", c.FileID) +
			str("unit", c.Unit) + str("text", c.Text) + c.Native.size() + c.Extra.size()
		if c.Kind == CiteDocument {
			n += 14
		}
		if c.Unit != "" {
			n += 30
		}
		if c.Span != nil {
			n += 30
		}
	}
	return n
}

// citations checks the citations of a text part.
func (v *validator) citations(pp string, cs []Citation) {
	for i, c := range cs {
		cp := pp + "." + index("citations", i)
		switch {
		case c.Kind == "":
			v.addf(cp, "citation has no kind")
		case c.Unit != "" && c.Unit != UnitChar && c.Unit != UnitPage && c.Unit != UnitBlock:
			v.addf(cp+".unit", "unknown unit %q (want char, page or block)", c.Unit)
		case c.Source < 0 || c.Start < 0 || c.End < c.Start:
			v.addf(cp, "bad range: source %d, start %d, end %d", c.Source, c.Start, c.End)
		case c.Span != nil && (c.Span.Start < 0 || c.Span.End < c.Span.Start):
			v.addf(cp+".span", "bad span [%d, %d]", c.Span.Start, c.Span.End)
		}
	}
}
