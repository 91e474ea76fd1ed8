package ollama

import (
	"bytes"
	"errors"
	"fmt"
	"os"
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
	codectest.Replies(t, Chat(), "testdata/replies/*.ndjson")
}

func TestDecodeReply(t *testing.T) {
	body, err := os.ReadFile("testdata/replies/error_body.json")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = Chat().DecodeReply(body, provider.Options{})
	var se *provider.APIError
	if !errors.As(err, &se) || se.Provider != ProviderID || se.Message != `model "nope" not found, try pulling it first` {
		t.Errorf("error body: got %v", err)
	}
	m, warns, err := Chat().DecodeReply([]byte(`{"model":"m","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":"Hi"},"done":false}`), provider.Options{})
	if err != nil || len(warns) != 1 || m.Text() != "Hi" || m.Finish != "" {
		t.Errorf("not done: %v %v %+v", err, warns, m)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"message":{"role":"assistant","content":1}}`, "message.content: got number, want a string"},
		{`{"done":"yes"}`, "done: got string, want boolean"},
		{`{"eval_count":-1}`, "eval_count: negative token count -1"},
		{`{"total_duration":"1s"}`, "total_duration: got string, want number"},
		{`[]`, "got array, want object"},
		{`{"done":true} {}`, "unexpected data after the JSON value"},
	} {
		_, _, err := Chat().DecodeReply([]byte(tc.body), provider.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("DecodeReply(%s): got %v, want …%s…", tc.body, err, tc.want)
		}
	}
}

func TestFinish(t *testing.T) {
	for _, tc := range []struct {
		reason string
		calls  bool
		want   convo.Finish
	}{
		{"stop", false, convo.FinishStop},
		{"stop", true, convo.FinishToolUse},
		{"", false, convo.FinishStop},
		{"length", true, convo.FinishLength},
		{"load", false, convo.FinishOther},
		{"unload", false, convo.FinishOther},
		{"something-new", false, convo.FinishOther},
	} {
		msg := `{"role":"assistant","content":"x"}`
		if tc.calls {
			msg = `{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{}}}]}`
		}
		body := fmt.Sprintf(`{"model":"m","message":%s,"done":true,"done_reason":%q}`, msg, tc.reason)
		m, _, err := Chat().DecodeReply([]byte(body), provider.Options{})
		if err != nil || m.Finish != tc.want {
			t.Errorf("%q (calls %v): finish %q, err %v; want %q", tc.reason, tc.calls, m.Finish, err, tc.want)
		}
		if tc.reason != "" && !strings.Contains(string(m.Native["ollama"]), `"done_reason":"`+tc.reason+`"`) {
			t.Errorf("%q: raw reason not kept: %s", tc.reason, m.Native["ollama"])
		}
	}
}

func TestAccumulator(t *testing.T) {
	data, err := os.ReadFile("testdata/replies/text.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	acc := Chat().NewAccumulator(provider.Options{})
	var text string
	for i, l := range lines {
		if err := acc.Add(provider.Event{Data: l}); err != nil {
			t.Fatal(err)
		}
		snap := acc.Snapshot()
		if got := snap.Text(); !strings.HasPrefix(got, text) {
			t.Fatalf("line %d: snapshot text %q does not extend %q", i, got, text)
		}
		text = snap.Text()
		if i < len(lines)-1 {
			if _, _, err := acc.Message(); !errors.Is(err, provider.ErrIncomplete) {
				t.Fatalf("line %d: Message before the done line: %v", i, err)
			}
		}
	}
	if _, _, err := acc.Message(); err != nil {
		t.Fatal(err)
	}
	// A line after the done line is a warning, not an error.
	if err := acc.Add(provider.Event{Data: lines[0]}); err != nil {
		t.Fatal(err)
	}
	if _, warns, err := acc.Message(); err != nil || len(warns) != 1 || !strings.Contains(warns[0].String(), "after the done line") {
		t.Errorf("late line: %v %v", warns, err)
	}
	if _, _, err := acc.Message(); err != nil {
		t.Fatal(err)
	}

	// An error line: the partial message stays, every later Add fails.
	acc = Chat().NewAccumulator(provider.Options{})
	acc.Add(provider.Event{Data: []byte(`{"message":{"role":"assistant","content":"Hel"}}`)})
	err = acc.Add(provider.Event{Data: []byte(`{"error":"boom"}`)})
	if err == nil || err.Error() != "ollama: boom" {
		t.Fatalf("error line: %v", err)
	}
	if err := acc.Add(provider.Event{Data: []byte(`{"message":{"content":"lo"}}`)}); err == nil {
		t.Error("Add after an error succeeded")
	}
	if m, _, err := acc.Message(); err == nil || m.Text() != "Hel" {
		t.Errorf("partial message %q, err %v", m.Text(), err)
	}

	// The size limit covers the whole stream.
	acc = Chat().NewAccumulator(provider.Options{Limits: convo.Limits{MaxBytes: 64}})
	line := []byte(`{"message":{"role":"assistant","content":"0123456789"}}`)
	if err := acc.Add(provider.Event{Data: line}); err != nil {
		t.Fatal(err)
	}
	if err := acc.Add(provider.Event{Data: line}); err == nil || !strings.Contains(err.Error(), "more than 64 bytes") {
		t.Errorf("limit: %v", err)
	}
	if _, _, err := Chat().ReadStream(strings.NewReader(""), provider.Options{}); !errors.Is(err, provider.ErrIncomplete) {
		t.Errorf("empty stream: %v", err)
	}
}

// FuzzAccumulate feeds arbitrary lines to an accumulator: it must never
// panic, and what it returns always encodes.
func FuzzAccumulate(f *testing.F) {
	codectest.FuzzAccumulate(f, Chat(), "testdata/replies/*.ndjson")
}

// BenchmarkAccumulate folds replies of 10,000 and 100,000 content deltas;
// the cost per event must not grow with the length of the reply.
func BenchmarkAccumulate(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		evs := make([]provider.Event, n+1)
		for i := range n {
			evs[i].Data = fmt.Appendf(nil, `{"model":"qwen3","created_at":"2026-11-29T10:00:00.%09dZ","message":{"role":"assistant","content":"tok%d "},"done":false}`, i, i%100)
		}
		evs[n].Data = []byte(`{"model":"qwen3","created_at":"2026-11-29T10:01:00Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":10,"eval_count":100000}`)
		b.Run(fmt.Sprintf("deltas=%d", n), func(b *testing.B) { codectest.BenchAccumulate(b, Chat(), evs) })
	}
}

// TestReplyInRequest: a decoded reply goes back into the next request as
// Ollama wrote it — no reply metadata, no invented ids — and the results
// that answer its calls pair with them again.
func TestReplyInRequest(t *testing.T) {
	body, err := os.ReadFile("testdata/replies/tools.json")
	if err != nil {
		t.Fatal(err)
	}
	reply, _, err := Chat().DecodeReply(body, provider.Options{})
	if err != nil {
		t.Fatal(err)
	}
	calls := reply.ToolCalls()
	h := convo.History{convo.User("Weather and time in Paris?"), reply, convo.ToolResults(
		convo.ToolResult(calls[0].ID, calls[0].Name, "18"),
		convo.ToolResult(calls[1].ID, calls[1].Name, "16"),
		convo.ToolResult(calls[2].ID, calls[2].Name, "10:00"),
	)}
	out, warns, err := Chat().Encode(h, provider.Options{Strict: true})
	if err != nil {
		t.Fatalf("%v %v", err, warns)
	}
	want := `{"messages":[{"role":"user","content":"Weather and time in Paris?"},` +
		`{"role":"assistant","content":"","thinking":"Need the tool.","tool_calls":[` +
		`{"id":"call_a1","function":{"index":0,"name":"get_weather","arguments":{"city":"Paris","unit":"celsius"}}},` +
		`{"id":"call_b2","function":{"index":1,"name":"get_weather","arguments":{"city":"Lyon"}}},` +
		`{"function":{"index":2,"name":"get_time","arguments":{"tz":"Europe/Paris"}}}]},` +
		`{"role":"tool","content":"18","tool_name":"get_weather","tool_call_id":"call_a1"},` +
		`{"role":"tool","content":"16","tool_name":"get_weather","tool_call_id":"call_b2"},` +
		`{"role":"tool","content":"10:00","tool_name":"get_time"}]}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	back, _, err := Chat().Decode(out, provider.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	// The wire has no id for the third call: decoding makes one again, and
	// the result pairs with it by name.
	if id, want := back[4].Parts[0].ID, back[1].ToolCalls()[2].ID; id != want {
		t.Errorf("the result pairs with %q, want %q", id, want)
	}
}

// TestSynthesisedIDsStable: a call Ollama sent without an id has one id from
// the snapshot it first appears in to the final message, although every line
// carries a new created_at — a gateway streams the id before the reply ends.
func TestSynthesisedIDsStable(t *testing.T) {
	data, err := os.ReadFile("testdata/replies/tools.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	acc := Chat().NewAccumulator(provider.Options{})
	seen := map[int]string{}
	for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		if err := acc.Add(provider.Event{Data: l}); err != nil {
			t.Fatal(err)
		}
		for j, p := range acc.Snapshot().Parts {
			if p.Type == convo.TypeToolCall && seen[j] == "" {
				seen[j] = p.ID
			}
		}
	}
	final, _, err := acc.Message()
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 {
		t.Fatal("the fixture has no tool calls")
	}
	for j, id := range seen {
		if got := final.Parts[j].ID; got != id {
			t.Errorf("parts[%d]: id %q in the first snapshot, %q in the final message", j, id, got)
		}
	}
}
