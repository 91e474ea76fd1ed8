package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// candidateMembers returns the members of the first candidate of a
// generateContent body named keys, as one object.
func candidateMembers(t *testing.T, body []byte, keys ...string) []byte {
	t.Helper()
	var resp struct {
		Candidates []json.RawMessage `json:"candidates"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || len(resp.Candidates) == 0 {
		t.Fatalf("no candidate (%v) in %s", err, body)
	}
	return codectest.Members(t, resp.Candidates[0], keys...)
}

func citationCount(m convo.Message) int {
	n := 0
	for _, p := range m.Parts {
		n += len(p.Citations)
	}
	return n
}

// TestGroundingReplyRoundTrip: a reply's groundingMetadata and
// citationMetadata — a recorded Google Search grounding, the hand-made
// shapes of testdata/grounding, recitation sources — are read into
// citations on the text parts, leave only what citations cannot hold in
// the message's native, and come back from EncodeReply as the same JSON.
func TestGroundingReplyRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		file  string
		cites int
	}{
		{"testdata/recorded/pydantic-web-search.json", 6},
		{"testdata/grounding/shapes.json", 5},
		{"testdata/replies/recitation.json", 1},
		{"testdata/replies/media.json", 1},
	} {
		t.Run(tc.file, func(t *testing.T) {
			body := codectest.ReadFile(t, tc.file)
			m, _, err := GenerateContent().DecodeReply(body, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if n := citationCount(m); n != tc.cites {
				t.Errorf("%d citations, want %d", n, tc.cites)
			}
			for _, key := range []string{"groundingSupports", "citationSources", `"citations"`} {
				if bytes.Contains(m.Native[ProviderID], []byte(key)) {
					t.Errorf("%s left in the message's native: %s", key, m.Native[ProviderID])
				}
			}
			out := EncodeReply(m, provider.StreamOptions{})
			keys := []string{"groundingMetadata", "citationMetadata"}
			codectest.ExpectSameJSON(t, candidateMembers(t, out, keys...), candidateMembers(t, body, keys...))
			back, _, err := GenerateContent().DecodeReply(out, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := textCitations(back), textCitations(m); got != want {
				t.Errorf("read back:\n got %s\nwant %s", got, want)
			}
		})
	}
}

// textCitations lists the text parts and their citations as canonical
// JSON, one a line.
func textCitations(m convo.Message) string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == convo.TypeText && len(p.Citations) > 0 {
			q := convo.Text(p.Text)
			q.Citations = p.Citations
			out, _ := convo.AppendMessage(nil, convo.Assistant("", q))
			b.Write(out)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestGroundingShapes checks the citations read from testdata/grounding:
// each kind of chunk, a support citing two chunks with their scores, a
// segment in the second text part after a thought, a segment whose text
// differs from the part's, a chunk no support cites, Vertex's
// citationMetadata.citations.
func TestGroundingShapes(t *testing.T) {
	m, _, err := GenerateContent().DecodeReply(codectest.ReadFile(t, "testdata/grounding/shapes.json"), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"role":"assistant","parts":[{"type":"text","text":"Café Zoé is in Paris. ","citations":[` +
		`{"kind":"file","url":"gs://bucket/guide.pdf","title":"guide.pdf","file_id":"fileSearchStores/s/documents/d1","text":"Café Zoé, Paris","span":[0,23],"native":{"gemini":{"support":0,"chunk":2,"confidenceScore":0.91,"retrievedContext":{"pageNumber":3},"segment":{"startIndex":0}}}},` +
		`{"kind":"url","url":"https://example.com/zoe","title":"example.com","span":[0,23],"native":{"gemini":{"support":0,"chunk":0,"confidenceScore":0.5,"web":{"domain":"example.com"}}}}]}]}
{"role":"assistant","parts":[{"type":"text","text":"It opens at 8. The map agrees.","citations":[` +
		`{"kind":"url","url":"https://maps.google.com/?cid=1","title":"Café Zoé","text":"Opens 8:00","span":[0,14],"native":{"gemini":{"support":1,"chunk":1,"confidenceScore":0.8,"maps":{"placeId":"places/abc"},"groundingSupport":{"renderedParts":[0]}}}},` +
		`{"kind":"url","url":"https://maps.google.com/?cid=1","title":"Café Zoé","text":"Opens 8:00","span":[15,30],"native":{"gemini":{"support":2,"chunk":1,"maps":{"placeId":"places/abc"},"segment":{"text":"The map agrees (edited)."}}}},` +
		`{"kind":"url","url":"https://example.org/hours","title":"Hours","span":[0,14],"native":{"gemini":{"citations":{"license":"CC-BY","publicationDate":{"year":2024,"month":5,"day":1}}}}}]}]}
`
	if got := textCitations(m); got != want {
		t.Errorf("citations\n got %s\nwant %s", got, want)
	}
	gm := nativeMember(m.Native, "groundingMetadata")
	if !bytes.Contains(gm, []byte(`"groundingChunks"`)) || !bytes.Contains(gm, []byte(`"webSearchQueries"`)) || bytes.Contains(gm, []byte(`"groundingSupports"`)) {
		t.Errorf("native groundingMetadata: %s", gm)
	}
}

// TestGroundingKeptWhole: metadata convo cannot map whole stays in the
// message's native as it came, and no part gets citations from it.
func TestGroundingKeptWhole(t *testing.T) {
	for name, md := range map[string]string{
		"segment in a thought": `"groundingMetadata":{"groundingChunks":[{"web":{"uri":"u"}}],"groundingSupports":[{"segment":{"endIndex":2},"groundingChunkIndices":[0]}]}`,
		"past the text":        `"groundingMetadata":{"groundingChunks":[{"web":{"uri":"u"}}],"groundingSupports":[{"segment":{"partIndex":1,"endIndex":99},"groundingChunkIndices":[0]}]}`,
		"unknown chunk":        `"groundingMetadata":{"groundingChunks":[{"video":{"uri":"u"}}],"groundingSupports":[{"segment":{"partIndex":1,"endIndex":2},"groundingChunkIndices":[0]}]}`,
		"no such chunk":        `"groundingMetadata":{"groundingChunks":[{"web":{"uri":"u"}}],"groundingSupports":[{"segment":{"partIndex":1,"endIndex":2},"groundingChunkIndices":[1]}]}`,
		"scores mismatch":      `"groundingMetadata":{"groundingChunks":[{"web":{"uri":"u"}}],"groundingSupports":[{"segment":{"partIndex":1,"endIndex":2},"groundingChunkIndices":[0],"confidenceScores":[0.1,0.2]}]}`,
		"no chunk indices":     `"groundingMetadata":{"groundingChunks":[{"web":{"uri":"u"}}],"groundingSupports":[{"segment":{"partIndex":1,"endIndex":2}}]}`,
		"fractional index":     `"groundingMetadata":{"groundingChunks":[{"web":{"uri":"u"}}],"groundingSupports":[{"segment":{"partIndex":1,"endIndex":2.5},"groundingChunkIndices":[0]}]}`,
		"source past the text": `"citationMetadata":{"citationSources":[{"startIndex":1,"endIndex":40,"uri":"u"}]}`,
		"empty lists":          `"groundingMetadata":{"groundingChunks":[],"groundingSupports":[],"webSearchQueries":["q"]}`,
		"chunks, no supports":  `"groundingMetadata":{"groundingChunks":[{"web":{"uri":"u"}}]}`,
		"no sources":           `"citationMetadata":{"citationSources":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			body := `{"candidates":[{"content":{"role":"model","parts":[{"text":"hm","thought":true},{"text":"Yes."}]},"finishReason":"STOP",` + md + `}]}`
			m, _, err := GenerateContent().DecodeReply([]byte(body), provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if n := citationCount(m); n != 0 {
				t.Errorf("%d citations made", n)
			}
			var key string
			_ = json.Unmarshal([]byte(md[:strings.IndexByte(md, ':')]), &key)
			codectest.ExpectSameJSON(t, nativeMember(m.Native, key), []byte(md[len(key)+3:]))
			out := EncodeReply(m, provider.StreamOptions{})
			codectest.ExpectSameJSON(t, candidateMembers(t, out, key), candidateMembers(t, []byte(body), key))
		})
	}
}

// TestGroundingFromOtherProviders: citations another provider wrote go
// into a Gemini reply as grounding chunks (equal ones shared) and one
// support per part and span; a citation without a span supports its whole
// part.
func TestGroundingFromOtherProviders(t *testing.T) {
	p := convo.Text("Grass is green. Sky is blue.")
	p.Citations = []convo.Citation{
		{Kind: convo.CiteURL, URL: "https://a.example", Title: "A", Span: &convo.Span{Start: 0, End: 15}},
		{Kind: convo.CiteURL, URL: "https://b.example", Title: "B", Span: &convo.Span{Start: 0, End: 15}},
		{Kind: convo.CiteURL, URL: "https://a.example", Title: "A", Span: &convo.Span{Start: 16, End: 28}},
		{Kind: convo.CiteDocument, Title: "colours.txt", Source: 0, Unit: convo.UnitChar, Start: 0, End: 20, Text: "The grass is green."},
	}
	m := convo.Assistant("", convo.Text("First."), p)
	out := EncodeReply(m, provider.StreamOptions{})
	want := `{"groundingMetadata":{"groundingChunks":[{"web":{"uri":"https://a.example","title":"A"}},{"web":{"uri":"https://b.example","title":"B"}},{"retrievedContext":{"title":"colours.txt","text":"The grass is green."}}],` +
		`"groundingSupports":[{"segment":{"partIndex":1,"endIndex":15,"text":"Grass is green."},"groundingChunkIndices":[0,1]},` +
		`{"segment":{"partIndex":1,"startIndex":16,"endIndex":28,"text":"Sky is blue."},"groundingChunkIndices":[0]},` +
		`{"segment":{"partIndex":1,"endIndex":28,"text":"Grass is green. Sky is blue."},"groundingChunkIndices":[2]}]}}`
	codectest.ExpectSameJSON(t, candidateMembers(t, out, "groundingMetadata"), []byte(want))
	back, _, err := GenerateContent().DecodeReply(out, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := back.Parts[1].Citations
	if len(got) != 4 || got[0].URL != "https://a.example" || *got[2].Span != (convo.Span{Start: 16, End: 28}) ||
		got[3].Kind != convo.CiteFile || got[3].Text != "The grass is green." || *got[3].Span != (convo.Span{End: 28}) {
		t.Errorf("read back: %+v", got)
	}
}

// TestGroundingStream: the recorded grounded streams give their citations
// on the last chunk; read into deltas and written by the stream encoder,
// they come out on the finish chunk as the same chunks and supports (the
// search entry point and queries, message metadata no delta carries, are
// left out), and read back as the same citations.
func TestGroundingStream(t *testing.T) {
	for _, file := range []string{"testdata/recorded/pydantic-web-search.sse", "testdata/recorded/pydantic-file-search.sse"} {
		t.Run(file, func(t *testing.T) {
			data := codectest.ReadFile(t, file)
			dr := provider.NewDeltaReader(GenerateContent().NewAccumulator(provider.Options{}))
			src := stream.NewSSE(bytes.NewReader(data))
			var ds []provider.Delta
			var last []byte
			for {
				ev, err := src.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				last = ev.Data
				if ds, err = dr.Add(ds, ev); err != nil {
					t.Fatal(err)
				}
			}
			ds, want, _, err := dr.Finish(ds)
			if err != nil || citationCount(want) == 0 {
				t.Fatalf("%v, %d citations", err, citationCount(want))
			}
			var buf bytes.Buffer
			enc := NewStreamEncoder(&buf, provider.StreamOptions{})
			for _, d := range ds {
				if err := enc.Write(d); err != nil {
					t.Fatal(err)
				}
			}
			chunks := codectest.SSEData(buf.Bytes())
			got := candidateMembers(t, chunks[len(chunks)-1], "groundingMetadata")
			var wantMD map[string]map[string]json.RawMessage
			if err := json.Unmarshal(candidateMembers(t, last, "groundingMetadata"), &wantMD); err != nil {
				t.Fatal(err)
			}
			delete(wantMD["groundingMetadata"], "searchEntryPoint")
			delete(wantMD["groundingMetadata"], "webSearchQueries")
			wantJSON, _ := json.Marshal(wantMD)
			codectest.ExpectSameJSON(t, got, wantJSON)
			back, _, err := GenerateContent().ReadStream(bytes.NewReader(buf.Bytes()), provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if g, w := textCitations(back), textCitations(want); g != w {
				t.Errorf("read back:\n got %s\nwant %s", g, w)
			}
		})
	}
}

// TestGroundingStreamJoinedText: two text parts a client accumulating the
// stream joins into one get their segments counted from the start of the
// joined text, and read back onto it.
func TestGroundingStreamJoinedText(t *testing.T) {
	a, b := convo.Text("Héllo. "), convo.Text("World.")
	b.Citations = []convo.Citation{{Kind: convo.CiteURL, URL: "https://w.example", Span: &convo.Span{Start: 0, End: 6}}}
	m := convo.Assistant("", a, b)
	m.Finish = convo.FinishStop
	var buf bytes.Buffer
	codectest.WriteDeltas(t, NewStreamEncoder(&buf, provider.StreamOptions{}), m)
	back, _, err := GenerateContent().ReadStream(bytes.NewReader(buf.Bytes()), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Parts) != 1 || len(back.Parts[0].Citations) != 1 || *back.Parts[0].Citations[0].Span != (convo.Span{Start: 8, End: 14}) {
		t.Errorf("read back %s\n%s", codectest.MessageJSON(t, back), buf.Bytes())
	}
}
