package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store/storetest"
)

// exportWant is what exporting example.json gives: its messages with the
// ids the store assigned, in canonical form.
func exportWant(t *testing.T, db, tenant, id string, lines bool) string {
	t.Helper()
	args := []string{"store", "export", "--db", db, "--tenant", tenant, id}
	if lines {
		args = []string{"store", "export", "--db", db, "--tenant", tenant, "--lines", id}
	}
	out, errs, code := runCLI(t, "", args...)
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	return out
}

func TestStoreRoundTrip(t *testing.T) {
	example := "../../testdata/v1/example.json"
	src, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	want, err := convo.Unmarshal(src)
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "s.db")

	out, errs, code := runCLI(t, "", "store", "import", "--db", db, "--tenant", "acme", "--id", "trip", "--title", "Paris trip",
		"--meta", `{"project":"travel"}`, example)
	if code != 0 || out != "trip\n" {
		t.Fatalf("import: exit %d, out %q, err %q", code, out, errs)
	}
	// From stdin, with a new id.
	out, errs, code = runCLI(t, string(src), "store", "import", "--db", db, "--tenant", "acme")
	newID := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(newID, "conv_") {
		t.Fatalf("import from stdin: exit %d, out %q, err %q", code, out, errs)
	}

	for _, lines := range []bool{false, true} {
		got, err := convo.Unmarshal([]byte(exportWant(t, db, "acme", "trip", lines)))
		if err != nil {
			t.Fatalf("export (lines %v) does not decode: %v", lines, err)
		}
		for i := range got {
			if !strings.HasPrefix(got[i].ID, "msg_") {
				t.Fatalf("messages[%d] has no id", i)
			}
			got[i].ID = ""
		}
		if !got.Equal(want) {
			t.Fatalf("export (lines %v) differs from the imported document", lines)
		}
	}
	env := exportWant(t, db, "acme", "trip", false)
	if !strings.HasPrefix(env, `{"format":"convo/v1","messages":[`) {
		t.Fatalf("export is not the envelope: %.60s", env)
	}
	if l := exportWant(t, db, "acme", "trip", true); strings.Count(l, "\n") != len(want) || strings.Contains(l, `"format"`) {
		t.Fatalf("export --lines is not one message a line:\n%s", l)
	}

	out, _, code = runCLI(t, "", "store", "list", "--db", db, "--tenant", "acme")
	if code != 0 || !strings.HasPrefix(out, "ID") || !strings.Contains(out, "trip") || !strings.Contains(out, "Paris trip") || !strings.Contains(out, newID) {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "", "store", "list", "--db", db, "--tenant", "acme", "--json", "--meta", `{"project":"travel"}`)
	var d convDescription
	if code != 0 || strings.Count(out, "\n") != 1 || json.Unmarshal([]byte(out), &d) != nil || d.ID != "trip" || d.Messages != len(want) || d.Tenant != "acme" {
		t.Fatalf("list --json --meta: exit %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "", "store", "list", "--db", db, "--tenant", "acme", "--json", "--limit", "1")
	if code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("list --limit 1: exit %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "", "store", "list", "--db", db, "--tenant", "nobody", "--json")
	if code != 0 || out != "" {
		t.Fatalf("list of another tenant: exit %d\n%s", code, out)
	}

	out, _, code = runCLI(t, "", "store", "show", "--db", db, "--tenant", "acme", "trip")
	for _, s := range []string{"id:       trip", "title:    Paris trip", `meta:     {"project":"travel"}`, "version:  1", "messages: 5", "get_weather"} {
		if code != 0 || !strings.Contains(out, s) {
			t.Fatalf("show: exit %d, want %q in\n%s", code, s, out)
		}
	}
	out, _, code = runCLI(t, "", "store", "show", "--db", db, "--tenant", "acme", "--json", "trip")
	first, rest, _ := strings.Cut(out, "\n")
	if code != 0 || json.Unmarshal([]byte(first), &d) != nil || d.Title != "Paris trip" {
		t.Fatalf("show --json: exit %d\n%s", code, out)
	}
	if h, err := convo.Unmarshal([]byte(rest)); err != nil || len(h) != len(want) {
		t.Fatalf("show --json messages: %d, %v", len(h), err)
	}

	out, errs, code = runCLI(t, "", "store", "rm", "--db", db, "--tenant", "acme", "trip", newID)
	if code != 0 || out != "removed trip\nremoved "+newID+"\n" {
		t.Fatalf("rm: exit %d, out %q, err %q", code, out, errs)
	}
	_, errs, code = runCLI(t, "", "store", "rm", "--db", db, "--tenant", "acme", "trip")
	if code != 1 || !strings.Contains(errs, `conversation "trip": not found`) || strings.Count(errs, "\n") != 1 {
		t.Fatalf("rm of a removed conversation: exit %d, err %q", code, errs)
	}
}

func TestStoreErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	if _, errs, code := runCLI(t, "", "store", "import", "--db", db, "--id", "dup", "../../testdata/v1/example.json"); code != 0 {
		t.Fatal(errs)
	}
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stderr string
	}{
		{"no subcommand", "", []string{"store"}, 2, "missing subcommand"},
		{"unknown subcommand", "", []string{"store", "frob"}, 2, `unknown subcommand "frob"`},
		{"export without id", "", []string{"store", "export", "--db", db}, 2, "missing conversation ID"},
		{"export two ids", "", []string{"store", "export", "--db", db, "a", "b"}, 2, "too many arguments"},
		{"show without id", "", []string{"store", "show", "--db", db}, 2, "missing conversation ID"},
		{"rm without id", "", []string{"store", "rm", "--db", db}, 2, "missing conversation ID"},
		{"bad flag", "", []string{"store", "list", "--db", db, "--nope"}, 2, "flag provided but not defined"},
		{"negative limit", "", []string{"store", "list", "--db", db, "--limit", "-1"}, 2, "--limit must not be negative"},
		{"meta not JSON", "", []string{"store", "list", "--db", db, "--meta", "{"}, 2, "--meta is not JSON"},
		{"meta not an object", "", []string{"store", "list", "--db", db, "--meta", "[1]"}, 1, "not a JSON object"},
		{"export missing", "", []string{"store", "export", "--db", db, "nope"}, 1, `conversation "nope": not found`},
		{"export other tenant", "", []string{"store", "export", "--db", db, "--tenant", "x", "dup"}, 1, `conversation "dup": not found`},
		{"import existing id", "[]", []string{"store", "import", "--db", db, "--id", "dup"}, 1, "already exists"},
		{"import bad id", "[]", []string{"store", "import", "--db", db, "--id", "a/b"}, 1, "contains '/'"},
		{"import bad JSON", `[{"role":"user","parts":[{"type":"text","text":1}]}]`, []string{"store", "import", "--db", db}, 1,
			"stdin: messages[0].parts[0].text: got number, want string"},
		{"import invalid history", `[{"role":"user","parts":[{"type":"tool_call","id":"c","name":"f","args":{}}]}]`, []string{"store", "import", "--db", db}, 1,
			"messages[0].parts[0]: tool_call in a user message"},
		{"bad database", "", []string{"store", "import", "--db", filepath.Join(t.TempDir(), "no", "dir.db"), "../../testdata/v1/example.json"}, 1, "opening"},
		{"bad postgres URL", "", []string{"store", "list", "--db", "postgres://%zz"}, 1, "opening postgres://%zz"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, code := runCLI(t, tc.stdin, tc.args...)
			if code != tc.code || !strings.Contains(errs, tc.stderr) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, errs, tc.code, tc.stderr)
			}
			if code == 1 && strings.Count(errs, "\n") != 1 {
				t.Fatalf("error is not one line: %q", errs)
			}
		})
	}
	out, _, code := runCLI(t, "", "store", "help")
	if code != 0 || !strings.Contains(out, "convo store import") || !strings.Contains(out, "convo store rm") {
		t.Fatalf("store help: exit %d\n%s", code, out)
	}
}

