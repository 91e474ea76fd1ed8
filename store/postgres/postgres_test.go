package postgres_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/postgres"
	"github.com/convo-go/convo/store/storetest"
)

// olderSchema returns the statements that leave a database as an older
// convo did: the table migrations are noted in, then the named migration
// files (under migrations/), each with its row.
func olderSchema(t *testing.T, names ...string) []string {
	qs := []string{`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied timestamptz NOT NULL)`}
	for i, name := range names {
		b, err := os.ReadFile("migrations/" + name + ".sql")
		if err != nil {
			t.Fatal(err)
		}
		qs = append(qs, string(b), fmt.Sprintf(`INSERT INTO schema_migrations VALUES (%d, '%s', now())`, i+1, name[strings.Index(name, "_")+1:]))
	}
	return qs
}

// execAll runs queries on conn in order.
func execAll(t *testing.T, conn *pgx.Conn, queries []string) {
	t.Helper()
	for _, q := range queries {
		if _, err := conn.Exec(t.Context(), q); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
}

// -stress runs the reliability tests at a size for hunting rare failures.
var stress = flag.Bool("stress", false, "run the crash and concurrency tests longer")

func TestMain(m *testing.M) {
	storetest.Main(m, func(ctx context.Context, dsn string) (store.Store, error) { return postgres.Open(ctx, dsn) })
}

func open(ctx context.Context, dsn string) (store.Store, error) { return postgres.Open(ctx, dsn) }

func newStore(t *testing.T) store.Store {
	s, err := postgres.Open(t.Context(), storetest.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) { storetest.Run(t, newStore) }

func TestDurability(t *testing.T) {
	rounds := 6
	if *stress {
		rounds = 100
	}
	// The writer's connections carry an application name of their own, so
	// that settle can wait for the server to finish with them: a statement
	// the writer sent just before the kill still runs, and may commit.
	app := fmt.Sprintf("convo_durability_%d", time.Now().UnixNano())
	dsn := storetest.PostgresDSN(t)
	dsn += "&application_name=" + app
	settle := func(ctx context.Context) error {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer conn.Close(context.Background())
		deadline := time.Now().Add(30 * time.Second)
		for {
			var n int
			if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND pid <> pg_backend_pid()`, app).Scan(&n); err != nil {
				return err
			}
			if n == 0 {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("the server still serves %d connections of the killed writer", n)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	storetest.Durability(t, dsn, open, rounds, settle)
}

func TestConcurrency(t *testing.T) {
	procs, goroutines, each := 2, 4, 10
	if *stress {
		procs, goroutines, each = 4, 8, 100
	}
	storetest.Concurrency(t, storetest.PostgresDSN(t), open, procs, goroutines, each)
}

func TestOptionsSchema(t *testing.T) {
	dsn := storetest.PostgresDSN(t) // a schema of the test's own, to hold the one made here
	// Quotes test the identifier quoting; the suffix keeps runs that share
	// the database (two CI jobs, two developers) out of each other's way.
	name := fmt.Sprintf("convo \"quoted\" schema %d", time.Now().UnixNano())
	s, err := postgres.Options{Schema: name, MaxConns: 2}.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := s.Pool().Exec(context.Background(), `DROP SCHEMA `+pgx.Identifier{name}.Sanitize()+` CASCADE`); err != nil {
			t.Error(err)
		}
		s.Close()
	}()
	var schema string
	if err := s.Pool().QueryRow(t.Context(), `SELECT current_schema()`).Scan(&schema); err != nil || schema != name {
		t.Fatalf("current_schema %q %v, want %q", schema, err, name)
	}
	if _, err := s.Create(t.Context(), store.Conversation{ID: "x"}); err != nil {
		t.Fatal(err)
	}
	if s.Pool().Config().MaxConns != 2 {
		t.Fatalf("MaxConns %d", s.Pool().Config().MaxConns)
	}
}

// TestMigrateTogether opens one fresh schema from several goroutines at
// once: the advisory lock makes exactly one of them migrate.
func TestMigrateTogether(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s, err := postgres.Open(t.Context(), dsn)
			if err == nil {
				var v int
				if v, err = s.SchemaVersion(t.Context()); err == nil && v != 6 {
					err = fmt.Errorf("schema version %d", v)
				}
				s.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	s, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	if err := s.Pool().QueryRow(t.Context(), `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != 6 {
		t.Fatalf("%d migrations recorded (%v), want 6", n, err)
	}
	// A database migrated by a newer convo is refused, not misread.
	if _, err := s.Pool().Exec(t.Context(), `INSERT INTO schema_migrations (version, name, applied) VALUES (99, 'future', now())`); err != nil {
		t.Fatal(err)
	}
	if s2, err := postgres.Open(t.Context(), dsn); err == nil || !strings.Contains(err.Error(), "newer") {
		if s2 != nil {
			s2.Close()
		}
		t.Fatalf("Open of a newer schema: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	if _, err := postgres.Open(t.Context(), "postgres://%zz"); err == nil {
		t.Fatal("a malformed DSN opened")
	}
	dsn := storetest.PostgresDSN(t)
	// A search_path naming no existing schema leaves nowhere for the tables.
	bad := strings.Replace(dsn, "search_path=", "search_path=no_such_schema_", 1)
	if s, err := postgres.Open(t.Context(), bad); err == nil || !strings.Contains(err.Error(), "schema") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open with a missing schema: %v", err)
	}
}

func benchStore(b *testing.B, conns int32) store.Store {
	s, err := postgres.Options{MaxConns: conns}.Open(b.Context(), storetest.PostgresDSN(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func BenchmarkAppend(b *testing.B) {
	for _, clients := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			storetest.BenchAppend(b, benchStore(b, int32(min(clients, 16))), clients)
		})
	}
}

// BenchmarkRecord compares the gateway recorder's writes one exchange at a
// time (batch=0) with store batches.
func BenchmarkRecord(b *testing.B) {
	for _, batch := range []int{0, 1, 16, 128} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			storetest.BenchRecord(b, benchStore(b, 4), batch)
		})
	}
}

func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{1000, 10000, 50000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			storetest.BenchLoad(b, benchStore(b, 4), n)
		})
	}
}

