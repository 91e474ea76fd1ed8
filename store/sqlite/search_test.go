package sqlite_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// leanIndex counts the search index tables of the database at path
// without positions (migration 8).
const leanIndex = `SELECT count(*) FROM sqlite_master WHERE name = 'messages_fts' AND sql LIKE '%detail = none%'`

// searchIDs is "conversation/message" of each hit of a search, limit a
// page, every page.
func searchIDs(t *testing.T, s store.Store, tenant, query string, limit int) string {
	t.Helper()
	var got []string
	after := ""
	for page := 0; ; page++ {
		hits, next, err := s.Search(t.Context(), tenant, query, store.SearchOptions{Limit: limit, After: after})
		if err != nil {
			t.Fatalf("Search(%q): %v", query, err)
		}
		if len(hits) == 0 && next != "" || page > 100 {
			t.Fatalf("Search(%q): page %d of %d hits, next %q", query, page, len(hits), next)
		}
		for _, h := range hits {
			got = append(got, h.Conversation.ID+"/"+h.MessageID)
		}
		if next == "" {
			return strings.Join(got, " ")
		}
		after = next
	}
}

// TestMigrationFromV7LeanIndex opens the v7 fixture, whose search index
// keeps positions: migration 8 rebuilds it without them from its rows,
// merging 16 segments at a time,
// and search finds the old messages (in the conversation and its fork,
// bodies in pieces among them) and new ones beside them.
func TestMigrationFromV7LeanIndex(t *testing.T) {
	ctx := t.Context()
	before := filepath.Join(t.TempDir(), "v7.db")
	if b, err := os.ReadFile(filepath.Join("testdata", "v7.db")); err != nil || os.WriteFile(before, b, 0o600) != nil {
		t.Fatal(err)
	}
	if n := rawInt(t, before, leanIndex); n != 0 {
		t.Fatal("the v7 fixture's index is already without positions")
	}
	s := openFixture(t, "v7")
	if v, err := s.SchemaVersion(ctx); err != nil || v != schemaVersion {
		t.Fatalf("schema version %d %v", v, err)
	}
	if n := rawInt(t, s.Path(), leanIndex); n != 1 {
		t.Fatal("migration 8 did not rebuild the index without positions")
	}
	if n := rawInt(t, s.Path(), `SELECT v FROM messages_fts_config WHERE k = 'automerge'`); n != 16 {
		t.Fatalf("the index merges %d segments at a time, want 16", n)
	}
	if n := rawInt(t, s.Path(), `SELECT count(*) FROM messages_fts`); n != 7 {
		t.Fatalf("the index holds %d messages, want the fixture's 7", n)
	}
	if got, want := searchIDs(t, s, "fixture", "zürich", 0), "fork/m2 fork/m1 v7/m2 v7/m1"; got != want {
		t.Fatalf("old messages: %s, want %s", got, want)
	}
	if _, err := s.Append(ctx, "fixture", "v7", store.AnyVersion, convo.User("Zürich tomorrow, drizzle again?")); err != nil {
		t.Fatal(err)
	}
	for query, want := range map[string]string{
		"zürich":         "fork/m2 fork/m1 v7/" + "@ v7/m2 v7/m1",
		"drizzle":        "v7/@ v7/m5 v7/m3",
		"drizzle zürich": "v7/@",
		"tomorrow":       "v7/@",
		"clearing":       "v7/m5",
	} {
		if got := searchIDs(t, s, "fixture", query, 1); !sameIDs(got, want) {
			t.Errorf("Search(%q) after a write: %s, want %s", query, got, want)
		}
	}
	checkAnew(t, s.Path())
}

// sameIDs compares searchIDs with want, in which "@" stands for a message
// id the store chose.
func sameIDs(got, want string) bool {
	g, w := strings.Fields(got), strings.Fields(want)
	if len(g) != len(w) {
		return false
	}
	for i := range g {
		if before, ok := strings.CutSuffix(w[i], "@"); ok {
			if !strings.HasPrefix(g[i], before) || strings.Count(g[i], "/") != 1 {
				return false
			}
		} else if g[i] != w[i] {
			return false
		}
	}
	return true
}

// TestSearchTokenizerSplits searches for words the tokenizer (unicode61)
// cuts in two where Go sees one word: New Tai Lue's vowel signs are
// letters in Go's tables and separators in the tokenizer's. Such a word
// was a phrase query, which an index without positions refuses: it is
// searched as its tokens and the hits checked, so that "ᦎᦲᧃ" is found
// whole, not in "ᦎ ᧃ", across pages that the check empties. (A search
// for "ᦎ" alone, one token, is not checked: it finds "ᦎᦲᧃ" too, as it
// did with positions.)
func TestSearchTokenizerSplits(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "split.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const word = "ᦎᦲᧃ" // U+198E U+19B2 U+19C3
	var h convo.History
	h = append(h, withID("w0", convo.User("say "+word)))
	for i := range 9 {
		h = append(h, withID(fmt.Sprintf("x%d", i), convo.User("ᦎ ᧃ, not the word")))
	}
	h = append(h, withID("w1", convo.User(strings.ToUpper(word)+" again")))
	h = append(h, withID("x9", convo.User("ᦎ–ᧃ")))
	if _, err := s.Create(t.Context(), store.Conversation{ID: "c", Tenant: "t"}, h...); err != nil {
		t.Fatal(err)
	}
	for query, want := range map[string]string{word: "c/w1 c/w0", "again " + word: "c/w1"} {
		for _, limit := range []int{1, 2, 0} {
			if got := searchIDs(t, s, "t", query, limit); got != want {
				t.Errorf("Search(%q), pages of %d: %s, want %s", query, limit, got, want)
			}
		}
	}
}

