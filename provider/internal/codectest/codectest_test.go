package codectest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// recorder is a TB that records failures instead of failing; Fatalf stops
// the helper, as it stops a test, and run recovers.
type recorder struct{ failed []string }

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, a ...any) {
	r.failed = append(r.failed, fmt.Sprintf(format, a...))
}

func (r *recorder) Fatalf(format string, a ...any) {
	r.Errorf(format, a...)
	panic(r)
}

// run calls f, which may stop at r.Fatalf.
func (r *recorder) run(f func()) {
	defer func() {
		if v := recover(); v != nil && v != r {
			panic(v)
		}
	}()
	f()
}

func TestSameJSON(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`{"a":1,"b":[true,null]}`, ` { "b" : [true, null], "a" : 1 } `, true},
		{`{"a":1}`, `{"a":1.0}`, false}, // numbers compare as written
		{`{"a":"x"}`, `{"a":"y"}`, false},
		{`[1,2]`, `[2,1]`, false},
	} {
		if got := SameJSON(t, []byte(tc.a), []byte(tc.b)); got != tc.same {
			t.Errorf("SameJSON(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
	var r recorder
	ExpectSameJSON(&r, []byte(`{"a":1}`), []byte(`{"a":2}`))
	r.run(func() { JSONValue(&r, []byte(`{"a":1} {}`)) })
	r.run(func() { JSONValue(&r, []byte(`{`)) })
	if len(r.failed) != 3 {
		t.Errorf("failures %q, want a difference, two values and invalid JSON", r.failed)
	}
}

func TestMembersIndent(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user"}],"system":"s","tools":[]}`)
	if got := string(Members(t, body, "system", "messages", "absent")); got != `{"messages":[{"role":"user"}],"system":"s"}` {
		t.Errorf("Members = %s", got)
	}
	if got := string(Indent(t, []byte(`{"a":[1]}`), " ")); got != "{\n \"a\": [\n  1\n ]\n}\n" {
		t.Errorf("Indent = %q", got)
	}
}

func TestGoldenAndFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.json", "a.convo.json", "b.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var r recorder
	Golden(&r, filepath.Join(dir, "a.json"), []byte("x\n"))
	if len(r.failed) != 0 {
		t.Errorf("equal golden file: %q", r.failed)
	}
	Golden(&r, filepath.Join(dir, "a.json"), []byte("y\n"))
	r.run(func() { Golden(&r, filepath.Join(dir, "none.json"), []byte("x\n")) })
	if len(r.failed) != 2 {
		t.Errorf("failures %q, want a difference and a missing file", r.failed)
	}
	if got := requests(t, filepath.Join(dir, "*.json")); len(got) != 2 || filepath.Base(got[0]) != "a.json" || filepath.Base(got[1]) != "b.json" {
		t.Errorf("requests = %v, want a.json and b.json without the golden file", got)
	}
	r.failed = nil
	r.run(func() { Files(&r, filepath.Join(dir, "*.txt")) })
	if len(r.failed) != 1 {
		t.Errorf("a pattern that matches nothing must fail: %q", r.failed)
	}
}

func TestOptionsOf(t *testing.T) {
	got := OptionsOf("history.strict.placeholder")
	want := provider.Options{Strict: true, Media: provider.MediaPlaceholder}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OptionsOf = %+v, want %+v", got, want)
	}
	got = OptionsOf("history.repair.text")
	want = provider.Options{Repair: true, Reasoning: provider.ReasoningText}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OptionsOf = %+v, want %+v", got, want)
	}
}

func TestReplyText(t *testing.T) {
	m := convo.Assistant("hi")
	warns := []provider.Warning{provider.Warnf("done", "not done"), provider.Warnf("", "bare")}
	got := string(ReplyText(t, m, warns, errors.New("boom")))
	want := string(MessageJSON(t, m)) + "-- error --\nboom\n-- warnings --\ndone: not done\nbare\n"
	if got != want {
		t.Errorf("ReplyText =\n%s\nwant\n%s", got, want)
	}
	if got := string(ReplyText(t, m, nil, nil)); got != string(MessageJSON(t, m)) {
		t.Errorf("without error or warnings: %s", got)
	}
}

func TestSSEData(t *testing.T) {
	sse := []byte("event: a\r\ndata: {\"x\":1}\r\n\r\ndata: [DONE]\n: comment\n")
	got := SSEData(sse)
	if len(got) != 2 || string(got[0]) != `{"x":1}` || string(got[1]) != "[DONE]" {
		t.Errorf("SSEData = %q", got)
	}
}

func TestAgentHistory(t *testing.T) {
	h := AgentHistory(10, "p")
	if len(h) != 10 || h[0].Role != convo.RoleSystem || h[2].Parts[0].Provider != "p" {
		t.Fatalf("AgentHistory: %d messages", len(h))
	}
	if err := h.Validate(); err != nil {
		t.Errorf("not valid: %v", err)
	}
	if !h.Equal(AgentHistory(10, "p")) {
		t.Error("not deterministic")
	}
}
