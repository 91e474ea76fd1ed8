package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runCLI runs the command line with stdin and returns stdout, stderr and the
// exit code.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	code := run(e, args)
	return out.String(), errb.String(), code
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExitCodes(t *testing.T) {
	valid := "../../testdata/v1/example.json"
	tests := []struct {
		name    string
		args    []string
		stdin   string
		code    int
		stdout  string
		stderr  string
		oneLine bool
	}{
		{name: "no command", code: 2, stdout: "Commands:"},
		{name: "help", args: []string{"help"}, code: 0, stdout: "validate"},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2, stderr: `unknown command "frobnicate"`},
		{name: "validate ok", args: []string{"validate", valid}, code: 0, stdout: "ok: 5 messages"},
		{name: "validate stdin", args: []string{"validate"}, stdin: `[{"role":"user","parts":[{"type":"text","text":"hi"}]}]`, code: 0, stdout: "ok: 1 message\n"},
		{name: "validate problems", args: []string{"validate"}, stdin: `[{"role":"assistant","parts":[{"type":"tool_call","id":"c","name":"f","args":{}}]},{"role":"user","phase":"final","parts":[{"type":"text","text":"x"}]}]`,
			code: 1, stderr: "messages[0].parts[0]: tool call \"c\" (f) has no result before messages[1] (--repair repairs it when converting)\nmessages[1]: phase on a user message"},
		{name: "convert unpaired call", args: []string{"convert", "--from", "convo", "--to", "anthropic"},
			stdin: `[{"role":"user","parts":[{"type":"text","text":"q"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"c","name":"f","args":{}}]},{"role":"user","parts":[{"type":"text","text":"?"}]}]`,
			code:  1, stderr: `convo convert: unpaired tool calls: messages[1].parts[0]: tool call "c" (f) has no result before messages[2] (--repair repairs them, with a warning)`, oneLine: true},
		{name: "convert auto anthropic", args: []string{"convert", "--from", "auto", "--to", "convo"},
			stdin: `{"model":"claude","system":"Answer in French.","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`,
			code:  0, stdout: "Answer in French.", stderr: `convo convert: --from auto: reading stdin as anthropic (top-level "system")`},
		{name: "convert auto guess", args: []string{"convert", "--from", "auto", "--to", "convo"},
			stdin: `{"messages":[{"role":"user","content":"hi"}]}`,
			code:  0, stdout: `"hi"`, stderr: "reading stdin as openai-chat (messages of plain role/content (the most common shape; nothing belongs to one format only); a guess: give --from to be sure)"},
		{name: "convert auto unknown", args: []string{"convert", "--from", "auto", "--to", "convo"}, stdin: `{"model":"m"}`,
			code: 1, stderr: `convo convert: stdin: --from auto: cannot tell the format: no "messages", "contents" or "input" member`},
		{name: "convert wrong format", args: []string{"convert", "--from", "openai-chat", "--to", "convo"},
			stdin: `{"model":"claude","system":"Answer in French.","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`,
			code:  1, stderr: `this looks like an anthropic request, not openai-chat (top-level "system"): decode it as anthropic`},
		{name: "convert pending call", args: []string{"convert", "--from", "convo", "--to", "anthropic"},
			stdin: `[{"role":"user","parts":[{"type":"text","text":"q"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"c","name":"f","args":{}}]}]`,
			code:  0, stdout: `"tool_use"`, stderr: `warning: messages[1]: the history ends on tool calls without results ("c"), which Anthropic refuses`},
		{name: "validate pending call", args: []string{"validate"}, stdin: `[{"role":"user","parts":[{"type":"text","text":"weather?"}]},{"role":"assistant","parts":[{"type":"tool_call","id":"c","name":"f","args":{}}]}]`,
			code: 0, stdout: "ok: 2 messages"},
		{name: "validate OpenAI messages", args: []string{"validate"}, stdin: `[{"role":"user","content":"hi"}]`,
			code: 1, stderr: `messages[0]: user message has no parts; its "content" member is not format v1: this looks like an OpenAI Chat or Anthropic message`},
		{name: "validate bad json", args: []string{"validate"}, stdin: `[{"role":"user","parts":[{"type":"text","text":1}]}]`, code: 1,
			stderr: "convo validate: stdin: messages[0].parts[0].text: got number, want string", oneLine: true},
		{name: "validate missing file", args: []string{"validate", "/no/such/file"}, code: 1, stderr: "no such file", oneLine: true},
		{name: "validate bad flag", args: []string{"validate", "--nope"}, code: 2, stderr: "flag provided but not defined"},
		{name: "validate two files", args: []string{"validate", "a", "b"}, code: 2, stderr: "too many arguments"},
		{name: "show", args: []string{"show", valid}, code: 0, stdout: "→ get_weather({\"city\":\"Paris\"}) [toolu_1]"},
		{name: "show marks reasoning", args: []string{"show", valid}, code: 0, stdout: "(reasoning, signed, anthropic) Use the tool."},
		{name: "show summarises attachments", args: []string{"show", valid}, code: 0, stdout: "[image image/png, 8 B inline]"},
		{name: "show approval requests", args: []string{"show", "../../testdata/v1/approvals.json"}, code: 0, stdout: `? may I run delete_files({"glob":"/var/log/*.1"}) [apr_1 for call_1]`},
		{name: "show citations", args: []string{"show", "../../testdata/v1/citations.json"}, code: 0, stdout: "[1] colours.txt · document 0, char 0–20 · “The grass is green. ”"},
		{name: "show web citations", args: []string{"show", "../../testdata/v1/citations.json"}, code: 0, stdout: "Paris had 18 °C today, says the news.[1][2]\n      [1] Weather · https://example.com/weather · “18 °C in Paris”\n      [2] notes.pdf · file file-abc"},
		{name: "show approvals", args: []string{"show", "../../testdata/v1/approvals.json"}, code: 0, stdout: "✗ denied: keep them until the audit [apr_1]"},
		{name: "show server tool calls", args: []string{"show", "../../testdata/v1/server-tools.json"}, code: 0, stdout: `⚙ web_search by anthropic [web_search call srvtoolu_1: {"query":"Go release notes"}]`},
		{name: "show server tool results", args: []string{"show", "../../testdata/v1/server-tools.json"}, code: 0, stdout: "⚙ code_execution by anthropic [code_execution result srvtoolu_2:\n    stdout: 1024\n"},
		{name: "convert server tools as text", args: []string{"convert", "--from", "convo", "--to", "ollama", "--server-tools", "text", "../../testdata/v1/server-tools.json"},
			code: 0, stdout: `[web_search call srvtoolu_1: {\"query\":\"Go release notes\"}]`},
		{name: "convert drops server tools", args: []string{"convert", "--from", "convo", "--to", "gemini", "../../testdata/v1/server-tools.json"},
			code: 0, stderr: "warning: messages[1].parts[0]: web_search call run by anthropic dropped: only anthropic can replay it"},
		{name: "convert bad server tools", args: []string{"convert", "--from", "convo", "--to", "convo", "--server-tools", "keep"}, code: 2, stderr: "--server-tools must be drop or text"},
		{name: "show no colour off a terminal", args: []string{"show", valid}, code: 0},
		{name: "convert normalises", args: []string{"convert", "--from", "convo", "--to", "convo", "--lines"}, stdin: `{"role":"human","parts":[{"type":"text","text":"hi"}]}`,
			code: 0, stdout: `{"role":"user","parts":[{"type":"text","text":"hi"}]}` + "\n"},
		{name: "convert envelope", args: []string{"convert", "--from", "convo", "--to", "convo"}, stdin: `[{"role":"ai"}]`,
			code: 0, stdout: "{\"format\":\"convo/v1\",\"messages\":[\n{\"role\":\"assistant\"}\n]}\n"},
		{name: "convert unknown format", args: []string{"convert", "--from", "nope", "--to", "convo"}, code: 2, stderr: `unknown format "nope"`},
		{name: "convert missing --to", args: []string{"convert", "--from", "convo"}, code: 2, stderr: "--to is required"},
		{name: "convert bad reasoning", args: []string{"convert", "--from", "convo", "--to", "convo", "--reasoning", "keep"}, code: 2, stderr: "--reasoning must be drop or text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := runCLI(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, errs)
			}
			if !strings.Contains(out, tt.stdout) {
				t.Errorf("stdout %q does not contain %q", out, tt.stdout)
			}
			if !strings.Contains(errs, tt.stderr) {
				t.Errorf("stderr %q does not contain %q", errs, tt.stderr)
			}
			if tt.oneLine && strings.Count(strings.TrimSpace(errs), "\n") != 0 {
				t.Errorf("error is not one line: %q", errs)
			}
			if strings.Contains(out+errs, "\x1b[") {
				t.Errorf("colour codes written to a non-terminal")
			}
			if strings.Contains(errs, "goroutine ") {
				t.Errorf("stack trace reached the user: %s", errs)
			}
		})
	}
}

func TestShowColor(t *testing.T) {
	out, _, code := runCLI(t, "", "show", "--color", "../../testdata/v1/example.json")
	if code != 0 || !strings.Contains(out, "\x1b[") {
		t.Fatalf("no colour with --color: %q", out)
	}
}

func TestPanicBecomesOneLine(t *testing.T) {
	commands["boom"] = command{run: func(*env, []string) error { panic("kaboom") }}
	defer delete(commands, "boom")
	_, errs, code := runCLI(t, "", "boom")
	if code != 1 || errs != "convo: internal error: kaboom\n" {
		t.Fatalf("got %d %q", code, errs)
	}
}
