package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
)

const cookbook = "../../tokens/testdata/cookbook.json"

func TestTokensTable(t *testing.T) {
	out, errs, code := runCLI(t, "", "tokens", "--model", "gpt-4o", cookbook)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"model gpt-4o (openai family, o200k_base)", "total 124 tokens (exact) of a 128000-token window", "system", "reply priming"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if lines := strings.Count(out, "\n"); lines != 10 { // header, column names, 6 messages, request, total
		t.Errorf("%d lines:\n%s", lines, out)
	}
	// From stdin, the same.
	b := readTestFile(t, cookbook)
	if out2, _, code := runCLI(t, b, "tokens", "--model", "gpt-4o"); code != 0 || out2 != out {
		t.Errorf("stdin: exit %d\n%s", code, out2)
	}
}

func TestTokensJSON(t *testing.T) {
	out, _, code := runCLI(t, "", "tokens", "--model", "gpt-4", "--json", cookbook)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var r struct {
		Model    string `json:"model"`
		Tokens   int    `json:"tokens"`
		Exact    bool   `json:"exact"`
		Max      int    `json:"max"`
		Basis    string `json:"basis"`
		Messages []struct {
			Role   string `json:"role"`
			Tokens int    `json:"tokens"`
		} `json:"messages"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if r.Model != "gpt-4" || r.Tokens != 129 || !r.Exact || r.Max != 129 || r.Basis != "tokenizer" || len(r.Messages) != 6 || r.Warnings == nil {
		t.Errorf("%+v", r)
	}
}

func TestTokensEstimates(t *testing.T) {
	out, _, code := runCLI(t, "", "tokens", "--model", "claude-sonnet-4", cookbook)
	if code != 0 || !strings.Contains(out, "(estimated, ±20%: at most ") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	// An unknown model is a usage error that lists the families and the
	// way out; --estimate counts it anyway.
	_, errs, code := runCLI(t, "", "tokens", "--model", "my-own-model", cookbook)
	if code != 2 || !strings.Contains(errs, `unknown model "my-own-model"`) || !strings.Contains(errs, "anthropic: claude-") || !strings.Contains(errs, "--estimate") {
		t.Errorf("exit %d: %s", code, errs)
	}
	out, _, code = runCLI(t, "", "tokens", "--model", "my-own-model", "--estimate", cookbook)
	if code != 0 || !strings.Contains(out, "estimate family") || !strings.Contains(out, "estimated, ±35%") || strings.Contains(out, "window") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestTokensModelsFile(t *testing.T) {
	facts := writeFile(t, "models.json", `{"models":[{"name":"house-model","family":"openai","context":9000,"max_output":1000}]}`)
	out, errs, code := runCLI(t, "", "tokens", "--model", "house-model-v2", "--models", facts, cookbook)
	if code != 0 || !strings.Contains(out, "total 124 tokens (exact) of a 9000-token window") {
		t.Errorf("exit %d: %s\n%s", code, errs, out)
	}
	bad := writeFile(t, "bad.json", `{"models":[{"name":"x","family":"nope"}]}`)
	if _, errs, code := runCLI(t, "", "tokens", "--model", "x", "--models", bad, cookbook); code != 1 || !strings.Contains(errs, `unknown family "nope"`) {
		t.Errorf("exit %d: %s", code, errs)
	}
}

func TestTokensCheap(t *testing.T) {
	h := convo.History{
		convo.User("What is the capital of France?"),
		{Role: convo.RoleAssistant, Parts: []convo.Part{convo.Text("Paris.")}, Usage: &convo.Usage{Input: 900, Output: 100}},
		convo.User("And Italy?"),
	}
	doc, err := convo.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	out, _, code := runCLI(t, string(doc), "tokens", "--model", "gpt-4o", "--cheap")
	if code != 0 || !strings.Contains(out, "baseline") || !strings.Contains(out, "reported usage of messages[1] plus") || !strings.Contains(out, "total 1010 tokens") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestTokensWarnings(t *testing.T) {
	// A corrupt image is counted as an estimate, with a warning: never a
	// failure.
	h := convo.History{convo.User("look", convo.Part{Type: convo.TypeImage, MediaType: "image/png", Data: base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nbroken"))})}
	doc, _ := convo.Marshal(h)
	out, errs, code := runCLI(t, string(doc), "tokens", "--model", "gpt-4o")
	if code != 0 || !strings.Contains(errs, "convo tokens: warning: messages[0].parts[1]: image size unreadable") || !strings.Contains(out, "estimate") {
		t.Errorf("exit %d: %s\n%s", code, errs, out)
	}
}

func TestTokensBadInput(t *testing.T) {
	for _, tt := range []struct {
		args  []string
		stdin string
		code  int
		want  string
	}{
		{[]string{"tokens", cookbook}, "", 2, "--model is required"},
		{[]string{"tokens", "--model", "gpt-4o", "a", "b"}, "", 2, "too many arguments"},
		{[]string{"tokens", "--model", "gpt-4o", "--nope"}, "", 2, "flag provided but not defined"},
		{[]string{"tokens", "--model", "gpt-4o", "/no/such/file.json"}, "", 1, "no such file"},
		{[]string{"tokens", "--model", "gpt-4o"}, `{"format":"convo/v1","messages":[{"parts":[]}]}`, 1, "missing role"},
	} {
		_, errs, code := runCLI(t, tt.stdin, tt.args...)
		if code != tt.code || !strings.Contains(errs, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d with %q", tt.args, code, errs, tt.code, tt.want)
		}
	}
}

func readTestFile(t *testing.T, name string) string {
	t.Helper()
	h, err := convo.Unmarshal([]byte(mustRead(t, name)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := convo.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func mustRead(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTokensMemory: tokens reads and counts a history message by message,
// holding one count per message, so its peak memory does not grow with the
// size of the messages: a 47 MiB file of 12000 long messages is counted
// within the memory of a small one plus some 10 MiB, however big the file
// (reading it whole held the file and the decoded history, over twice its
// size).
func TestTokensMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 47 MiB file")
	}
	// The tokenizer's tables are some 20 MiB of live heap, and by default
	// the garbage collector lets as much garbage pile up beside them: a
	// tighter target keeps that headroom below what is measured.
	t.Setenv("GOGC", "25")
	small, _ := writeLongHistory(t, 10)
	base, _ := peakRSS(t, "tokens", "--model", "gpt-4o", small)
	big, size := writeLongHistory(t, 12000)
	peak, out := peakRSS(t, "tokens", "--model", "gpt-4o", "--cheap", big)
	if !strings.Contains(out, "reported usage of messages[11999]") || !strings.Contains(out, "total 10800003 tokens") {
		t.Fatalf("tokens: %.300q … %q", out, out[max(0, len(out)-300):])
	}
	t.Logf("file %d MiB; peak RSS %d MiB, %d MiB for 10 messages", size>>20, peak>>20, base>>20)
	if peak > base+size/2 {
		t.Errorf("peak RSS %d MiB for a %d MiB file (%d MiB for 10 messages): the history is held whole", peak>>20, size>>20, base>>20)
	}
}

// writeLongHistory writes an envelope of n user/assistant messages of about
// 4 KiB each, the assistant ones with usage.
func writeLongHistory(t *testing.T, n int) (string, int64) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "long.json")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	text := strings.Repeat("the weather in Paris is mild today, with a light breeze from the west; ", 57)
	fmt.Fprint(w, `{"format":"convo/v1","messages":[`)
	for i := range n {
		if i > 0 {
			fmt.Fprint(w, ",\n")
		}
		if i%2 == 0 {
			fmt.Fprintf(w, `{"role":"user","parts":[{"type":"text","text":"%d %s"}]}`, i, text)
		} else {
			fmt.Fprintf(w, `{"role":"assistant","parts":[{"type":"text","text":"%d %s"}],"usage":{"input":%d,"output":900}}`, i, text, i*900)
		}
	}
	fmt.Fprint(w, "]}\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	f.Close()
	return p, fi.Size()
}
