package gemini_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/gemini"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestDecodeReplies: every candidate of a candidateCount > 1 reply comes
// back, in index order, each as DecodeReply reads a reply holding only that
// candidate.
func TestDecodeReplies(t *testing.T) {
	body, err := os.ReadFile("testdata/candidates/count3.json")
	if err != nil {
		t.Fatal(err)
	}
	ms, warns, err := provider.DecodeReplies(gemini.GenerateContent(), body, provider.Options{Strict: true})
	if err != nil || len(warns) != 0 {
		t.Fatalf("DecodeReplies: %v %v", err, warns)
	}
	if len(ms) != 3 {
		t.Fatalf("%d replies, want 3", len(ms))
	}
	if ms[0].Text() != "Paris." || !ms[1].HasToolCalls() || ms[2].Text() != "The capital of France is Paris." {
		t.Errorf("replies out of order: %+v", ms)
	}
	if ms[0].Usage == nil || ms[0].Usage.Total != 29 || ms[1].Usage != nil || ms[2].Usage != nil {
		t.Errorf("usage belongs to the first reply only")
	}
	if ms[2].Finish != convo.FinishLength {
		t.Errorf("finish %q", ms[2].Finish)
	}

	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	cands := doc["candidates"].([]any)
	for k, m := range ms {
		c := cands[k].(map[string]any) // the document lists them in index order
		delete(c, "index")
		doc["candidates"] = []any{c}
		if k > 0 {
			delete(doc, "usageMetadata")
		}
		one, _ := json.Marshal(doc)
		want, _, err := gemini.GenerateContent().DecodeReply(one, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !m.Equal(want) {
			t.Errorf("reply %d:\n got %+v\nwant %+v", k, m, want)
		}
	}

	m, warns, err := gemini.GenerateContent().DecodeReply(body, provider.Options{})
	if err != nil || !m.Equal(ms[0]) || len(warns) != 1 || warns[0].Path != "candidates" {
		t.Errorf("DecodeReply: %v %v", err, warns)
	}
}

// FuzzDecodeReplies: no body panics DecodeReplies, and whatever it decodes,
// its first reply is DecodeReply's.
func FuzzDecodeReplies(f *testing.F) {
	body, err := os.ReadFile("testdata/candidates/count3.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body)
	f.Add([]byte(`{"candidates":[{"index":3,"content":{"parts":[{"text":"a"}]}},{"content":{"parts":[{"text":"b"}]}},{"index":3}]}`))
	f.Add([]byte(`{"candidates":[{"index":-1},{"index":1,"content":null}],"promptFeedback":{"blockReason":"SAFETY"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, _, err := provider.DecodeReplies(gemini.GenerateContent(), data, provider.Options{})
		if err != nil {
			return
		}
		m, _, err := gemini.GenerateContent().DecodeReply(data, provider.Options{})
		if err != nil || len(ms) == 0 || !ms[0].Equal(m) {
			t.Fatalf("DecodeReplies gave %d replies, DecodeReply %v", len(ms), err)
		}
	})
}

// readCandidates folds a streamGenerateContent SSE stream and returns every
// candidate.
func readCandidates(t *testing.T, sse []byte) ([]convo.Message, []provider.Warning, error) {
	t.Helper()
	acc := gemini.GenerateContent().NewAccumulator(provider.Options{})
	src := stream.NewSSE(bytes.NewReader(sse))
	for {
		ev, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := acc.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	return provider.AccumulatedReplies(acc)
}

// TestStreamCandidates: a stream with several candidates keeps each; its
// candidates are those of the same reply non-streamed, and Message keeps
// the first and warns about the others.
func TestStreamCandidates(t *testing.T) {
	sse, err := os.ReadFile("testdata/candidates/count3.sse")
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile("testdata/candidates/count3.json")
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := provider.DecodeReplies(gemini.GenerateContent(), body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, warns, err := readCandidates(t, sse)
	if err != nil || len(warns) != 0 {
		t.Fatalf("Messages: %v %v", err, warns)
	}
	if len(got) != len(want) {
		t.Fatalf("%d candidates, want %d", len(got), len(want))
	}
	for k := range want {
		if !got[k].Equal(want[k]) {
			t.Errorf("candidate %d:\n got %+v\nwant %+v", k, got[k], want[k])
		}
	}
	m, warns, err := gemini.GenerateContent().ReadStream(bytes.NewReader(sse), provider.Options{})
	if err != nil || !m.Equal(want[0]) || len(warns) != 1 || warns[0].Path != "candidates" {
		t.Errorf("ReadStream: %v %v", err, warns)
	}

	// A stream cut before every candidate finished is incomplete.
	cut := sse[:bytes.LastIndex(bytes.TrimSpace(sse), []byte("\n\n"))+2]
	ms, _, err := readCandidates(t, cut)
	if !errors.Is(err, provider.ErrIncomplete) || len(ms) != 3 || ms[2].Text() != "The capital of France" {
		t.Errorf("cut stream: %v %d", err, len(ms))
	}
}

// TestEncodeCandidates: the stream encoder fed every candidate's deltas,
// and EncodeReplies, write replies that read back as the same candidates.
func TestEncodeCandidates(t *testing.T) {
	sse, err := os.ReadFile("testdata/candidates/count3.sse")
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := readCandidates(t, sse)
	if err != nil {
		t.Fatal(err)
	}
	dr := provider.NewDeltaReader(gemini.GenerateContent().NewAccumulator(provider.Options{}))
	dr.ReadCandidates()
	var out bytes.Buffer
	var fold provider.DeltaFold
	if _, warns := codectest.Transcode(t, dr, sse, folding{gemini.NewStreamEncoder(&out, provider.StreamOptions{}), &fold}); len(warns) != 0 {
		t.Fatalf("Finish: %v", warns)
	}
	folded, err := fold.Messages()
	if err != nil {
		t.Fatal(err)
	}
	back, warns, err := readCandidates(t, out.Bytes())
	if err != nil || len(warns) != 0 {
		t.Fatalf("reading the encoded stream: %v %v\n%s", err, warns, out.Bytes())
	}
	ms, _, err := provider.DecodeReplies(gemini.GenerateContent(), gemini.EncodeReplies(want, provider.StreamOptions{}), provider.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]convo.Message{"DeltaFold": folded, "stream encoder": back, "EncodeReplies": ms} {
		if len(got) != len(want) {
			t.Errorf("%s: %d candidates, want %d", name, len(got), len(want))
			continue
		}
		for k := range want {
			if !sameReply(got[k], want[k]) {
				t.Errorf("%s: candidate %d:\n got %+v\nwant %+v", name, k, got[k], want[k])
			}
		}
	}
}

// folding writes every delta to the encoder and folds it too.
type folding struct {
	enc  provider.StreamEncoder
	fold *provider.DeltaFold
}

func (f folding) Write(d provider.Delta) error {
	if err := f.enc.Write(d); err != nil {
		return err
	}
	return f.fold.Add(d)
}

// sameReply compares what an encoder carries: the parts' content, the
// finish reason, the usage.
func sameReply(a, b convo.Message) bool {
	if len(a.Parts) != len(b.Parts) || a.Finish != b.Finish || (a.Usage == nil) != (b.Usage == nil) {
		return false
	}
	if a.Usage != nil && (a.Usage.Input != b.Usage.Input || a.Usage.Output != b.Usage.Output) {
		return false
	}
	for j := range a.Parts {
		p, q := a.Parts[j], b.Parts[j]
		if p.Type != q.Type || p.Text != q.Text || p.Name != q.Name || p.ID != q.ID || string(p.Args) != string(q.Args) {
			return false
		}
	}
	return true
}
