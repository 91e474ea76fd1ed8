package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/internal/backend"
	"github.com/convo-go/convo/store/sqlite"
	"github.com/convo-go/convo/store/storetest"
)

// -stress runs the reliability tests at a size for hunting rare failures.
var stress = flag.Bool("stress", false, "run the crash and concurrency tests longer")

func TestMain(m *testing.M) {
	storetest.Main(m, func(ctx context.Context, dsn string) (store.Store, error) { return sqlite.Open(ctx, dsn) })
}

func open(ctx context.Context, path string) (store.Store, error) { return sqlite.Open(ctx, path) }

func newStore(t *testing.T) store.Store {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "convo.db"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) { storetest.Run(t, newStore) }

func TestDurability(t *testing.T) {
	rounds := 8
	if *stress {
		rounds = 200
	}
	// A killed process leaves nothing running: its locks die with it.
	storetest.Durability(t, filepath.Join(t.TempDir(), "crash.db"), open, rounds, nil)
}

func TestConcurrency(t *testing.T) {
	procs, goroutines, each := 2, 4, 15
	if *stress {
		procs, goroutines, each = 4, 8, 100
	}
	storetest.Concurrency(t, filepath.Join(t.TempDir(), "shared.db"), open, procs, goroutines, each)
}

// schemaVersion is the schema's version now: that of the last migration.
const schemaVersion = 10

func TestReopen(t *testing.T) {
	// Characters a URI would take for syntax must stay part of the name.
	path := filepath.Join(t.TempDir(), "a b?c#d%20.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Create(t.Context(), store.Conversation{ID: "kept"}, convo.User("hello"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database is not at its path: %v", err)
	}
	s, err = sqlite.Options{Synchronous: "normal", BusyTimeout: time.Second, Readers: 1}.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Path() != path {
		t.Fatalf("Path %q, want %q", s.Path(), path)
	}
	h, got, err := s.Load(t.Context(), "", "kept", 0)
	if err != nil || len(h) != 1 || got.Version != c.Version {
		t.Fatalf("after reopening: %d messages, %v", len(h), err)
	}
	if v, err := s.SchemaVersion(t.Context()); err != nil || v != schemaVersion {
		t.Fatalf("schema version %d %v", v, err)
	}
	if err := s.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		opts sqlite.Options
		path string
	}{
		{sqlite.Options{}, ""},
		{sqlite.Options{}, ":memory:"},
		{sqlite.Options{}, "file:x.db?mode=ro"},
		{sqlite.Options{Synchronous: "OFF"}, filepath.Join(dir, "x.db")},
		{sqlite.Options{}, filepath.Join(dir, "no", "such", "dir.db")},
	} {
		if s, err := tc.opts.Open(t.Context(), tc.path); err == nil {
			s.Close()
			t.Errorf("Open(%q, %+v) succeeded", tc.path, tc.opts)
		}
	}
	// A file that is not a database is refused, not overwritten.
	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte("this is not a database, just text that is long enough......................................................"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := sqlite.Open(t.Context(), junk); err == nil {
		s.Close()
		t.Fatal("a text file opened as a database")
	}
}

func TestNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "future.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO schema_migrations (version, name, applied) VALUES (99, 'future', 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if s, err := sqlite.Open(t.Context(), path); err == nil || !strings.Contains(err.Error(), "newer") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open of a newer schema: %v", err)
	}
}

// openFixture opens a copy of the database testdata/NAME.db, closed when
// the test ends, after checking that its conversation NAME of tenant
// "fixture" exports as testdata/NAME.json holds.
func openFixture(t *testing.T, name string) *sqlite.Store {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name+".db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".db")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	want, err := os.ReadFile(filepath.Join("testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	if err := store.Export(t.Context(), s, "fixture", name, &got, false); err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want) {
		t.Fatalf("%s fixture:\ngot  %s\nwant %s", name, got.String(), want)
	}
	return s
}

