package bedrock

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// TestPropertyStreamSplits: however ConverseStream splits reasoning text,
// its signature, text and tool input into deltas, the stream (as JSON
// lines and in the binary framing) folds to the message of the same reply
// read whole.
func TestPropertyStreamSplits(tt *testing.T) {
	t0 := tt // linesToEvents wants a testing.TB
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	gen := rapid.StringMatching(`[a-zA-Z0-9 .,!?"\\é😀\n]{1,30}`)
	rapid.Check(tt, func(t *rapid.T) {
		thinking, sig, text := gen.Draw(t, "thinking"), rapid.StringMatching(`[A-Za-z0-9+/]{1,30}`).Draw(t, "sig"), gen.Draw(t, "text")
		input := `{"city":` + q(gen.Draw(t, "city")) + `,"n":[1,2]}`
		body := `{"output":{"message":{"role":"assistant","content":[` +
			`{"reasoningContent":{"reasoningText":{"text":` + q(thinking) + `,"signature":` + q(sig) + `}}},` +
			`{"text":` + q(text) + `},{"toolUse":{"toolUseId":"t1","name":"f","input":` + input + `}}]}},` +
			`"stopReason":"tool_use","usage":{"inputTokens":3,"outputTokens":9,"totalTokens":12}}`
		want, _, err := converse{}.DecodeReply([]byte(body), provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		add := func(s string) { lines = append(lines, s) }
		delta := func(i int, d string) string {
			return `{"contentBlockDelta":{"contentBlockIndex":` + string(rune('0'+i)) + `,"delta":` + d + `}}`
		}
		add(`{"messageStart":{"role":"assistant"}}`)
		for _, p := range splitString(t, thinking, "t") {
			add(delta(0, `{"reasoningContent":{"text":`+q(p)+`}}`))
		}
		for _, p := range splitString(t, sig, "s") {
			add(delta(0, `{"reasoningContent":{"signature":`+q(p)+`}}`))
		}
		add(`{"contentBlockStop":{"contentBlockIndex":0}}`)
		for _, p := range splitString(t, text, "x") {
			add(delta(1, `{"text":`+q(p)+`}`))
		}
		add(`{"contentBlockStop":{"contentBlockIndex":1}}`)
		add(`{"contentBlockStart":{"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"t1","name":"f"}}}}`)
		for _, p := range splitString(t, input, "a") {
			add(delta(2, `{"toolUse":{"input":`+q(p)+`}}`))
		}
		add(`{"contentBlockStop":{"contentBlockIndex":2}}`)
		add(`{"messageStop":{"stopReason":"tool_use"}}`)
		add(`{"metadata":{"usage":{"inputTokens":3,"outputTokens":9,"totalTokens":12}}}`)
		jsonl := []byte(strings.Join(lines, "\n") + "\n")
		for name, in := range map[string][]byte{"lines": jsonl, "binary": binaryStream(linesToEvents(t0, jsonl))} {
			got, _, err := converse{}.ReadStream(bytes.NewReader(in), provider.Options{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if !got.Equal(want) {
				g, _ := convo.AppendMessage(nil, got)
				w, _ := convo.AppendMessage(nil, want)
				t.Fatalf("%s folded\n%s\nwant\n%s", name, g, w)
			}
		}
	})
}

// splitString cuts s into pieces at rune boundaries.
func splitString(t *rapid.T, s, label string) []string {
	runes := []rune(s)
	var out []string
	for len(runes) > 0 {
		n := rapid.IntRange(1, len(runes)).Draw(t, label)
		out = append(out, string(runes[:n]))
		runes = runes[n:]
	}
	return out
}
