package openai_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/stream"
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

// feed folds an SSE stream into acc, through a DeltaReader reporting every
// candidate, and returns the deltas.
func feed(t *testing.T, acc provider.Accumulator, sse []byte) []provider.Delta {
	t.Helper()
	dr := provider.NewDeltaReader(acc)
	dr.ReadCandidates()
	src := stream.NewSSE(bytes.NewReader(sse))
	var ds []provider.Delta
	for {
		ev, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if ds, err = dr.Add(ds, ev); err != nil {
			t.Fatal(err)
		}
	}
	ds, _, warns, err := dr.Finish(ds)
	if err != nil || len(warns) != 0 {
		t.Fatalf("Finish: %v %v", err, warns)
	}
	return ds
}

// TestStreamChoices: a recorded n = 3 stream keeps its three choices, and
// they survive the Chat stream encoder, DeltaFold and EncodeChatReplies.
// (provider/all checks them through the Gemini encoder as candidates.)
func TestStreamChoices(t *testing.T) {
	sse, err := os.ReadFile("testdata/candidates/n3-recorded.sse")
	if err != nil {
		t.Fatal(err)
	}
	acc := openai.Chat().NewAccumulator(provider.Options{})
	ds := feed(t, acc, sse)
	want, warns, err := provider.AccumulatedReplies(acc)
	if err != nil || len(warns) != 0 || len(want) != 3 {
		t.Fatalf("AccumulatedReplies: %d %v %v", len(want), err, warns)
	}
	for k, prefix := range []string{"Okay! Imagine you have a big box of crayons", "Okay! Imagine you have a big, smart robot", "Okay! Imagine LLM is like a really smart robot"} {
		if !strings.HasPrefix(want[k].Text(), prefix) || want[k].Finish != convo.FinishStop {
			t.Errorf("choice %d: %q %q", k, want[k].Text()[:40], want[k].Finish)
		}
	}
	if want[0].Usage == nil || want[0].Usage.Output != 408 || want[1].Usage != nil {
		t.Errorf("usage on the first only: %+v %+v", want[0].Usage, want[1].Usage)
	}
	m, warns, err := openai.Chat().ReadStream(bytes.NewReader(sse), provider.Options{})
	if err != nil || !m.Equal(want[0]) || len(warns) != 1 {
		t.Errorf("ReadStream: %v %v", err, warns)
	}

	var fold provider.DeltaFold
	var chat bytes.Buffer
	chatEnc := openai.NewChatStreamEncoder(&chat, provider.StreamOptions{})
	for _, d := range ds {
		if fold.Add(d) != nil || chatEnc.Write(d) != nil {
			t.Fatalf("delta %+v", d)
		}
	}
	folded, _ := fold.Messages()
	chatAcc := openai.Chat().NewAccumulator(provider.Options{})
	feed(t, chatAcc, chat.Bytes())
	viaChat, _, err := provider.AccumulatedReplies(chatAcc)
	if err != nil {
		t.Fatal(err)
	}
	whole, _, err := provider.DecodeReplies(openai.Chat(), openai.EncodeChatReplies(want, provider.StreamOptions{}), provider.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]convo.Message{"DeltaFold": folded, "chat stream": viaChat, "EncodeChatReplies": whole} {
		if len(got) != 3 {
			t.Errorf("%s: %d choices", name, len(got))
			continue
		}
		for k := range got {
			if got[k].Text() != want[k].Text() || got[k].Finish != want[k].Finish || (got[k].Usage != nil) != (k == 0) {
				t.Errorf("%s: choice %d differs: %q", name, k, got[k].Text())
			}
		}
	}
}

// TestStreamChoicesCut: a stream that ends before every choice finished is
// incomplete, each choice kept as far as it came.
func TestStreamChoicesCut(t *testing.T) {
	sse, err := os.ReadFile("testdata/candidates/n3-recorded.sse")
	if err != nil {
		t.Fatal(err)
	}
	cut := sse[:bytes.Index(sse, []byte(`"index":2,"delta":{},"logprobs":null,"finish_reason":"stop"`))]
	cut = cut[:bytes.LastIndex(cut, []byte("\n\n"))+2]
	acc := openai.Chat().NewAccumulator(provider.Options{})
	src := stream.NewSSE(bytes.NewReader(cut))
	for {
		ev, err := src.Next()
		if err != nil {
			break
		}
		if err := acc.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	ms, _, err := provider.AccumulatedReplies(acc)
	if !errors.Is(err, provider.ErrIncomplete) || len(ms) != 3 || ms[2].Text() == "" || ms[2].Finish != "" {
		t.Errorf("%v %d", err, len(ms))
	}
	if _, _, err := acc.Message(); err != nil {
		t.Errorf("the first choice finished: %v", err)
	}
}

// FuzzStreamChoices feeds the Chat accumulator arbitrary chunks (one per
// line). Nothing may panic; it returns as many choices as it has shown,
// the first the message Message returns, each its last snapshot.
func FuzzStreamChoices(f *testing.F) {
	sse, err := os.ReadFile("testdata/candidates/n3-recorded.sse")
	if err != nil {
		f.Fatal(err)
	}
	var lines [][]byte
	for _, block := range bytes.Split(sse, []byte("\n\n")) {
		if data, ok := bytes.CutPrefix(block, []byte("data: ")); ok {
			lines = append(lines, data)
		}
	}
	f.Add(bytes.Join(lines[:40], []byte("\n")))
	f.Add(bytes.Join(lines[len(lines)-6:], []byte("\n")))
	f.Add([]byte(`{"choices":[{"index":2,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{"}}]}},{"index":0,"delta":{"content":"a"}}]}` + "\n" +
		`{"choices":[{"index":-1,"delta":{"content":"b"},"finish_reason":"stop"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		acc := openai.Chat().NewAccumulator(provider.Options{})
		for _, line := range bytes.Split(data, []byte("\n")) {
			if acc.Add(provider.Event{Data: line}) != nil {
				break
			}
		}
		ca := acc.(provider.CandidatesAccumulator)
		m, _, _ := acc.Message()
		ms, _, _ := ca.Messages()
		if len(ms) != ca.Candidates() || !ms[0].Equal(m) {
			t.Fatalf("%d choices of %d, the first differs from Message", len(ms), ca.Candidates())
		}
		for k := range ms {
			if !ms[k].Equal(ca.SnapshotCandidate(k)) {
				t.Fatalf("choice %d differs from its snapshot", k)
			}
		}
	})
}
