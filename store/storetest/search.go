package storetest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode"

	"pgregory.net/rapid"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// searchAll pages through every hit of a search, limit at a time.
func searchAll(t *testing.T, s store.Store, tenant, query string, limit int) []store.Hit {
	t.Helper()
	var out []store.Hit
	after := ""
	for page := 0; ; page++ {
		hits, next, err := s.Search(ctx(t), tenant, query, store.SearchOptions{Limit: limit, After: after})
		if err != nil {
			t.Fatalf("Search(%q, page %d): %v", query, page, err)
		}
		if limit > 0 && len(hits) > limit {
			t.Fatalf("Search(%q): %d hits on a page of %d", query, len(hits), limit)
		}
		out = append(out, hits...)
		if next == "" {
			return out
		}
		if len(hits) == 0 || page > 1000 {
			t.Fatalf("Search(%q): page %d is empty but a next cursor follows", query, page)
		}
		after = next
	}
}

// hitKeys names each hit "conversation/index/message id".
func hitKeys(hits []store.Hit) string {
	keys := make([]string, len(hits))
	for i, h := range hits {
		keys[i] = fmt.Sprintf("%s/%d/%s", h.Conversation.ID, h.Index, h.MessageID)
	}
	return strings.Join(keys, " ")
}

func wantHits(t *testing.T, s store.Store, tenant, query, want string) []store.Hit {
	t.Helper()
	hits := searchAll(t, s, tenant, query, 0)
	if got := hitKeys(hits); got != want {
		t.Fatalf("Search(%q, %q):\ngot  %s\nwant %s", tenant, query, got, want)
	}
	return hits
}

// withID returns m with the id id.
func withID(id string, m convo.Message) convo.Message { m.ID = id; return m }

