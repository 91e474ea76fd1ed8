package fit

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/tokens"
)

func TestFitsAsIs(t *testing.T) {
	c := counter(t)
	h := session(5, 10)
	total := count(c, h)
	r := mustFit(t, h, Options{Budget: total, Counter: c})
	if r.Level != 0 || len(r.Excluded) != 0 || len(r.Changed) != 0 || r.Tokens != total || r.Original != total || !r.History.Equal(h) {
		t.Fatalf("a history within budget was changed: %+v", r)
	}
}

func TestBudgetError(t *testing.T) {
	c := counter(t)
	h := session(6, 20)
	lastUser := len(h) - len(turn(5, false, 20))
	need := c.RequestTokens() + c.MessageTokens(h[0])
	for _, m := range h[lastUser:] {
		need += c.MessageTokens(m)
	}
	_, err := Fit(context.Background(), h, Options{Budget: need - 7, Counter: c})
	var be *BudgetError
	if !errors.As(err, &be) || be.Short() != 7 || be.Need != need {
		t.Fatalf("error %v, want a BudgetError 7 short of %d", err, need)
	}
	if msg := err.Error(); !strings.Contains(msg, "7 short") || strings.Contains(msg, "\n") {
		t.Errorf("error message %q", msg)
	}
	checkInvariants(t, h, mustFit(t, h, Options{Budget: need, Counter: c}), c)
}

func TestDropOldest(t *testing.T) {
	c := counter(t)
	h := session(12, 30)
	total := count(c, h)
	r := mustFit(t, h, Options{Budget: total / 2, Counter: c, Strategies: []Strategy{DropOldest}})
	checkInvariants(t, h, r, c)
	if len(r.Excluded) == 0 || len(r.Changed) != 0 || r.Level == 0 {
		t.Fatalf("report: %+v", r)
	}
	for i, e := range r.Excluded {
		if e.Index != 1+i || !strings.Contains(e.Reason, "oldest") {
			t.Errorf("excluded[%d] = %+v, want messages from the start, oldest first", i, e)
		}
	}
	// The kept part starts with a user turn or after a tool group.
	if d := 1 + len(r.Excluded); h[d].Role != convo.RoleUser && h[d-1].Role != convo.RoleTool {
		t.Errorf("kept part starts with %s after %s", h[d].Role, h[d-1].Role)
	}
}

func TestDropReasoning(t *testing.T) {
	c := counterFor(t, "claude-sonnet-4")
	h := session(10, 30)
	// A message holding only reasoning goes with it.
	h = append(h[:5:5], append(convo.History{{Role: convo.RoleAssistant, Parts: []convo.Part{convo.Reasoning(words(9, 80))}}}, h[5:]...)...)
	total := count(c, h)
	r := mustFit(t, h, Options{Budget: total - 200, Block: 100, Counter: c, Strategies: []Strategy{DropReasoning}})
	checkInvariants(t, h, r, c)
	if len(r.Changed) == 0 {
		t.Fatal("no reasoning dropped")
	}
	for _, ch := range r.Changed {
		if ch.What != "reasoning dropped" || ch.Saved <= 0 || r.History[ch.At].HasReasoning() {
			t.Errorf("changed %+v", ch)
		}
	}
	if len(r.Excluded) != 1 || r.Excluded[0].Index != 5 || !strings.Contains(r.Excluded[0].Reason, "only reasoning") {
		t.Errorf("excluded %+v, want the reasoning-only message", r.Excluded)
	}
	// The latest turn keeps its reasoning (checkInvariants compares it).
	if !r.History[len(r.History)-1].HasReasoning() {
		t.Error("reasoning of the latest turn dropped")
	}
}

