package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
	"github.com/convo-go/convo/store/storetest"
)

// TestChunkedConformance runs the conformance suite with bodies longer
// than 7 bytes — every stored message — in pieces of 7 bytes (migration
// 7): every read path (Load, LoadRange, Message, the open calls of
// Append, DeleteMessage and Fork), forks, deletion, expiry, retention,
// export and import and search must see each body whole, its media put
// back at their offsets, and the file must pass Check afterwards.
func TestChunkedConformance(t *testing.T) {
	sqlite.SetChunkBytes(t, 7)
	storetest.Run(t, func(t *testing.T) store.Store {
		path := filepath.Join(t.TempDir(), "chunked.db")
		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { // the suite has closed s
			checkAnew(t, path)
			if n := rawInt(t, path, `SELECT count(*) FROM messages WHERE length(body) > 7`); n != 0 {
				t.Errorf("%d bodies longer than a piece stored whole", n)
			}
		})
		return s
	})
}

// checkAnew runs Check on the database at path through a store opened
// anew: a pooled connection that has read the search index reports a
// false FTS5 checksum mismatch after later writes (as it does on main
// before migration 7: the file opened anew checks clean).
func checkAnew(t *testing.T, path string) {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Check(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestChunkedMedia runs the media suite with bodies in pieces of 7 bytes:
// a hole's offset counts bytes of the joined pieces.
func TestChunkedMedia(t *testing.T) {
	sqlite.SetChunkBytes(t, 7)
	path := filepath.Join(t.TempDir(), "media.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer checkAnew(t, path)
	defer s.Close()
	storetest.RunMedia(t, mediaStore{s})
}

// rawInt runs a query of one integer on the database at path, beside the
// store.
func rawInt(t *testing.T, path, query string, args ...any) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// longReply is an assistant message of about n bytes of text, with a
// character of three bytes across what would be any piece's boundary, and
// a tool call (its arguments kept as they came).
func longReply(n int) convo.Message {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString("the quick brown fox jumps over the lazy dog → ")
	}
	m := convo.Assistant(b.String())
	m.ID = "long"
	m.Parts = append(m.Parts, convo.Part{Type: convo.TypeToolCall, ID: "c1", Name: "weather", Args: []byte(`{"city":"Paris"}`)})
	return m
}

// TestLongBody stores a message of 3.5 MiB at the real piece size: it is
// stored in pieces of at most 256 KiB, messages.body left empty, and reads back whole
// through every path; a fork copies its pieces, deleting the message or
// its conversation and expiring its content remove them.
func TestLongBody(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "long.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	long := longReply(3<<20 + 1<<19)
	want, err := convo.AppendMessage(nil, long)
	if err != nil {
		t.Fatal(err)
	}
	pieces := func() int { return rawInt(t, path, `SELECT count(*) FROM body_chunks`) }
	per := (len(want) + sqlite.MaxPieceBytes - 1) / sqlite.MaxPieceBytes // the message's pieces
	res := s.Batch(ctx, []store.Write{{Tenant: "t", ID: "c", Create: true, Version: store.AnyVersion,
		Messages: []convo.Message{convo.User("Tell me everything."), long}}})
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if n := pieces(); n != per {
		t.Fatalf("%d pieces stored, want %d", n, per)
	}
	if n := rawInt(t, path, `SELECT length(body) FROM messages WHERE id = 'long'`); n != 0 {
		t.Fatalf("messages.body holds %d bytes of a long body", n)
	}
	same := func(what string, m convo.Message) {
		t.Helper()
		got, err := convo.AppendMessage(nil, m)
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s: %d bytes read back (%v), want the %d stored", what, len(got), err, len(want))
		}
	}
	h, _, err := s.Load(ctx, "t", "c", 0)
	if err != nil || len(h) != 2 {
		t.Fatalf("Load: %d messages, %v", len(h), err)
	}
	same("Load", h[1])
	if h, _, err = s.LoadRange(ctx, "t", "c", 1, 1); err != nil || len(h) != 1 {
		t.Fatalf("LoadRange: %d messages, %v", len(h), err)
	}
	same("LoadRange", h[0])
	m, err := s.Message(ctx, "t", "c", "long")
	if err != nil {
		t.Fatal(err)
	}
	same("Message", m)
	// The open call of the long message is read back from its pieces.
	if _, err := s.Append(ctx, "t", "c", store.AnyVersion, convo.User("no answer")); err == nil {
		t.Fatal("a user message appended after an open tool call")
	}
	if _, err := s.Append(ctx, "t", "c", store.AnyVersion, convo.ToolResults(convo.ToolResult("c1", "weather", "sunny"))); err != nil {
		t.Fatal(err)
	}
	hits, _, err := s.Search(ctx, "t", "quick fox", store.SearchOptions{})
	if err != nil || len(hits) != 1 || hits[0].MessageID != "long" || !strings.Contains(hits[0].Snippet, "quick") {
		t.Fatalf("search: %+v %v", hits, err)
	}
	// Its text, which the search index does not keep, goes with its pieces.
	longTexts := func() int { return rawInt(t, path, `SELECT count(*) FROM long_texts`) }
	var exp strings.Builder
	if err := store.Export(ctx, s, "t", "c", &exp, true); err != nil {
		t.Fatal(err)
	}
	imp, err := store.Import(ctx, s, store.Conversation{Tenant: "t", ID: "imported"}, strings.NewReader(exp.String()))
	if err != nil || imp.Messages != 3 {
		t.Fatalf("import: %+v %v", imp, err)
	}
	if m, err = s.Message(ctx, "t", "imported", "long"); err != nil {
		t.Fatal(err)
	}
	same("Message of the import", m)
	if _, err := s.Fork(ctx, "t", "c", 2, store.Conversation{ID: "fork"}); err != nil {
		t.Fatal(err)
	}
	if m, err = s.Message(ctx, "t", "fork", "long"); err != nil {
		t.Fatal(err)
	}
	same("Message of the fork", m)
	if n := pieces(); n != 3*per {
		t.Fatalf("%d pieces after the import and the fork, want %d", n, 3*per)
	}
	if n := longTexts(); n != 3 {
		t.Fatalf("%d long texts after the import and the fork, want 3", n)
	}
	if hits, _, err = s.Search(ctx, "t", "quick fox", store.SearchOptions{}); err != nil || len(hits) != 3 {
		t.Fatalf("search after the import and the fork: %+v %v", hits, err)
	}
	if _, err := s.Fork(ctx, "t", "c", 1, store.Conversation{ID: "short-fork"}); err != nil {
		t.Fatal(err)
	}
	if n := pieces(); n != 3*per {
		t.Fatalf("%d pieces after a fork before the long message, want %d", n, 3*per)
	}
	if _, err := s.DeleteMessage(ctx, "t", "imported", store.AnyVersion, "long"); err != nil {
		t.Fatal(err)
	}
	if n := pieces(); n != 2*per {
		t.Fatalf("%d pieces after deleting the import's long message, want %d", n, 2*per)
	}
	if err := s.Delete(ctx, "t", "c"); err != nil {
		t.Fatal(err)
	}
	if n := pieces(); n != per {
		t.Fatalf("%d pieces after deleting the conversation, want %d", n, per)
	}
	if _, err := s.ExpireContent(ctx, "t", "fork", time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := pieces(); n != 0 {
		t.Fatalf("%d pieces after expiring the fork's content, want none", n)
	}
	if n := longTexts(); n != 0 {
		t.Fatalf("%d long texts after deleting and expiring every long message, want none", n)
	}
	if m, err = s.Message(ctx, "t", "fork", "long"); err != nil || len(m.Parts) != 0 || m.ID != "long" {
		t.Fatalf("the expired long message: %+v %v", m, err)
	}
	checkAnew(t, path)
}

// TestV7Fixture opens a database written by schema version 7, kept in
// testdata with its export (both written by the store of this commit with
// Batch and Fork, bodies of more than 72 bytes stored in pieces of 72
// (SetChunkBytes) so that a small file holds many: four of the
// conversation's five messages in pieces, one of them with an image
// stored apart whose offset counts bytes of the joined pieces, and a
// fork of its first two): the pieces read back joined, through every
// path, are searched, and new writes join them.
func TestV7Fixture(t *testing.T) {
	ctx := t.Context()
	s := openFixture(t, "v7")
	path := s.Path()
	if n := rawInt(t, path, `SELECT count(*) FROM body_chunks`); n != 20 {
		t.Fatalf("the v7 fixture holds %d pieces, want 20", n)
	}
	m, err := s.Message(ctx, "fixture", "fork", "m1")
	if err != nil || len(m.Parts) != 2 || m.Parts[1].Type != convo.TypeImage || m.Parts[1].Data == "" {
		t.Fatalf("the fork's first message: %+v %v", m, err)
	}
	h, _, err := s.LoadRange(ctx, "fixture", "v7", 3, 2)
	if err != nil || len(h) != 2 || h[0].Text() != "ok" || !strings.HasPrefix(h[1].Text(), "Drizzle all morning") {
		t.Fatalf("LoadRange of the v7 fixture: %+v %v", h, err)
	}
	for word, want := range map[string]string{"zürich": "fork/m2 fork/m1 v7/m2 v7/m1", "clearing": "v7/m5", "drizzle": "v7/m5 v7/m3", "ok": "v7/m4"} {
		hits, _, err := s.Search(ctx, "fixture", word, store.SearchOptions{})
		var got []string
		for _, h := range hits {
			got = append(got, h.Conversation.ID+"/"+h.MessageID)
		}
		if err != nil || strings.Join(got, " ") != want {
			t.Fatalf("search of the v7 fixture for %q: %v %v; want %s", word, got, err, want)
		}
	}
	cs, _, err := s.List(ctx, "fixture", store.ListOptions{Meta: json.RawMessage(`{"convo_gateway_fingerprint":"f7"}`)})
	if err != nil || len(cs) != 2 || cs[0].ID != "fork" || cs[1].ID != "v7" || cs[1].Messages != 5 { // the fork took its metadata
		t.Fatalf("list of the v7 fixture by its fingerprint: %+v %v", cs, err)
	}
	// The fork's open call is read from a body in pieces.
	if _, err := s.Append(ctx, "fixture", "fork", store.AnyVersion, convo.User("and tomorrow?")); err == nil {
		t.Fatal("a user message appended after the fork's open tool call")
	}
	if _, err := s.Append(ctx, "fixture", "fork", store.AnyVersion, convo.ToolResults(convo.ToolResult("c1", "weather", "sunny"))); err != nil {
		t.Fatal(err)
	}
	checkAnew(t, path)
}

// TestMigrationFromV6 opens the v6 golden database at the real piece size
// and with pieces of 8 bytes: its bodies, stored whole and now longer than
// a piece, read back as they were; a long body written after the
// migration is stored in pieces beside them; a fork copies both kinds.
func TestMigrationFromV6(t *testing.T) {
	for _, n := range []int{0, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			if n > 0 {
				sqlite.SetChunkBytes(t, n)
			}
			ctx := t.Context()
			s := openFixture(t, "v6") // the export as before the migration
			if v, err := s.SchemaVersion(ctx); err != nil || v != schemaVersion {
				t.Fatalf("schema version %d %v", v, err)
			}
			size := 3 << 20 // in 3 pieces at the real size
			if n > 0 {
				size = 64 * n
			}
			long := longReply(size)
			long.Parts = long.Parts[:1]
			if _, err := s.Append(ctx, "fixture", "v6", store.AnyVersion, long); err != nil {
				t.Fatal(err)
			}
			if rawInt(t, s.Path(), `SELECT count(*) FROM body_chunks`) == 0 {
				t.Fatal("the long message is not in pieces")
			}
			if _, err := s.Fork(ctx, "fixture", "v6", 5, store.Conversation{ID: "fork"}); err != nil {
				t.Fatal(err)
			}
			want, _, err := s.Load(ctx, "fixture", "v6", 0)
			if err != nil {
				t.Fatal(err)
			}
			got, _, err := s.Load(ctx, "fixture", "fork", 0)
			if err != nil || len(got) != 5 {
				t.Fatalf("the fork: %d messages, %v", len(got), err)
			}
			a, _ := convo.Marshal(want)
			b, _ := convo.Marshal(got)
			if string(a) != string(b) {
				t.Fatalf("the fork reads back\n%.300s\nwant\n%.300s", b, a)
			}
			checkAnew(t, s.Path())
		})
	}
}

