package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
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
