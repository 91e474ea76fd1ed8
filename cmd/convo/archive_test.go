package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
)

const samples = "../../archive/testdata/"

func TestConvertArchive(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout string // a fragment of stdout
		stderr string // a fragment of stderr
	}{
		{name: "chatgpt to markdown", args: []string{"convert", "--from", "chatgpt", "--to", "markdown", samples + "chatgpt/conversations.json"},
			stdout: "# Plot a sine wave", stderr: `unknown content type "canvas_preview_v9"`},
		{name: "markdown reasoning on request", args: []string{"convert", "--from", "chatgpt", "--to", "markdown", "--reasoning", "text", "--pick", "0", samples + "chatgpt/conversations.json"},
			stdout: "<details><summary>Reasoning</summary>"},
		{name: "many to one", args: []string{"convert", "--from", "chatgpt", "--to", "convo", samples + "chatgpt/conversations.json"},
			code: 1, stderr: "holds more than one conversation: choose one with --pick"},
		{name: "pick by id", args: []string{"convert", "--from", "chatgpt", "--to", "convo", "--lines", "--pick", "6668a0f0-0000-8000-8000-000000000002", samples + "chatgpt/conversations.json"},
			stdout: `"name":"dalle.text2im"`},
		{name: "pick missing", args: []string{"convert", "--from", "chatgpt", "--to", "convo", "--pick", "nope", samples + "chatgpt/conversations.json"},
			code: 1, stderr: `no conversation "nope"`},
		{name: "shards directory", args: []string{"convert", "--from", "chatgpt", "--to", "sharegpt", samples + "chatgpt-shards"},
			stdout: `"value": "Hello! How can I help?"`, stderr: "audio"},
		{name: "claude code to anthropic", args: []string{"convert", "--from", "claude-code", "--to", "anthropic", samples + "claude-code/session.jsonl"},
			stdout: `"signature":"EqMBCkYIBxgCKkBzaWduYXR1cmUtYnl0ZXM="`, stderr: "1 forks left out"},
		{name: "stdin", args: []string{"convert", "--from", "finetune", "--to", "convo", "--lines"},
			stdin: `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo","weight":0}]}`, stdout: `"meta":{"weight":0}`},
		{name: "to finetune from convo", args: []string{"convert", "--from", "convo", "--to", "finetune", "../../examples/weather.json"},
			stdout: `"tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]`},
		{name: "strict", args: []string{"convert", "--strict", "--from", "claude", "--to", "markdown", samples + "claude/conversations.json"},
			code: 1, stderr: "strict"},
		{name: "read-only format as target", args: []string{"convert", "--from", "convo", "--to", "chatgpt"}, code: 2, stderr: "chatgpt is read, not written"},
		{name: "llm needs a file", args: []string{"convert", "--from", "llm", "--to", "markdown"}, code: 2, stderr: "--from llm reads a logs.db file"},
		{name: "bad stdin", args: []string{"convert", "--from", "chatgpt", "--to", "markdown"}, stdin: `[{"mapping":`, code: 1, stderr: "conversations[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := runCLI(t, tc.stdin, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errs)
			}
			if !strings.Contains(out, tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, out)
			}
			if !strings.Contains(errs, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, errs)
			}
			if tc.code == 1 && strings.Count(strings.TrimSpace(lastLines(errs)), "\n") > 0 {
				t.Errorf("the error is not one line: %q", errs)
			}
		})
	}
}

// lastLines is stderr without the warning lines before the error.
func lastLines(s string) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if !strings.HasPrefix(l, "warning: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func TestStoreImportArchive(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	_, errs, code := runCLI(t, "", "store", "import", "--db", db, "--from", "chatgpt", "--meta", `{"batch":7}`, samples+"chatgpt/conversations.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "imported 2 conversations, 4 forks") {
		t.Errorf("no final progress line:\n%s", errs)
	}
	// Again: nothing twice.
	_, errs, code = runCLI(t, "", "store", "import", "--db", db, "--from", "chatgpt", samples+"chatgpt/conversations.json")
	if code != 0 || !strings.Contains(errs, "imported 0 conversations, 0 forks, 2 already there") {
		t.Errorf("re-import: exit %d:\n%s", code, errs)
	}
	out, errs, code := runCLI(t, "", "store", "list", "--db", db, "--json", "--meta", `{"batch":7}`)
	if code != 0 {
		t.Fatalf("list: %s", errs)
	}
	var forks, mains int
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var d convDescription
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatal(err)
		}
		if d.ForkedFrom != "" {
			forks++
		} else {
			mains++
		}
	}
	if mains != 2 || forks != 4 {
		t.Errorf("stored %d conversations and %d forks, want 2 and 4:\n%s", mains, forks, out)
	}
	// The main line of the first, exported back, is what the reader read.
	out, errs, code = runCLI(t, "", "store", "export", "--db", db, "chatgpt-6668a0f0-0000-8000-8000-000000000001")
	if code != 0 {
		t.Fatalf("export: %s", errs)
	}
	h, err := convo.Unmarshal([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 8 || h[len(h)-1].ID != "m-a3" {
		t.Errorf("stored main line has %d messages ending at %q, want 8 ending at m-a3", len(h), h[len(h)-1].ID)
	}

	for _, args := range [][]string{
		{"store", "import", "--db", db, "--from", "chatgpt", "--title", "x", samples + "chatgpt/conversations.json"},
		{"store", "import", "--db", db, "--from", "nope", samples + "chatgpt/conversations.json"},
	} {
		if _, errs, code := runCLI(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, code, errs)
		}
	}
}
