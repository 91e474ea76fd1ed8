package all_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
	"github.com/convo-go/convo/provider/internal/codectest"
	"github.com/convo-go/convo/provider/openai"
)

// encodeBoth writes m with format f's encoder as a reply body and as a
// stream, and reads each back with f's reply codec.
func encodeBoth(t *testing.T, f provider.ReplyCodec, m convo.Message) map[string]convo.Message {
	t.Helper()
	enc, err := provider.EncoderOf(f.(provider.Format))
	if err != nil {
		t.Fatal(err)
	}
	body, _, err := f.DecodeReply(enc.EncodeReply(m, provider.StreamOptions{}), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sse bytes.Buffer
	codectest.WriteDeltas(t, enc.NewStreamEncoder(&sse, provider.StreamOptions{}), m)
	streamed, _, err := f.ReadStream(&sse, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]convo.Message{"reply": body, "stream": streamed}
}

func allCitations(m convo.Message) []convo.Citation {
	var cs []convo.Citation
	for _, p := range m.Parts {
		cs = append(cs, p.Citations...)
	}
	return cs
}

// TestCitationsChatAnthropic: through the gateway's encoders, the web
// citations of a recorded OpenAI Chat stream (OpenRouter) reach an
// Anthropic client as web_search_result_location citations (url, title,
// the quoted text; no encrypted index, which only a request needs), and
// those of a recorded Anthropic reply reach a Chat client as url_citation
// annotations.
func TestCitationsChatAnthropic(t *testing.T) {
	rec, err := os.ReadFile("../openai/testdata/recorded/chat/pydantic-openrouter-web-search-annotations.sse")
	if err != nil {
		t.Fatal(err)
	}
	chat, _, err := openai.Chat().ReadStream(bytes.NewReader(rec), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := allCitations(chat)
	if len(want) != 5 {
		t.Fatalf("%d citations in the Chat recording", len(want))
	}
	for how, got := range encodeBoth(t, anthropic.Messages(), chat) {
		cs := allCitations(got)
		if len(cs) != len(want) {
			t.Fatalf("anthropic %s: %d citations, want %d", how, len(cs), len(want))
		}
		for i, c := range cs {
			if c.Kind != convo.CiteURL || c.URL != want[i].URL || c.Title != want[i].Title || c.Text != want[i].Text {
				t.Errorf("anthropic %s: citation %d: %+v, want %+v", how, i, c, want[i])
			}
		}
	}

	rec, err = os.ReadFile("../anthropic/testdata/recorded/vercel-anthropic-web-search-tool.1.json")
	if err != nil {
		t.Fatal(err)
	}
	an, _, err := anthropic.Messages().DecodeReply(rec, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, c := range allCitations(an) {
		if c.Kind == convo.CiteURL {
			urls = append(urls, c.URL)
		}
	}
	if len(urls) < 3 {
		t.Fatalf("%d web citations in the Anthropic recording", len(urls))
	}
	for how, got := range encodeBoth(t, openai.Chat(), an) {
		cs := allCitations(got)
		if len(cs) != len(urls) {
			t.Fatalf("chat %s: %d citations, want %d", how, len(cs), len(urls))
		}
		for i, c := range cs {
			if c.URL != urls[i] || c.Span == nil || c.Span.End <= c.Span.Start {
				t.Errorf("chat %s: citation %d: %+v, want url %s over its text", how, i, c, urls[i])
			}
		}
	}
}
