package sdktest

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/openai/openai-go/v3"
	"google.golang.org/genai"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// candidateDeltas reads a recorded stream with several candidates through a
// DeltaReader that reports them all, and returns its deltas and every
// candidate convo folded.
func candidateDeltas(t *testing.T, format, file string) ([]provider.Delta, []convo.Message) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := all.Lookup(format)
	if err != nil {
		t.Fatal(err)
	}
	acc := rc.NewAccumulator(provider.Options{})
	dr := provider.NewDeltaReader(acc)
	dr.ReadCandidates()
	var ds []provider.Delta
	for _, ev := range sseEvents(data) {
		if ds, err = dr.Add(ds, ev); err != nil {
			t.Fatal(err)
		}
	}
	ds, _, _, err = dr.Finish(ds)
	if err != nil {
		t.Fatal(err)
	}
	ms, _, err := provider.AccumulatedReplies(acc)
	if err != nil {
		t.Fatal(err)
	}
	return ds, ms
}

// chatSDKChoices folds a Chat chunk stream with openai-go's
// ChatCompletionAccumulator.
func chatSDKChoices(t *testing.T, sse []byte) openai.ChatCompletionAccumulator {
	t.Helper()
	var acc openai.ChatCompletionAccumulator
	for _, ev := range sseEvents(sse) {
		var chunk openai.ChatCompletionChunk
		if err := json.Unmarshal(ev.Data, &chunk); err != nil {
			t.Fatal(err)
		}
		if !acc.AddChunk(chunk) {
			t.Fatalf("refused %s", ev.Data)
		}
	}
	return acc
}

// TestChatChoicesSDK: openai-go's ChatCompletionAccumulator and convo agree
// on every choice of a recorded n = 3 stream, and on every choice of the
// stream convo's Chat encoder writes from it, and from a Gemini stream with
// three candidates.
func TestChatChoicesSDK(t *testing.T) {
	rec, err := os.ReadFile("../provider/openai/testdata/candidates/n3-recorded.sse")
	if err != nil {
		t.Fatal(err)
	}
	ds, want := candidateDeltas(t, "openai-chat", "../provider/openai/testdata/candidates/n3-recorded.sse")
	gds, gwant := candidateDeltas(t, "gemini", "../provider/gemini/testdata/candidates/count3.sse")
	for name, c := range map[string]struct {
		sse  []byte
		want []convo.Message
	}{
		"recorded":     {rec, want},
		"encoded":      {encodeDeltas(t, "openai-chat", ds), want},
		"gemini->chat": {encodeDeltas(t, "openai-chat", gds), gwant},
	} {
		acc := chatSDKChoices(t, c.sse)
		if len(acc.Choices) != len(c.want) {
			t.Errorf("%s: the SDK has %d choices, convo %d", name, len(acc.Choices), len(c.want))
			continue
		}
		for k, ch := range acc.Choices {
			got := sdkSeen{Text: ch.Message.Content}
			for _, tc := range ch.Message.ToolCalls {
				got.Calls = append(got.Calls, tc.ID+" "+tc.Function.Name+" "+canon(tc.Function.Arguments))
			}
			if k == 0 {
				got.Output = acc.Usage.CompletionTokens
			}
			if w := seenOf(c.want[k]); int(ch.Index) != k || got.Text != w.Text || len(got.Calls) != len(w.Calls) || (k == 0 && got.Output != w.Output) {
				t.Errorf("%s: choice %d (index %d):\n got %+v\nwant %+v", name, k, ch.Index, got, w)
			}
		}
	}
}

// TestGeminiCandidatesSDK: genai's GenerateContentResponse reads every
// candidate of the Gemini stream convo writes from a recorded n = 3 Chat
// stream, by index, with the text convo folded.
func TestGeminiCandidatesSDK(t *testing.T) {
	ds, want := candidateDeltas(t, "openai-chat", "../provider/openai/testdata/candidates/n3-recorded.sse")
	texts := map[int32]string{}
	finished := map[int32]genai.FinishReason{}
	for _, ev := range sseEvents(encodeDeltas(t, "gemini", ds)) {
		var r genai.GenerateContentResponse
		if err := json.Unmarshal(ev.Data, &r); err != nil {
			t.Fatal(err)
		}
		for _, c := range r.Candidates {
			if c.Content != nil {
				for _, p := range c.Content.Parts {
					texts[c.Index] += p.Text
				}
			}
			if c.FinishReason != "" {
				finished[c.Index] = c.FinishReason
			}
		}
	}
	if len(texts) != len(want) || len(finished) != len(want) {
		t.Fatalf("the SDK read %d candidates (%d finished), convo %d", len(texts), len(finished), len(want))
	}
	for k, m := range want {
		if texts[int32(k)] != m.Text() || finished[int32(k)] != genai.FinishReasonStop {
			t.Errorf("candidate %d: %q %q", k, texts[int32(k)], finished[int32(k)])
		}
	}
}
