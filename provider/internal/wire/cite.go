package wire

import (
	"bytes"
	"slices"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
)

// CiteField names the convo.Citation field a wire member of a citation
// object maps to.
type CiteField int

// The citation fields a wire member maps to.
const (
	CiteText      CiteField = iota + 1 // the quoted passage
	CiteURL                            // the page's address
	CiteTitle                          // the page's or document's title
	CiteFileID                         // a file id
	CiteSource                         // a document's index
	CiteStart                          // start of the cited range
	CiteEnd                            // end of the cited range
	CiteSpanStart                      // start of the supported stretch of text
	CiteSpanEnd                        // end of the supported stretch of text
	CiteAt                             // a point in the text: a span of length 0
)

// CiteKey is one wire member of a citation object and the field it maps
// to; Field 0 marks a member kept native that has its place in the order.
type CiteKey struct {
	Key   string
	Field CiteField
}

// CiteShape is how one type of a provider's flat citation objects maps to
// convo.Citation: its kind and unit, and its members in the order the
// provider writes them, so a citation the provider wrote is written back
// byte for byte.
type CiteShape struct {
	Type string
	Kind convo.CitationKind
	Unit string
	Keys []CiteKey
	// Need lists members the provider requires that only a citation it
	// wrote has (kept in native): without them the citation is not written.
	Need []string
}

// CiteMap maps a provider's flat citation objects (a "type" member and
// the others beside it: Anthropic, OpenAI) to convo.Citation and back.
type CiteMap struct {
	Provider string
	Shapes   []CiteShape
	// Infer names the wire type a citation is written as when its native
	// members do not name one ("" when the provider has none for it).
	Infer func(c *convo.Citation) string
}

func (m *CiteMap) shape(typ string) *CiteShape {
	for i := range m.Shapes {
		if m.Shapes[i].Type == typ {
			return &m.Shapes[i]
		}
	}
	return nil
}

// ReadAll maps a JSON array of citation objects; ok is false when one of
// them cannot be mapped (a type convo does not know, a required member
// missing): the caller then keeps the array as it was.
func (m *CiteMap) ReadAll(raw []byte, r *jsonx.Reader) ([]convo.Citation, bool) {
	return ReadCitations(raw, r, m.Read)
}

// ReadCitations maps each object of the JSON array raw with read; ok is
// false when raw is not a non-empty array or read refuses one of them.
func ReadCitations(raw []byte, r *jsonx.Reader, read func([]byte, *jsonx.Reader) (convo.Citation, bool)) ([]convo.Citation, bool) {
	var objs [][]byte
	r.Reset(raw, convo.DefaultLimits.MaxDepth)
	err := r.ReadArray(func(int) error {
		v, err := r.ReadRaw()
		objs = append(objs, v)
		return err
	})
	if err != nil || len(objs) == 0 {
		return nil, false
	}
	cs := make([]convo.Citation, 0, len(objs))
	for _, o := range objs {
		c, ok := read(o, r)
		if !ok {
			return nil, false
		}
		cs = append(cs, c)
	}
	return cs, true
}

// Read maps one citation object.
func (m *CiteMap) Read(raw []byte, r *jsonx.Reader) (convo.Citation, bool) {
	var c convo.Citation
	ms, err := ReadMembers(raw, m.Provider, r)
	if err != nil {
		return c, false
	}
	typ, err := Str(ms.Value("type"))
	sh := m.shape(typ)
	if err != nil || sh == nil {
		return c, false
	}
	c.Kind, c.Unit = sh.Kind, sh.Unit
	var set uint32
	var left Members
	for _, mb := range ms {
		if mb.Key == "type" {
			continue
		}
		f := fieldOf(sh, mb.Key)
		if f == 0 || set&(1<<f) != 0 || !setCite(&c, f, mb.Val, r) {
			left = append(left, mb)
			continue
		}
		set |= 1 << f
	}
	for _, k := range sh.Keys {
		if k.Field >= CiteSource && k.Field <= CiteEnd && set&(1<<k.Field) == 0 {
			return c, false // a required number is missing: kept as it was
		}
	}
	if c.Span != nil && set&(1<<CiteAt) == 0 && set&(1<<CiteSpanStart|1<<CiteSpanEnd) != 1<<CiteSpanStart|1<<CiteSpanEnd {
		return c, false // half a span (xAI leaves both out; nobody one)
	}
	if m.Infer(&c) != typ {
		left = append(Members{{Key: "type", Val: ms.Value("type")}}, left...)
	}
	c.Native = left.Native(m.Provider)
	return c, true
}

func fieldOf(sh *CiteShape, key string) CiteField {
	for _, k := range sh.Keys {
		if k.Key == key {
			return k.Field
		}
	}
	return 0
}

