package litert

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// TestPropertyStreamSplits: however LiteRT-LM splits the thought channel
// and the text into chunks, the stream folds to the message of the same
// reply read whole.
func TestPropertyStreamSplits(t *testing.T) {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	gen := rapid.StringMatching(`[a-zA-Z0-9 .,!?"\\é😀\n]{1,30}`)
	rapid.Check(t, func(t *rapid.T) {
		thought, text := gen.Draw(t, "thought"), gen.Draw(t, "text")
		body := `{"role":"assistant","content":[{"type":"text","text":` + q(text) + `}],"channels":{"thought":` + q(thought) + `}}`
		want, _, err := conversation{}.DecodeReply([]byte(body), provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, p := range splitString(t, thought, "t") {
			lines = append(lines, `{"role":"assistant","channels":{"thought":`+q(p)+`}}`)
		}
		for _, p := range splitString(t, text, "x") {
			lines = append(lines, `{"role":"assistant","content":[{"type":"text","text":`+q(p)+`}]}`)
		}
		lines = append(lines, `{}`)
		got, _, err := conversation{}.ReadStream(bytes.NewReader([]byte(strings.Join(lines, "\n")+"\n")), provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			g, _ := convo.AppendMessage(nil, got)
			w, _ := convo.AppendMessage(nil, want)
			t.Fatalf("folded\n%s\nwant\n%s", g, w)
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
