package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/postgres"
	"github.com/convo-go/convo/store/storetest"
)

// TestUsageMigration stores assistant messages under schema version 4, as
// convo did before the usage index, and checks that migrating (version 5)
// indexes their tokens, models, times and exact costs.
func TestUsageMigration(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	queries := olderSchema(t, "0001_init", "0002_search", "0003_media", "0004_meta_values")
	body := func(pos int, extra string) string {
		return fmt.Sprintf(`INSERT INTO messages (conv, pos, id, role, body) SELECT pk, %d, 'm%d', 'assistant',
			convert_to('{"role":"assistant","id":"m%d",%s"finish":"stop","parts":[{"type":"text","text":"ok"}]}', 'UTF8') FROM conversations`, pos, pos, pos, extra)
	}
	queries = append(queries,
		`INSERT INTO conversations (tenant, id, title, meta, version, messages, next_pos, forked_from, forked_at, created, updated)
			VALUES ('t', 'old', '', NULL, 1, 3, 3, '', 0, '2026-11-30T00:00:00Z', now())`,
		body(0, `"time":"2026-12-01T10:00:00.123456Z","origin":{"model":"m1"},"usage":{"input":100,"output":10,"cache_read":50,"reasoning":3},"cost":{"usd":"12.345678901"},`),
		body(1, `"origin":{"model":"m2"},"usage":{"input":7},`),
		body(2, ``), // no usage: not indexed
	)
	execAll(t, conn, queries)
	s, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 12, 1, 10, 0, 0, 123_456_000, time.UTC)
	rows, err := s.Usage(t.Context(), store.UsageQuery{Tenant: "t", By: store.ByModel, Since: at, Until: at.Add(time.Microsecond)})
	if err != nil {
		t.Fatal(err)
	}
	want := store.UsageRow{Key: "m1", Messages: 1, Input: 100, Output: 10, CacheRead: 50, Reasoning: 3, Cost: 12_345_678_901}
	if len(rows) != 1 || rows[0] != want {
		t.Fatalf("after migrating: %+v, want %+v", rows, want)
	}
	// Without a time, a message counts at its conversation's creation.
	rows, err = s.Usage(t.Context(), store.UsageQuery{Tenant: "t", By: store.ByDay})
	if err != nil || len(rows) != 2 || rows[0].Key != "2026-11-30" || rows[0].Unpriced != 1 || rows[0].Input != 7 {
		t.Fatalf("by day after migrating: %+v %v", rows, err)
	}
}

// BenchmarkUsage answers usage questions over 100,000 conversations.
func BenchmarkUsage(b *testing.B) {
	storetest.BenchUsage(b, benchStore(b, 4), 100_000)
}

// BenchmarkSpent reads a month's spend of one counter (a budget check).
func BenchmarkSpent(b *testing.B) {
	storetest.BenchSpent(b, benchStore(b, 4))
}
