package postgres_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/postgres"
	"github.com/convo-go/convo/store/storetest"
)

// partitions is the layout the partitioned tests create: few enough to
// keep them quick, more than one so tenants spread.
const partitions = 4

func openPartitioned(ctx context.Context, dsn string) (store.Store, error) {
	return postgres.Options{Partitions: partitions}.Open(ctx, dsn)
}

func newPartitioned(t *testing.T) store.Store {
	s, err := openPartitioned(t.Context(), storetest.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPartitionedConformance runs the whole conformance suite on schemas
// whose tables are partitioned by tenant (each subtest in a schema of its
// own, like TestConformance).
func TestPartitionedConformance(t *testing.T) {
	storetest.Run(t, newPartitioned)
	t.Run("Media", func(t *testing.T) {
		s := newPartitioned(t).(*postgres.Store)
		defer s.Close()
		storetest.RunMedia(t, mediaStore{s})
	})
	t.Run("Concurrency", func(t *testing.T) {
		// The schema is made partitioned here; the child processes open
		// it plainly and find it so.
		dsn := storetest.PostgresDSN(t)
		s, err := openPartitioned(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		storetest.Concurrency(t, dsn, open, 2, 4, 10)
	})
}

// TestPartitionedLayout checks what the partitioned layout is: every table
// a conversation owns split by tenant into the same number of partitions,
// a tenant's rows in partitions of the same number, and the layout kept by
// whoever opens the schema later.
func TestPartitionedLayout(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	s, err := postgres.Options{Partitions: partitions}.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	for _, tenant := range []string{"a", "b", "c", "d", "e"} {
		writeOwned(t, s, tenant)
	}
	for _, table := range []string{"conversations", "messages", "media_refs", "meta_values", "usage"} {
		var kind string
		var n int
		err := s.Pool().QueryRow(ctx, `SELECT c.relkind::text, (SELECT count(*) FROM pg_inherits WHERE inhparent = c.oid)
			FROM pg_class c WHERE c.oid = to_regclass($1)`, table).Scan(&kind, &n)
		if err != nil || kind != "p" || n != partitions {
			t.Errorf("%s: relkind %q, %d partitions (%v); want partitioned in %d", table, kind, n, err, partitions)
		}
	}
	// Every row of a tenant sits in the partitions numbered as its
	// conversations'.
	var stray int
	err = s.Pool().QueryRow(ctx, `WITH p AS (
		SELECT tenant, regexp_replace(tableoid::regclass::text, '^.*_p', '') AS part FROM conversations
		UNION ALL SELECT tenant, regexp_replace(tableoid::regclass::text, '^.*_p', '') FROM messages
		UNION ALL SELECT tenant, regexp_replace(tableoid::regclass::text, '^.*_p', '') FROM media_refs
		UNION ALL SELECT conv_tenant, regexp_replace(tableoid::regclass::text, '^.*_p', '') FROM meta_values
		UNION ALL SELECT tenant, regexp_replace(tableoid::regclass::text, '^.*_p', '') FROM usage)
		SELECT count(DISTINCT tenant) - count(DISTINCT (tenant, part)) FROM p`).Scan(&stray)
	if err != nil || stray != 0 {
		t.Fatalf("%d tenants' rows spread over partitions of different numbers (%v)", -stray, err)
	}
	var used int
	if err := s.Pool().QueryRow(ctx, `SELECT count(DISTINCT tableoid) FROM conversations`).Scan(&used); err != nil || used < 2 {
		t.Fatalf("5 tenants in %d partitions (%v): hashing does not spread them", used, err)
	}
	if n, err := s.Partitions(ctx); err != nil || n != partitions {
		t.Fatalf("Partitions %d %v", n, err)
	}
	// Opened plainly, or asking for another number, the schema keeps the
	// layout it was created with.
	for _, o := range []postgres.Options{{}, {Partitions: 16}} {
		s2, err := o.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		n, err := s2.Partitions(ctx)
		h, _, lerr := s2.Load(ctx, "a", "owned", 0)
		s2.Close()
		if err != nil || n != partitions || lerr != nil || len(h) != 3 {
			t.Fatalf("reopened with %+v: %d partitions (%v), %d messages (%v)", o, n, err, len(h), lerr)
		}
	}
}

// writeOwned gives tenant a conversation with a row in every table a
// conversation owns: metadata, a message with media, one with usage, and
// a fork of them.
func writeOwned(t *testing.T, s *postgres.Store, tenant string) {
	t.Helper()
	ctx := t.Context()
	img := convo.Image("image/png", storetest.MediaImage(uint64(len(tenant)+int(tenant[0])), 40_000))
	c, err := s.Create(ctx, store.Conversation{Tenant: tenant, ID: "owned", Meta: json.RawMessage(`{"team":"` + tenant + `"}`)},
		convo.User("look", img))
	if err != nil {
		t.Fatal(err)
	}
	reply := convo.Assistant("a picture")
	reply.Origin, reply.Usage = &convo.Origin{Model: "m"}, &convo.Usage{Input: 10, Output: 2}
	if c, err = s.Append(ctx, tenant, c.ID, c.Version, reply, convo.User("thanks")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Fork(ctx, tenant, c.ID, 2, store.Conversation{ID: "fork"}); err != nil {
		t.Fatal(err)
	}
}

// TestPartitionedOpenErrors: partitions are asked of a new schema only,
// within bounds.
func TestPartitionedOpenErrors(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	for _, n := range []int{-1, postgres.MaxPartitions + 1} {
		if s, err := (postgres.Options{Partitions: n}).Open(t.Context(), dsn); err == nil || !strings.Contains(err.Error(), "partitions") {
			if s != nil {
				s.Close()
			}
			t.Fatalf("Open with %d partitions: %v", n, err)
		}
	}
	s, err := postgres.Open(t.Context(), dsn) // unpartitioned
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = postgres.Options{Partitions: 4}.Open(t.Context(), dsn)
	if err == nil || !strings.Contains(err.Error(), "unpartitioned") {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open of an unpartitioned schema asking for partitions: %v", err)
	}
}

// TestPartitionedMigration stores rows in a partitioned schema at version
// 3, as a convo of that time would have, and checks that migrating to the
// newest version fills in the metadata index (version 4) and the usage
// index (version 5) in the partitioned tables.
func TestPartitionedMigration(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	// The partition count the partitioned migrations read.
	execAll(t, conn, []string{`SELECT set_config('convo.partitions', '3', false)`})
	execAll(t, conn, olderSchema(t, "partitioned/0001_init", "0002_search", "partitioned/0003_media"))
	for _, tenant := range []string{"t", "u"} {
		for _, q := range []string{
			`INSERT INTO conversations (tenant, id, title, meta, version, messages, next_pos, forked_from, forked_at, created, updated)
			VALUES ($1::text, 'old', '', '{"fp":"old-' || $1::text || '"}', 1, 1, 1, '', 0, '2026-11-30T00:00:00Z', now())`,
			`INSERT INTO messages (tenant, conv, pos, id, role, text, words, body) SELECT tenant, pk, 0, 'm0', 'assistant', 'ok', to_tsvector('simple', 'ok'),
			convert_to('{"role":"assistant","id":"m0","time":"2026-12-01T10:00:00Z","origin":{"model":"m1"},"usage":{"input":100,"output":10},"parts":[{"type":"text","text":"ok"}]}', 'UTF8')
			FROM conversations WHERE tenant = $1`,
		} {
			if _, err := conn.Exec(t.Context(), q, tenant); err != nil {
				t.Fatalf("%.60s: %v", q, err)
			}
		}
	}
	s, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v, err := s.SchemaVersion(t.Context()); err != nil || v < 5 {
		t.Fatalf("schema version %d %v", v, err)
	}
	if n, err := s.Partitions(t.Context()); err != nil || n != 3 {
		t.Fatalf("Partitions %d %v, want 3", n, err)
	}
	for _, tenant := range []string{"t", "u"} {
		cs, _, err := s.List(t.Context(), tenant, store.ListOptions{Meta: json.RawMessage(`{"fp":"old-` + tenant + `"}`)})
		if err != nil || len(cs) != 1 {
			t.Fatalf("List by metadata after migrating: %v %v", cs, err)
		}
		rows, err := s.Usage(t.Context(), store.UsageQuery{Tenant: tenant, By: store.ByModel})
		if err != nil || len(rows) != 1 || rows[0].Input != 100 || rows[0].Key != "m1" {
			t.Fatalf("usage after migrating: %+v %v", rows, err)
		}
		hits, _, err := s.Search(t.Context(), tenant, "ok", store.SearchOptions{})
		if err != nil || len(hits) != 1 {
			t.Fatalf("search after migrating: %+v %v", hits, err)
		}
	}
	// New writes go on in the migrated schema.
	if _, err := s.Append(t.Context(), "t", "old", store.AnyVersion, convo.User("more")); err != nil {
		t.Fatal(err)
	}
}