// TestV1Fixture opens a database written by schema version 1, kept in
// testdata, so that a later migration that cannot read old files fails here.
func TestV1Fixture(t *testing.T) {
	s := openFixture(t, "v1")
	c, err := s.Get(t.Context(), "fixture", "v1")
	if err != nil || c.Title != "fixture" || string(c.Meta) != `{"schema":1}` {
		t.Fatalf("v1 description: %+v %v", c, err)
	}
	// Migration 2 indexed the messages stored before it.
	hits, _, err := s.Search(t.Context(), "fixture", "paris", store.SearchOptions{})
	if err != nil || len(hits) == 0 || hits[len(hits)-1].MessageID != "m3" {
		t.Fatalf("search of the v1 fixture: %+v %v", hits, err)
	}
}

// TestV8Fixture opens a database of schema version 8 (the store as of
// the morning of 6 December 2026: the v7 fixture migrated by the store at
// commit 4ed1a1c, its conversation renamed v8), kept in testdata with its
// export. Migration 9 drops the triggers that wrote the index of metadata:
// the rows they wrote still find their conversations, and the store's own
// writes replace them.
func TestV8Fixture(t *testing.T) {
	ctx := t.Context()
	s := openFixture(t, "v8")
	if v, err := s.SchemaVersion(ctx); err != nil || v != schemaVersion {
		t.Fatalf("schema version %d %v", v, err)
	}
	if n := rawInt(t, s.Path(), `SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'meta_values_%'`); n != 1 {
		t.Fatalf("%d triggers of meta_values after migration 9, want 1 (meta_values_removed)", n)
	}
	list := func(fp string) string {
		t.Helper()
		cs, _, err := s.List(ctx, "fixture", store.ListOptions{Meta: json.RawMessage(`{"convo_gateway_fingerprint":"` + fp + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range cs {
			ids = append(ids, c.ID)
		}
		return strings.Join(ids, " ")
	}
	if got := list("f7"); got != "fork v8" {
		t.Fatalf("list of the v8 fixture by its fingerprint: %q, want fork v8", got)
	}
	res := s.Batch(ctx, []store.Write{{Tenant: "fixture", ID: "v8", Version: store.AnyVersion,
		Meta: json.RawMessage(`{"convo_gateway_fingerprint":"f9"}`), Messages: []convo.Message{convo.User("And tomorrow?")}}})
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	if got, got9 := list("f7"), list("f9"); got != "fork" || got9 != "v8" {
		t.Fatalf("after a write of new metadata: f7 lists %q (want fork), f9 lists %q (want v8)", got, got9)
	}
	if err := s.Delete(ctx, "fixture", "fork"); err != nil {
		t.Fatal(err)
	}
	if n := rawInt(t, s.Path(), `SELECT count(*) FROM meta_values WHERE value = 'f7'`); n != 0 {
		t.Fatalf("%d rows of meta_values left by the deleted conversation", n)
	}
}

// TestV6Fixture opens a database written by schema version 6 (the
// store as of 5 December 2026: media, the index of metadata, usage, a
// batch's fingerprint), kept in testdata with its export as that version
// read it (both written by the store at commit f38b6d7, with Create and
// Batch): the messages, the search index and the index of metadata read
// back as they were written, and new writes join them.
func TestV6Fixture(t *testing.T) {
	s := openFixture(t, "v6")
	if v, err := s.SchemaVersion(t.Context()); err != nil || v != schemaVersion {
		t.Fatalf("schema version %d %v", v, err)
	}
	for word, want := range map[string]string{"umbrella": "v6/m4", "umbrellas": "other", "photo": "v6/m1", "forecast": "v6/m2", "afternoon": "v6/m4"} {
		hits, _, err := s.Search(t.Context(), "fixture", word, store.SearchOptions{})
		if err != nil || len(hits) != 1 || !strings.HasPrefix(hits[0].Conversation.ID+"/"+hits[0].MessageID, want) {
			t.Fatalf("search of the v6 fixture for %q: %+v %v; want %s", word, hits, err, want)
		}
	}
	cs, _, err := s.List(t.Context(), "fixture", store.ListOptions{Meta: json.RawMessage(`{"convo_gateway_fingerprint":"f6"}`)})
	if err != nil || len(cs) != 1 || cs[0].ID != "v6" || cs[0].Messages != 4 {
		t.Fatalf("list of the v6 fixture by its fingerprint: %+v %v", cs, err)
	}
	// New writes go into the migrated index, and are found beside the old.
	if _, err := s.Append(t.Context(), "fixture", "other", store.AnyVersion, convo.Assistant("Take an umbrella.")); err != nil {
		t.Fatal(err)
	}
	if hits, _, err := s.Search(t.Context(), "fixture", "umbrella", store.SearchOptions{}); err != nil || len(hits) != 2 ||
		hits[0].Conversation.ID != "other" || hits[1].MessageID != "m4" {
		t.Fatalf("search after a write: %+v %v", hits, err)
	}
	if err := s.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func benchStore(b *testing.B, opts sqlite.Options) store.Store {
	s, err := opts.Open(b.Context(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func BenchmarkAppend(b *testing.B) {
	for _, mode := range []string{"FULL", "NORMAL"} {
		for _, clients := range []int{1, 8, 64} {
			b.Run(fmt.Sprintf("sync=%s/clients=%d", mode, clients), func(b *testing.B) {
				storetest.BenchAppend(b, benchStore(b, sqlite.Options{Synchronous: mode}), clients)
			})
		}
	}
}

// BenchmarkRecord compares the gateway recorder's writes one exchange at a
// time (batch=0) with store batches.
func BenchmarkRecord(b *testing.B) {
	for _, batch := range []int{0, 1, 16, 128} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			storetest.BenchRecord(b, benchStore(b, sqlite.Options{}), batch)
		})
	}
}

func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			storetest.BenchLoad(b, benchStore(b, sqlite.Options{}), n)
		})
	}
}

