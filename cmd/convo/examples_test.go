package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The examples a user may copy: every command's -h example (the examples
// map), and in README.md and docs/*.md every command line in a fenced
// block marked sh that runs convo — `convo …`, after environment
// assignments, or `go run ./cmd/convo …` — with its `\` continuations.
// Unmarked fences hold synopses ([--flag]), not examples. Each runs as
// printed in a sandbox holding the files the examples name, and must exit
// 0; one that cannot run here is in notRun with the reason.

// notRun are the examples this test does not run, with the reason. An
// entry whose example is gone fails the test, so the list stays true.
var notRun = map[string]string{
	"python app.py": "the user's own application, shown unchanged",
	"convo replay --db convo.db --upstream claude=anthropic@https://api.anthropic.com,key-env=ANTHROPIC_API_KEY --route 'claude-*=claude' --model claude-haiku-4-5 --set temperature=0.2 --at msg_… conv_0193…": "sends the turn to Anthropic over the network; TestReplayCommand runs replays against a local upstream",
	"convo replay --config gateway.json --model claude-haiku-4-5 --set temperature=0.2 conv_0193…":                                                                                                              "sends the turn to the upstream gateway.json names, over the network; TestReplayCommand runs replays against a local upstream",
	"go install github.com/convo-go/convo/cmd/convo@latest": "downloads the module from the network",
	"go test ./...": "the whole test suite, this test among it",
	"curl … | convo reply --from anthropic > reply.json":                              "needs a provider's API over the network; TestReply reads recorded replies",
	"CONVO_TOKENS=tok1=acme convo serve --addr :8080 --db postgres://localhost/convo": "a server that runs until stopped, on a PostgreSQL at localhost; TestServe* start convo serve",
}

// exampleKey is an example without its comment and extra spaces: how
// notRun names it.
func exampleKey(line string) string {
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	return strings.Join(strings.Fields(line), " ")
}

// example is one command line and where it was found.
type example struct{ where, line string }

// docExamples extracts the examples of README.md and docs/*.md.
func docExamples(t *testing.T) []example {
	files, _ := filepath.Glob("../../docs/*.md")
	files = append([]string{"../../README.md"}, files...)
	fence := regexp.MustCompile("(?s)```sh\n(.*?)```")
	var out []example
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fence.FindAllStringSubmatch(string(b), -1) {
			text := strings.ReplaceAll(m[1], "\\\n", " ")
			for _, line := range strings.Split(text, "\n") {
				line = strings.Join(strings.Fields(line), " ")
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				out = append(out, example{strings.TrimPrefix(f, "../../"), line})
			}
		}
	}
	return out
}

// TestExamplesRun runs every example (see above).
func TestExamplesRun(t *testing.T) {
	exs := docExamples(t)
	for name, ex := range examples {
		exs = append(exs, example{"convo " + name + " -h", ex})
	}
	seen := map[string]bool{}
	fixtures := newFixtures(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fixtures["\x00root"] = []byte(root)
	for _, ex := range exs {
		key := exampleKey(ex.line)
		seen[key] = true
		if reason, ok := notRun[key]; ok {
			t.Logf("not run: %s: %q: %s", ex.where, ex.line, reason)
			continue
		}
		t.Run(ex.where+": "+ex.line, func(t *testing.T) {
			runExample(t, fixtures, ex.line)
		})
	}
	for key := range notRun {
		if !seen[key] {
			t.Errorf("notRun lists %q, which no document or help text holds any longer", key)
		}
	}
}

// fixtures are the files the examples name, made once.
type fixtures map[string][]byte

func newFixtures(t *testing.T) fixtures {
	history, err := os.ReadFile("../../examples/weather.json")
	if err != nil {
		t.Fatal(err)
	}
	request, errs, code := runCLI(t, string(history), "convert", "--from", "convo", "--to", "anthropic", "--messages-only")
	if code != 0 {
		t.Fatal(errs)
	}
	f := fixtures{
		"history.json":  history,
		"request.json":  []byte(request),
		"reply.json":    mustReadBytes(t, "../../provider/openai/testdata/replies/chat/audio.json"),
		"SESSION.jsonl": mustReadBytes(t, "../../archive/testdata/claude-code/session.jsonl"),
	}
	// A ChatGPT export of at least four conversations (--pick 3 takes the
	// fourth), as conversations.json and zipped: copies of the first under
	// other ids.
	var convs []map[string]json.RawMessage
	if err := json.Unmarshal(mustReadBytes(t, "../../archive/testdata/chatgpt/conversations.json"), &convs); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		c := maps.Clone(convs[0])
		id, _ := json.Marshal(fmt.Sprintf("copy-%d", i))
		c["id"], c["conversation_id"] = id, id
		convs = append(convs, c)
	}
	all, _ := json.Marshal(convs)
	f["conversations.json"] = all
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	w, _ := zw.Create("conversations.json")
	w.Write(all)
	zw.Close()
	f["chatgpt-export.zip"] = z.Bytes()
	return f
}

