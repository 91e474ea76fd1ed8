package bedrock

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
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

	// A web citation with a domain maps when its location's members come
	// in the order Bedrock writes them (domain, url); in another order it
	// would not go back byte for byte, so the array stays native.
	for _, tc := range []struct {
		loc    string
		mapped bool
	}{{`{"domain":"example.com","url":"https://example.com"}`, true}, {`{"url":"https://example.com","domain":"example.com"}`, false}} {
		block := `{"citationsContent":{"content":[{"text":"a"}],"citations":[{"title":"T","location":{"web":` + tc.loc + `}}]}}`
		web := `{"messages":[{"role":"user","content":[{"text":"q"}]},{"role":"assistant","content":[` + block + `]}]}`
		h, _, err = Converse().Decode([]byte(web), provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p := h[1].Parts[0]
		if tc.mapped {
			want := convo.Citation{Kind: convo.CiteURL, URL: "https://example.com", Title: "T",
				Native: convo.Native{ProviderID: json.RawMessage(`{"domain":"example.com"}`)}}
			if len(p.Citations) != 1 || !p.Citations[0].Equal(want) {
				t.Errorf("a citation with a domain: %+v", p.Citations)
			}
		} else if p.Citations != nil || !bytes.Contains(p.Native[ProviderID], []byte("domain")) {
			t.Errorf("a domain after the url: %+v", p)
		}
		out, _, err := Converse().Encode(h, provider.Options{})
		if err != nil || !bytes.Contains(out, []byte(block)) {
			t.Errorf("written back as %s (%v)\nwant %s", out, err, block)
		}
	}
}

// TestNovaWebCitations: Nova's web grounding answers (a body and a stream,
// both recorded) end in blocks of web citations alone, with a domain and
// no title. Each becomes an empty text part of its own, after the text it
// follows, holding url citations (the domain in their native member); sent
// back in a request, each block is the recorded one byte for byte (for the
// stream, the citation deltas of its block in one array), and reads back as
// the same parts.
func TestNovaWebCitations(t *testing.T) {
	body := codectest.ReadFile(t, "testdata/recorded/rubyllm-nova-grounding.json")
	m, _, err := Converse().DecodeReply(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, b := range bytes.Split(body, []byte(`{"citationsContent":`))[1:] {
		want = append(want, `{"citationsContent":`+string(b[:bytes.Index(b, []byte("]}}"))+3]))
	}
	novaCitesBack(t, "body", m, want)

	stream := codectest.ReadFile(t, "testdata/recorded/rubyllm-nova-grounding.eventstream")
	m, _, err = Converse().ReadStream(bytes.NewReader(stream), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[int][]string{}
	var order []int
	for _, ev := range bytes.Split(stream, []byte(`{"contentBlockIndex":`))[1:] {
		i := bytes.IndexByte(ev, ',')
		rest, ok := bytes.CutPrefix(ev[i:], []byte(`,"delta":{"citation":`))
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(string(ev[:i]))
		if blocks[n] == nil {
			order = append(order, n)
		}
		blocks[n] = append(blocks[n], string(rest[:bytes.Index(rest, []byte(`}},"p":`))+1]))
	}
	want = nil
	for _, n := range order {
		want = append(want, `{"citationsContent":{"citations":[`+strings.Join(blocks[n], ",")+`]}}`)
	}
	novaCitesBack(t, "stream", m, want)
}

// novaCitesBack checks m's citation parts against the recorded
// citationsContent blocks want.
func novaCitesBack(t *testing.T, what string, m convo.Message, want []string) {
	t.Helper()
	var cited []convo.Part
	for i, p := range m.Parts {
		if p.Citations == nil {
			continue
		}
		cited = append(cited, p)
		if p.Type != convo.TypeText || p.Text != "" || i == 0 || m.Parts[i-1].Type != convo.TypeText {
			t.Errorf("%s: part %d: %+v", what, i, p)
		}
		for _, c := range p.Citations {
			if c.Kind != convo.CiteURL || c.URL == "" || c.Title != "" || nativeString(c.Native, "domain") == "" {
				t.Errorf("%s: part %d: citation %+v", what, i, c)
			}
		}
	}
	if len(want) < 2 || len(cited) != len(want) {
		t.Fatalf("%s: %d parts with citations, %d recorded blocks", what, len(cited), len(want))
	}
	req, _, err := Converse().Encode(convo.History{convo.User("q"), m}, provider.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	at := 0
	for _, w := range want {
		i := bytes.Index(req[at:], []byte(w))
		if i < 0 {
			t.Fatalf("%s: block not written back byte for byte: %s\nin %s", what, w, req)
		}
		at += i + len(w)
	}
	if n := bytes.Count(req, []byte(`"citationsContent"`)); n != len(want) {
		t.Errorf("%s: %d citationsContent blocks sent, want %d", what, n, len(want))
	}
	back, _, err := Converse().Decode(req, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(back[1].Parts, m.Parts, convo.Part.Equal) {
		t.Errorf("%s: read back from the request:\n%+v\nwant\n%+v", what, back[1].Parts, m.Parts)
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
