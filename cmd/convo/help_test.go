package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/fit"
	"github.com/convo-go/convo/tokens"
)

// TestEveryHelpHasExample: every command's and store subcommand's -h shows
// its synopsis, an example and its flags, on stderr, exit 0.
func TestEveryHelpHasExample(t *testing.T) {
	var names []string
	for n := range commands {
		if n != "boom" {
			names = append(names, n)
		}
	}
	for n := range storeCommands {
		names = append(names, "store "+n)
	}
	for _, n := range names {
		if n == "store" {
			continue // its -h lists the subcommands (TestStoreHelp)
		}
		args := append(strings.Fields(n), "-h")
		_, errs, code := runCLI(t, "", args...)
		if code != 0 {
			t.Errorf("%s -h: exit %d", n, code)
		}
		for _, want := range []string{"usage: " + synopsis(n), "Example:\n  " + examples[n], "Flags:"} {
			if examples[n] == "" || !strings.Contains(errs, want) {
				t.Errorf("convo %s -h lacks %q:\n%s", n, want, errs)
			}
		}
	}
}

func TestVersion(t *testing.T) {
	out, _, code := runCLI(t, "", "--version")
	// A test binary has build info: its module version is "(devel)".
	if code != 0 || !strings.HasPrefix(out, "convo ") || !strings.Contains(out, "go1.") {
		t.Fatalf("exit %d: %q", code, out)
	}
}

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n          int
		what, want string
	}{
		{0, "messages", "0 messages"}, {1, "messages", "1 message"}, {2, "message", "2 messages"},
		{1, "problems", "1 problem"}, {1, "tokens", "1 token"}, {3, "blocks", "3 blocks"},
	} {
		if got := plural(tc.n, tc.what); got != tc.want {
			t.Errorf("plural(%d, %q) = %q, want %q", tc.n, tc.what, got, tc.want)
		}
	}
	_, errs, _ := runCLI(t, `[{"role":"user","phase":"final","parts":[{"type":"text","text":"hi"}]}]`, "validate")
	if !strings.Contains(errs, "1 problem in 1 message") {
		t.Errorf("validate: %q", errs)
	}
}

// TestNoDoubledPrefix: an error says the command's name once, and a stream
// error names its event once.
func TestNoDoubledPrefix(t *testing.T) {
	commands["fit2"] = command{run: func(*env, []string) error { return errors.New("fit2: budget must be positive") }}
	defer delete(commands, "fit2")
	_, errs, _ := runCLI(t, "", "fit2")
	if errs != "convo fit2: budget must be positive\n" {
		t.Errorf("got %q", errs)
	}
	stream := "data: {\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}\n\ndata: {\"type\":\"response.output_text.delta\",\"delta\":1}\n\n"
	_, errs, code := runCLI(t, stream, "reply", "--from", "openai-responses", "--stream")
	if code != 1 || strings.Count(errs, "event 1") != 1 {
		t.Errorf("exit %d: %q", code, errs)
	}
}

// TestValidateJSON: --json reports problems as one JSON object on stdout.
func TestValidateJSON(t *testing.T) {
	out, errs, code := runCLI(t, `[{"role":"user","phase":"final","parts":[{"type":"text","text":"hi"}]}]`, "validate", "--json")
	want := `{"messages":1,"problems":[{"path":"messages[0]","message":"phase on a user message (only assistant messages have a phase)"}]}` + "\n"
	if code != 1 || out != want || errs != "" {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	out, _, code = runCLI(t, `{"role":"user","parts":[{"type":"text","text":"hi"}]}`, "validate", "--json")
	if code != 0 || out != `{"messages":1,"problems":[]}`+"\n" {
		t.Fatalf("exit %d: %s", code, out)
	}
}

// TestConvertWarnings: an option that does nothing for the target warns,
// and --json writes warnings as JSON Lines.
func TestConvertWarnings(t *testing.T) {
	in := `{"role":"user","parts":[{"type":"text","text":"hi"}]}`
	_, errs, code := runCLI(t, in, "convert", "--from", "convo", "--to", "anthropic", "--lines")
	if code != 0 || !strings.Contains(errs, "warning: --lines does nothing with --to anthropic") {
		t.Fatalf("exit %d: %q", code, errs)
	}
	_, errs, code = runCLI(t, in, "convert", "--from", "convo", "--to", "anthropic", "--lines", "--json")
	if code != 0 || errs != `{"warning":"--lines does nothing with --to anthropic: only --to convo writes JSON Lines"}`+"\n" {
		t.Fatalf("exit %d: %q", code, errs)
	}
}

// TestMeter: progress shows only on a terminal, only after a second, at
// most five times a second, and is erased at the end.
func TestMeter(t *testing.T) {
	var b strings.Builder
	now := time.Unix(0, 0)
	m := &meter{w: &b, on: true, start: now, now: func() time.Time { return now }}
	r := &limitedReader{left: 100 << 20, limit: 100 << 20}
	m.update(10, r)
	now = now.Add(900 * time.Millisecond)
	m.update(20, r)
	if b.Len() != 0 {
		t.Fatalf("shown within the first second: %q", b.String())
	}
	r.left -= 3 << 20
	now = now.Add(200 * time.Millisecond)
	m.update(30, r)
	now = now.Add(100 * time.Millisecond)
	m.update(40, r) // too soon after the last
	m.done()
	if got := b.String(); got != "\r30 messages (3.0 MiB) read\x1b[K\r\x1b[K" {
		t.Fatalf("%q", got)
	}
	b.Reset()
	off := &meter{w: &b, on: false, start: time.Unix(0, 0), now: func() time.Time { return time.Unix(100, 0) }}
	off.update(1, r)
	off.done()
	if b.Len() != 0 {
		t.Fatalf("shown off a terminal: %q", b.String())
	}
}

// TestCountingMeter: tokens and fit show messages counted of the total,
// never past it (fit counts again what it shortens), and fit's counter
// still says whether requests carry reasoning.
func TestCountingMeter(t *testing.T) {
	var b strings.Builder
	e := &env{stderr: &b}
	m, step := e.counting(100)
	now := time.Unix(10, 0)
	m.on, m.start, m.now = true, time.Unix(0, 0), func() time.Time { return now }
	step(120)
	m.done()
	if got := b.String(); got != "\r100 messages of 100 counted\x1b[K\r\x1b[K" {
		t.Fatalf("%q", got)
	}
	c, err := tokens.NewCounter("gpt-4o", tokens.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var fc fit.Counter = &meteredCounter{Counter: c, step: func(done int) { n = done }}
	fc.MessageTokens(convo.User("Hello"))
	rc, ok := fc.(interface{ CountsReasoning() bool })
	if n != 1 || !ok || rc.CountsReasoning() != c.CountsReasoning() {
		t.Fatalf("metered counter: %d counted, CountsReasoning forwarded %v", n, ok)
	}
}