func testSearch(t *testing.T, s store.Store) {
	a := mustCreate(t, s, store.Conversation{ID: "a", Tenant: "t", Title: "Trip"},
		withID("a0", convo.System("You plan journeys.")),
		withID("a1", convo.User("Weather in Paris tomorrow?")),
		withID("a2", convo.Assistant("", convo.ToolCall("call_1", "get_weather", json.RawMessage(`{"city":"Lyon"}`)))),
		withID("a3", convo.ToolResults(convo.ToolResult("call_1", "get_weather", `{"sky":"overcast"}`))),
		withID("a4", convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
			{Type: convo.TypeReasoning, Text: "The user wants PARIS weather.", Summary: []string{"thinking about umbrellas"}, Signature: "sigzebra"},
			convo.Text("Paris: overcast, 14 °C. Take an umbrella."),
		}}),
	)
	mustCreate(t, s, store.Conversation{ID: "b", Tenant: "t"},
		withID("b0", convo.User("Paris again, and Rome")), withID("b1", convo.ErrorMessage("upstream timeout in Rome")))
	mustCreate(t, s, store.Conversation{ID: "secret", Tenant: "other"}, withID("s0", convo.User("Paris is mine")))

	// Newest conversation first, the last message of each first; words
	// match regardless of case and in every searchable part.
	hits := wantHits(t, s, "t", "paris", "b/0/b0 a/4/a4 a/1/a1")
	wantHits(t, s, "t", "PARIS weather", "a/4/a4 a/1/a1")
	wantHits(t, s, "t", "lyon", "a/2/a2")
	wantHits(t, s, "t", "get_weather", "a/3/a3 a/2/a2") // "get" and "weather"
	wantHits(t, s, "t", "overcast", "a/4/a4 a/3/a3")
	wantHits(t, s, "t", "umbrellas", "a/4/a4")
	wantHits(t, s, "t", "journeys", "a/0/a0")
	wantHits(t, s, "t", "timeout", "b/1/b1")
	wantHits(t, s, "t", "sigzebra", "") // signatures are not text
	wantHits(t, s, "t", "paris rome", "b/0/b0")
	wantHits(t, s, "t", "par", "")                  // whole words only
	wantHits(t, s, "t", `"paris" OR NOT rome*`, "") // query syntax is words, never operators
	wantHits(t, s, "other", "paris", "secret/0/s0")
	wantHits(t, s, "nobody", "paris", "")

	h := hits[1]
	if h.Role != convo.RoleAssistant || h.Conversation.Title != "Trip" || h.Conversation.Tenant != "t" ||
		h.Conversation.Messages != 5 || h.Conversation.Version != a.Version {
		t.Fatalf("hit: %+v", h)
	}
	if !strings.Contains(h.Snippet, "PARIS") || len(h.Highlights) == 0 {
		t.Fatalf("snippet %q, highlights %v", h.Snippet, h.Highlights)
	}
	for _, r := range h.Highlights {
		if r[0] < 0 || r[1] > len(h.Snippet) || r[0] >= r[1] || !strings.EqualFold(h.Snippet[r[0]:r[1]], "paris") {
			t.Fatalf("highlight %v of %q is not a match", r, h.Snippet)
		}
	}

	// Kept current: appended messages are found at once.
	a = mustAppend(t, s, a, withID("a5", convo.User("And Marseille?")))
	wantHits(t, s, "t", "marseille", "a/5/a5")
	// Deleted ones are gone, and indexes after them move up.
	if _, err := s.DeleteMessage(ctx(t), "t", "a", store.AnyVersion, "a1"); err != nil {
		t.Fatal(err)
	}
	wantHits(t, s, "t", "paris", "b/0/b0 a/3/a4")
	wantHits(t, s, "t", "marseille", "a/4/a5")
	// A fork's copies are found in the fork; a fork takes only its prefix.
	f := mustFork(t, s, "t", "a", 4, store.Conversation{ID: "f"})
	wantHits(t, s, "t", "paris", "f/3/a4 b/0/b0 a/3/a4")
	wantHits(t, s, "t", "marseille", "a/4/a5")
	mustAppend(t, s, f, withID("f4", convo.User("Marseille in the fork")))
	wantHits(t, s, "t", "marseille", "f/4/f4 a/4/a5")
	// A deleted conversation takes its messages out of the index; its fork
	// keeps its own.
	if err := s.Delete(ctx(t), "t", "a"); err != nil {
		t.Fatal(err)
	}
	wantHits(t, s, "t", "paris", "f/3/a4 b/0/b0")
	wantHits(t, s, "t", "marseille", "f/4/f4")
	// A new conversation under a deleted one's id finds nothing of the old.
	mustCreate(t, s, store.Conversation{ID: "a", Tenant: "t"}, convo.User("fresh start"))
	wantHits(t, s, "t", "paris", "f/3/a4 b/0/b0")

	testSearchPages(t, s)
	testSearchBadInput(t, s)
}

// testSearchPages: every hit once, in order, whatever the page size.
func testSearchPages(t *testing.T, s store.Store) {
	var msgs convo.History
	for i := range 25 {
		msgs = append(msgs, withID(fmt.Sprintf("p%02d", i), convo.User(fmt.Sprintf("needle number %d", i))))
	}
	mustCreate(t, s, store.Conversation{ID: "pages", Tenant: "t"}, msgs...)
	whole := searchAll(t, s, "t", "needle", store.MaxSearchLimit)
	if len(whole) != 25 || whole[0].MessageID != "p24" || whole[24].MessageID != "p00" {
		t.Fatalf("one page: %s", hitKeys(whole))
	}
	for _, limit := range []int{1, 7, 25} {
		if got := hitKeys(searchAll(t, s, "t", "needle", limit)); got != hitKeys(whole) {
			t.Fatalf("pages of %d:\ngot  %s\nwant %s", limit, got, hitKeys(whole))
		}
	}
	first, next, err := s.Search(ctx(t), "t", "needle", store.SearchOptions{})
	if err != nil || len(first) != store.DefaultSearchLimit || next == "" {
		t.Fatalf("default page: %d hits, next %q, %v", len(first), next, err)
	}
}

