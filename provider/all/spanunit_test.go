package all_test

import (
	"testing"
	"unicode/utf8"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// cited is a citation's URL and the text its span selects, read in the
// unit its provider counts in.
type cited struct{ url, text string }

// citedTexts returns, for each citation with a span on m's text parts,
// what its span selects: bytes of the part's text when bytes is set
// (Gemini), characters otherwise (OpenAI).
func citedTexts(t *testing.T, m convo.Message, bytes bool) []cited {
	t.Helper()
	var out []cited
	for _, p := range m.Parts {
		for _, c := range p.Citations {
			if c.Span == nil {
				continue
			}
			s, text := *c.Span, p.Text
			if !bytes {
				r := []rune(text)
				if s.End > len(r) {
					t.Fatalf("span %v past the %d characters of %q", s, len(r), text)
				}
				out = append(out, cited{c.URL, string(r[s.Start:s.End])})
				continue
			}
			if s.End > len(text) || !utf8.ValidString(text[s.Start:s.End]) {
				t.Fatalf("span %v is not a stretch of whole characters of %q", s, text)
			}
			out = append(out, cited{c.URL, text[s.Start:s.End]})
		}
	}
	return out
}

// viaReply encodes m as a reply of format name and reads it back.
func viaReply(t *testing.T, name string, m convo.Message) convo.Message {
	t.Helper()
	body, err := all.EncodeReply(name, m, provider.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := all.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	back, _, err := f.DecodeReply(body, provider.Options{})
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, body)
	}
	return back
}

func sameCited(t *testing.T, what string, got, want []cited) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d cited stretches, want %d: %q", what, len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: citation %d selects %q, want %q", what, i, got[i].text, want[i].text)
		}
	}
}

// TestSpanUnits: a span counts as the provider that wrote it counts
// (Gemini bytes, OpenAI characters), and the encoders convert against the
// part's text, so a citation selects the same text everywhere. The
// recorded Gemini grounded reply has a "°" before its second support: its
// byte spans sent to OpenAI Responses and Chat, read back, and sent to
// Gemini again select what Gemini's did. A non-ASCII reply whose spans
// OpenAI counted in characters goes to Gemini and back likewise.
func TestSpanUnits(t *testing.T) {
	m := groundedReply(t)
	want := citedTexts(t, m, true)
	if len(want) != 6 || utf8.RuneCountInString(m.Parts[0].Text) == len(m.Parts[0].Text) {
		t.Fatalf("the recorded reply changed: %d spans", len(want))
	}
	for _, name := range []string{"openai-responses", "openai-chat"} {
		o := viaReply(t, name, m)
		sameCited(t, "gemini → "+name, citedTexts(t, o, false), want)
		sameCited(t, "gemini → "+name+" → gemini", citedTexts(t, viaReply(t, "gemini", o), true), want)
	}

	text := "Ça coûte 5 € — naïve café, «très» bon."
	r := []rune(text)
	m = convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{{Type: convo.TypeText, Text: text,
		Citations: []convo.Citation{
			{Kind: convo.CiteURL, URL: "https://a.example", Title: "A", Span: &convo.Span{Start: 9, End: 12}},
			{Kind: convo.CiteURL, URL: "https://b.example", Title: "B", Span: &convo.Span{Start: 15, End: len(r)}},
		}}}}
	want = citedTexts(t, m, false)
	if want[0].text != "5 €" {
		t.Fatalf("the case selects %q", want[0].text)
	}
	g := viaReply(t, "gemini", m)
	sameCited(t, "openai → gemini", citedTexts(t, g, true), want)
	for _, name := range []string{"openai-responses", "openai-chat"} {
		sameCited(t, "openai → gemini → "+name, citedTexts(t, viaReply(t, name, g), false), want)
	}
}
