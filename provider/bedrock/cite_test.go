package bedrock

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestCitationsByteEqual: the citations of a citationsContent block are
// canonical citations and go back byte for byte; a citation convo cannot
// write back exactly (a web domain) keeps the block's array native.
func TestCitationsByteEqual(t *testing.T) {
	body := codectest.ReadFile(t, "testdata/requests/full.json")
	h, _, err := Converse().Decode(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range h {
		for _, p := range m.Parts {
			n += len(p.Citations)
		}
	}
	if n == 0 {
		t.Fatal("no citations read")
	}
	out, _, err := Converse().Encode(h, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	if err := json.Compact(&c, body); err != nil {
		t.Fatal(err)
	}
	want := c.Bytes()[bytes.Index(c.Bytes(), []byte(`"citations":[`)):]
	want = want[:bytes.Index(want, []byte(`}}}]`))+4]
	if !bytes.Contains(out, want) {
		t.Errorf("citations not written back byte for byte:\n%s\nwant %s", out, want)
	}

	web := `{"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[{"citationsContent":{"content":[{"text":"a"}],` +
		`"citations":[{"title":"T","location":{"web":{"url":"https://example.com","domain":"example.com"}}}]}}]}]}`
	h, _, err = Converse().Decode([]byte(web), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p := h[1].Parts[0]; p.Citations != nil || !bytes.Contains(p.Native[ProviderID], []byte("domain")) {
		t.Errorf("a citation with a domain: %+v", p)
	}
}

// TestCitationsToBedrock: document and web citations from another
// provider become a citationsContent block; a file citation is dropped
// with citation-dropped.
func TestCitationsToBedrock(t *testing.T) {
	p := convo.Text("Grass is green.")
	p.Citations = []convo.Citation{
		{Kind: convo.CiteDocument, Source: 1, Title: "doc", Unit: convo.UnitChar, Start: 0, End: 5, Text: "green"},
		{Kind: convo.CiteURL, URL: "https://example.com", Title: "Ex"},
		{Kind: convo.CiteFile, FileID: "file-1"},
	}
	out, warns, err := Converse().Encode(convo.History{convo.User("q"), convo.Assistant("", p)}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"citationsContent":{"content":[{"text":"Grass is green."}],"citations":[{"title":"doc","sourceContent":[{"text":"green"}],` +
		`"location":{"documentChar":{"documentIndex":1,"start":0,"end":5}}},{"title":"Ex","location":{"web":{"url":"https://example.com"}}}]}}`
	if !bytes.Contains(out, []byte(want)) {
		t.Errorf("got %s\nwant %s", out, want)
	}
	if len(warns) != 1 || warns[0].Code != provider.CodeCitationDropped {
		t.Errorf("warnings %v", warns)
	}
}