func BenchmarkListMeta(b *testing.B) {
	storetest.BenchListMeta(b, benchStore(b, sqlite.Options{}), 20000)
}

// TestGroupCommit sends many writes at once, so that they share
// transactions, half of them failing after they have inserted rows: a
// failing write must leave nothing behind and take no other write with it.
func TestGroupCommit(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "group.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 64
	taken := convo.User("taken")
	taken.ID = "taken"
	convs := make([]store.Conversation, n)
	for i := range convs {
		if convs[i], err = s.Create(t.Context(), store.Conversation{}, taken); err != nil {
			t.Fatal(err)
		}
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			msgs := []convo.Message{convo.Assistant("one"), convo.User("two")}
			if i%2 == 1 {
				dup := convo.Assistant("three")
				dup.ID = "taken" // fails at its insert, after the two before it
				msgs = append(msgs, dup)
			}
			_, errs[i] = s.Append(t.Context(), "", convs[i].ID, convs[i].Version, msgs...)
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		h, c, err := s.Load(t.Context(), "", convs[i].ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			if !errors.Is(errs[i], store.ErrExists) || len(h) != 1 || c.Version != 1 {
				t.Fatalf("write %d: %v, %d messages at version %d; want ErrExists and nothing written", i, errs[i], len(h), c.Version)
			}
		} else if errs[i] != nil || len(h) != 3 || c.Version != 2 {
			t.Fatalf("write %d: %v, %d messages at version %d; want 3 messages at version 2", i, errs[i], len(h), c.Version)
		}
	}
}

// TestCanceledWhileQueued cancels writes waiting behind a slow one: they
// must fail with the context's error and never run.
func TestCanceledWhileQueued(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.db")
	s, err := sqlite.Options{BusyTimeout: 5 * time.Second}.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Create(t.Context(), store.Conversation{ID: "q"})
	if err != nil {
		t.Fatal(err)
	}
	// Another connection holds the write lock, so the writer waits.
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	first := make(chan error, 1)
	go func() {
		_, err := s.Append(t.Context(), "", "q", c.Version, convo.User("first"))
		first <- err
	}()
	time.Sleep(50 * time.Millisecond) // the first write is now waiting for the lock
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = s.Append(ctx, "", "q", store.AnyVersion, convo.User("canceled"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("queued write: %v, want the context's deadline", err)
	}
	if _, err := conn.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Fatalf("first write: %v", err)
	}
	h, _, err := s.Load(t.Context(), "", "q", 0)
	if err != nil || len(h) != 1 || h[0].Text() != "first" {
		t.Fatalf("after the canceled write: %d messages (%v), want only the first", len(h), err)
	}
}

func TestClosed(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "closed.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := s.Create(t.Context(), store.Conversation{}); err == nil {
		t.Fatal("Create after Close succeeded")
	}
}

