package bedrock

import (
	"bytes"
	"encoding/json"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider/internal/wire"
)

// Bedrock citation locations that map to a document range, and their unit.
var locUnits = []struct{ loc, unit string }{
	{"documentChar", convo.UnitChar}, {"documentPage", convo.UnitPage}, {"documentChunk", convo.UnitBlock},
}

// bedrockCite is a Converse citation as the SDKs write it.
type bedrockCite struct {
	Title         *string `json:"title"`
	SourceContent []struct {
		Text *string `json:"text"`
	} `json:"sourceContent"`
	Location map[string]struct {
		DocumentIndex *int    `json:"documentIndex"`
		Start         *int    `json:"start"`
		End           *int    `json:"end"`
		URL           *string `json:"url"`
		Domain        *string `json:"domain"`
	} `json:"location"`
}

// readCite maps one Converse citation. It maps only what it writes back
// byte for byte (appendCite of the result must equal the compact input):
// anything else (an empty title, several source passages, a search result
// location, a web location with its members in another order) leaves the
// citation array native. A web location's domain (Nova's web grounding
// sends one, and no title) has no canonical field: it is kept in the
// citation's Native as {"domain":…}.
func readCite(raw []byte) (convo.Citation, bool) {
	var w bedrockCite
	var c convo.Citation
	if json.Unmarshal(raw, &w) != nil || len(w.SourceContent) > 1 || len(w.Location) != 1 {
		return c, false
	}
	if w.Title != nil {
		c.Title = *w.Title
	}
	if len(w.SourceContent) == 1 && w.SourceContent[0].Text != nil {
		c.Text = *w.SourceContent[0].Text
	}
	for loc, v := range w.Location {
		switch {
		case loc == "web" && v.URL != nil:
			c.Kind, c.URL = convo.CiteURL, *v.URL
			if v.Domain != nil {
				obj := append(jsonx.AppendString([]byte(`{"domain":`), *v.Domain), '}')
				c.Native = convo.Native{ProviderID: obj}
			}
		case v.DocumentIndex != nil && v.Start != nil && v.End != nil:
			for _, lu := range locUnits {
				if lu.loc == loc {
					c.Kind, c.Unit = convo.CiteDocument, lu.unit
				}
			}
			c.Source, c.Start, c.End = *v.DocumentIndex, *v.Start, *v.End
		}
	}
	var compact bytes.Buffer
	if c.Kind == "" || json.Compact(&compact, raw) != nil {
		return c, false
	}
	out, ok := appendCite(nil, &c)
	return c, ok && bytes.Equal(out, compact.Bytes())
}

// appendCite writes c as a Converse citation; false when Converse has no
// form for it (a file citation, a document one without a range). An empty
// title is left out, as Nova leaves it out; a web citation's domain kept
// in Native goes before its url, in the order Bedrock writes them.
func appendCite(dst []byte, c *convo.Citation) ([]byte, bool) {
	loc := ""
	switch c.Kind {
	case convo.CiteURL:
		loc = "web"
	case convo.CiteDocument:
		for _, lu := range locUnits {
			if lu.unit == c.Unit {
				loc = lu.loc
			}
		}
	}
	if loc == "" {
		return dst, false
	}
	dst = append(dst, '{')
	if c.Title != "" {
		dst = jsonx.AppendString(append(dst, `"title":`...), c.Title)
	}
	if c.Text != "" {
		dst = jsonx.AppendString(append(comma(dst), `"sourceContent":[{"text":`...), c.Text)
		dst = append(dst, "}]"...)
	}
	dst = append(append(append(comma(dst), `"location":{"`...), loc...), `":{`...)
	if loc == "web" {
		if d := nativeString(c.Native, "domain"); d != "" {
			dst = append(jsonx.AppendString(append(dst, `"domain":`...), d), ',')
		}
		dst = jsonx.AppendString(append(dst, `"url":`...), c.URL)
	} else {
		dst = jsonx.AppendInt(append(dst, `"documentIndex":`...), int64(c.Source))
		dst = jsonx.AppendInt(append(dst, `,"start":`...), int64(c.Start))
		dst = jsonx.AppendInt(append(dst, `,"end":`...), int64(c.End))
	}
	return append(dst, "}}}"...), true
}

// liftCites moves the citations of a text part's kept citationsContent
// block into Citations when every one of them maps; otherwise they stay.
func liftCites(p *convo.Part) {
	cc := nativeRaw(p.Native, "citationsContent")
	if cc == nil {
		return
	}
	var r jsonx.Reader
	ms, err := wire.ReadMembers(cc, ProviderID, &r)
	if err != nil {
		return
	}
	arr := ms.Value("citations")
	var objs []json.RawMessage
	if json.Unmarshal(arr, &objs) != nil || len(objs) == 0 {
		return
	}
	cs := make([]convo.Citation, 0, len(objs))
	for _, o := range objs {
		c, ok := readCite(o)
		if !ok {
			return
		}
		cs = append(cs, c)
	}
	var left wire.Members
	for _, m := range ms {
		if m.Key != "citations" {
			left = append(left, m)
		}
	}
	obj := left.Object()
	if obj == nil {
		obj = []byte("{}")
	}
	p.Citations = cs
	n := convo.Native{}
	for k, v := range p.Native {
		n[k] = v
	}
	p.Native = withNative(n, wire.Members{{Key: "citationsContent", Val: obj}}.Object())
}

// citesArray writes the citations of p Converse has a form for as a JSON
// array (nil when none has), reporting each other one through drop.
func citesArray(cs []convo.Citation, drop func(i int, c *convo.Citation)) []byte {
	var out []byte
	for i := range cs {
		mark := len(out)
		if len(out) > 0 {
			out = append(out, ',')
		} else {
			out = append(out, '[')
		}
		var ok bool
		if out, ok = appendCite(out, &cs[i]); !ok {
			out = out[:mark]
			drop(i, &cs[i])
		}
	}
	if len(out) == 0 {
		return nil
	}
	return append(out, ']')
}
