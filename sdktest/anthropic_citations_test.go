package sdktest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	anth "github.com/convo-go/convo/provider/anthropic"
)

// TestAnthropicCitationsFitSDK: anthropic-sdk-go unmarshals the text
// blocks convo writes (EncodeReply) from canonical citations, and its
// citation fields hold the values of convo's: the recorded web search
// reply and a request with every location type.
func TestAnthropicCitationsFitSDK(t *testing.T) {
	var msgs []convo.Message
	rec, err := os.ReadFile(filepath.Join("..", "provider", "anthropic", "testdata", "recorded", "vercel-anthropic-web-search-tool.1.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := anth.Messages().DecodeReply(rec, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	msgs = append(msgs, m)
	req, err := os.ReadFile(filepath.Join("..", "provider", "anthropic", "testdata", "roundtrip", "citations.json"))
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := anth.Messages().Decode(req, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	msgs = append(msgs, h[1])
	n := 0
	for _, m := range msgs {
		var sdk anthropic.Message
		if err := json.Unmarshal(anth.EncodeReply(m, provider.StreamOptions{}), &sdk); err != nil {
			t.Fatal(err)
		}
		var blocks []anthropic.ContentBlockUnion
		for _, b := range sdk.Content {
			if b.Type == "text" {
				blocks = append(blocks, b)
			}
		}
		var texts []convo.Part
		for _, p := range m.Parts {
			if p.Type == convo.TypeText {
				texts = append(texts, p)
			}
		}
		if len(blocks) != len(texts) {
			t.Fatalf("%d text blocks, want %d", len(blocks), len(texts))
		}
		for i, p := range texts {
			for j, c := range p.Citations {
				n++
				if j >= len(blocks[i].Citations) {
					t.Fatalf("text %d: the SDK sees %d citations, want %d", i, len(blocks[i].Citations), len(p.Citations))
				}
				anthSameCitation(t, c, blocks[i].Citations[j])
			}
		}
	}
	if n < 7 {
		t.Fatalf("only %d citations compared", n)
	}
}

func anthSameCitation(t *testing.T, c convo.Citation, s anthropic.TextCitationUnion) {
	t.Helper()
	if s.CitedText != c.Text {
		t.Errorf("cited_text %q, want %q", s.CitedText, c.Text)
	}
	var start, end int64
	switch s.Type {
	case "web_search_result_location":
		if c.Kind != convo.CiteURL || s.URL != c.URL || s.Title != c.Title || s.EncryptedIndex == "" {
			t.Errorf("web citation %+v, want %+v", s, c)
		}
		return
	case "search_result_location":
		if s.Source != c.URL || s.Title != c.Title || s.SearchResultIndex != int64(c.Source) {
			t.Errorf("search result citation %+v, want %+v", s, c)
		}
		start, end = s.StartBlockIndex, s.EndBlockIndex
	case "char_location":
		start, end = s.StartCharIndex, s.EndCharIndex
	case "page_location":
		start, end = s.StartPageNumber, s.EndPageNumber
	case "content_block_location":
		start, end = s.StartBlockIndex, s.EndBlockIndex
	default:
		t.Errorf("citation type %q", s.Type)
	}
	if c.Kind != convo.CiteDocument || start != int64(c.Start) || end != int64(c.End) {
		t.Errorf("%s: range %d–%d, want %+v", s.Type, start, end, c)
	}
	if s.Type != "search_result_location" && (s.DocumentIndex != int64(c.Source) || s.DocumentTitle != c.Title) {
		t.Errorf("%s: document %d %q, want %+v", s.Type, s.DocumentIndex, s.DocumentTitle, c)
	}
}