func TestStorePostgres(t *testing.T) {
	db := storetest.PostgresDSN(t)
	out, errs, code := runCLI(t, "", "store", "import", "--db", db, "--id", "pg", "../../testdata/v1/example.json")
	if code != 0 || out != "pg\n" {
		t.Fatalf("import: exit %d %q %q", code, out, errs)
	}
	out, _, code = runCLI(t, "", "store", "list", "--db", db, "--json")
	if code != 0 || !strings.Contains(out, `"id":"pg"`) {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
}

// TestStoreReadersCreateNothing: list, show, export and rm of a database
// that does not exist say so and leave no file behind.
func TestStoreReadersCreateNothing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "typo.db")
	for _, args := range [][]string{{"list"}, {"show", "x"}, {"export", "x"}, {"rm", "x"}} {
		full := append([]string{"store"}, args[0], "--db", db)
		full = append(full, args[1:]...)
		_, errs, code := runCLI(t, "", full...)
		if code != 1 || !strings.Contains(errs, "no database at "+db) {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
		if _, err := os.Stat(db); err == nil {
			t.Fatalf("%v created %s", args, db)
		}
	}
}

// TestStoreAppend: a message or a provider's reply goes at the end of a
// stored conversation, with the version check.
func TestStoreAppend(t *testing.T) {
	db := filepath.Join(t.TempDir(), "convo.db")
	hist := `[{"role":"user","parts":[{"type":"text","text":"Plan a trip to Rome\nwith kids"}]}]`
	id, errs, code := runCLI(t, hist, "store", "import", "--db", db)
	if code != 0 {
		t.Fatalf("import: %s", errs)
	}
	id = strings.TrimSpace(id)
	out, _, _ := runCLI(t, "", "store", "list", "--db", db, "--json")
	if !strings.Contains(out, `"title":"Plan a trip to Rome"`) {
		t.Errorf("import kept no title: %s", out)
	}
	out, errs, code = runCLI(t, "", "store", "append", "--db", db, "--from", "anthropic", id, "../../provider/anthropic/testdata/reply/interleaved.sse")
	if code != 0 || out != id+": version 2, 2 messages\n" {
		t.Fatalf("append reply: exit %d %q %s", code, out, errs)
	}
	user := `{"role":"user","parts":[{"type":"text","text":"thanks"}]}`
	_, errs, code = runCLI(t, user, "store", "append", "--db", db, "--version", "1", id)
	if code != 1 || !strings.Contains(errs, "is at version 2, not 1") {
		t.Fatalf("stale version: exit %d %s", code, errs)
	}
	out, errs, code = runCLI(t, user, "store", "append", "--db", db, "--version", "2", id)
	if code != 0 || out != id+": version 3, 3 messages\n" {
		t.Fatalf("append: exit %d %q %s", code, out, errs)
	}
	_, errs, code = runCLI(t, user, "store", "append", "--db", db, "nope")
	if code != 1 || !strings.Contains(errs, "not found") {
		t.Fatalf("unknown id: exit %d %s", code, errs)
	}
}