// withID returns m with the id id.
func withID(id string, m convo.Message) convo.Message { m.ID = id; return m }

// BenchmarkSearch searches a store that recorded 5,000 exchanges one
// commit each (BenchmarkExchange's, continuing 64 conversations), so that
// the search index is in as many segments as recording leaves it: a page
// of a common word, and a word of one exchange in the middle.
func BenchmarkSearch(b *testing.B) {
	ctx := b.Context()
	s, err := sqlite.Options{Synchronous: "NORMAL"}.Open(ctx, filepath.Join(b.TempDir(), "search.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for i := range 5000 {
		w := store.Write{Tenant: "t", ID: fmt.Sprintf("c%d", i%64), Create: i < 64, Version: store.AnyVersion,
			Messages: []convo.Message{convo.User(fmt.Sprintf("Question q%d: %s?", i, exchangeReply(-i, 100))), convo.Assistant(exchangeReply(i, 1700))}}
		if res := s.Batch(ctx, []store.Write{w}); res[0].Err != nil {
			b.Fatal(res[0].Err)
		}
	}
	for _, q := range []string{"umbrella", "q2500"} {
		b.Run(q, func(b *testing.B) {
			for b.Loop() {
				if hits, _, err := s.Search(ctx, "t", q, store.SearchOptions{}); err != nil || len(hits) == 0 {
					b.Fatal(len(hits), err)
				}
			}
		})
	}
}

// TestV9Fixture opens a database of schema version 9 (the store as of the
// night of 6 December 2026: the v8 fixture migrated by the store at commit
// 148bbf2, its conversation renamed v9), kept in testdata with its export.
// Migration 10 makes the search index contentless: every search finds what
// it found before, with the snippets schema 9 answered (recorded from that
// store), now cut from the text of the bodies, and from long_texts for
// those in pieces. A fork made after it is indexed, and deleting a message
// or a conversation takes its entries and long texts with it.
func TestV9Fixture(t *testing.T) {
	ctx := t.Context()
	s := openFixture(t, "v9")
	path := s.Path()
	if n := rawInt(t, path, `SELECT count(*) FROM sqlite_master WHERE name = 'messages_fts_content'`); n != 0 {
		t.Fatal("after migration 10, the search index still keeps a copy of the text")
	}
	// Four of v9's messages and both of its fork's are in pieces.
	if n := rawInt(t, path, `SELECT count(*) FROM long_texts`); n != 6 {
		t.Fatalf("%d long texts, want 6", n)
	}
	search := func(word string) string {
		t.Helper()
		hits, _, err := s.Search(ctx, "fixture", word, store.SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range hits {
			out = append(out, fmt.Sprintf("%s/%s %q", h.Conversation.ID, h.MessageID, h.Snippet))
		}
		return strings.Join(out, "\n")
	}
	const (
		m1 = `"What is the weather in Zürich? Here is a photo of the sky."`
		m2 = `"Let me look it up. weather {\"city\":\"Zürich\"}"`
		m3 = `"weather 12 °C, drizzle"`
		m5 = `"Drizzle all morning — ☂ — clearing by the afternoon. Drizzle all morning — ☂ — clearing by the afternoon. Drizzle all morning — ☂ — clearing by the afternoon. Drizzle all morning …"`
	)
	for word, want := range map[string]string{
		"zürich":   "fork/m2 " + m2 + "\nfork/m1 " + m1 + "\nv9/m2 " + m2 + "\nv9/m1 " + m1,
		"clearing": "v9/m5 " + m5,
		"drizzle":  "v9/m5 " + m5 + "\nv9/m3 " + m3,
		"ok":       `v9/m4 "ok"`,
		"weather":  "fork/m2 " + m2 + "\nfork/m1 " + m1 + "\nv9/m3 " + m3 + "\nv9/m2 " + m2 + "\nv9/m1 " + m1,
		"photo":    "fork/m1 " + m1 + "\nv9/m1 " + m1,
	} {
		if got := search(word); got != want {
			t.Fatalf("search of the v9 fixture for %q:\n%s\nwant\n%s", word, got, want)
		}
	}
	if _, err := s.Fork(ctx, "fixture", "v9", 5, store.Conversation{ID: "later"}); err != nil {
		t.Fatal(err)
	}
	if got, want := search("clearing"), "later/m5 "+m5+"\nv9/m5 "+m5; got != want {
		t.Fatalf("search after a fork for %q:\n%s\nwant\n%s", "clearing", got, want)
	}
	if got, want := search("ok"), "later/m4 \"ok\"\nv9/m4 \"ok\""; got != want {
		t.Fatalf("search after a fork for %q:\n%s\nwant\n%s", "ok", got, want)
	}
	if _, err := s.DeleteMessage(ctx, "fixture", "v9", store.AnyVersion, "m5"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "fixture", "later"); err != nil {
		t.Fatal(err)
	}
	if got := search("clearing"); got != "" {
		t.Fatalf("search for a deleted message's word: %s", got)
	}
	if n := rawInt(t, path, `SELECT count(*) FROM long_texts`); n != 5 {
		t.Fatalf("%d long texts after deleting one message in pieces and a fork of two more, want 5", n)
	}
	checkAnew(t, path)
}
