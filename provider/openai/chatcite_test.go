package openai

import (
	"bytes"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// streamAnnotations returns the annotations of every chunk of an SSE
// stream joined into one compact array, members in the order written.
func streamAnnotations(t *testing.T, sse []byte) string {
	t.Helper()
	var elems []string
	for _, d := range codectest.SSEData(sse) {
		if string(d) == "[DONE]" {
			continue
		}
		for _, a := range compactOrder(t, d, "annotations") {
			elems = append(elems, a[1:len(a)-1])
		}
	}
	if len(elems) == 0 {
		return ""
	}
	return "[" + strings.Join(elems, ",") + "]"
}

// citationsOf returns the citations of m's parts, in order.
func citationsOf(m convo.Message) []convo.Citation {
	var cs []convo.Citation
	for _, p := range m.Parts {
		cs = append(cs, p.Citations...)
	}
	return cs
}

func sameCitations(t *testing.T, what string, got, want []convo.Citation) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d citations, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !got[i].Equal(want[i]) {
			t.Errorf("%s: citation %d: %+v, want %+v", what, i, got[i], want[i])
		}
	}
}

// transcode passes a recorded stream through a DeltaReader on the Chat
// accumulator into the Chat stream encoder, as the gateway does.
func transcode(t *testing.T, sse []byte) ([]byte, convo.Message) {
	t.Helper()
	var out bytes.Buffer
	m, _ := codectest.Transcode(t, provider.NewDeltaReader(Chat().NewAccumulator(provider.Options{})), sse, NewChatStreamEncoder(&out, provider.StreamOptions{}))
	return out.Bytes(), m
}

