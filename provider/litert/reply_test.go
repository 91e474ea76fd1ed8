package litert

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestReplies reads every recorded stream in testdata/replies, compares
// the message (and error) with its golden file and, where the equivalent
// non-streamed body is there too, with DecodeReply of that body.
func TestReplies(t *testing.T) {
	codectest.Replies(t, Conversation(), "testdata/replies/*.jsonl")
}

// FuzzAccumulate feeds arbitrary lines to an accumulator: it must never
// panic, and what it returns always encodes.
func FuzzAccumulate(f *testing.F) {
	codectest.FuzzAccumulate(f, Conversation(), "testdata/replies/*.jsonl")
}

// BenchmarkAccumulate folds replies of 10,000 and 100,000 text chunks; the
// cost per chunk must not grow with the length of the reply.
func BenchmarkAccumulate(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		evs := make([]provider.Event, n+1)
		for i := range n {
			evs[i].Data = fmt.Appendf(nil, `{"role":"assistant","content":[{"type":"text","text":"tok%d "}]}`, i%100)
		}
		evs[n].Data = []byte(`{}`)
		b.Run(fmt.Sprintf("deltas=%d", n), func(b *testing.B) { codectest.BenchAccumulate(b, Conversation(), evs) })
	}
}

func TestDecodeReply(t *testing.T) {
	body := `{"role":"assistant","content":[{"type":"text","text":"Hi"}],"channels":{"thought":"greet"}}`
	m, warns, err := Conversation().DecodeReply([]byte(body), provider.Options{Model: "gemma-4-e2b"})
	if err != nil || len(warns) != 0 {
		t.Fatal(err, warns)
	}
	if m.Finish != convo.FinishStop || m.Origin == nil || *m.Origin != (convo.Origin{Provider: "litert", Model: "gemma-4-e2b"}) ||
		m.Parts[0].Model != "gemma-4-e2b" || m.Text() != "Hi" || m.Usage != nil {
		t.Errorf("got %+v", m)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"error":"Task failed with state: 3"}`, "litert: Task failed with state: 3"},
		{`{"role":"user","content":"hi"}`, `role: a reply comes from the assistant, not "user"`},
		{`{"role":"assistant","content":7}`, "content: want a string"},
		{`[]`, "got array, want object"},
		{`{"role":"assistant"} {}`, "unexpected data after the JSON value"},
	} {
		_, _, err := Conversation().DecodeReply([]byte(tc.body), provider.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("DecodeReply(%s): got %v, want …%s…", tc.body, err, tc.want)
		}
	}
}

// TestSaltedIDs: calls without ids get ids that depend on the whole reply,
// so the same call in two different replies does not share an id, and the
// same reply always gives the same ids.
func TestSaltedIDs(t *testing.T) {
	a := `{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"now","arguments":{}}}]}`
	b := `{"role":"assistant","content":"Again:","tool_calls":[{"type":"function","function":{"name":"now","arguments":{}}}]}`
	ma, _, _ := Conversation().DecodeReply([]byte(a), provider.Options{})
	mb, _, _ := Conversation().DecodeReply([]byte(b), provider.Options{})
	ma2, _, _ := Conversation().DecodeReply([]byte(a), provider.Options{})
	ida, idb := ma.ToolCalls()[0].ID, mb.ToolCalls()[0].ID
	if ida == idb || ida != ma2.ToolCalls()[0].ID || !strings.HasPrefix(ida, "call_") {
		t.Errorf("ids %q %q %q", ida, idb, ma2.ToolCalls()[0].ID)
	}
	// Encoded into the next request, the call goes back without an id and
	// so does its result.
	h := convo.History{convo.User("time?"), ma, convo.ToolResults(convo.ToolResult(ida, "now", "noon"))}
	out, _, err := Conversation().Encode(h, provider.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"user","content":[{"type":"text","text":"time?"}]},` +
		`{"role":"assistant","tool_calls":[{"type":"function","function":{"name":"now","arguments":{}}}]},` +
		`{"role":"tool","content":[{"type":"tool_response","name":"now","response":"noon"}]}]`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

func TestAccumulator(t *testing.T) {
	acc := Conversation().NewAccumulator(provider.Options{})
	for i, chunk := range []string{
		`{"role":"assistant","channels":{"thought":"a"},"reasoning_content":"a"}`,
		`{"role":"assistant","content":[{"type":"text","text":"Hel"}]}`,
		`{"role":"assistant","content":[{"type":"text","text":"lo"}]}`,
	} {
		if err := acc.Add(provider.Event{Data: []byte(chunk)}); err != nil {
			t.Fatal(err)
		}
		if _, _, err := acc.Message(); !errors.Is(err, provider.ErrIncomplete) {
			t.Fatalf("chunk %d: Message before the end: %v", i, err)
		}
	}
	if s := acc.Snapshot(); s.Text() != "Hello" || s.Finish != "" {
		t.Errorf("snapshot %+v", s)
	}
	acc.Add(provider.Event{Data: []byte(`{}`)})
	m, _, err := acc.Message()
	if err != nil || m.Text() != "Hello" || m.Finish != convo.FinishStop {
		t.Fatalf("%v %+v", err, m)
	}
	acc.Add(provider.Event{Data: []byte(`{"role":"assistant","content":"x"}`)})
	if _, warns, err := acc.Message(); err != nil || len(warns) != 1 {
		t.Errorf("late chunk: %v %v", warns, err)
	}

	acc = Conversation().NewAccumulator(provider.Options{})
	acc.Add(provider.Event{Data: []byte(`{"role":"assistant","content":"Hel"}`)})
	if err := acc.Add(provider.Event{Data: []byte(`{"error":"Task failed"}`)}); err == nil || err.Error() != "litert: Task failed" {
		t.Fatalf("error chunk: %v", err)
	}
	if err := acc.Add(provider.Event{Data: []byte(`{}`)}); err == nil {
		t.Error("Add after an error succeeded")
	}
	if m, _, err := acc.Message(); err == nil || m.Text() != "Hel" {
		t.Errorf("partial %q, %v", m.Text(), err)
	}

	acc = Conversation().NewAccumulator(provider.Options{Limits: convo.Limits{MaxBytes: 50}})
	chunk := []byte(`{"role":"assistant","content":"0123456789"}`)
	acc.Add(provider.Event{Data: chunk})
	if err := acc.Add(provider.Event{Data: chunk}); err == nil || !strings.Contains(err.Error(), "more than 50 bytes") {
		t.Errorf("limit: %v", err)
	}
	if _, _, err := Conversation().ReadStream(strings.NewReader("\n\n"), provider.Options{}); !errors.Is(err, provider.ErrIncomplete) {
		t.Errorf("empty stream: %v", err)
	}
}
