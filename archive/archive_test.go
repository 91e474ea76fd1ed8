package archive

import (
	"archive/zip"
	"bytes"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/golden/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, got)
	}
}

type dumpFork struct {
	At       int             `json:"at"`
	Leaf     string          `json:"leaf,omitempty"`
	Messages json.RawMessage `json:"messages"`
}

type dumpConv struct {
	ID       string          `json:"id,omitempty"`
	Title    string          `json:"title,omitempty"`
	Created  *time.Time      `json:"created,omitempty"`
	Updated  *time.Time      `json:"updated,omitempty"`
	Meta     json.RawMessage `json:"meta,omitempty"`
	Tools    json.RawMessage `json:"tools,omitempty"`
	Messages json.RawMessage `json:"messages"`
	Forks    []dumpFork      `json:"forks,omitempty"`
	Warnings []string        `json:"warnings,omitempty"`
}

func lines(h convo.History) json.RawMessage {
	b, err := convo.MarshalLines(h)
	if err != nil {
		panic(err)
	}
	var msgs []json.RawMessage
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(l) > 0 {
			msgs = append(msgs, l)
		}
	}
	out, _ := json.Marshal(msgs)
	return out
}

func warnStrings(ws []provider.Warning) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.String())
	}
	return out
}

// dump renders what a reader read, for golden files.
func dump(t *testing.T, cs []*Conversation, readerWarnings []provider.Warning) []byte {
	t.Helper()
	var out struct {
		Conversations []dumpConv `json:"conversations"`
		Skipped       []string   `json:"skipped,omitempty"`
	}
	for _, c := range cs {
		d := dumpConv{ID: c.ID, Title: c.Title, Meta: c.Meta, Tools: c.Tools, Messages: lines(c.History), Warnings: warnStrings(c.Warnings)}
		if !c.Created.IsZero() {
			d.Created = &c.Created
		}
		if !c.Updated.IsZero() {
			d.Updated = &c.Updated
		}
		for _, f := range c.Forks {
			d.Forks = append(d.Forks, dumpFork{At: f.At, Leaf: f.Leaf, Messages: lines(f.History)})
		}
		out.Conversations = append(out.Conversations, d)
	}
	out.Skipped = warnStrings(readerWarnings)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// checkValid fails unless every line of c — the main line and each fork
// after its shared messages — is a valid history: a store takes nothing else.
func checkValid(t testing.TB, c *Conversation) {
	t.Helper()
	if err := c.History.Validate(); err != nil {
		t.Errorf("conversation %q: main line: %v", c.ID, err)
	}
	for i, f := range c.Forks {
		if f.At > len(c.History) {
			t.Errorf("conversation %q: fork %d at %d of %d messages", c.ID, i, f.At, len(c.History))
			continue
		}
		h := append(append(convo.History{}, c.History[:f.At]...), f.History...)
		if err := h.Validate(); err != nil {
			t.Errorf("conversation %q: fork %d: %v", c.ID, i, err)
		}
	}
}

func readAll(t *testing.T, r *Reader) []*Conversation {
	t.Helper()
	cs, err := ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		checkValid(t, c)
	}
	return cs
}

// makeLLM builds an llm logs.db from the SQL sample.
func makeLLM(t testing.TB) string { return makeLLMFrom(t, "testdata/llm/logs.sql") }

// makeLLMFrom builds an llm logs.db from a SQL script.
func makeLLMFrom(t testing.TB, sqlFile string) string {
	t.Helper()
	script, err := os.ReadFile(sqlFile)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "logs.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(string(script)); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestReadSamples(t *testing.T) {
	for _, tc := range []struct {
		name string
		path string
		f    Format
	}{
		{"chatgpt", "testdata/chatgpt/conversations.json", ChatGPT},
		{"chatgpt-shards", "testdata/chatgpt-shards", ChatGPT},
		{"claude", "testdata/claude/conversations.json", Claude},
		{"claude-code", "testdata/claude-code/session.jsonl", ClaudeCode},
		{"sharegpt", "testdata/sharegpt/sample.json", ShareGPT},
		{"finetune", "testdata/finetune/sample.jsonl", FineTune},
		{"llm", "testdata/llm/logs.sql", LLM},
		{"llm-nodes", "testdata/llm/logs-nodes.sql", LLM},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if tc.f == LLM {
				path = makeLLMFrom(t, tc.path)
			}
			r, err := Open(path, tc.f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			cs := readAll(t, r)
			golden(t, tc.name+".json", dump(t, cs, r.Warnings()))
		})
	}
}