func TestDefaultTitle(t *testing.T) {
	long := strings.Repeat("é", 100)
	for _, tc := range []struct {
		h    convo.History
		args []string
		want string
	}{
		{convo.History{convo.System("be brief"), convo.User("  Hello there\nmore")}, nil, "Hello there"},
		{convo.History{convo.User(long)}, nil, strings.Repeat("é", 79) + "…"},
		{convo.History{convo.Assistant("hi")}, []string{"/x/chat-42.json"}, "chat-42"},
		{nil, []string{"-"}, ""},
	} {
		if got := defaultTitle(tc.h, tc.args); got != tc.want {
			t.Errorf("defaultTitle = %q, want %q", got, tc.want)
		}
	}
}

func TestStoreSearch(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	doc := `{"format":"convo/v1","messages":[{"role":"user","id":"u1","parts":[{"type":"text","text":"Weather in Paris?\u001b[2J"}]},` +
		`{"role":"assistant","id":"a1","parts":[{"type":"text","text":"Sunny in Paris."}]}]}`
	if _, _, code := runCLI(t, doc, "store", "import", "--db", db, "--tenant", "acme", "--id", "trip", "--title", "Trip"); code != 0 {
		t.Fatal("import failed")
	}
	out, _, code := runCLI(t, "", "store", "search", "--db", db, "--tenant", "acme", "paris")
	if code != 0 || !strings.HasPrefix(out, "CONVERSATION") || strings.Count(out, "\n") != 3 || !strings.Contains(out, "Sunny in Paris.") || strings.Contains(out, "\x1b") {
		t.Fatalf("search: exit %d\n%q", code, out)
	}
	out, _, code = runCLI(t, "", "store", "search", "--db", db, "--tenant", "acme", "--json", "--limit", "1", "Paris")
	var hit struct {
		Conversation, Title, Message, Role string
		Index                              int
	}
	if code != 0 || strings.Count(out, "\n") != 1 || json.Unmarshal([]byte(out), &hit) != nil ||
		hit.Conversation != "trip" || hit.Title != "Trip" || hit.Message != "a1" || hit.Index != 1 || hit.Role != "assistant" {
		t.Fatalf("search --json --limit 1: exit %d\n%s", code, out)
	}
	if out, _, code = runCLI(t, "", "store", "search", "--db", db, "--tenant", "other", "paris"); code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("another tenant's search: exit %d\n%s", code, out)
	}
	if _, errOut, code := runCLI(t, "", "store", "search", "--db", db); code != 2 || !strings.Contains(errOut, "missing the words") {
		t.Fatalf("search without words: exit %d %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, "", "store", "search", "--db", db, "?!"); code != 1 || !strings.Contains(errOut, "no word to search for") {
		t.Fatalf("search without a word: exit %d %s", code, errOut)
	}
}

