package openai

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// annotationArrays returns the compact non-empty "annotations" arrays found
// anywhere in body, in order.
func annotationArrays(t *testing.T, body []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if a, ok := v["annotations"].([]any); ok && len(a) > 0 {
				b, _ := json.Marshal(a)
				out = append(out, string(b))
			}
			for k, x := range v {
				if k != "annotations" {
					walk(x)
				}
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}

// compactOrder re-encodes JSON arrays keeping member order, so byte
// comparisons see the order the writer used.
func compactOrder(t *testing.T, body []byte, key string) []string {
	t.Helper()
	var c bytes.Buffer
	if err := json.Compact(&c, body); err != nil {
		t.Fatal(err)
	}
	var out []string
	for rest := c.Bytes(); ; {
		i := bytes.Index(rest, []byte(`"`+key+`":[`))
		if i < 0 {
			return out
		}
		rest = rest[i+len(key)+3:]
		var raw json.RawMessage
		if err := json.NewDecoder(bytes.NewReader(rest)).Decode(&raw); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		_ = json.Compact(&buf, raw)
		if buf.String() != "[]" {
			out = append(out, buf.String())
		}
	}
}

// TestAnnotationsByteEqual: the annotations of a recorded Responses reply
// become canonical citations and come back byte for byte from
// EncodeResponsesReply and from a request's output_text; the stream
// encoder's annotation.added events read back to the same citations.
func TestAnnotationsByteEqual(t *testing.T) {
	rec := codectest.ReadFile(t, "testdata/recorded/responses/vercel-openai-web-search-tool.1.json")
	m, _, err := Responses().DecodeReply(rec, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := compactOrder(t, rec, "annotations")
	if len(want) == 0 || len(annotationArrays(t, rec)) != len(want) {
		t.Fatalf("no annotations in the recording")
	}
	n := 0
	for _, p := range m.Parts {
		n += len(p.Citations)
		if bytes.Contains(p.Native[ProviderID], []byte("annotations")) {
			t.Errorf("annotations left native: %s", p.Native[ProviderID])
		}
	}
	if n < 5 {
		t.Fatalf("%d citations read", n)
	}
	reply := EncodeResponsesReply(m, provider.StreamOptions{})
	if got := compactOrder(t, reply, "annotations"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("reply annotations differ\n got %q\nwant %q", got, want)
	}
	req, _, err := Responses().Encode(convo.History{convo.User("q"), m}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := compactOrder(t, req, "annotations"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("request annotations differ\n got %q\nwant %q", got, want)
	}
	var sse bytes.Buffer
	codectest.WriteDeltas(t, NewResponsesStreamEncoder(&sse, provider.StreamOptions{}), m)
	if c := bytes.Count(sse.Bytes(), []byte("event: response.output_text.annotation.added")); c != n {
		t.Errorf("%d annotation.added events, want %d", c, n)
	}
	back, _, err := Responses().ReadStream(&sse, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got, wantC []convo.Citation
	for _, p := range back.Parts {
		got = append(got, p.Citations...)
	}
	for _, p := range m.Parts {
		wantC = append(wantC, p.Citations...)
	}
	if len(got) != len(wantC) {
		t.Fatalf("streamed back %d citations, want %d", len(got), len(wantC))
	}
	for i := range got {
		if !got[i].Equal(wantC[i]) {
			t.Errorf("citation %d: %+v, want %+v", i, got[i], wantC[i])
		}
	}
}

// TestCitationsToOpenAI: Responses takes url and file citations, leaves
// out document ones with citation-dropped; Chat requests take none.
func TestCitationsToOpenAI(t *testing.T) {
	p := convo.Text("Grass is green.")
	p.Citations = []convo.Citation{
		{Kind: convo.CiteURL, URL: "https://example.com", Title: "Ex", Span: &convo.Span{Start: 0, End: 5}},
		{Kind: convo.CiteDocument, Unit: convo.UnitChar, Start: 0, End: 3},
		{Kind: convo.CiteFile, FileID: "file-1", Title: "a.pdf", Span: &convo.Span{Start: 15, End: 15}},
	}
	h := convo.History{convo.User("q"), convo.Assistant("", p)}
	out, warns, err := Responses().Encode(h, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"type":"url_citation","end_index":5,"start_index":0,"title":"Ex","url":"https://example.com"},{"type":"file_citation","file_id":"file-1","filename":"a.pdf","index":15}]`
	if got := compactOrder(t, out, "annotations"); len(got) != 1 || got[0] != want {
		t.Errorf("got %q\nwant %s", got, want)
	}
	if len(warns) != 1 || warns[0].Code != provider.CodeCitationDropped || !strings.HasSuffix(warns[0].Path, "citations[1]") {
		t.Errorf("warnings %v", warns)
	}
	out, warns, err = Chat().Encode(h, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("annotations")) || len(warns) != 1 || warns[0].Code != provider.CodeCitationDropped {
		t.Errorf("chat: %s %v", out, warns)
	}
}
