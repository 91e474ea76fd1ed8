package gemini

import (
	"bytes"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// TestCitationsDropped: Gemini requests have no citations; a cited text
// part is sent as its text with a citation-dropped warning.
func TestCitationsDropped(t *testing.T) {
	p := convo.Text("Grass is green.")
	p.Citations = []convo.Citation{{Kind: convo.CiteURL, URL: "https://example.com"}}
	out, warns, err := GenerateContent().Encode(convo.History{convo.User("q"), convo.Assistant("", p)}, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte(`{"text":"Grass is green."}`)) || bytes.Contains(out, []byte("example.com")) {
		t.Errorf("request %s", out)
	}
	if len(warns) != 1 || warns[0].Code != provider.CodeCitationDropped || warns[0].Path != "contents[1].parts[0]" {
		t.Errorf("warnings %v", warns)
	}
}
