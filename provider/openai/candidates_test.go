package openai_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/openai"
)

// TestDecodeReplies: every choice of an n > 1 reply comes back, in index
// order, each as DecodeReply reads a reply holding only that choice.
func TestDecodeReplies(t *testing.T) {
	body, err := os.ReadFile("testdata/candidates/n3.json")
	if err != nil {
		t.Fatal(err)
	}
	ms, warns, err := provider.DecodeReplies(openai.Chat(), body, provider.Options{Strict: true})
	if err != nil || len(warns) != 0 {
		t.Fatalf("DecodeReplies: %v %v", err, warns)
	}
	if len(ms) != 3 {
		t.Fatalf("%d replies, want 3", len(ms))
	}
	if ms[0].Text() != "The capital of France is Paris." || ms[1].Text() != "Paris." || !ms[2].HasToolCalls() {
		t.Errorf("replies out of order: %q %q %+v", ms[0].Text(), ms[1].Text(), ms[2].Parts)
	}
	if ms[0].Usage == nil || ms[0].Usage.Total != 45 || ms[1].Usage != nil || ms[2].Usage != nil {
		t.Errorf("usage belongs to the first reply only: %+v %+v %+v", ms[0].Usage, ms[1].Usage, ms[2].Usage)
	}
	if ms[2].Finish != convo.FinishToolUse {
		t.Errorf("finish %q", ms[2].Finish)
	}

	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	choices := doc["choices"].([]any)
	byIndex := map[float64]any{}
	for _, c := range choices {
		byIndex[c.(map[string]any)["index"].(float64)] = c
	}
	for k, m := range ms {
		c := byIndex[float64(k)].(map[string]any)
		c["index"] = 0
		doc["choices"] = []any{c}
		if k > 0 {
			delete(doc, "usage")
		}
		one, _ := json.Marshal(doc)
		want, _, err := openai.Chat().DecodeReply(one, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !m.Equal(want) {
			t.Errorf("reply %d:\n got %+v\nwant %+v", k, m, want)
		}
	}

	// DecodeReply keeps the first choice and says so.
	m, warns, err := openai.Chat().DecodeReply(body, provider.Options{})
	if err != nil || !m.Equal(ms[0]) || len(warns) != 1 || warns[0].Path != "choices" {
		t.Errorf("DecodeReply: %v %v", err, warns)
	}
}

func TestDecodeRepliesErrors(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"choices":[{"index":0,"message":{"role":"assistant","content":"a"}},{"index":0,"message":{"role":"assistant","content":"b"}}]}`,
			"choices[1]: a second choice with index 0"},
		{`{"choices":[{"index":1,"message":{"role":"assistant","content":"a"}}]}`, "reply has no choice with index 0"},
	} {
		_, _, err := provider.DecodeReplies(openai.Chat(), []byte(tc.body), provider.Options{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %s", tc.body, err, tc.want)
		}
	}
}

// FuzzDecodeReplies: no body panics DecodeReplies, and whatever it decodes,
// its first reply is DecodeReply's.
func FuzzDecodeReplies(f *testing.F) {
	body, err := os.ReadFile("testdata/candidates/n3.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(body)
	f.Add([]byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"a"}},{"index":0,"message":{"role":"assistant"}}]}`))
	f.Add([]byte(`{"choices":[{"index":2,"message":{"role":"assistant","content":"a"}},{"message":{"role":"user"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ms, _, err := provider.DecodeReplies(openai.Chat(), data, provider.Options{})
		if err != nil {
			return
		}
		m, _, err := openai.Chat().DecodeReply(data, provider.Options{})
		if err != nil || len(ms) == 0 || !ms[0].Equal(m) {
			t.Fatalf("DecodeReplies gave %d replies, DecodeReply %v", len(ms), err)
		}
	})
}
