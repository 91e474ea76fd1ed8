package gemini

import (
	"bytes"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// FuzzDecode feeds Decode arbitrary bodies. It must never panic; what it
// accepts must survive the canonical format and encode (with repair and
// placeholders) to valid JSON that decodes again, and a second trip must
// not change the bytes: the codec has one fixed point per history.
func FuzzDecode(f *testing.F) {
	opts := provider.Options{Repair: true, Media: provider.MediaPlaceholder}
	codectest.FuzzFixpoint(f, GenerateContent(), opts, "testdata/roundtrip/*.json",
		`{"contents":[]}`,
		`{"contents":{"parts":{"text":"one"}}}`,
		`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f"}},{"functionCall":{"name":"f"}}]},{"parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`,
		`{"contents":[{"parts":[{"text":"a","thought":true,"thoughtSignature":"QQ=="}]}]}`,
		`{"contents":[{"parts":[{"functionResponse":{"name":"f","response":{"output":{"a":1}},"parts":[{"inlineData":{"mimeType":"image/png","data":"QQ"}}]}}]}]}`,
	)
}

// FuzzAccumulate feeds the stream accumulator arbitrary events (one per
// line of the input). It must never panic; whatever it accepted, the final
// message must marshal and equal the last snapshot.
func FuzzAccumulate(f *testing.F) {
	for _, file := range codectest.Files(f, "testdata/replies/*.sse") {
		f.Add(bytes.Join(codectest.SSEData(codectest.ReadFile(f, file)), []byte("\n")))
	}
	for _, seed := range codectest.RecordedEvents(f, "testdata/recorded") {
		f.Add(seed)
	}
	f.Add([]byte(`{"error":{"code":500,"message":"boom"}}`))
	f.Add(bytes.Join(codectest.SSEData(codectest.ReadFile(f, "testdata/candidates/count3.sse")), []byte("\n")))
	f.Add([]byte("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\",\"thought\":true},{\"text\":\"\",\"thoughtSignature\":\"x\"}]},\"index\":1}]}\n[DONE]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		acc := GenerateContent().NewAccumulator(provider.Options{})
		for _, line := range bytes.Split(data, []byte("\n")) {
			if acc.Add(provider.Event{Data: line}) != nil {
				break
			}
		}
		snap := acc.Snapshot()
		m, _, _ := acc.Message()
		if !m.Equal(snap) {
			t.Fatal("final message differs from the last snapshot")
		}
		if _, err := convo.AppendMessage(nil, m); err != nil {
			t.Fatalf("message does not marshal: %v", err)
		}
		// Every candidate: as many as shown, the first Message's, each
		// its last snapshot.
		ca := acc.(provider.CandidatesAccumulator)
		ms, _, _ := ca.Messages()
		if len(ms) != ca.Candidates() || !ms[0].Equal(m) {
			t.Fatalf("%d candidates of %d, the first differs from Message", len(ms), ca.Candidates())
		}
		for k := 1; k < len(ms); k++ {
			if !ms[k].Equal(ca.SnapshotCandidate(k)) {
				t.Fatalf("candidate %d differs from its snapshot", k)
			}
		}
	})
}

// FuzzReplyCitations feeds DecodeReply arbitrary bodies, seeded with the
// grounded and cited replies. It must never panic; a reply it accepts
// writes back (EncodeReply) as a body it accepts again, and when every
// part is text, so that each goes back to its place, the citations read
// back are the ones read.
func FuzzReplyCitations(f *testing.F) {
	for _, file := range []string{"testdata/recorded/pydantic-web-search.json", "testdata/grounding/shapes.json",
		"testdata/replies/recitation.json", "testdata/replies/media.json"} {
		f.Add(codectest.ReadFile(f, file))
	}
	f.Add([]byte(`{"candidates":[{"content":{"parts":[{"text":"ab"},{"text":"cd"}]},"groundingMetadata":{"groundingChunks":[{"web":{"uri":"u"}},{"maps":{}}],"groundingSupports":[{"segment":{"partIndex":1,"startIndex":1,"endIndex":2},"groundingChunkIndices":[1,0]}]},"citationMetadata":{"citationSources":[{"endIndex":3}]}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		m, _, err := GenerateContent().DecodeReply(body, provider.Options{})
		if err != nil {
			return
		}
		if err := (convo.History{m}).Validate(); err != nil && strings.Contains(err.Error(), "citations") {
			t.Fatalf("invalid citation read: %v", err)
		}
		out := EncodeReply(m, provider.StreamOptions{})
		back, _, err := GenerateContent().DecodeReply(out, provider.Options{})
		if err != nil {
			t.Fatalf("EncodeReply wrote a body DecodeReply refuses: %v\n%s", err, out)
		}
		for _, p := range m.Parts {
			if p.Type != convo.TypeText {
				return
			}
		}
		if g, w := textCitations(back), textCitations(m); g != w {
			t.Fatalf("citations read back differ\n got %s\nwant %s\n%s", g, w, out)
		}
	})
}