func TestShortenResults(t *testing.T) {
	c := counter(t)
	h := session(10, 60)
	total := count(c, h)
	r := mustFit(t, h, Options{Budget: total - 100, Block: 100, ShortenTo: 64, Counter: c, Strategies: []Strategy{ShortenResults}})
	checkInvariants(t, h, r, c)
	if len(r.Changed) == 0 {
		t.Fatal("nothing shortened")
	}
	for _, ch := range r.Changed {
		m := r.History[ch.At]
		res := m.ToolResults()
		if ch.What != "tool result shortened" || len(res) != 1 || len(res[0].Parts) != 1 {
			t.Fatalf("changed %+v: %+v", ch, m)
		}
		text := res[0].Parts[0].Text
		if !strings.Contains(text, "[shortened by convo fit: 64 of ") || !strings.HasPrefix(h[ch.Index].Parts[0].Parts[0].Text, strings.SplitN(text, "\n", 2)[0]) {
			t.Errorf("shortened text %q", text)
		}
		if res[0].ID != h[ch.Index].Parts[0].ID {
			t.Error("shortening changed the result's call id")
		}
	}
}

func TestShortenKeepsJSONAndMarksMedia(t *testing.T) {
	m := convo.ToolResults(convo.ToolResultParts("c1", "f",
		convo.JSON([]byte(`{"a": [1, 2, 3], "b": "xyz"}`)),
		convo.Image("image/png", []byte("png")),
		convo.Text("tail"),
	))
	short, n := shortenResults(m, 10)
	if n != 1 {
		t.Fatalf("shortened %d", n)
	}
	want := "{\"a\":[1,2,\n[shortened by convo fit: 10 of 28 bytes kept; 1 media parts left out]"
	if got := short.Parts[0].Parts[0].Text; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if m.Parts[0].Parts[0].Type != convo.TypeJSON {
		t.Error("the original message was modified")
	}
	// Shortening is not repeated on an already shortened result, and cuts
	// fall on character boundaries.
	if _, n := shortenResults(short, 10); n != 0 {
		t.Error("a shortened result was shortened again")
	}
	if got := cut("añb", 2); got != "a" {
		t.Errorf("cut = %q", got)
	}
}

func TestSummarize(t *testing.T) {
	c := counter(t)
	h := session(12, 30)
	total := count(c, h)
	s := &fakeSummarizer{size: 20}
	var got convo.History
	spy := SummarizerFunc(func(ctx context.Context, left convo.History) (string, error) {
		got = left
		return s.Summarize(ctx, left)
	})
	r := mustFit(t, h, Options{Budget: total / 2, Counter: c, Strategies: []Strategy{Summarize}, Summarizer: Memo(spy)})
	checkInvariants(t, h, r, c)
	if r.Summary != 1 {
		t.Fatalf("summary at %d", r.Summary)
	}
	sum := r.History[1]
	if sum.Compacted != len(r.Excluded) || !got.Equal(h[1:1+len(r.Excluded)]) {
		t.Errorf("summary replaces %d, excluded %d, summarizer got %d", sum.Compacted, len(r.Excluded), len(got))
	}
	if !strings.Contains(r.Excluded[0].Reason, "summarised into messages[1]") {
		t.Errorf("reason %q", r.Excluded[0].Reason)
	}
	// The same fit again: the memo answers, the result is the same.
	r2 := mustFit(t, h, Options{Budget: total / 2, Counter: c, Strategies: []Strategy{Summarize}, Summarizer: Memo(spy)})
	if !r2.History.Equal(r.History) {
		t.Error("a second fit differs")
	}
	memo := Memo(spy)
	for range 3 {
		mustFit(t, h, Options{Budget: total / 2, Counter: c, Strategies: []Strategy{Summarize}, Summarizer: memo})
	}
	if n := s.calls.Load(); n != 3 { // one per Memo
		t.Errorf("summarizer called %d times", n)
	}
}

func TestSummaryTooLarge(t *testing.T) {
	c := counter(t)
	h := session(12, 30)
	total := count(c, h)
	s := &fakeSummarizer{size: 5000}
	r := mustFit(t, h, Options{Budget: total / 2, Counter: c, Strategies: []Strategy{Summarize}, Summarizer: s})
	checkInvariants(t, h, r, c)
	if r.Summary != -1 || len(r.Notes) == 0 || !strings.Contains(strings.Join(r.Notes, " "), "summary") {
		t.Errorf("summary %d, notes %q", r.Summary, r.Notes)
	}
}

