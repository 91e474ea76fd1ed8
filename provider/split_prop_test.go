package provider_test

import (
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// genSplitText draws text that stresses splitting: multi-byte runes,
// escapes, line breaks.
var genSplitText = rapid.OneOf(
	rapid.StringMatching(`[a-zA-Z0-9 .,!?]{1,40}`),
	rapid.SampledFrom([]string{"line\nbreak", `quote " and \ slash`, "émoji 😀 «ok»", "tab\there", "<tag>&amp;"}),
)

// genSplitReply draws an assistant reply with the parts every streaming
// format carries in pieces: signed reasoning, text and a tool call.
func genSplitReply(t *rapid.T, provider string) convo.Message {
	args := `{"city":` + jsonQuote(genSplitText.Draw(t, "city")) + `,"n":[1,2]}`
	return convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
		{Type: convo.TypeReasoning, Text: genSplitText.Draw(t, "thinking"), Provider: provider,
			Signature: rapid.StringMatching(`[A-Za-z0-9+/]{4,30}=?`).Draw(t, "sig")},
		convo.Text(genSplitText.Draw(t, "text")),
		convo.ToolCall("call_1", "get_weather", json.RawMessage(args)),
	}, Usage: &convo.Usage{Input: 12, Output: 34}, Finish: convo.FinishToolUse}
}

func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// splitDeltas cuts every piece delta (text, arguments, signature) into
// pieces at rune boundaries, as a provider may send them.
func splitDeltas(t *rapid.T, ds []provider.Delta) []provider.Delta {
	var out []provider.Delta
	for i, d := range ds {
		switch d.Kind {
		case provider.DeltaText, provider.DeltaArgs, provider.DeltaSignature:
			for _, piece := range splitRunes(t, d.Text, string(rune('a'+i%26))) {
				p := d
				p.Text = piece
				out = append(out, p)
			}
		default:
			out = append(out, d)
		}
	}
	return out
}

// splitRunes cuts s into pieces at rune boundaries.
func splitRunes(t *rapid.T, s, label string) []string {
	runes := []rune(s)
	var out []string
	for len(runes) > 0 {
		n := rapid.IntRange(1, len(runes)).Draw(t, label)
		out = append(out, string(runes[:n]))
		runes = runes[n:]
	}
	return out
}

// chunks is a reader handing out a stream in the pieces it was cut into,
// one a Read: a connection's packets.
type chunks [][]byte

func (c *chunks) Read(p []byte) (int, error) {
	for len(*c) > 0 && len((*c)[0]) == 0 {
		*c = (*c)[1:]
	}
	if len(*c) == 0 {
		return 0, io.EOF
	}
	n := copy(p, (*c)[0])
	(*c)[0] = (*c)[0][n:]
	return n, nil
}

// cutBytes cuts b at arbitrary byte offsets (inside runes, events and
// frames alike).
func cutBytes(t *rapid.T, b []byte) io.Reader {
	cuts := rapid.SliceOfN(rapid.IntRange(0, len(b)), 0, 12).Draw(t, "cuts")
	slices.Sort(cuts)
	var c chunks
	prev := 0
	for _, at := range cuts {
		c = append(c, b[prev:at])
		prev = at
	}
	c = append(c, b[prev:])
	return &c
}

// madeUpID matches the ids a stream encoder makes up for each stream.
var madeUpID = regexp.MustCompile(`(chatcmpl-|rs_|fc_|msg_)[0-9a-f]{16,32}`)

// writeStream writes deltas with format's stream encoder.
func writeStream(t *rapid.T, format string, ds []provider.Delta) []byte {
	var buf bytes.Buffer
	enc, err := all.NewStreamEncoder(format, &buf, provider.StreamOptions{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if err := enc.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestPropertyStreamSplitsEveryFormat: for every format with a stream
// encoder, however a reply's text, reasoning, signature and tool arguments
// are split into events, and however the stream's bytes are cut into
// reads, the format's stream reader folds the same message as from the
// stream with each part in one piece. (Bedrock's and LiteRT's streams,
// which convo does not write, have tests of their own below.)
func TestPropertyStreamSplitsEveryFormat(t *testing.T) {
	for _, f := range encoded {
		t.Run(f.format, func(t *testing.T) {
			rc, err := all.Lookup(f.format)
			if err != nil {
				t.Fatal(err)
			}
			rapid.Check(t, func(t *rapid.T) {
				m := genSplitReply(t, rc.Provider())
				m.Origin = &convo.Origin{Provider: rc.Provider(), Model: "m", ResponseID: "resp_1"}
				whole := provider.MessageDeltas(m)
				want, _, err := rc.ReadStream(bytes.NewReader(writeStream(t, f.format, whole)), provider.Options{})
				if err != nil {
					t.Fatal(err)
				}
				split := writeStream(t, f.format, splitDeltas(t, whole))
				got, _, err := rc.ReadStream(cutBytes(t, split), provider.Options{})
				if err != nil {
					t.Fatalf("%v\n%s", err, split)
				}
				// The encoders stamp the stream with the time they write it
				// (created, created_at): the two streams differ there only.
				// and with ids they make up (OpenAI's response and item ids).
				got.Time, want.Time, got.Native, want.Native = time.Time{}, time.Time{}, nil, nil
				g, _ := convo.AppendMessage(nil, got)
				w, _ := convo.AppendMessage(nil, want)
				if g, w := madeUpID.ReplaceAll(g, []byte("ID")), madeUpID.ReplaceAll(w, []byte("ID")); !bytes.Equal(g, w) {
					t.Fatalf("split stream folded\n%s\nwant\n%s\n%s", g, w, split)
				}
			})
		})
	}
}