// inPieces opens a store whose bodies past 16 bytes are in pieces, holding
// conversation c of tenant t with one such message, and the database
// beside it to damage; both are closed when t ends.
func inPieces(t *testing.T) (*sqlite.Store, string, *sql.DB) {
	t.Helper()
	sqlite.SetChunkBytes(t, 16)
	path := filepath.Join(t.TempDir(), "pieces.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Create(t.Context(), store.Conversation{Tenant: "t", ID: "c"}, convo.User("a question long enough for a few pieces")); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return s, path, db
}

// TestChunksDamaged: a piece missing is an error of Check naming the
// message, and a body with none an error of the reads, not a panic or a
// message cut short.
func TestChunksDamaged(t *testing.T) {
	ctx := t.Context()
	s, _, db := inPieces(t)
	for _, c := range []struct{ damage, check, read string }{
		{`DELETE FROM body_chunks WHERE seq = 1`, "message 1/0: 8 pieces numbered 0 to 8", "invalid"},
		{`DELETE FROM body_chunks`, "message 1/0: an empty body without pieces", "an empty body and no pieces"},
	} {
		if _, err := db.Exec(c.damage); err != nil {
			t.Fatal(err)
		}
		if err := s.Check(ctx); err == nil || !strings.Contains(err.Error(), c.check) {
			t.Errorf("after %s: Check: %v, want %q", c.damage, err, c.check)
		}
		if _, _, err := s.Load(ctx, "t", "c", 0); err == nil || !strings.Contains(err.Error(), c.read) {
			t.Errorf("after %s: Load: %v, want %q", c.damage, err, c.read)
		}
	}
	if _, err := db.Exec(`INSERT INTO body_chunks VALUES (9, 9, 0, x'00')`); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); err == nil || !strings.Contains(err.Error(), "message 9/9: pieces of no message with an empty body") {
		t.Errorf("a piece of no message: Check: %v", err)
	}
	if _, err := db.Exec(`INSERT INTO long_texts VALUES (9, 8, 'lost')`); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(ctx); err == nil || !strings.Contains(err.Error(), "message 9/8: a long text of no message with an empty body") {
		t.Errorf("a long text of no message: Check: %v", err)
	}
}

