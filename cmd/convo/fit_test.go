package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/tokens"
)

// fitSession is a long conversation with tool rounds and reasoning.
func fitSession(turns int) string {
	h := convo.History{convo.System("You are a careful assistant.")}
	for i := range turns {
		text := strings.Repeat(fmt.Sprintf("sentence %d about the topic at hand. ", i), 20)
		id := fmt.Sprintf("call_%d", i)
		h = append(h,
			convo.User(fmt.Sprintf("Question %d: %s", i, text)),
			convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
				convo.Reasoning("thinking " + text),
				convo.ToolCall(id, "search", json.RawMessage(fmt.Sprintf(`{"q":"%d"}`, i))),
			}},
			convo.ToolResults(convo.ToolResult(id, "search", strings.Repeat(text, 3))),
			convo.Assistant(fmt.Sprintf("Answer %d: %s", i, text)),
		)
	}
	b, err := convo.Marshal(h)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func countFor(t *testing.T, model string, doc string) int {
	t.Helper()
	h, err := convo.Unmarshal([]byte(doc))
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	c, err := tokens.NewCounter(model, tokens.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c.Count(h).Tokens
}

func TestFitBudget(t *testing.T) {
	doc := fitSession(20)
	total := countFor(t, "gpt-4o", doc)
	out, errs, code := runCLI(t, doc, "fit", "--model", "gpt-4o", "--budget", fmt.Sprint(total/3))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if got := countFor(t, "gpt-4o", out); got > total/3 {
		t.Errorf("fitted history counts %d, budget %d", got, total/3)
	}
	h, _ := convo.Unmarshal([]byte(out))
	if err := h.Validate(); err != nil {
		t.Errorf("fitted history invalid: %v", err)
	}
	for _, want := range []string{"convo fit: ", fmt.Sprintf("of %d tokens (exact, gpt-4o); the history had %d", total/3, total), "tokens trimmed\n", "messages[1:", "among the oldest turns", "tool result shortened"} {
		if !strings.Contains(errs, want) {
			t.Errorf("report lacks %q:\n%s", want, errs)
		}
	}
	// Without --block it keeps as much as the budget allows; with one it
	// trims in whole blocks and keeps less, for a start that stays put.
	most := countFor(t, "gpt-4o", out)
	out, errs, code = runCLI(t, doc, "fit", "--model", "gpt-4o", "--budget", fmt.Sprint(total/3), "--block", fmt.Sprint(total/12))
	if code != 0 || !strings.Contains(errs, "blocks of trimming") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if stable := countFor(t, "gpt-4o", out); stable > most {
		t.Errorf("with --block kept %d tokens, without %d", stable, most)
	}
}

func TestFitModelWindow(t *testing.T) {
	doc := fitSession(3)
	// Within the window: written back as it was.
	out, errs, code := runCLI(t, doc, "fit", "--model", "gpt-4o")
	if code != 0 || out != doc || !strings.Contains(errs, "of 111616 tokens") || !strings.Contains(errs, "fits as it is") {
		t.Errorf("exit %d: %s", code, errs)
	}
	// A small window: house facts with a reserve.
	facts := writeFile(t, "m.json", `{"models":[{"name":"tiny","family":"openai","context":3000,"max_output":500}]}`)
	out, errs, code = runCLI(t, fitSession(10), "fit", "--model", "tiny", "--models", facts, "--reserve", "1000")
	if code != 0 || countFor(t, "gpt-4o", out) > 2000 || !strings.Contains(errs, "of 2000 tokens") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func TestFitEstimated(t *testing.T) {
	doc := fitSession(20)
	total := countFor(t, "claude-sonnet-4", doc)
	out, errs, code := runCLI(t, doc, "fit", "--model", "claude-sonnet-4", "--budget", fmt.Sprint(total/2))
	if code != 0 || !strings.Contains(errs, "estimated at the upper end of ±20%, claude-sonnet-4") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// Budgeted with the upper bound: the estimate itself is well within.
	if got := countFor(t, "claude-sonnet-4", out); float64(got)*1.2 > float64(total/2)+1 {
		t.Errorf("estimate %d, budget %d", got, total/2)
	}
	_, errs, code = runCLI(t, doc, "fit", "--budget", fmt.Sprint(total/2))
	if code != 0 || !strings.Contains(errs, "no --model") {
		t.Errorf("budget without a model: exit %d: %s", code, errs)
	}
}

func TestFitSummarize(t *testing.T) {
	doc := fitSession(20)
	total := countFor(t, "gpt-4o", doc)
	// The command sees the transcript: the summary quotes its first line
	// and counts its lines.
	out, errs, code := runCLI(t, doc, "fit", "--model", "gpt-4o", "--budget", fmt.Sprint(total/3),
		"--summarize", `printf 'Earlier: %s (%s lines)' "$(head -n 1)" "$(wc -l | tr -d ' ')"`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	h, err := convo.Unmarshal([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	s := h[1]
	if s.Role != convo.RoleSummary || s.Compacted < 4 || !strings.HasPrefix(s.Text(), "Earlier: user: (") {
		t.Fatalf("summary message %+v", s)
	}
	if !strings.Contains(errs, "summarised into messages[1]") || countFor(t, "gpt-4o", out) > total/3 {
		t.Errorf("report:\n%s", errs)
	}
	// A failing command fails the fit, with its stderr.
	_, errs, code = runCLI(t, doc, "fit", "--model", "gpt-4o", "--budget", fmt.Sprint(total/3), "--summarize", "echo model down >&2; exit 3")
	if code != 1 || !strings.Contains(errs, "exit status 3: model down") || strings.Count(errs, "\n") != 1 {
		t.Errorf("exit %d: %q", code, errs)
	}
	_, errs, code = runCLI(t, doc, "fit", "--model", "gpt-4o", "--budget", fmt.Sprint(total/3), "--summarize", "true")
	if code != 1 || !strings.Contains(errs, "printed nothing") {
		t.Errorf("exit %d: %q", code, errs)
	}
}

func TestFitTooSmall(t *testing.T) {
	doc := fitSession(5)
	_, errs, code := runCLI(t, doc, "fit", "--model", "gpt-4o", "--budget", "100")
	if code != 1 || !strings.Contains(errs, "budget of 100 tokens is ") || !strings.Contains(errs, " short: the system prompt and the latest turn alone take ") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func TestFitStrategies(t *testing.T) {
	doc := fitSession(20)
	total := countFor(t, "gpt-4o", doc)
	_, errs, code := runCLI(t, doc, "fit", "--model", "gpt-4o", "--budget", fmt.Sprint(total/3), "--strategies", "drop", "--block", "500")
	if code != 0 || strings.Contains(errs, "shortened") || !strings.Contains(errs, "oldest") {
		t.Errorf("exit %d: %s", code, errs)
	}
	_, errs, code = runCLI(t, doc, "fit", "--model", "gpt-4o", "--budget", fmt.Sprint(total/3), "--strategies", "shorten", "--shorten-to", "100")
	if code != 1 || !strings.Contains(errs, "cannot bring") {
		t.Errorf("shorten only: exit %d: %s", code, errs)
	}
}

func TestFitUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"fit"}, "give --budget N or --model M"},
		{[]string{"fit", "--budget", "-5"}, "positive"},
		{[]string{"fit", "--budget", "100", "--reserve", "10"}, "--reserve goes with --model"},
		{[]string{"fit", "--model", "gpt-4o", "--budget", "100", "--reserve", "10"}, "--reserve goes with --model"},
		{[]string{"fit", "--model", "gpt-4o", "--reserve", "200000"}, "leaves nothing"},
		{[]string{"fit", "--model", "nobody-knows"}, "known families"},
		{[]string{"fit", "--model", "nobody-knows", "--estimate"}, "context window is not known"},
		{[]string{"fit", "--budget", "100", "--strategies", "squeeze"}, `unknown strategy "squeeze"`},
		{[]string{"fit", "--budget", "100", "--strategies", "summarize"}, "needs --summarize"},
		{[]string{"fit", "--budget", "100", "--block", "-1"}, "must not be negative"},
	} {
		_, errs, code := runCLI(t, "", tt.args...)
		if code != 2 || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 with %q", tt.args, code, errs, tt.want)
		}
	}
}

// TestFitJSON: --json writes the report as one JSON object on stderr, and
// it agrees with the fitted history on stdout.
func TestFitJSON(t *testing.T) {
	doc := fitSession(20)
	total := countFor(t, "gpt-4o", doc)
	out, errs, code := runCLI(t, doc, "fit", "--model", "gpt-4o", "--budget", fmt.Sprint(total/3), "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep struct {
		Tokens, Budget, Original int
		Model                    string
		Exact                    bool
		Excluded                 []struct {
			Index, Tokens int
			Role, Reason  string
		}
		Changed []struct{ Index, At, Saved int }
	}
	if strings.Count(errs, "\n") != 1 || json.Unmarshal([]byte(errs), &rep) != nil {
		t.Fatalf("not one JSON object: %s", errs)
	}
	h, _ := convo.Unmarshal([]byte(out))
	if rep.Budget != total/3 || rep.Original != total || rep.Model != "gpt-4o" || !rep.Exact ||
		rep.Tokens != countFor(t, "gpt-4o", out) || len(rep.Excluded) == 0 || rep.Excluded[0].Reason == "" {
		t.Errorf("report %+v", rep)
	}
	if want := 1 + 20*4 - len(rep.Excluded); len(h) != want {
		t.Errorf("%d messages kept, the report leaves out %d of 81", len(h), len(rep.Excluded))
	}
}

// TestWriteHistory: fit's output, written a message at a time, is the
// bytes convo.Marshal makes.
func TestWriteHistory(t *testing.T) {
	h, err := convo.Unmarshal([]byte(fitSession(3)))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []convo.History{nil, h[:1], h} {
		want, err := convo.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := writeHistory(&got, h); err != nil {
			t.Fatal(err)
		}
		if got.String() != string(want) {
			t.Errorf("wrote\n%s\nwant\n%s", got.String(), want)
		}
	}
	bad := convo.History{convo.User("ok"), convo.User("bad \xff")}
	if err := writeHistory(io.Discard, bad); err == nil || !strings.Contains(err.Error(), "messages[1]") {
		t.Errorf("invalid UTF-8: %v", err)
	}
}

// TestFitFailureSaysEstimate: a budget too small says how the counts were
// made (here no --model: the generic estimate at its upper end).
func TestFitFailureSaysEstimate(t *testing.T) {
	_, errs, code := runCLI(t, fitSession(3), "fit", "--budget", "10")
	if code != 1 || !strings.Contains(errs, "alone take") || !strings.Contains(errs, "(estimated at the upper end of ±") ||
		!strings.Contains(errs, ": no --model)") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

// TestFitJSONFailures: with --json every outcome is one JSON object on
// stderr, failures included, and the exit code stays what it would be.
func TestFitJSONFailures(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		stdin string
		code  int
		want  string // in "error"
		usage bool
	}{
		{[]string{"--budget", "10", "--json"}, fitSession(3), 1, "is ", false},
		{[]string{"--json"}, fitSession(3), 2, "give --budget N or --model M", true},
		{[]string{"--json", "--nope"}, fitSession(3), 2, "-nope", true},
		{[]string{"--json", "--budget", "100", "/nonexistent/h.json"}, "", 1, "nonexistent", false},
		{[]string{"--json", "--budget", "100"}, "{not json", 1, "stdin", false},
		{[]string{"--json", "--model", "no-such-model"}, fitSession(3), 2, "no-such-model", true},
	} {
		out, errs, code := runCLI(t, tt.stdin, append([]string{"fit"}, tt.args...)...)
		var rep struct {
			Error        string
			Usage        bool
			Budget, Need int
			Model        string
			Bound        float64
		}
		if code != tt.code || out != "" || strings.Count(errs, "\n") != 1 || json.Unmarshal([]byte(errs), &rep) != nil {
			t.Errorf("%v: exit %d (want %d), stdout %q, stderr not one JSON object: %s", tt.args, code, tt.code, out, errs)
			continue
		}
		if !strings.Contains(rep.Error, tt.want) || rep.Usage != tt.usage {
			t.Errorf("%v: %+v, want error with %q, usage %v", tt.args, rep, tt.want, tt.usage)
		}
		if tt.args[0] == "--budget" && (rep.Budget != 10 || rep.Need <= 10 || rep.Bound == 0 || rep.Model == "") {
			t.Errorf("%v: the counts are missing: %+v", tt.args, rep)
		}
	}
	if _, errs, code := runCLI(t, "", "fit", "--json", "-h"); code != 0 || !strings.Contains(errs, "usage: convo fit") {
		t.Errorf("fit --json -h: exit %d: %s", code, errs)
	}
}