// TestStoreImportBatches: an import stored a batch at a time is whole, and
// a bad message in a later batch stores nothing and is named by its index
// in the file.
func TestStoreImportBatches(t *testing.T) {
	defer func(b int) { importBatch = b }(importBatch)
	importBatch = 300 // a few messages a batch
	db := filepath.Join(t.TempDir(), "convo.db")
	var lines []string
	for i := range 20 {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		lines = append(lines, fmt.Sprintf(`{"role":%q,"parts":[{"type":"text","text":"message %d"}]}`, role, i))
	}
	id, errs, code := runCLI(t, strings.Join(lines, "\n"), "store", "import", "--db", db)
	if code != 0 {
		t.Fatalf("import: %s", errs)
	}
	out, _, _ := runCLI(t, "", "store", "export", "--db", db, "--lines", strings.TrimSpace(id))
	got := strings.Split(strings.TrimSpace(out), "\n")
	for i, l := range got {
		if len(got) != 20 || !strings.Contains(l, fmt.Sprintf(`"text":"message %d"`, i)) {
			t.Fatalf("exported\n%s", out)
		}
	}
	lines[15] = `{"role":"tool","parts":[{"type":"tool_result","id":"nope","name":"f","parts":[]}]}`
	_, errs, code = runCLI(t, strings.Join(lines, "\n"), "store", "import", "--db", db, "--id", "bad")
	if code != 1 || !strings.Contains(errs, "messages[15]") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if _, errs, code := runCLI(t, "", "store", "show", "--db", db, "bad"); code != 1 || !strings.Contains(errs, "not found") {
		t.Fatalf("a failed import left a conversation: exit %d %s", code, errs)
	}
	// A file over --max-size is refused before it is read, in MiB.
	big := writeFile(t, "big.jsonl", strings.Repeat(lines[0]+"\n", 30000))
	_, errs, code = runCLI(t, "", "store", "import", "--db", db, "--max-size", "1", big)
	if code != 1 || !strings.Contains(errs, "more than the limit of 1.0 MiB (raise it with --max-size)") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

func TestEachPage(t *testing.T) {
	items := []int{0, 1, 2, 3, 4, 5, 6}
	fetch := func(n int, after string) ([]int, string, error) {
		from := 0
		if after != "" {
			from, _ = strconv.Atoi(after)
		}
		to := min(from+n, len(items))
		next := ""
		if to < len(items) {
			next = strconv.Itoa(to)
		}
		return items[from:to], next, nil
	}
	for _, tt := range []struct{ limit, max, want int }{
		{0, 3, 7}, {0, 100, 7}, {5, 2, 5}, {7, 3, 7}, {9, 4, 7}, {1, 1, 1},
	} {
		var got []int
		err := eachPage(tt.limit, tt.max, fetch, func(i int) error { got = append(got, i); return nil })
		if err != nil || len(got) != tt.want || (len(got) > 0 && got[len(got)-1] != tt.want-1) {
			t.Errorf("limit %d, pages of %d: %v, %v; want the first %d", tt.limit, tt.max, got, err, tt.want)
		}
	}
}