func mustReadBytes(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sandbox makes a working directory and home holding the fixtures, and a
// store (convo.db) holding history.json as conv_0193…, the id the examples
// print.
func (f fixtures) sandbox(t *testing.T) string {
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	for name, b := range f {
		if strings.HasPrefix(name, "\x00") {
			continue
		}
		p := filepath.Join(dir, name)
		if name == "SESSION.jsonl" {
			p = filepath.Join(home, ".claude/projects/-home-me-proj", name)
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("HOME", home)
	if _, errs, code := runCLI(t, "", "store", "import", "--id", "conv_0193…", "history.json"); code != 0 {
		t.Fatal(errs)
	}
	return dir
}

// runExample runs a command line as sh would: a pipeline of convo
// commands, with environment assignments, quotes, comments, ~ and the
// redirections >, >> and <. `less -R` at the end of a pipeline pages
// nothing when its output is not a terminal: it copies.
func runExample(t *testing.T, f fixtures, line string) {
	f.sandbox(t)
	stages, redirects := parseShell(t, line)
	var in io.Reader = strings.NewReader("")
	if p, ok := redirects["<"]; ok {
		in = bytes.NewReader(mustReadBytes(t, p))
	}
	var out bytes.Buffer
	for i, argv := range stages {
		vars := map[string]string{}
		for len(argv) > 0 && strings.Contains(argv[0], "=") && !strings.HasPrefix(argv[0], "-") {
			k, v, _ := strings.Cut(argv[0], "=")
			vars[k], argv = v, argv[1:]
		}
		if len(argv) >= 3 && argv[0] == "go" && argv[1] == "run" && argv[2] == "./cmd/convo" {
			t.Chdir(string(f["\x00root"])) // in a clone of the repository, as printed
			argv = append([]string{"convo"}, argv[3:]...)
		}
		out.Reset()
		switch {
		case len(argv) > 1 && argv[0] == "export" && len(stages) == 1:
			// Sets the environment of the examples after it, which
			// give theirs themselves here.
			for _, a := range argv[1:] {
				if k, _, ok := strings.Cut(a, "="); !ok || k == "" {
					t.Fatalf("%q: export %q is not NAME=VALUE", line, a)
				}
			}
		case len(argv) > 1 && argv[0] == "convo" && (argv[1] == "serve" || argv[1] == "gateway"):
			startAndStop(t, vars, argv)
		case len(argv) > 0 && argv[0] == "convo":
			var errb bytes.Buffer
			e := &env{stdin: in, stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
			if code := run(e, argv[1:]); code != 0 {
				t.Fatalf("stage %d, %q: exit %d: %s", i, argv, code, errb.String())
			}
		case slices.Equal(argv, []string{"less", "-R"}) && i == len(stages)-1:
			io.Copy(&out, in)
		default:
			t.Fatalf("%q runs %q, which this test cannot run: give notRun a reason", line, argv)
		}
		in = bytes.NewReader(slices.Clone(out.Bytes()))
	}
	if p, ok := redirects[">"]; ok {
		os.WriteFile(p, out.Bytes(), 0o644)
	}
	if p, ok := redirects[">>"]; ok {
		fh, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fh.Write(out.Bytes())
		fh.Close()
	}
}

// startAndStop runs a server example (convo serve, convo gateway) as
// printed, on a free loopback port instead of its --addr: it must start —
// its flags parse, its store opens, it listens — and it is then stopped.
// Its upstreams are not called: a server calls them only for a request.
func startAndStop(t *testing.T, vars map[string]string, argv []string) {
	var errb syncBuffer
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: &errb, getenv: func(k string) string { return vars[k] }}
	args := append(slices.Clone(argv[2:]), "--addr", "127.0.0.1:0")
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var err error
	if argv[1] == "serve" {
		var cfg serveConfig
		if cfg, err = parseServe(e, args); err == nil {
			cfg.ready = func(string) { stop() }
			err = serve(ctx, e, cfg)
		}
	} else {
		var cfg gatewayConfig
		if cfg, err = parseGateway(e, args); err == nil {
			cfg.ready = func(string) { stop() }
			err = runGatewayServer(ctx, e, cfg)
		}
	}
	if err != nil {
		t.Fatalf("%q: %v\n%s", argv, err, errb.String())
	}
}

// parseShell splits a command line into pipeline stages of words, and its
// redirections (operator → file).
func parseShell(t *testing.T, line string) ([][]string, map[string]string) {
	var stages [][]string
	var words []string
	redirects := map[string]string{}
	var word strings.Builder
	inWord, quote, pendingRedirect := false, byte(0), ""
	flush := func() {
		if !inWord {
			return
		}
		w := word.String()
		if strings.HasPrefix(w, "~/") {
			w = filepath.Join(os.Getenv("HOME"), w[2:])
		}
		if pendingRedirect != "" {
			redirects[pendingRedirect], pendingRedirect = w, ""
		} else {
			words = append(words, w)
		}
		word.Reset()
		inWord = false
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				word.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '#' && !inWord:
			i = len(line)
		case c == ' ' || c == '\t':
			flush()
		case c == '|':
			flush()
			stages, words = append(stages, words), nil
		case c == '>' || c == '<':
			flush()
			op := string(c)
			if c == '>' && i+1 < len(line) && line[i+1] == '>' {
				op, i = ">>", i+1
			}
			pendingRedirect = op
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		t.Fatalf("unclosed quote in %q", line)
	}
	flush()
	if pendingRedirect != "" {
		t.Fatalf("%q: %s without a file", line, pendingRedirect)
	}
	return append(stages, words), redirects
}
