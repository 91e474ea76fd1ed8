package sdktest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3/responses"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	anth "github.com/convo-go/convo/provider/anthropic"
	"github.com/convo-go/convo/provider/bedrock"
	oai "github.com/convo-go/convo/provider/openai"
)

// TestBedrockNovaCitationsElsewhere: the web citations of Nova's recorded
// grounded answer (a body and a stream) reach an Anthropic or Responses
// client as that SDK's web citations (web_search_result_location,
// url_citation) with the same addresses, on the text blocks convo writes
// for Nova's blocks of citations alone.
func TestBedrockNovaCitationsElsewhere(t *testing.T) {
	dir := filepath.Join("..", "provider", "bedrock", "testdata", "recorded")
	body, err := os.ReadFile(filepath.Join(dir, "rubyllm-nova-grounding.json"))
	if err != nil {
		t.Fatal(err)
	}
	stream, err := os.ReadFile(filepath.Join(dir, "rubyllm-nova-grounding.eventstream"))
	if err != nil {
		t.Fatal(err)
	}
	m1, _, err := bedrock.Converse().DecodeReply(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m2, _, err := bedrock.Converse().ReadStream(bytes.NewReader(stream), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for what, m := range map[string]convo.Message{"body": m1, "stream": m2} {
		var urls []string
		for _, p := range m.Parts {
			for _, c := range p.Citations {
				if c.Kind != convo.CiteURL {
					t.Fatalf("%s: citation %+v", what, c)
				}
				urls = append(urls, c.URL)
			}
		}
		if len(urls) < 3 {
			t.Fatalf("%s: only %d url citations", what, len(urls))
		}
		var am anthropic.Message
		if err := json.Unmarshal(anth.EncodeReply(m, provider.StreamOptions{}), &am); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, b := range am.Content {
			for _, c := range b.Citations {
				if c.Type != "web_search_result_location" {
					t.Errorf("%s: Anthropic citation %s", what, c.RawJSON())
				}
				got = append(got, c.URL)
			}
		}
		if !slices.Equal(got, urls) {
			t.Errorf("%s: Anthropic SDK reads %q, want %q", what, got, urls)
		}
		var resp responses.Response
		if err := json.Unmarshal(oai.EncodeResponsesReply(m, provider.StreamOptions{}), &resp); err != nil {
			t.Fatal(err)
		}
		got = nil
		for _, it := range resp.Output {
			for _, c := range it.Content {
				for _, a := range c.Annotations {
					if a.Type != "url_citation" {
						t.Errorf("%s: Responses annotation %s", what, a.RawJSON())
					}
					got = append(got, a.URL)
				}
			}
		}
		if !slices.Equal(got, urls) {
			t.Errorf("%s: openai-go reads %q, want %q", what, got, urls)
		}
	}
}