// TestChatGPTTree checks the tree rules on the sample directly, so a
// golden file rewritten by mistake cannot hide a broken rule.
func TestChatGPTTree(t *testing.T) {
	r, err := Open("testdata/chatgpt/conversations.json", ChatGPT, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := readAll(t, r)
	if len(cs) != 2 {
		t.Fatalf("read %d conversations, want 2 (the third is not one)", len(cs))
	}
	if sk := r.Warnings(); len(sk) != 1 || sk[0].Path != "conversations[2]" {
		t.Errorf("skipped = %v, want conversations[2]", sk)
	}
	c := cs[0]
	last := c.History[len(c.History)-1]
	if last.ID != "m-a3" {
		t.Errorf("main line ends at %q, want current_node m-a3", last.ID)
	}
	if len(c.Forks) != 1 || c.Forks[0].Leaf != "m-a1b" || c.Forks[0].History[0].ID != "m-a1b" {
		t.Fatalf("forks = %+v, want the regenerated answer m-a1b", c.Forks)
	}
	if got := c.History[c.Forks[0].At-1].ID; got != "m-u1" {
		t.Errorf("fork shares the main line up to %q, want m-u1", got)
	}
	var reasoning, call, image bool
	for _, m := range c.History {
		for _, p := range m.Parts {
			reasoning = reasoning || p.Type == convo.TypeReasoning
			call = call || (p.Type == convo.TypeToolCall && p.Name == "python" && strings.Contains(p.ArgsRaw, "plt.plot"))
			image = image || (p.Type == convo.TypeImage && p.FileID == "file-Abc123")
		}
	}
	if !reasoning || !call || !image {
		t.Errorf("reasoning %v, python call %v, image %v: want all", reasoning, call, image)
	}
	// The second: current_node's chain is broken above it, content of a
	// new type is skipped, both reported.
	c = cs[1]
	ws := strings.Join(warnStrings(c.Warnings), "\n")
	for _, want := range []string{`unknown content type "canvas_preview_v9"`, "a call was synthesised"} {
		if !strings.Contains(ws, want) {
			t.Errorf("warnings lack %q:\n%s", want, ws)
		}
	}
}

// TestRoundTrip: what a writer writes, the reader of the same format reads
// back equal.
func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		path string
		f    Format
	}{
		{"testdata/finetune/sample.jsonl", FineTune},
		{"testdata/sharegpt/sample.json", ShareGPT},
	} {
		t.Run(string(tc.f), func(t *testing.T) {
			r, err := Open(tc.path, tc.f, Options{})
			if err != nil {
				t.Fatal(err)
			}
			first := readAll(t, r)
			var buf bytes.Buffer
			if tc.f == FineTune {
				// Preference examples have a fork, which plain examples cannot hold.
				var plain []*Conversation
				for _, c := range first {
					if len(c.Forks) == 0 {
						plain = append(plain, c)
					}
				}
				first = plain
			}
			ws, err := Write(&buf, tc.f, first, WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(ws) > 0 {
				t.Errorf("writing what was read warns: %v", ws)
			}
			second, err := ReadAll(mustReader(t, &buf, tc.f))
			if err != nil {
				t.Fatal(err)
			}
			if len(second) != len(first) {
				t.Fatalf("read back %d conversations, want %d", len(second), len(first))
			}
			for i := range first {
				if !first[i].History.Equal(second[i].History) {
					a, _ := convo.MarshalLines(first[i].History)
					b, _ := convo.MarshalLines(second[i].History)
					t.Errorf("conversation %d changed:\n%s\nvs\n%s", i, a, b)
				}
				if !bytes.Equal(compactJSON(first[i].Tools), compactJSON(second[i].Tools)) {
					t.Errorf("conversation %d tools changed: %s vs %s", i, first[i].Tools, second[i].Tools)
				}
			}
		})
	}
}

func compactJSON(b json.RawMessage) []byte {
	var out bytes.Buffer
	if len(b) == 0 || json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}

