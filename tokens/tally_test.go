package tokens

import (
	"encoding/json"
	"reflect"
	"testing"

	"pgregory.net/rapid"

	"github.com/convo-go/convo"
)

// genMessage draws a message of any role that matters to counting: turn-scoped
// system messages, final answers and tool-call steps (with and without a
// phase), errors, empty messages, images that warn, and usage.
func genMessage(t *rapid.T) convo.Message {
	text := rapid.SampledFrom([]string{"", "hi", "the weather in Paris is mild", "日本語のテキスト"}).Draw(t, "text")
	var m convo.Message
	switch rapid.IntRange(0, 5).Draw(t, "kind") {
	case 0:
		m = convo.System(text)
		if rapid.Bool().Draw(t, "turn") {
			m.Scope = convo.ScopeTurn
		}
	case 1:
		m = convo.User(text)
		if rapid.Bool().Draw(t, "url") {
			m.Parts = append(m.Parts, convo.ImageURL("image/png", "https://example.com/a.png"))
		}
	case 2:
		m = convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{convo.Text(text)}}
		if rapid.Bool().Draw(t, "call") {
			m.Parts = append(m.Parts, convo.ToolCall("c1", "search", json.RawMessage(`{"q":"x"}`)))
		}
		m.Phase = rapid.SampledFrom([]convo.Phase{"", convo.PhaseCommentary, convo.PhaseFinal}).Draw(t, "phase")
		if rapid.Bool().Draw(t, "usage") {
			m.Usage = &convo.Usage{Input: rapid.Int64Range(0, 5000).Draw(t, "in"), Output: rapid.Int64Range(0, 500).Draw(t, "out")}
		}
	case 3:
		m = convo.ToolResults(convo.ToolResult("c1", "search", text))
	case 4:
		m = convo.Message{Role: convo.RoleError, Parts: []convo.Part{convo.Text(text)}}
	case 5:
		m = convo.Message{Role: convo.RoleUser}
	}
	return m
}

// TestTallyProperties: a Tally fed a history message by message gives
// exactly what Count and Cheap give for the whole history, at every prefix.
func TestTallyProperties(t *testing.T) {
	counters := map[string]*Counter{}
	for _, model := range []string{"gpt-4o", "claude-sonnet-4"} {
		c, err := NewCounter(model, Options{})
		if err != nil {
			t.Fatal(err)
		}
		counters[model] = c
	}
	rapid.Check(t, func(t *rapid.T) {
		c := counters[rapid.SampledFrom([]string{"gpt-4o", "claude-sonnet-4"}).Draw(t, "model")]
		h := rapid.SliceOfN(rapid.Custom(genMessage), 0, 20).Draw(t, "history")
		tl := c.Tally()
		check := func(h convo.History) {
			if got, want := tl.Result(), c.Count(h); !reflect.DeepEqual(got, want) {
				t.Fatalf("Result of %d messages:\n got %+v\nwant %+v", len(h), got, want)
			}
			if got, want := tl.Cheap(), c.Cheap(h); !reflect.DeepEqual(got, want) {
				t.Fatalf("Cheap of %d messages:\n got %+v\nwant %+v", len(h), got, want)
			}
		}
		check(nil)
		// A CheapTally counts only what Cheap needs, whether it is asked
		// along the way (peek) or once at the end.
		lazy, peek := c.CheapTally(), rapid.Bool().Draw(t, "peek")
		for i, m := range h {
			tl.Add(m)
			check(h[:i+1])
			lazy.Add(m)
			if peek || i == len(h)-1 {
				if got, want := lazy.Cheap(), c.Cheap(h[:i+1]); !reflect.DeepEqual(got, want) {
					t.Fatalf("CheapTally's Cheap of %d messages:\n got %+v\nwant %+v", i+1, got, want)
				}
				if got, want := lazy.Result(), c.Cheap(h[:i+1]); !reflect.DeepEqual(got, want) {
					t.Fatalf("CheapTally's Result of %d messages is not its Cheap", i+1)
				}
			}
		}
	})
}

// TestTallyExpires: a turn-scoped system message counts while its turn is
// open and stops counting once a final answer ends it.
func TestTallyExpires(t *testing.T) {
	c, err := NewCounter("gpt-4o", Options{})
	if err != nil {
		t.Fatal(err)
	}
	sys := convo.System("answer in French")
	sys.Scope = convo.ScopeTurn
	tl := c.Tally()
	tl.Add(convo.User("hello"))
	tl.Add(sys)
	if r := tl.Result(); !r.Messages[1].Sent {
		t.Fatalf("open turn: %+v", r.Messages[1])
	}
	tl.Add(convo.Assistant("bonjour"))
	r := tl.Result()
	if m := r.Messages[1]; m.Sent || m.Tokens != 0 || m.Note != "not sent: its turn is over" {
		t.Fatalf("ended turn: %+v", m)
	}
	if tl.Len() != 3 || r.Tokens != r.Messages[0].Tokens+r.Messages[2].Tokens+r.Request {
		t.Fatalf("total %d of %+v", r.Tokens, r.Messages)
	}
}