func TestSummarizerError(t *testing.T) {
	c := counter(t)
	h := session(12, 30)
	boom := errors.New("model unavailable")
	_, err := Fit(context.Background(), h, Options{Budget: count(c, h) / 2, Counter: c, Strategies: []Strategy{Summarize},
		Summarizer: SummarizerFunc(func(context.Context, convo.History) (string, error) { return "", boom })})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Fit(ctx, h, Options{Budget: count(c, h) / 2, Counter: c, Strategies: []Strategy{Summarize}, Summarizer: &fakeSummarizer{}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestNonDestructive(t *testing.T) {
	c := counter(t)
	h := session(12, 40)
	before := make(convo.History, len(h))
	for i, m := range h {
		before[i] = m.Clone()
	}
	for _, st := range [][]Strategy{DefaultStrategies, {Summarize, DropReasoning}, {ShortenResults, DropOldest}} {
		r := mustFit(t, h, Options{Budget: count(c, h) / 3, Counter: c, Strategies: st, Summarizer: &fakeSummarizer{}, ShortenTo: 20})
		checkInvariants(t, h, r, c)
		if !h.Equal(before) {
			t.Fatalf("%v: Fit modified its input", st)
		}
	}
}

func TestNoUserTurns(t *testing.T) {
	// An agent working alone: assistant calls and results only.
	c := counter(t)
	h := convo.History{convo.System("Work.")}
	for i := range 20 {
		t := turn(i, true, 20)
		h = append(h, t[1:3]...)
	}
	r := mustFit(t, h, Options{Budget: count(c, h) / 2, Counter: c})
	checkInvariants(t, h, r, c)
	if r.History[1].Role != convo.RoleAssistant || len(r.Excluded) == 0 {
		t.Errorf("kept part starts with %s after %d excluded", r.History[1].Role, len(r.Excluded))
	}
	// The last group is kept whole.
	if !r.History[len(r.History)-2].Equal(h[len(h)-2]) {
		t.Error("the latest call was not kept")
	}
}

func TestTightBudget(t *testing.T) {
	// A budget just above what must be kept: the cut cannot sit on a block
	// boundary, and the report says so.
	c := counter(t)
	h := session(8, 30)
	last := len(h) - len(turn(7, true, 30))
	need := c.RequestTokens() + c.MessageTokens(h[0])
	for _, m := range h[last:] {
		need += c.MessageTokens(m)
	}
	r := mustFit(t, h, Options{Budget: need + 5, Counter: c, Block: count(c, h)})
	checkInvariants(t, h, r, c)
	if len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "tight") {
		t.Errorf("notes %q", r.Notes)
	}
}

func TestNothingToDrop(t *testing.T) {
	c := counter(t)
	h := session(6, 30)
	_, err := Fit(context.Background(), h, Options{Budget: count(c, h) / 2, Counter: c, Strategies: []Strategy{DropReasoning}})
	if err == nil || !strings.Contains(err.Error(), "cannot bring") {
		t.Errorf("error %v", err)
	}
	_, err = Fit(context.Background(), h, Options{Budget: count(c, h) / 2, Counter: c, Strategies: []Strategy{}})
	if err == nil || !strings.Contains(err.Error(), "no strategy") {
		t.Errorf("error %v", err)
	}
}

func TestOptionErrors(t *testing.T) {
	c := counter(t)
	h := session(2, 5)
	for _, o := range []Options{
		{Budget: 100},
		{Counter: c},
		{Counter: c, Budget: 100, Block: -1},
		{Counter: c, Budget: 100, Strategies: []Strategy{"squeeze"}},
		{Counter: c, Budget: 100, Strategies: []Strategy{Summarize}},
		{Counter: c, Budget: 100, Counts: []int{1}},
		{Counter: c, Budget: 100, Counts: make([]int, len(h)-1)},
		{Counter: c, Budget: 100, Counts: append(make([]int, len(h)-1), -1)},
	} {
		if _, err := Fit(context.Background(), h, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

func TestParseStrategies(t *testing.T) {
	got, err := ParseStrategies("reasoning, shorten,drop,summarize")
	if err != nil || len(got) != 4 || got[3] != Summarize {
		t.Errorf("%v, %v", got, err)
	}
	if _, err := ParseStrategies("drop,,"); err == nil {
		t.Error("empty name accepted")
	}
}

func TestBudgetFor(t *testing.T) {
	reg := tokens.Default()
	for name, want := range map[string]int{
		"gpt-4o":          128000 - 16384,
		"gpt-5":           400000 - 128000,
		"claude-sonnet-4": 200000 - 64000,
		"llama3.1":        131072 - 131072/5,
	} {
		m, err := reg.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := BudgetFor(m, -1); err != nil || got != want {
			t.Errorf("%s: %d, %v; want %d", name, got, err, want)
		}
	}
	m, _ := reg.Lookup("gpt-4o")
	if got, _ := BudgetFor(m, 1000); got != 127000 {
		t.Errorf("explicit reserve: %d", got)
	}
	if _, err := BudgetFor(m, 128000); err == nil {
		t.Error("a reserve of the whole window accepted")
	}
	est, _ := reg.Estimated("mystery")
	if _, err := BudgetFor(est, -1); err == nil || !strings.Contains(err.Error(), "not known") {
		t.Errorf("unknown window: %v", err)
	}
}

func TestTranscript(t *testing.T) {
	h, err := convo.Unmarshal([]byte(`{"format":"convo/v1","messages":[
 {"role":"user","name":"ana","parts":[{"type":"text","text":"Weather in Paris?"},{"type":"image","media_type":"image/png","name":"sky.png","data":"iVBORw0KGgo="}]},
 {"role":"assistant","parts":[{"type":"reasoning","text":"Use the tool."},{"type":"tool_call","id":"t1","name":"get_weather","args":{"city": "Paris"}}]},
 {"role":"tool","parts":[{"type":"tool_result","id":"t1","name":"get_weather","parts":[{"type":"json","value":{"temp_c":18}}]}]},
 {"role":"error","parts":[{"type":"text","text":"timeout"}]},
 {"role":"assistant","parts":[{"type":"refusal","text":"No forecasts."}]},
 {"role":"tool","parts":[{"type":"tool_result","id":"t2","name":"f","error":true,"parts":[{"type":"text","text":"boom"}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	got := Transcript(h)
	want, err := os.ReadFile("testdata/transcript.golden")
	if err != nil || got != string(want) {
		t.Errorf("Transcript:\n%s\nwant (testdata/transcript.golden):\n%s", got, want)
	}
}

func TestCounts(t *testing.T) {
	c := counter(t)
	h := session(12, 30)
	counts := CountsFor(c, h, nil)
	for i, m := range h {
		if counts[i] != c.MessageTokens(m) {
			t.Fatalf("counts[%d] = %d", i, counts[i])
		}
	}
	// Reused as given: wrong counts show in the result.
	wrong := append([]int(nil), counts...)
	wrong[1] += 1000
	r1 := mustFit(t, h, Options{Budget: count(c, h) / 2, Counter: c, Counts: counts})
	r2 := mustFit(t, h, Options{Budget: count(c, h) / 2, Counter: c})
	if !r1.History.Equal(r2.History) || r1.Tokens != r2.Tokens {
		t.Error("fitting with the caller's counts differs from counting")
	}
	if r3 := mustFit(t, h, Options{Budget: count(c, h) / 2, Counter: c, Counts: wrong}); r3.Original != r2.Original+1000 {
		t.Errorf("counts not used: original %d", r3.Original)
	}
	if got := CountsFor(c, h[:3], counts); len(got) != 3 || got[2] != counts[2] {
		t.Errorf("CountsFor of a shorter history: %v", got)
	}
}
