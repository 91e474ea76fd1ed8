package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeOpenAI answers every chat completion with a recorded reply calling
// get_capital, and counts the calls.
func fakeOpenAI(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	reply, err := os.ReadFile("../../provider/openai/testdata/recorded/chat/pydantic-tool-calls.json")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, `{"error":{"message":"bad path or key"}}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestReplayCommand(t *testing.T) {
	srv, calls := fakeOpenAI(t)
	db := filepath.Join(t.TempDir(), "r.db")
	for _, id := range []string{"paris", "rome"} {
		if out, errs, code := runCLI(t, "", "store", "import", "--db", db, "--id", id, "../../examples/weather.json"); code != 0 {
			t.Fatalf("import: %d %s %s", code, out, errs)
		}
	}
	var stdout, stderr strings.Builder
	e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
		getenv: func(k string) string { return map[string]string{"OA": "sk-test"}[k] }}
	up := []string{"--upstream", "oa=openai-chat@" + srv.URL + "/v1,key-env=OA", "--route", "gpt-*=oa"}
	cli := func(args ...string) (string, string, int) {
		stdout.Reset()
		stderr.Reset()
		code := run(e, append(append([]string{"replay", "--db", db}, up...), args...))
		return stdout.String(), stderr.String(), code
	}

	// One conversation, from the first answer: a table.
	out, errs, code := cli("--model", "gpt-4o-mini", "--set", "temperature=0.2", "paris", "--at", "")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"replayed paris at message 4", "gpt-4o-mini", "text similarity  0.00", "get_capital"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errs, "tool declarations") {
		t.Errorf("no warning on stderr: %q", errs)
	}
	// JSON, replaying from the tool call.
	out, errs, code = cli("--model", "gpt-4o-mini", "--json", "--at", "", "paris")
	var res struct {
		Fork    string `json:"fork"`
		Skipped bool   `json:"skipped"`
		Compare struct {
			SameToolCalls bool `json:"same_tool_calls"`
		} `json:"compare"`
		Replay struct {
			Model string `json:"model"`
			Usage struct{ Input int64 }
		} `json:"replay"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s %s", code, err, out, errs)
	}
	if res.Fork == "" || res.Replay.Model != "gpt-4o-mini" || res.Replay.Usage.Input != 104 || res.Skipped {
		t.Errorf("json %+v", res)
	}

	// Many: both conversations (the forks are not selected); one was
	// replayed with these settings already.
	out, errs, code = cli("--model", "gpt-4o-mini", "--set", "temperature=0.2", "--since", "2000-01-01")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "2 conversations: 1 replayed, 1 skipped") || strings.Count(out, "\n") != 7 {
		t.Errorf("batch:\n%s", out)
	}
	before := calls.Load()
	out, _, code = cli("--model", "gpt-4o-mini", "--set", "temperature=0.2", "--search", "Paris", "--json")
	var batch struct {
		Total struct{ Conversations, Skipped int }
	}
	if err := json.Unmarshal([]byte(out), &batch); err != nil || code != 0 || batch.Total.Conversations != 2 || batch.Total.Skipped != 2 || calls.Load() != before {
		t.Errorf("second batch: %v %+v, %d calls: %s", err, batch, calls.Load()-before, out)
	}
}

func TestReplayCommandErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	if _, errs, code := runCLI(t, "", "store", "import", "--db", db, "--id", "paris", "../../examples/weather.json"); code != 0 {
		t.Fatal(errs)
	}
	up := "--upstream=oa=openai-chat@http://127.0.0.1:1/v1"
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"paris", up, "--route", "*=oa"}, 2, "--model is required"},
		{[]string{"--model", "m", up, "--route", "*=oa"}, 2, "give a CONVERSATION"},
		{[]string{"--model", "m", "paris", "--search", "x", up, "--route", "*=oa"}, 2, "not both"},
		{[]string{"--model", "m", "paris"}, 1, `no route for model "m"`},       // the default upstreams
		{[]string{"--model", "gpt-5", "paris"}, 1, "$OPENAI_API_KEY is empty"}, // routed to one without its key
		{[]string{"--model", "m", "paris", "--set", "temperature", up, "--route", "*=oa"}, 2, "want NAME=VALUE"},
		{[]string{"--model", "m", "--since", "yesterday", up, "--route", "*=oa"}, 2, "--since"},
		{[]string{"--model", "m", "nope", up, "--route", "*=oa"}, 1, "not found"},
		{[]string{"--model", "m", "paris", up, "--route", "x*=oa"}, 1, `no route for model "m"`},
		{[]string{"--model", "m", "paris", up, "--route", "*=oa", "--set", "temprature=1"}, 1, "temprature"},
		{[]string{"--model", "m", "paris", up, "--route", "*=oa", "--db", filepath.Join(t.TempDir(), "none.db")}, 1, "no database"},
	} {
		_, errs, code := runCLI(t, "", append([]string{"replay", "--db", db}, tc.args...)...)
		if code != tc.code || !strings.Contains(errs, tc.want) || (code == 1 && strings.Count(strings.TrimSpace(errs), "\n") > 0) {
			t.Errorf("%v: exit %d, stderr %q; want %d, %q", tc.args, code, errs, tc.code, tc.want)
		}
	}
	// An upstream that cannot be reached is a replay that failed, kept.
	out, errs, code := runCLI(t, "", "replay", "--db", db, up, "--route", "*=oa", "--model", "m", "--timeout", "2s", "paris")
	if code != 0 || !strings.Contains(out, "error") || !strings.Contains(out, "connection refused") {
		t.Errorf("unreachable: exit %d\n%s\n%s", code, out, errs)
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"24h":                  now.Add(-24 * time.Hour),
		"2026-12-01":           time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		"2026-12-01T08:00:00Z": time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC),
	} {
		if got, err := parseSince(in, now); err != nil || !got.Equal(want) {
			t.Errorf("%s: %v %v", in, got, err)
		}
	}
	for _, in := range []string{"", "-1h", "soon"} {
		if _, err := parseSince(in, now); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}