func BenchmarkListMeta(b *testing.B) {
	storetest.BenchListMeta(b, benchStore(b, 4), 20000)
}

func BenchmarkAppendLong(b *testing.B) {
	for _, n := range []int{0, 10000, 50000} {
		b.Run(fmt.Sprintf("messages=%d", n), func(b *testing.B) {
			storetest.BenchAppendLong(b, benchStore(b, 4), n)
		})
	}
}

// TestSearchMigration stores messages under schema version 1, as an older
// convo did, and checks that migrating indexes them (version 2) and the
// conversation's metadata (version 4).
func TestSearchMigration(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	execAll(t, conn, append(olderSchema(t, "0001_init"),
		`INSERT INTO conversations (tenant, id, title, meta, version, messages, next_pos, forked_from, forked_at, created, updated)
			VALUES ('t', 'old', '', '{"fp":"old","n":1}', 1, 2, 2, '', 0, now(), now())`,
		`INSERT INTO messages (conv, pos, id, role, body) SELECT pk, 0, 'm0', 'user',
			'{"role":"user","id":"m0","parts":[{"type":"text","text":"Weather in Paris?"}]}' FROM conversations`,
		`INSERT INTO messages (conv, pos, id, role, body) SELECT pk, 1, 'm1', 'assistant',
			'{"role":"assistant","id":"m1","parts":[{"type":"text","text":"Sunny in Paris."}]}' FROM conversations`,
	))
	s, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hits, _, err := s.Search(t.Context(), "t", "paris", store.SearchOptions{})
	if err != nil || len(hits) != 2 || hits[0].MessageID != "m1" || hits[1].MessageID != "m0" || hits[1].Snippet != "Weather in Paris?" {
		t.Fatalf("search after migrating: %+v %v", hits, err)
	}
	var indexed string
	if err := s.Pool().QueryRow(t.Context(), `SELECT string_agg(key || '=' || value, ' ') FROM meta_values`).Scan(&indexed); err != nil || indexed != "fp=old" {
		t.Fatalf("meta_values after migrating: %q %v", indexed, err)
	}
	cs, _, err := s.List(t.Context(), "t", store.ListOptions{Meta: json.RawMessage(`{"fp":"old"}`)})
	if err != nil || len(cs) != 1 {
		t.Fatalf("List by metadata after migrating: %v %v", cs, err)
	}
}

// mediaStore counts the blobs of a store.
type mediaStore struct {
	*postgres.Store
}

func (s mediaStore) Blobs(t *testing.T) int {
	var n int
	if err := s.Pool().QueryRow(t.Context(), `SELECT count(*) FROM blobs`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMedia(t *testing.T) {
	s := newStore(t).(*postgres.Store)
	defer s.Close()
	storetest.RunMedia(t, mediaStore{s})
}
