package sdktest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	anth "github.com/convo-go/convo/provider/anthropic"
	oai "github.com/convo-go/convo/provider/openai"
)

func oaiRecorded(t *testing.T, api, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "provider", "openai", "testdata", "recorded", api, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// oaiChunkLines frames a Vercel AI SDK *.chunks.txt recording (one
// event's data a line) as the SSE stream it was.
func oaiChunkLines(b []byte) (sse []byte, data [][]byte) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			data = append(data, []byte(line))
			sse = append(append(append(sse, "data: "...), line...), "\n\n"...)
		}
	}
	return sse, data
}

func textCitations(m convo.Message) [][]convo.Citation {
	var out [][]convo.Citation
	for _, p := range m.Parts {
		if p.Type == convo.TypeText {
			out = append(out, p.Citations)
		}
	}
	return out
}

// oaiSameChatAnnotations checks that the SDK's annotations of a Chat
// message say what convo's citations of its one text say.
func oaiSameChatAnnotations(t *testing.T, what string, sdk []openai.ChatCompletionMessageAnnotation, cs []convo.Citation) {
	t.Helper()
	if len(sdk) != len(cs) {
		t.Fatalf("%s: the SDK reads %d annotations, convo %d citations", what, len(sdk), len(cs))
	}
	for i, a := range sdk {
		c, u := cs[i], a.URLCitation
		var text string
		if f, ok := u.JSON.ExtraFields["content"]; ok {
			if err := json.Unmarshal([]byte(f.Raw()), &text); err != nil {
				t.Fatal(err)
			}
		}
		if a.Type != "url_citation" || c.Kind != convo.CiteURL || u.URL != c.URL || u.Title != c.Title || text != c.Text ||
			c.Span == nil || u.StartIndex != int64(c.Span.Start) || u.EndIndex != int64(c.Span.End) {
			t.Errorf("%s: annotation %d: SDK %s, convo %+v", what, i, a.RawJSON(), c)
		}
	}
}

// oaiChatStreamAnnotations reads a Chat stream's chunks with the SDK:
// its ChatCompletionAccumulator gathers the content, and the annotations,
// which it leaves out (its delta type has no field for them), are read
// from each delta's extra fields as the SDK's annotation type.
func oaiChatStreamAnnotations(t *testing.T, data [][]byte) (string, []openai.ChatCompletionMessageAnnotation) {
	t.Helper()
	var acc openai.ChatCompletionAccumulator
	var anns []openai.ChatCompletionMessageAnnotation
	for _, d := range data {
		if string(d) == "[DONE]" {
			break
		}
		var chunk openai.ChatCompletionChunk
		if err := json.Unmarshal(d, &chunk); err != nil {
			t.Fatal(err)
		}
		acc.AddChunk(chunk)
		for _, ch := range chunk.Choices {
			if f, ok := ch.Delta.JSON.ExtraFields["annotations"]; ok && ch.Index == 0 {
				var more []openai.ChatCompletionMessageAnnotation
				if err := json.Unmarshal([]byte(f.Raw()), &more); err != nil {
					t.Fatalf("SDK refuses annotations %s: %v", f.Raw(), err)
				}
				anns = append(anns, more...)
			}
		}
	}
	if len(acc.Choices) == 0 {
		t.Fatal("the SDK accumulated no choice")
	}
	return acc.Choices[0].Message.Content, anns
}