// TestLongTextLost: a message in pieces whose long text is gone is still
// found by search, with no snippet: the search does not fail.
func TestLongTextLost(t *testing.T) {
	s, path, db := inPieces(t)
	if n := rawInt(t, path, `SELECT count(*) FROM long_texts`); n != 1 {
		t.Fatalf("%d long texts, want 1", n)
	}
	if _, err := db.Exec(`DELETE FROM long_texts`); err != nil {
		t.Fatal(err)
	}
	hits, _, err := s.Search(t.Context(), "t", "pieces", store.SearchOptions{})
	if err != nil || len(hits) != 1 || hits[0].Snippet != "" {
		t.Fatalf("search with the long text lost: %+v %v", hits, err)
	}
}

// TestLongWriteRefused: a long message the store encodes as it stores it
// (backend.Row.Msg) that cannot be encoded fails its write of the batch,
// which leaves nothing of it, and the batch's other writes are stored.
func TestLongWriteRefused(t *testing.T) {
	sqlite.SetChunkBytes(t, 64)
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "refused.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	good := longReply(4 << 10)
	bad := convo.Assistant("fine\xff" + strings.Repeat("y", 4<<10))
	res := s.Batch(ctx, []store.Write{
		{Tenant: "t", ID: "bad", Create: true, Version: store.AnyVersion, Messages: []convo.Message{convo.User("q"), bad}},
		{Tenant: "t", ID: "good", Create: true, Version: store.AnyVersion, Messages: []convo.Message{convo.User("q"), good}},
	})
	if !errors.Is(res[0].Err, store.ErrInvalid) || !strings.Contains(res[0].Err.Error(), "messages[1]: parts[0].text: invalid UTF-8") {
		t.Fatalf("the write of an invalid long message: %v", res[0].Err)
	}
	if res[1].Err != nil {
		t.Fatal(res[1].Err)
	}
	if _, err := s.Get(ctx, "t", "bad"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused write's conversation: %v", err)
	}
	h, _, err := s.Load(ctx, "t", "good", 0)
	if err != nil || len(h) != 2 || h[1].Text() != good.Text() {
		t.Fatalf("the batch's other write: %d messages, %v", len(h), err)
	}
	if n := rawInt(t, path, `SELECT count(*) FROM body_chunks WHERE conv NOT IN (SELECT pk FROM conversations WHERE id = 'good')`); n != 0 {
		t.Fatalf("%d pieces left by the refused write", n)
	}
	checkAnew(t, path)
}