// setCite sets field f of c from the wire value v; false when v is not
// what the field holds (a null, an empty string, a negative number), and
// the member is kept native.
func setCite(c *convo.Citation, f CiteField, v []byte, r *jsonx.Reader) bool {
	if f < CiteSource {
		s, err := Str(v)
		if err != nil || s == "" || v[0] != '"' {
			return false
		}
		*[...]*string{CiteText: &c.Text, CiteURL: &c.URL, CiteTitle: &c.Title, CiteFileID: &c.FileID}[f] = s
		return true
	}
	r.Reset(v, 1)
	n, err := r.ReadInt()
	if err != nil || n < 0 || r.ExpectEnd() != nil || bytes.ContainsAny(v, ".eE") {
		return false
	}
	if c.Span == nil && f >= CiteSpanStart {
		c.Span = &convo.Span{}
	}
	switch f {
	case CiteSource:
		c.Source = int(n)
	case CiteStart:
		c.Start = int(n)
	case CiteEnd:
		c.End = int(n)
	case CiteSpanStart:
		c.Span.Start = int(n)
	case CiteSpanEnd:
		c.Span.End = int(n)
	case CiteAt:
		c.Span.Start, c.Span.End = int(n), int(n)
	}
	return true
}

// Append writes c as the provider's citation object; ok is false when the
// provider has no form for it (the caller drops it with a warning).
func (m *CiteMap) Append(dst []byte, c *convo.Citation, r *jsonx.Reader) ([]byte, bool) {
	ms, err := ReadNative(c.Native, m.Provider, r)
	if err != nil {
		return dst, false
	}
	typ := m.Infer(c)
	if v := ms.Value("type"); v != nil {
		typ, _ = Str(v)
	}
	sh := m.shape(typ)
	if sh == nil || sh.Kind != c.Kind || sh.Unit != c.Unit || !m.fits(sh, c, ms) {
		return dst, false
	}
	o := Obj{Buf: append(dst, '{')}
	o.Str("type", typ)
	for _, k := range sh.Keys {
		if v, ok := citeValue(c, k.Field); ok {
			o.Raw(k.Key, v)
		} else if v, ok := ms.Get(k.Key); ok {
			o.Raw(k.Key, v)
		}
	}
	for _, mb := range ms {
		if mb.Key != "type" && !slices.ContainsFunc(sh.Keys, func(k CiteKey) bool { return k.Key == mb.Key }) {
			o.Raw(mb.Key, mb.Val)
		}
	}
	return o.Close(), true
}

// fits reports whether c has every member sh requires.
func (m *CiteMap) fits(sh *CiteShape, c *convo.Citation, ms Members) bool {
	for _, k := range sh.Need {
		if _, ok := ms.Get(k); !ok {
			if _, ok := citeValue(c, fieldOf(sh, k)); !ok {
				return false
			}
		}
	}
	return true
}

// citeValue returns field f of c as JSON, and whether c has it.
func citeValue(c *convo.Citation, f CiteField) ([]byte, bool) {
	if f == 0 {
		return nil, false
	}
	str := func(s string) ([]byte, bool) {
		if s == "" {
			return nil, false
		}
		return jsonx.AppendString(nil, s), true
	}
	num := func(n int, ok bool) ([]byte, bool) { return jsonx.AppendInt(nil, int64(n)), ok }
	switch f {
	case CiteText:
		return str(c.Text)
	case CiteURL:
		return str(c.URL)
	case CiteTitle:
		return str(c.Title)
	case CiteFileID:
		return str(c.FileID)
	case CiteSource:
		return num(c.Source, c.Kind == convo.CiteDocument)
	case CiteStart:
		return num(c.Start, c.Unit != "")
	case CiteEnd:
		return num(c.End, c.Unit != "")
	}
	if c.Span == nil {
		return nil, false
	}
	switch f {
	case CiteSpanStart, CiteAt:
		return num(c.Span.Start, true)
	case CiteSpanEnd:
		return num(c.Span.End, true)
	}
	return nil, false
}

// AppendArray writes cs as a JSON array of the provider's citation
// objects, leaving out (and reporting through drop, when not nil) each one
// the provider has no form for; n is how many it wrote.
func (m *CiteMap) AppendArray(dst []byte, cs []convo.Citation, r *jsonx.Reader, drop func(i int, c *convo.Citation)) (out []byte, n int) {
	dst = append(dst, '[')
	for i := range cs {
		mark := len(dst)
		if n > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, ok = m.Append(dst, &cs[i], r); !ok {
			dst = dst[:mark]
			if drop != nil {
				drop(i, &cs[i])
			}
			continue
		}
		n++
	}
	return append(dst, ']'), n
}
