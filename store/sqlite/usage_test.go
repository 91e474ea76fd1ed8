package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
	"github.com/convo-go/convo/store/storetest"
)

// TestUsageMigration: a database from before the usage index (migration
// 5) gets one built from the messages it holds — tokens, models, times
// and exact costs — and answers as if it had always had it.
func TestUsageMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "usage.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 10, 0, 0, 123_456_000, time.UTC)
	reply := func(model string, cost *convo.Cost, withTime bool) convo.Message {
		m := convo.Assistant("a")
		if withTime {
			m.Time = at
		}
		m.Origin = &convo.Origin{Model: model}
		m.Usage = &convo.Usage{Input: 100, Output: 10, CacheRead: 50, CacheWrite: 5, Reasoning: 3}
		m.Cost = cost
		return m
	}
	if _, err := s.Create(t.Context(), store.Conversation{Tenant: "t", ID: "c"},
		convo.User("q"), reply("m1", &convo.Cost{USD: 12_345_678_901}, true),
		convo.User("q"), reply("m2", nil, true),
		convo.User("q"), reply("m1", &convo.Cost{USD: 3 * convo.Dollar}, false)); err != nil {
		t.Fatal(err)
	}
	query := func() []store.UsageRow {
		t.Helper()
		rows, err := s.Usage(t.Context(), store.UsageQuery{Tenant: "t", By: store.ByModel, Since: at, Until: at.Add(time.Microsecond)})
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	before := query()
	if len(before) != 2 || before[0].Cost != 12_345_678_901 {
		t.Fatalf("before: %+v", before)
	}
	all, err := s.Usage(t.Context(), store.UsageQuery{Tenant: "t"})
	if err != nil || len(all) != 1 || all[0].Messages != 3 {
		t.Fatalf("all: %+v %v", all, err)
	}
	s.Close()

	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DROP TABLE long_texts; DROP TRIGGER message_long_text_deleted; DROP TRIGGER message_long_text_rewritten; DROP TABLE body_chunks; DROP TRIGGER message_chunks_deleted; DROP TRIGGER message_chunks_rewritten; DROP TABLE spend; DROP TABLE usage; DROP TRIGGER message_usage_deleted; DELETE FROM schema_migrations WHERE version >= 5`); err != nil {
		t.Fatal(err)
	}
	if s, err = sqlite.Open(t.Context(), path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	after := query()
	if len(after) != len(before) {
		t.Fatalf("after the migration: %+v, want %+v", after, before)
	}
	for i := range before {
		if after[i] != before[i] {
			t.Errorf("after the migration: %+v, want %+v", after[i], before[i])
		}
	}
	// The message without a time counts at its conversation's creation.
	all2, err := s.Usage(t.Context(), store.UsageQuery{Tenant: "t"})
	if err != nil || len(all2) != 1 || all2[0] != all[0] {
		t.Errorf("all after the migration: %+v %v, want %+v", all2, err, all)
	}
}

// BenchmarkUsage answers usage questions over 100,000 conversations.
func BenchmarkUsage(b *testing.B) {
	storetest.BenchUsage(b, benchStore(b, sqlite.Options{}), 100_000)
}

// BenchmarkSpent reads a month's spend of one counter (a budget check).
func BenchmarkSpent(b *testing.B) {
	storetest.BenchSpent(b, benchStore(b, sqlite.Options{}))
}
