package gemini_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/gemini"
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
