package all_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// groundedReply is the recorded Gemini reply grounded in Google Search
// (six supports, a "°" in its text), decoded.
func groundedReply(t *testing.T) convo.Message {
	t.Helper()
	body, err := os.ReadFile("../gemini/testdata/recorded/pydantic-web-search.json")
	if err != nil {
		t.Fatal(err)
	}
	gem, _ := all.Lookup("gemini")
	m, _, err := gem.DecodeReply(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGeminiGroundingElsewhere: a Gemini answer grounded in Google Search
// (the recorded reply) keeps its citations for the targets that take web
// citations — OpenAI Responses, as url_citation annotations with the
// span converted from bytes to characters — and loses them with citation-dropped warnings, its
// text kept, for those that do not (Anthropic takes web citations only
// with its own encrypted index; OpenAI Chat and Gemini requests none).
func TestGeminiGroundingElsewhere(t *testing.T) {
	m := groundedReply(t)
	if n := len(m.Parts[0].Citations); n != 6 {
		t.Fatalf("%d citations read", n)
	}
	h := convo.History{convo.User("What is the weather in San Francisco?"), m, convo.User("Thanks.")}
	for _, tc := range []struct {
		format  string
		kept    int
		dropped int
	}{
		{"openai-responses", 6, 0},
		{"anthropic", 0, 6},
		{"openai-chat", 0, 6},
		{"gemini", 0, 6},
	} {
		t.Run(tc.format, func(t *testing.T) {
			c, err := all.LookupRequest(tc.format)
			if err != nil {
				t.Fatal(err)
			}
			out, warns, err := c.Encode(h, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			dropped := 0
			for _, w := range warns {
				if w.Code == provider.CodeCitationDropped {
					dropped++
				}
			}
			if kept := bytes.Count(out, []byte(`"url_citation"`)); kept != tc.kept {
				t.Errorf("%d url citations sent, want %d\n%s", kept, tc.kept, out)
			}
			if (dropped > 0) != (tc.dropped > 0) {
				t.Errorf("warnings %v, want %d citations dropped", warns, tc.dropped)
			}
			if !bytes.Contains(out, []byte("Weather in San Francisco is Mild")) {
				t.Errorf("the cited text was not sent:\n%s", out)
			}
			if tc.kept > 0 && (!bytes.Contains(out, []byte(`"start_index":55`)) || !bytes.Contains(out, []byte(`"end_index":215`))) {
				t.Errorf("the first support's span is not the annotation's:\n%s", out)
			}
		})
	}
}