func BenchmarkAppendLong(b *testing.B) {
	for _, n := range []int{0, 10000, 50000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			storetest.BenchAppendLong(b, benchStore(b, sqlite.Options{}), n)
		})
	}
}

// mediaStore counts the blobs of a store by reading its file.
type mediaStore struct {
	*sqlite.Store
}

func (s mediaStore) Blobs(t *testing.T) int {
	db, err := sql.Open("sqlite", s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(t.Context(), `SELECT count(*) FROM blobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMedia(t *testing.T) {
	s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "convo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.RunMedia(t, mediaStore{s})
}

// BenchmarkMediaDedup measures store size and append rate for AgentRun
// (50 turns, a 40 KB PNG every fifth) with and without media
// deduplication. bytes/run is the database file per run once checkpointed.
func BenchmarkMediaDedup(b *testing.B) {
	for _, resend := range []bool{false, true} {
		for _, dedup := range []bool{true, false} {
			b.Run(fmt.Sprintf("resend=%v/dedup=%v", resend, dedup), func(b *testing.B) {
				if !dedup {
					old := backend.MinMedia
					backend.MinMedia = math.MaxInt
					defer func() { backend.MinMedia = old }()
				}
				path := filepath.Join(b.TempDir(), "convo.db")
				s, err := sqlite.Open(b.Context(), path)
				if err != nil {
					b.Fatal(err)
				}
				msgs := 0
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					msgs += storetest.AgentRun(b, s, i, 50, resend)
				}
				b.StopTimer()
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				fi, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(fi.Size())/float64(b.N), "bytes/run")
				b.ReportMetric(float64(msgs)/b.Elapsed().Seconds(), "msgs/s")
			})
		}
	}
}

// TestMetaValues checks the index of metadata (migration 4) against the
// metadata it indexes, after writes of every kind, and that the migration
// builds it for a database that had conversations before it. Since
// migration 9 the store writes the index; it must hold exactly the rows
// the triggers it replaced derived with json_each.
func TestMetaValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	for i, meta := range []string{`{"fp":"one","n":1}`, `{"fp":"two","x":{"fp":"nested"}}`, `{"fp":"three"}`, ``} {
		c := store.Conversation{ID: fmt.Sprint("c", i), Tenant: "t"}
		if meta != "" {
			c.Meta = json.RawMessage(meta)
		}
		if _, err := s.Create(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Update(t.Context(), "t", "c0", nil, json.RawMessage(`{"fp":"four"}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(t.Context(), "t", "c2"); err != nil {
		t.Fatal(err)
	}
	metaWrites(t, s)
	s.Close()

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const derived = `SELECT c.pk, j.key, j.value FROM conversations c, json_each(c.meta) j
		WHERE c.meta IS NOT NULL AND j.type = 'text' AND length(CAST(j.key AS BLOB)) <= 256 AND length(CAST(j.value AS BLOB)) <= 256`
	for _, q := range []string{derived + ` EXCEPT SELECT conv, key, value FROM meta_values`, `SELECT conv, key, value FROM meta_values EXCEPT ` + derived} {
		var pk int64
		var k, v string
		switch err := db.QueryRow(q).Scan(&pk, &k, &v); {
		case err == nil:
			t.Errorf("conversation %d: member %q = %q is in one of the index and the metadata, not the other (%.60s…)", pk, k, v, q)
		case !errors.Is(err, sql.ErrNoRows):
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(`DELETE FROM conversations WHERE id LIKE 'w%'`); err != nil {
		t.Fatal(err)
	}
	rows := func() string {
		t.Helper()
		var got string
		if err := db.QueryRow(`SELECT coalesce(group_concat(coalesce(c.id, 'deleted') || ':' || m.key || '=' || m.value, ' '), '')
			FROM (SELECT * FROM meta_values ORDER BY conv, key, value) m
			LEFT JOIN conversations c ON c.pk = m.conv`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	const want = "c0:fp=four c1:fp=two" // no stale value, no deleted conversation, no number or nested member
	if got := rows(); got != want {
		t.Fatalf("meta_values after writes: %q, want %q", got, want)
	}

	// A database from before migration 4: the migration indexes what it has.
	if _, err := db.Exec(`DROP TABLE long_texts; DROP TRIGGER message_long_text_deleted; DROP TRIGGER message_long_text_rewritten; DROP TABLE body_chunks; DROP TRIGGER message_chunks_deleted; DROP TRIGGER message_chunks_rewritten; DROP TABLE spend; DROP TABLE usage; DROP TRIGGER message_usage_deleted;
		DROP TABLE meta_values;
		DROP TRIGGER meta_values_removed; DELETE FROM schema_migrations WHERE version >= 4`); err != nil {
		t.Fatal(err)
	}
	s, err = sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := rows(); got != want {
		t.Fatalf("meta_values built by the migration: %q, want %q", got, want)
	}
	cs, _, err := s.List(t.Context(), "t", store.ListOptions{Meta: json.RawMessage(`{"fp":"two"}`)})
	if err != nil || len(cs) != 1 || cs[0].ID != "c1" {
		t.Fatalf("List after the migration: %v %v", cs, err)
	}
}

// metaWrites writes metadata in every way a store can: created by Batch
// and Fork, changed by Batch with messages and without, by Update and by
// ExpireContent, left as it was by a title's Update; with escapes,
// characters outside ASCII and members at and past backend.MaxIndexed
// bytes. Its conversations' ids start with "w".
func metaWrites(t *testing.T, s *sqlite.Store) {
	t.Helper()
	ctx := t.Context()
	at256 := strings.Repeat("é", 128)
	metas := []string{
		`{"fp":"a\"b\\c\u00e9\ud83d\ude00","k\n":"v","n":1.5,"b":true,"z":null,"o":{"fp":"x"},"a":["fp"]}`,
		`{"fp":"` + at256 + `","` + at256 + `":"long key","long":"` + at256 + `x","x":"` + strings.Repeat("k", 257) + `"}`,
		`{"fp":"\u2028 \/ \t","":"empty key","e":""}`,
	}
	batch := func(ws ...store.Write) {
		t.Helper()
		for _, r := range s.Batch(ctx, ws) {
			if r.Err != nil {
				t.Fatal(r.Err)
			}
		}
	}
	for i, m := range append(metas, metas[1]) {
		batch(store.Write{ID: fmt.Sprint("w", i), Create: true, Tenant: "t", Meta: json.RawMessage(m), Messages: []convo.Message{convo.User("hi")}})
	}
	batch(store.Write{ID: "w0", Tenant: "t", Version: store.AnyVersion, Meta: json.RawMessage(metas[2]), Messages: []convo.Message{convo.Assistant("hello")}},
		store.Write{ID: "w1", Tenant: "t", Version: store.AnyVersion, Meta: json.RawMessage(`{"fp":"meta only"}`)},
		store.Write{ID: "w2", Tenant: "t", Version: store.AnyVersion, Messages: []convo.Message{convo.Assistant("no meta")}})
	// Created and given other metadata in one batch, with and without
	// messages: the first metadata's rows (which a batch may insert at its
	// end) are not left in the index.
	batch(store.Write{ID: "w4", Create: true, Tenant: "t", Meta: json.RawMessage(`{"fp":"first"}`), Messages: []convo.Message{convo.User("hi")}},
		store.Write{ID: "w4", Tenant: "t", Version: store.AnyVersion, Meta: json.RawMessage(`{"fp":"second"}`)},
		store.Write{ID: "w5", Create: true, Tenant: "t", Meta: json.RawMessage(`{"fp":"first"}`), Messages: []convo.Message{convo.User("hi")}},
		store.Write{ID: "w5", Tenant: "t", Version: store.AnyVersion, Meta: json.RawMessage(`{"fp":"third"}`), Messages: []convo.Message{convo.Assistant("hello")}})
	if _, err := s.Fork(ctx, "t", "w0", 1, store.Conversation{ID: "wfork"}); err != nil {
		t.Fatal(err)
	}
	title := "a title"
	if _, err := s.Update(ctx, "t", "wfork", &title, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Update(ctx, "t", "w2", nil, json.RawMessage(metas[0])); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ExpireContent(ctx, "t", "w2", time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	for fp, want := range map[string]string{`\u2028 \/ \t`: "wfork w0", "meta only": "w1", `a\"b\\c\u00e9\ud83d\ude00`: "w2", at256: "w3", "first": "", "second": "w4", "third": "w5"} {
		var f string
		if err := json.Unmarshal([]byte(`"`+fp+`"`), &f); err != nil {
			t.Fatal(err)
		}
		q, _ := json.Marshal(map[string]string{"fp": f})
		cs, _, err := s.List(ctx, "t", store.ListOptions{Meta: q})
		var got []string
		for _, c := range cs {
			got = append(got, c.ID)
		}
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("List by fp %s: %v %v, want %s", q, got, err, want)
		}
	}
}

// TestBatchOneSegment checks that a batch's messages go into the search
// index as one FTS5 segment even when its writes' keys (conv << 32 | pos)
// descend: FTS5 writes what it holds as a segment of its own whenever a
// rowid comes below the last, and a batch's continued conversations come
// in any order. In write order, this batch made a segment for nearly each
// write, which FTS5 merged again at every commit.
func TestBatchOneSegment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "segments.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 40
	var ws []store.Write
	for i := range n {
		ws = append(ws, store.Write{ID: fmt.Sprintf("c%02d", i), Create: true, Messages: []convo.Message{convo.User(fmt.Sprintf("first%d", i))}})
	}
	for _, r := range s.Batch(t.Context(), ws) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	before := ftsSegments(t, path)
	ws = ws[:0]
	for i := n - 1; i >= 0; i-- { // the newest conversation (highest key) first
		ws = append(ws, store.Write{ID: fmt.Sprintf("c%02d", i), Version: store.AnyVersion,
			Messages: []convo.Message{convo.Assistant(fmt.Sprintf("second%d", i)), convo.User(fmt.Sprintf("third%d", i))}})
	}
	for _, r := range s.Batch(t.Context(), ws) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if got := ftsSegments(t, path); got > before+1 {
		t.Errorf("the search index has %d segments after a batch, %d before: want one more at most", got, before)
	}
	for i := range n {
		for _, word := range []string{"first", "second", "third"} {
			hits, _, err := s.Search(t.Context(), "", fmt.Sprintf("%s%d", word, i), store.SearchOptions{})
			if err != nil || len(hits) != 1 || hits[0].Conversation.ID != fmt.Sprintf("c%02d", i) {
				t.Fatalf("search %s%d: %+v, %v", word, i, hits, err)
			}
		}
	}
}

// ftsSegments reads how many segments the search index of the database at
// path has, from FTS5's structure record (fts5_index.c: a 4-byte cookie,
// in newer versions a 4-byte marker, then the varints nLevel and
// nSegment).
func ftsSegments(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var rec []byte
	if err := db.QueryRowContext(t.Context(), `SELECT block FROM messages_fts_data WHERE id = 10`).Scan(&rec); err != nil {
		t.Fatal(err)
	}
	rec = rec[4:]
	if len(rec) >= 4 && string(rec[:4]) == "\xff\x00\x00\x01" {
		rec = rec[4:]
	}
	varint := func() int {
		v := 0
		for i, c := range rec {
			v = v<<7 | int(c&0x7f)
			if c < 0x80 {
				rec = rec[i+1:]
				return v
			}
		}
		t.Fatal("structure record cut short")
		return 0
	}
	varint() // nLevel
	return varint()
}

// TestCheckAfterWrite: Check, a write, then Check again on the same store
// finds the file sound. The second check ran on the read connection the
// first had used, whose full-text index state was the first's, and
// reported "fts5: checksum mismatch" for a sound index.
func TestCheckAfterWrite(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Create(ctx, store.Conversation{Tenant: "t"}, convo.User("hello world"))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range []convo.Message{convo.Assistant("goodbye moon"), convo.User("and the stars")} {
		if err := s.Check(ctx); err != nil {
			t.Fatalf("check %d: %v", i, err)
		}
		if c, err = s.Append(ctx, "t", c.ID, c.Version, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Check(ctx); err != nil {
		t.Fatalf("after the writes: %v", err)
	}
	if hits, _, err := s.Search(ctx, "t", "moon", store.SearchOptions{}); err != nil || len(hits) != 1 {
		t.Fatalf("search after the writes: %d hits, %v", len(hits), err)
	}
}
