package anthropic

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// citationArrays returns the compact "citations" arrays of the text
// blocks in the content arrays of body's messages (a request) or of body
// itself (a response), in order; empty arrays and nulls are skipped.
func citationArrays(t *testing.T, body []byte) []string {
	t.Helper()
	var doc struct {
		Content  []map[string]json.RawMessage
		Messages []struct{ Content json.RawMessage }
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	blocks := doc.Content
	for _, m := range doc.Messages {
		var bs []map[string]json.RawMessage
		_ = json.Unmarshal(m.Content, &bs)
		blocks = append(blocks, bs...)
	}
	var out []string
	for _, b := range blocks {
		c := b["citations"]
		if len(c) == 0 || c[0] != '[' || string(c) == "[]" {
			continue
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, c); err != nil {
			t.Fatal(err)
		}
		out = append(out, buf.String())
	}
	return out
}

// TestCitationsByteEqual: citations Anthropic wrote — the recorded web
// search reply and a request with every location type — come back byte
// for byte from Encode and EncodeReply, and every kind it knows is a
// canonical citation, not a native member.
func TestCitationsByteEqual(t *testing.T) {
	rec := codectest.ReadFile(t, "testdata/recorded/vercel-anthropic-web-search-tool.1.json")
	m, _, err := Messages().DecodeReply(rec, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := citationArrays(t, rec)
	if len(want) < 3 {
		t.Fatalf("only %d cited blocks in the recording", len(want))
	}
	n := 0
	for _, p := range m.Parts {
		n += len(p.Citations)
		if p.Native[ProviderID] != nil && bytes.Contains(p.Native[ProviderID], []byte("citations")) {
			t.Errorf("citations left native: %s", p.Native[ProviderID])
		}
	}
	if n < 3 {
		t.Errorf("%d canonical citations read", n)
	}
	check := func(what string, got []string, want []string) {
		t.Helper()
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: citations differ\n got %q\nwant %q", what, got, want)
		}
	}
	check("reply", citationArrays(t, EncodeReply(m, provider.StreamOptions{})), want)
	req, _, err := Messages().Encode(convo.History{convo.User("q"), m}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	check("request", citationArrays(t, req), want)

	body := codectest.ReadFile(t, "testdata/roundtrip/citations.json")
	h, _, err := Messages().Decode(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[convo.CitationKind]int{}
	for _, p := range h[1].Parts {
		for _, c := range p.Citations {
			kinds[c.Kind]++
		}
	}
	// The future location type keeps its block's array native.
	if kinds[convo.CiteDocument] != 5 || kinds[convo.CiteURL] != 0 {
		t.Errorf("kinds read: %v", kinds)
	}
	out, _, err := Messages().Encode(h, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	check("request with every location", citationArrays(t, out), citationArrays(t, body))
}

// TestCitationsToAnthropic: citations from another provider go to
// Anthropic when it has a form for them, and are left out with a
// citation-dropped warning when it has none.
func TestCitationsToAnthropic(t *testing.T) {
	p := convo.Text("Grass is green.")
	p.Citations = []convo.Citation{
		{Kind: convo.CiteDocument, Source: 0, Title: "doc", Unit: convo.UnitPage, Start: 1, End: 2, Text: "green"},
		{Kind: convo.CiteURL, URL: "https://example.com", Title: "Example", Span: &convo.Span{Start: 0, End: 5}},
		{Kind: convo.CiteFile, FileID: "file-1"},
	}
	out, warns, err := Messages().Encode(convo.History{convo.User("q"), convo.Assistant("", p)}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := citationArrays(t, out)
	want := `[{"type":"page_location","cited_text":"green","document_index":0,"document_title":"doc","start_page_number":1,"end_page_number":2}]`
	if len(got) != 1 || got[0] != want {
		t.Errorf("got %q, want %s", got, want)
	}
	var codes []string
	for _, w := range warns {
		codes = append(codes, string(w.Code)+" "+w.Path)
	}
	if strings.Join(codes, ",") != "citation-dropped messages[1].parts[0].citations[1],citation-dropped messages[1].parts[0].citations[2]" {
		t.Errorf("warnings: %v", warns)
	}
}