func mustReader(t *testing.T, r io.Reader, f Format) *Reader {
	t.Helper()
	rd, err := NewReader(r, f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

// TestWriteGolden writes the shipped example and the samples in every
// writable format.
func TestWriteGolden(t *testing.T) {
	doc, err := os.ReadFile("../examples/weather.json")
	if err != nil {
		t.Fatal(err)
	}
	h, err := convo.Unmarshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	weather := &Conversation{ID: "weather", Title: "Weather in Paris", History: h}
	r, err := Open("testdata/claude-code/session.jsonl", ClaudeCode, Options{})
	if err != nil {
		t.Fatal(err)
	}
	session := readAll(t, r)
	for _, f := range Writable() {
		for _, tc := range []struct {
			name string
			cs   []*Conversation
			opts WriteOptions
		}{
			{"weather", []*Conversation{weather}, WriteOptions{}},
			{"weather-full", []*Conversation{weather}, WriteOptions{Reasoning: true, EmbedMedia: true}},
			{"claude-code", session, WriteOptions{Reasoning: true}},
		} {
			if f != Markdown && tc.name == "weather-full" {
				continue // the options are Markdown's
			}
			var buf bytes.Buffer
			ws, err := Write(&buf, f, tc.cs, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range ws {
				fmt.Fprintf(&buf, "<!-- warning: %s -->\n", w)
			}
			golden(t, fmt.Sprintf("write-%s.%s", tc.name, f), buf.Bytes())
		}
	}
}

func TestMarkdownFence(t *testing.T) {
	c := &Conversation{History: convo.History{
		convo.Assistant("", convo.ToolCall("c1", "run", json.RawMessage(`{"code":"x"}`))),
		convo.ToolResults(convo.ToolResult("c1", "run", "a ``` fence and ```` four")),
	}}
	md := MarkdownOf(c, WriteOptions{})
	if !strings.Contains(md, "`````\na ``` fence and ```` four\n`````") {
		t.Errorf("the fence is not longer than the content's backtick runs:\n%s", md)
	}
}

func TestRecordLimit(t *testing.T) {
	big := `[{"mapping":{},"title":"` + strings.Repeat("x", 200<<10) + `"}]`
	r := mustReader(t, strings.NewReader(big), ChatGPT)
	r2, _ := NewReader(strings.NewReader(big), ChatGPT, Options{MaxBytes: 100 << 10})
	if _, err := r2.Next(); err == nil || !strings.Contains(err.Error(), "conversations[0]: larger than 102400 bytes") {
		t.Errorf("err = %v, want conversations[0] too large", err)
	}
	if _, err := r.Next(); err != nil {
		t.Errorf("default limit: %v", err)
	}
	lines := `{"messages":[{"role":"user","content":"` + strings.Repeat("y", 5000) + `"}]}` + "\n"
	r3, _ := NewReader(strings.NewReader(lines), FineTune, Options{MaxBytes: 1000})
	if _, err := r3.Next(); err == nil || !strings.Contains(err.Error(), "lines[0]: larger than 1000 bytes") {
		t.Errorf("err = %v, want lines[0] too large", err)
	}
}

// TestOpenZip reads an export as it is downloaded: a zip file with the
// shards in a folder and other files beside them.
func TestOpenZip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "export.zip")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, name := range []string{"conversations-000.json", "conversations-001.json", "export_manifest.json"} {
		b, err := os.ReadFile("testdata/chatgpt-shards/" + name)
		if err != nil {
			t.Fatal(err)
		}
		w, _ := zw.Create("export-2026/" + name)
		w.Write(b)
	}
	w, _ := zw.Create("export-2026/chat.html")
	io.WriteString(w, "<html></html>")
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, err := Open(path, ChatGPT, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cs := readAll(t, r)
	if len(cs) != 2 || cs[0].ID != "c-000" || cs[1].ID != "c-001" {
		t.Fatalf("read %d conversations", len(cs))
	}
	if _, err := Open(path, Claude, Options{}); err == nil || !strings.Contains(err.Error(), "no claude conversations") {
		t.Errorf("a ChatGPT zip read as Claude: %v", err)
	}
}

// TestClaudeTree: a newer Claude export keeps edited and regenerated
// branches in chat_messages; only the branch to current_leaf_message_uuid
// is the main line, the others are forks.
func TestClaudeTree(t *testing.T) {
	r, err := Open("testdata/claude/conversations.json", Claude, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := readAll(t, r)
	c := cs[2]
	var ids []string
	for _, m := range c.History {
		ids = append(ids, m.ID)
	}
	if strings.Join(ids, " ") != "b-1 b-2r b-3 b-4" {
		t.Errorf("main line %v, want the branch to the current leaf b-4", ids)
	}
	if len(c.Forks) != 2 || c.Forks[0].Leaf != "b-2" || c.Forks[0].At != 1 || c.Forks[1].Leaf != "b-3e" || c.Forks[1].At != 2 {
		t.Errorf("forks %+v", c.Forks)
	}
}