// TestChatAnnotationsByteEqual: the url_citation annotations of a recorded
// OpenRouter stream become the text's canonical citations and come back
// byte for byte from EncodeChatReply, from the Chat stream encoder fed the
// message's deltas, and from the stream passed through a DeltaReader (the
// gateway's path); each reads back to the same citations.
func TestChatAnnotationsByteEqual(t *testing.T) {
	rec := codectest.ReadFile(t, "testdata/recorded/chat/pydantic-openrouter-web-search-annotations.sse")
	want := streamAnnotations(t, rec)
	m, _, err := Chat().ReadStream(bytes.NewReader(rec), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := citationsOf(m)
	if len(cs) != 5 || bytes.Contains(m.Native[ProviderID], []byte("annotations")) {
		t.Fatalf("%d citations, native %s", len(cs), m.Native[ProviderID])
	}
	reply := EncodeChatReply(m, provider.StreamOptions{})
	if got := compactOrder(t, reply, "annotations"); len(got) != 1 || got[0] != want {
		t.Errorf("EncodeChatReply annotations differ\n got %q\nwant %q", got, want)
	}
	back, _, err := Chat().DecodeReply(reply, provider.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	sameCitations(t, "EncodeChatReply", citationsOf(back), cs)

	var sse bytes.Buffer
	codectest.WriteDeltas(t, NewChatStreamEncoder(&sse, provider.StreamOptions{}), m)
	if got := streamAnnotations(t, sse.Bytes()); got != want {
		t.Errorf("stream encoder annotations differ\n got %q\nwant %q", got, want)
	}
	back, _, err = Chat().ReadStream(&sse, provider.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	sameCitations(t, "stream encoder", citationsOf(back), cs)

	out, final := transcode(t, rec)
	sameCitations(t, "DeltaReader", citationsOf(final), cs)
	if got := streamAnnotations(t, out); got != want {
		t.Errorf("transcoded annotations differ\n got %q\nwant %q", got, want)
	}
}

// TestChatAnnotationsBody: a reply body's annotations in OpenAI's member
// order map and come back byte for byte; one that does not map (an
// unknown type, a member beside the nested object) keeps the whole array
// native, as before citations were canonical.
func TestChatAnnotationsBody(t *testing.T) {
	const anns = `[{"type":"url_citation","url_citation":{"end_index":17,"start_index":4,"title":"Grass","url":"https://example.com/g"}},` +
		`{"type":"url_citation","url_citation":{"end_index":24,"start_index":18,"title":"","url":"https://example.com/s"}}]`
	body := `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"The grass is green, sky blue.","refusal":null,"annotations":` + anns + `},"finish_reason":"stop"}]}`
	m, _, err := Chat().DecodeReply([]byte(body), provider.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	cs := citationsOf(m)
	if len(cs) != 2 || cs[0].URL != "https://example.com/g" || cs[0].Title != "Grass" || *cs[0].Span != (convo.Span{Start: 4, End: 17}) || cs[1].Title != "" {
		t.Fatalf("citations %+v", cs)
	}
	if got := compactOrder(t, EncodeChatReply(m, provider.StreamOptions{}), "annotations"); len(got) != 1 || got[0] != anns {
		t.Errorf("got %q\nwant %s", got, anns)
	}
	for _, bad := range []string{
		`[{"type":"url_citation","url_citation":{"url":"https://a"}},{"type":"file","file":{"hash":"h"}}]`,
		`[{"type":"url_citation","text":"【3:0†source】","url_citation":{"url":"https://a"}}]`,
		`[{"url_citation":{"url":"https://a"}}]`,
		`[{"type":"url_citation","url_citation":{"title":"no url"}}]`,
	} {
		b := strings.Replace(body, anns, bad, 1)
		m, _, err := Chat().DecodeReply([]byte(b), provider.Options{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(citationsOf(m)) != 0 || !bytes.Contains(m.Native[ProviderID], []byte(`"annotations":`+bad)) {
			t.Errorf("%s: read as %+v, native %s", bad, citationsOf(m), m.Native[ProviderID])
		}
	}
}

// TestChatAnnotationsFromOthers: citations of several text parts (an
// Anthropic reply's blocks) are written as one annotations array over the
// joined content, spans counted in runes from where each part begins and a
// citation without a span given its part's stretch; citations Chat has no
// form for are left out, the same by EncodeChatReply and the stream
// encoder.
func TestChatAnnotationsFromOthers(t *testing.T) {
	a, b, c := convo.Text("Héllo. "), convo.Text("Paris is big."), convo.Text(" Bye.")
	b.Citations = []convo.Citation{
		{Kind: convo.CiteURL, URL: "https://p.example", Title: "P", Text: "Paris is a big city."},
		{Kind: convo.CiteDocument, Unit: convo.UnitChar, Start: 1, End: 4},
		{Kind: convo.CiteURL, URL: "https://q.example", Span: &convo.Span{Start: 0, End: 5}},
	}
	c.Citations = []convo.Citation{{Kind: convo.CiteFile, FileID: "file-1"}}
	m := convo.Assistant("", a, b, c)
	want := `[{"type":"url_citation","url_citation":{"url":"https://p.example","title":"P","start_index":7,"end_index":20,"content":"Paris is a big city."}},` +
		`{"type":"url_citation","url_citation":{"end_index":12,"start_index":7,"url":"https://q.example"}}]`
	if got := compactOrder(t, EncodeChatReply(m, provider.StreamOptions{}), "annotations"); len(got) != 1 || got[0] != want {
		t.Errorf("EncodeChatReply: got %q\nwant %s", got, want)
	}
	var sse bytes.Buffer
	codectest.WriteDeltas(t, NewChatStreamEncoder(&sse, provider.StreamOptions{}), m)
	if got := streamAnnotations(t, sse.Bytes()); got != want {
		t.Errorf("stream encoder: got %s\nwant %s", got, want)
	}
	back, _, err := Chat().ReadStream(&sse, provider.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if cs := citationsOf(back); len(cs) != 2 || cs[0].Text != "Paris is a big city." || *cs[1].Span != (convo.Span{Start: 7, End: 12}) {
		t.Errorf("read back %+v", cs)
	}
}

// FuzzChatAnnotations: an annotations array either maps (and what Chat
// writes of the citations reads back to them, a citation without a span
// given the stretch it is written with) or does not; nothing panics.
func FuzzChatAnnotations(f *testing.F) {
	f.Add([]byte(`[{"type":"url_citation","url_citation":{"end_index":5,"start_index":0,"title":"T","url":"https://a"}}]`))
	f.Add([]byte(`[{"type":"url_citation","url_citation":{"url":"https://a","title":"","start_index":0,"end_index":0,"content":"c"}}]`))
	f.Add([]byte(`[{"type":"url_citation","url_citation":{"url":"https://a","title":"A"}},{"type":"url_citation","url_citation":{"url":null,"x":[1]}}]`))
	f.Add([]byte(`[{"type":"file","file":{"hash":"h","name":"n"}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, ok := readChatAnnotations(data)
		if !ok {
			return
		}
		var rd jsonx.Reader
		out, n := appendChatCites([]byte{'['}, cs, "", 0, &rd)
		if n != len(cs) {
			t.Fatalf("%d of %d citations written: %s", n, len(cs), data)
		}
		back, ok := readChatAnnotations(append(out, ']'))
		if !ok || len(back) != len(cs) {
			t.Fatalf("%s does not read back (%v)", out, ok)
		}
		for i := range cs {
			want := cs[i]
			if want.Span == nil {
				// Written with a stretch, which replaces any index kept native.
				want.Span, want.Native = &convo.Span{}, back[i].Native
			}
			if !back[i].Equal(want) {
				t.Fatalf("citation %d: %+v, want %+v", i, back[i], want)
			}
		}
	})
}

// TestChatAnnotationsRecordedBody: a recorded OpenRouter reply body (its
// members sorted, as the pydantic-ai cassette stores bodies parsed) maps
// its annotations and EncodeChatReply writes the same annotations back;
// the order of the nested members is OpenRouter's wire order, so only
// their values are compared here.
func TestChatAnnotationsRecordedBody(t *testing.T) {
	rec := codectest.ReadFile(t, "testdata/recorded/chat/pydantic-openrouter-web-search-annotations.json")
	m, _, err := Chat().DecodeReply(rec, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(citationsOf(m)); n != 5 {
		t.Fatalf("%d citations", n)
	}
	got, want := annotationArrays(t, EncodeChatReply(m, provider.StreamOptions{})), annotationArrays(t, rec)
	if len(want) != 1 || strings.Join(got, "\n") != want[0] {
		t.Errorf("annotations differ\n got %q\nwant %q", got, want)
	}
}
