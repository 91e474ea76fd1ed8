package convo_test

import (
	"strings"
	"testing"

	"github.com/convo-go/convo"
)

// TestCitationsDecodeErrors: a malformed citation is a one-line error
// naming its place.
func TestCitationsDecodeErrors(t *testing.T) {
	for _, tt := range []struct{ citations, want string }{
		{`{"kind":"url"}`, "citations"},
		{`[{"url":"u"}]`, "messages[0].parts[0].citations[0]: citation has no kind"},
		{`[{"kind":"document","source":"1"}]`, "messages[0].parts[0].citations[0].source"},
		{`[{"kind":"url","span":[1]}]`, "messages[0].parts[0].citations[0].span: want [start, end], got 1 numbers"},
		{`[{"kind":"url","span":[1,"2"]}]`, "messages[0].parts[0].citations[0].span[1]"},
		{`[{"kind":"url","native":{"x":1}}]`, "messages[0].parts[0].citations[0].native.x: must be a JSON object"},
	} {
		doc := `[{"role":"assistant","parts":[{"type":"text","text":"t","citations":` + tt.citations + `}]}]`
		_, err := convo.Unmarshal([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want %q", tt.citations, err, tt.want)
		}
	}
}

// TestCitationsValidate: Validate reports citations on the wrong part and
// impossible ranges, and accepts a kind a newer writer added.
func TestCitationsValidate(t *testing.T) {
	text := func(cs ...convo.Citation) convo.History {
		p := convo.Text("t")
		p.Citations = cs
		return convo.History{convo.User("q"), convo.Assistant("", p)}
	}
	for _, tt := range []struct {
		h    convo.History
		want string
	}{
		{text(convo.Citation{Kind: "future"}), ""},
		{text(convo.Citation{Kind: convo.CiteDocument, Unit: convo.UnitPage, Start: 2, End: 3}), ""},
		{text(convo.Citation{URL: "u"}), "messages[1].parts[0].citations[0]: citation has no kind"},
		{text(convo.Citation{Kind: convo.CiteDocument, Unit: "line"}), `messages[1].parts[0].citations[0].unit: unknown unit "line"`},
		{text(convo.Citation{Kind: convo.CiteDocument, Unit: convo.UnitChar, Start: 5, End: 2}), "citations[0]: bad range"},
		{text(convo.Citation{Kind: convo.CiteURL}, convo.Citation{Kind: convo.CiteURL, Span: &convo.Span{Start: 3, End: 1}}), "citations[1].span: bad span [3, 1]"},
		{convo.History{convo.User("", convo.Part{Type: convo.TypeRefusal, Text: "no", Citations: []convo.Citation{{Kind: convo.CiteURL}}})},
			"messages[0].parts[0]: citations on a refusal part"},
	} {
		err := tt.h.Validate()
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("got %v, want %q", err, tt.want)
		}
	}
}

// TestCitationsRoundTrip: every citation field survives Marshal and
// Unmarshal, and Equal tells citations apart.
func TestCitationsRoundTrip(t *testing.T) {
	p := convo.Text("The grass is green.")
	p.Citations = []convo.Citation{
		{Kind: convo.CiteDocument, Source: 2, Title: "doc", URL: "u", Unit: convo.UnitChar, Start: 0, End: 20, Text: "The grass",
			Native: convo.Native{"anthropic": []byte(`{"file_id":null}`)}},
		{Kind: convo.CiteFile, FileID: "file-1", Span: &convo.Span{Start: 0, End: 0}, Extra: convo.Fields{{Key: "x", Value: []byte(`1`)}}},
		// A range without its unit, a source on another kind: kept as
		// read (found by FuzzUnmarshal: both were dropped by Marshal).
		{Kind: convo.CiteURL, URL: "https://e.example", Source: 1, End: 1},
	}
	h := convo.History{convo.User("q"), convo.Assistant("", p)}
	b, err := convo.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	back, err := convo.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Equal(h) {
		t.Fatalf("round trip differs:\n%s", b)
	}
	for _, change := range []func(c *convo.Citation){
		func(c *convo.Citation) { c.Source = 3 },
		func(c *convo.Citation) { c.Span = &convo.Span{Start: 0, End: 1} },
		func(c *convo.Citation) { c.Native = nil },
		func(c *convo.Citation) { c.Unit = convo.UnitPage },
	} {
		q, _ := convo.Unmarshal(b)
		change(&q[1].Parts[0].Citations[0])
		if q.Equal(h) {
			t.Errorf("a changed citation compares equal")
		}
	}
}