// TestOpenAIChatCitationsOracle: openai-go reads the recorded Chat
// replies with annotations (a body, a stream) and the replies convo
// writes of them (EncodeChatReply, the stream encoder), and its
// annotations hold what convo's citations hold; a reply from Anthropic
// with web citations gets annotations the SDK reads, within its content.
func TestOpenAIChatCitationsOracle(t *testing.T) {
	body := oaiRecorded(t, "chat", "pydantic-openrouter-web-search-annotations.json")
	var sdk openai.ChatCompletion
	if err := json.Unmarshal(body, &sdk); err != nil {
		t.Fatal(err)
	}
	m, _, err := oai.Chat().DecodeReply(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	oaiSameChatAnnotations(t, "body", sdk.Choices[0].Message.Annotations, textCitations(m)[0])

	sse := oaiRecorded(t, "chat", "pydantic-openrouter-web-search-annotations.sse")
	content, anns := oaiChatStreamAnnotations(t, oaiSSEData(t, filepath.Join("..", "provider", "openai", "testdata", "recorded", "chat", "pydantic-openrouter-web-search-annotations.sse")))
	sm, _, err := oai.Chat().ReadStream(bytes.NewReader(sse), provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sm.Parts) != 1 || sm.Parts[0].Text != content {
		t.Fatalf("stream text %q, the SDK's %q", sm.Parts[0].Text, content)
	}
	oaiSameChatAnnotations(t, "stream", anns, textCitations(sm)[0])

	for name, msg := range map[string]convo.Message{"body": m, "stream": sm} {
		var back openai.ChatCompletion
		if err := json.Unmarshal(oai.EncodeChatReply(msg, provider.StreamOptions{}), &back); err != nil {
			t.Fatal(err)
		}
		oaiSameChatAnnotations(t, name+" by EncodeChatReply", back.Choices[0].Message.Annotations, textCitations(msg)[0])
		_, anns := oaiChatStreamAnnotations(t, oaiEncodedChatData(t, msg))
		oaiSameChatAnnotations(t, name+" by the stream encoder", anns, textCitations(msg)[0])
	}
	oaiChatFromAnthropic(t)
}

// oaiEncodedChatData returns the data of the chunks the Chat stream
// encoder writes for m.
func oaiEncodedChatData(t *testing.T, m convo.Message) [][]byte {
	t.Helper()
	var out bytes.Buffer
	enc := oai.NewChatStreamEncoder(&out, provider.StreamOptions{})
	for _, d := range provider.MessageDeltas(m) {
		if err := enc.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	var data [][]byte
	for _, line := range strings.Split(out.String(), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = append(data, []byte(d))
		}
	}
	return data
}

// oaiChatFromAnthropic: Anthropic's web citations (no span: each supports
// its text block) become annotations over the block's stretch of the
// joined content, as the SDK reads them.
func oaiChatFromAnthropic(t *testing.T) {
	rec, err := os.ReadFile(filepath.Join("..", "provider", "anthropic", "testdata", "recorded", "vercel-anthropic-web-search-tool.1.json"))
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := anth.Messages().DecodeReply(rec, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var want []convo.Citation
	at := 0
	for _, p := range m.Parts {
		if p.Type != convo.TypeText {
			continue
		}
		n := len([]rune(p.Text))
		for _, c := range p.Citations {
			if c.Kind == convo.CiteURL {
				c.Span, c.Native = &convo.Span{Start: at, End: at + n}, nil
				want = append(want, c)
			}
		}
		at += n
	}
	if len(want) < 3 {
		t.Fatalf("only %d web citations in the Anthropic recording", len(want))
	}
	var sdk openai.ChatCompletion
	if err := json.Unmarshal(oai.EncodeChatReply(m, provider.StreamOptions{}), &sdk); err != nil {
		t.Fatal(err)
	}
	oaiSameChatAnnotations(t, "from Anthropic", sdk.Choices[0].Message.Annotations, want)
	content, anns := oaiChatStreamAnnotations(t, oaiEncodedChatData(t, m))
	oaiSameChatAnnotations(t, "from Anthropic, streamed", anns, want)
	if n := len([]rune(content)); n != at {
		t.Errorf("streamed content of %d runes, want %d", n, at)
	}
}

// oaiSameRespAnnotations checks that the SDK's annotations of the
// output_text parts of a response say what convo's citations of its text
// parts say.
func oaiSameRespAnnotations(t *testing.T, what string, resp responses.Response, m convo.Message) int {
	t.Helper()
	var sdk [][]responses.ResponseOutputTextAnnotationUnion
	for _, it := range resp.Output {
		for _, c := range it.Content {
			if it.Type == "message" && c.Type == "output_text" {
				sdk = append(sdk, c.Annotations)
			}
		}
	}
	cs := textCitations(m)
	if len(sdk) != len(cs) {
		t.Fatalf("%s: the SDK reads %d output_text parts, convo %d texts", what, len(sdk), len(cs))
	}
	n := 0
	for k := range sdk {
		if len(sdk[k]) != len(cs[k]) {
			t.Fatalf("%s: text %d: the SDK reads %d annotations, convo %d citations", what, k, len(sdk[k]), len(cs[k]))
		}
		for i, a := range sdk[k] {
			n++
			if !oaiSameRespAnnotation(a, cs[k][i]) {
				t.Errorf("%s: text %d annotation %d: SDK %s, convo %+v", what, k, i, a.RawJSON(), cs[k][i])
			}
		}
	}
	return n
}

func oaiSameRespAnnotation(a responses.ResponseOutputTextAnnotationUnion, c convo.Citation) bool {
	span := func(s, e int64) bool { return c.Span != nil && int64(c.Span.Start) == s && int64(c.Span.End) == e }
	switch a.Type {
	case "url_citation":
		return c.Kind == convo.CiteURL && a.URL == c.URL && a.Title == c.Title &&
			(span(a.StartIndex, a.EndIndex) || c.Span == nil && !a.JSON.StartIndex.Valid() && !a.JSON.EndIndex.Valid())
	case "file_citation", "file_path":
		return c.Kind == convo.CiteFile && a.FileID == c.FileID && a.Filename == c.Title && span(a.Index, a.Index)
	case "container_file_citation":
		return c.Kind == convo.CiteFile && a.FileID == c.FileID && a.Filename == c.Title && span(a.StartIndex, a.EndIndex)
	}
	return false
}

// TestOpenAIResponsesCitationsOracle: openai-go reads the recorded
// Responses replies with annotations — bodies as a Response, streams
// through its ResponseAccumulator — and the response convo writes of each
// (EncodeResponsesReply), and its output_text annotations hold what convo's
// citations hold.
func TestOpenAIResponsesCitationsOracle(t *testing.T) {
	total := 0
	for _, name := range []string{"vercel-openai-web-search-tool.1.json", "vercel-xai-web-search-tool.1.json"} {
		body := oaiRecorded(t, "responses", name)
		var sdk responses.Response
		if err := json.Unmarshal(body, &sdk); err != nil {
			t.Fatal(err)
		}
		m, _, err := oai.Responses().DecodeReply(body, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		total += oaiSameRespAnnotations(t, name, sdk, m)
		oaiRespEncoded(t, name, m)
	}
	streams := map[string][]byte{}
	for _, name := range []string{"vercel-openai-web-search-tool.1.chunks.txt", "vercel-xai-web-search-tool.1.chunks.txt"} {
		streams[name], _ = oaiChunkLines(oaiRecorded(t, "responses", name))
	}
	streams["pydantic-annotations.sse"] = oaiRecorded(t, "responses", "pydantic-annotations.sse")
	for name, sse := range streams {
		var acc responses.ResponseAccumulator
		for _, line := range strings.Split(string(sse), "\n") {
			d, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data: ")
			if !ok || d == "[DONE]" {
				continue
			}
			var ev responses.ResponsesServerEventUnion
			if err := json.Unmarshal([]byte(d), &ev); err != nil {
				t.Fatal(err)
			}
			if err := acc.AddEvent(ev); err != nil {
				t.Fatalf("%s: SDK accumulator: %v", name, err)
			}
		}
		resp, err := acc.ReconstructedResponse()
		if err != nil {
			t.Fatal(err)
		}
		m, _, err := oai.Responses().ReadStream(bytes.NewReader(sse), provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		total += oaiSameRespAnnotations(t, name, *resp, m)
		oaiRespEncoded(t, name, m)
	}
	if total < 20 {
		t.Fatalf("only %d annotations compared", total)
	}
}

// oaiRespEncoded: the SDK reads the response convo writes of m with the
// same annotations.
func oaiRespEncoded(t *testing.T, name string, m convo.Message) {
	t.Helper()
	var back responses.Response
	if err := json.Unmarshal(oai.EncodeResponsesReply(m, provider.StreamOptions{}), &back); err != nil {
		t.Fatal(err)
	}
	oaiSameRespAnnotations(t, name+" by EncodeResponsesReply", back, m)
}
