package archive

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"

	"github.com/convo-go/convo"
)

// genText draws non-empty texts that stress the writers: quotes, new
// lines, backtick runs (Markdown fences), JSON-looking text, non-ASCII.
func genText() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.StringMatching(`[a-zA-Z0-9 _.-]{1,12}`),
		rapid.SampledFrom([]string{"\"quoted\"", "a\nb", "```go\nx\n```", "````", "{\"a\":1}", "é😀", "<b>&</b>", "\\"}),
		rapid.String().Filter(func(s string) bool { return s != "" && utf8.ValidString(s) }),
	)
}

// genHistory draws a valid history that fine-tuning JSONL holds whole:
// a system prompt, user turns, assistant text and tool calls answered by
// text results.
func genHistory() *rapid.Generator[convo.History] {
	return rapid.Custom(func(t *rapid.T) convo.History {
		var h convo.History
		if rapid.Bool().Draw(t, "system") {
			h = append(h, convo.System(genText().Draw(t, "sys")))
		}
		calls := 0
		for i, n := 0, rapid.IntRange(1, 6).Draw(t, "turns"); i < n; i++ {
			h = append(h, convo.User(genText().Draw(t, "user")))
			if rapid.Bool().Draw(t, "tools") {
				m := convo.Message{Role: convo.RoleAssistant}
				if rapid.Bool().Draw(t, "preamble") {
					m.Parts = append(m.Parts, convo.Text(genText().Draw(t, "pre")))
				}
				var results []convo.Part
				for k, nc := 0, rapid.IntRange(1, 3).Draw(t, "calls"); k < nc; k++ {
					calls++
					id, name := fmt.Sprintf("call_%d", calls), rapid.SampledFrom([]string{"get_weather", "search", "run"}).Draw(t, "name")
					args, _ := json.Marshal(map[string]string{"q": genText().Draw(t, "arg")})
					m.Parts = append(m.Parts, convo.ToolCall(id, name, args))
					results = append(results, convo.ToolResult(id, name, genText().Draw(t, "out")))
				}
				h = append(h, m)
				for _, r := range results {
					h = append(h, convo.ToolResults(r)) // fine-tuning JSONL has one tool message per result
				}
			}
			h = append(h, convo.Assistant(genText().Draw(t, "answer")))
		}
		return h
	})
}

func roundTrip(t *rapid.T, f Format, c *Conversation) *Conversation {
	var buf bytes.Buffer
	if _, err := Write(&buf, f, []*Conversation{c}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(&buf, f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := ReadAll(r)
	if err != nil || len(cs) != 1 {
		t.Fatalf("read back %d conversations: %v\n%s", len(cs), err, buf.Bytes())
	}
	return cs[0]
}

// TestFineTuneRoundTripProperty: a history fine-tuning JSONL holds whole
// comes back equal, and is still valid.
func TestFineTuneRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory().Draw(t, "h")
		back := roundTrip(t, FineTune, &Conversation{History: h})
		if !back.History.Equal(h) {
			a, _ := convo.MarshalLines(h)
			b, _ := convo.MarshalLines(back.History)
			t.Fatalf("changed:\n%s\nvs\n%s", a, b)
		}
		if len(back.Warnings) > 0 {
			t.Fatalf("warnings: %v", back.Warnings)
		}
	})
}

// TestShareGPTFixpointProperty: ShareGPT renames call ids and splits
// text from calls, so the first read normalises; from there a round trip
// changes nothing, and every read is valid.
func TestShareGPTFixpointProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory().Draw(t, "h")
		once := roundTrip(t, ShareGPT, &Conversation{History: h})
		twice := roundTrip(t, ShareGPT, once)
		if err := once.History.Validate(); err != nil {
			t.Fatal(err)
		}
		if !twice.History.Equal(once.History) {
			a, _ := convo.MarshalLines(once.History)
			b, _ := convo.MarshalLines(twice.History)
			t.Fatalf("not a fixpoint:\n%s\nvs\n%s", a, b)
		}
	})
}

// TestMarkdownProperty: every text of the history is in the transcript,
// and no text can end a fenced block early.
func TestMarkdownProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory().Draw(t, "h")
		md := MarkdownOf(&Conversation{History: h}, WriteOptions{})
		for _, m := range h {
			for _, p := range m.Parts {
				if p.Type == convo.TypeText && !strings.Contains(md, p.Text) {
					t.Fatalf("%q missing from\n%s", p.Text, md)
				}
				if p.Type == convo.TypeToolResult {
					var b strings.Builder
					fence(&b, "", p.Parts[0].Text)
					if !strings.Contains(md, b.String()) {
						t.Fatalf("result %q not fenced whole in\n%s", p.Parts[0].Text, md)
					}
					lines := strings.Split(b.String(), "\n")
					open := lines[0]
					for _, l := range lines[1 : len(lines)-3] {
						if strings.HasPrefix(l, open) {
							t.Fatalf("a line of the result %q closes the fence %q", l, open)
						}
					}
				}
			}
		}
	})
}
