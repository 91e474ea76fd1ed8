package postgres

import (
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/internal/backend"
	"github.com/convo-go/convo/store/storetest"
)

// TestBatchPlain checks that a batch whose writes all succeed is applied
// by its first attempt (batchPlain: the conversations locked and read in
// one query, no savepoints). Every other test would pass without it: a
// first attempt that failed would leave the batch to the savepoint path,
// which gives the same results, slower.
func TestBatchPlain(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, storetest.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := s.Create(ctx, store.Conversation{Tenant: "t"}, convo.User("first"))
	if err != nil {
		t.Fatal(err)
	}
	plain(t, s, []store.Write{
		{Tenant: "t", ID: c.ID, Version: c.Version, Messages: []convo.Message{convo.Assistant("second")}},
		{Tenant: "t", Create: true, Messages: []convo.Message{convo.User("another")}},
		// The same conversation again: its row has changed since it was
		// locked, and is read anew.
		{Tenant: "t", ID: c.ID, Version: store.AnyVersion, Messages: []convo.Message{convo.User("third")}},
	}, []int{2, 1, 3})
	// Each conversation once: the writes' statements go in one batch, and
	// their results reach the write results as that batch is read.
	plain(t, s, []store.Write{
		{Tenant: "t", ID: c.ID, Version: 3, Messages: []convo.Message{convo.Assistant("fourth")},
			Meta: []byte(`{"k":"v"}`)},
		{Tenant: "t", Create: true, Messages: []convo.Message{convo.User("yet another"), convo.Assistant("reply")}},
	}, []int{4, 2})
	h, got, err := s.Load(ctx, "t", c.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 4 || h[1].Text() != "second" || h[2].Text() != "third" || h[3].Text() != "fourth" || string(got.Meta) != `{"k":"v"}` {
		t.Fatalf("stored %d messages, meta %s: %v", len(h), got.Meta, h)
	}
}

// plain applies writes with a batch's first attempt, which must take them
// all, and checks how many messages each write's conversation has after
// it.
func plain(t *testing.T, s *Store, writes []store.Write, messages []int) {
	t.Helper()
	ctx := t.Context()
	var err error
	ws := make([]backend.Write, len(writes))
	order := make([]int, len(writes))
	for i, w := range writes {
		if ws[i], err = backend.PrepareWrite(i, w, 0, nil); err != nil {
			t.Fatal(err)
		}
		order[i] = i
	}
	res := make([]store.WriteResult, len(writes))
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.batchPlain(ctx, tx, ws, order, res); err != nil {
		tx.Rollback(ctx)
		t.Fatalf("first attempt: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Conversation.Messages != messages[i] || r.Conversation.Version == 0 || r.Conversation.Updated.IsZero() {
			t.Fatalf("writes[%d]: %+v, want %d messages", i, r.Conversation, messages[i])
		}
	}
}