// testSearchBadInput: queries and options Search refuses.
func testSearchBadInput(t *testing.T, s store.Store) {
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("w%d", i))
	}
	for _, q := range []string{"", "  ", "?!", strings.Join(many, " "), strings.Repeat("x", 2000), "\xff"} {
		_, _, err := s.Search(ctx(t), "t", q, store.SearchOptions{})
		wantErr(t, fmt.Sprintf("Search(%.20q)", q), err, store.ErrInvalid)
	}
	_, _, err := s.Search(ctx(t), "t", "paris", store.SearchOptions{After: "not-a-cursor"})
	wantErr(t, "Search with a bad cursor", err, store.ErrInvalid)
	_, _, err = s.Search(ctx(t), "t", "paris", store.SearchOptions{Limit: -1})
	wantErr(t, "Search with a negative limit", err, store.ErrInvalid)
}

// searchVocabulary is what the search model writes messages from: words in
// several scripts and cases, digits, and the separators between them.
var (
	searchVocabulary = []string{"paris", "Paris", "PARIS", "café", "CAFÉ", "Ärger", "ärger", "東京駅", "straße",
		"x1", "2026", "get_weather", "o'clock", "e-mail", "a.b", "ünïcödé", "Ωmega", "ωmega", "naïve"}
	searchSeparators = []string{" ", ", ", "\n", " - ", "/", "(", ")", ": ", `"`, "…", "\t"}
)

// testSearchModel stores random messages and checks every search against a
// plain model of what Search means: the messages whose lower-cased runs of
// letters and digits include every query word.
func testSearchModel(t *testing.T, s store.Store) {
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		id := fmt.Sprintf("sm%d", n)
		tenant := fmt.Sprintf("search-model-%d", n)
		var h convo.History
		texts := map[string]string{}
		for i := range rapid.IntRange(1, 8).Draw(rt, "messages") {
			var b strings.Builder
			for j := range rapid.IntRange(1, 6).Draw(rt, "words") {
				if j > 0 {
					b.WriteString(rapid.SampledFrom(searchSeparators).Draw(rt, "sep"))
				}
				b.WriteString(rapid.SampledFrom(searchVocabulary).Draw(rt, "word"))
			}
			m := convo.User(b.String())
			m.ID = fmt.Sprintf("m%d", i)
			h = append(h, m)
			texts[m.ID] = b.String()
		}
		if _, err := s.Create(t.Context(), store.Conversation{ID: id, Tenant: tenant}, h...); err != nil {
			rt.Fatalf("Create: %v", err)
		}
		for range 4 {
			query := rapid.SampledFrom(searchVocabulary).Draw(rt, "query")
			if rapid.Bool().Draw(rt, "two words") {
				query += " " + rapid.SampledFrom(searchVocabulary).Draw(rt, "query2")
			}
			want := map[string]bool{}
			qw := wordsOf(query)
			for mid, text := range texts {
				have := map[string]bool{}
				for _, w := range wordsOf(text) {
					have[w] = true
				}
				all := true
				for _, w := range qw {
					all = all && have[w]
				}
				if all {
					want[mid] = true
				}
			}
			hits, _, err := s.Search(t.Context(), tenant, query, store.SearchOptions{Limit: store.MaxSearchLimit})
			if err != nil {
				rt.Fatalf("Search(%q): %v", query, err)
			}
			got := map[string]bool{}
			for _, hit := range hits {
				got[hit.MessageID] = true
			}
			if len(got) != len(want) {
				rt.Fatalf("Search(%q) found %v, the model %v\nmessages %q", query, got, want, texts)
			}
			for mid := range want {
				if !got[mid] {
					rt.Fatalf("Search(%q) found %v, the model %v\nmessages %q", query, got, want, texts)
				}
			}
		}
	})
}

// wordsOf is the model's word splitter: lower-cased runs of letters and
// digits.
func wordsOf(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}
