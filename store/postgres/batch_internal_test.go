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
	writes := []store.Write{
		{Tenant: "t", ID: c.ID, Version: c.Version, Messages: []convo.Message{convo.Assistant("second")}},
		{Tenant: "t", Create: true, Messages: []convo.Message{convo.User("another")}},
		// The same conversation again: its row has changed since it was
		// locked, and is read anew.
		{Tenant: "t", ID: c.ID, Version: store.AnyVersion, Messages: []convo.Message{convo.User("third")}},
	}
	ws := make([]backend.Write, len(writes))
	order := make([]int, len(writes))
	for i, w := range writes {
		if ws[i], err = backend.PrepareWrite(i, w); err != nil {
			t.Fatal(err)
		}
		order[i] = i
	}
	res := make([]store.WriteResult, len(writes))
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := batchPlain(ctx, tx, ws, order, res); err != nil {
		tx.Rollback(ctx)
		t.Fatalf("first attempt: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := []int{res[0].Conversation.Messages, res[1].Conversation.Messages, res[2].Conversation.Messages}; got[0] != 2 || got[1] != 1 || got[2] != 3 {
		t.Fatalf("messages after each write: %v, want [2 1 3]", got)
	}
	h, _, err := s.Load(ctx, "t", c.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 3 || h[1].Text() != "second" || h[2].Text() != "third" {
		t.Fatalf("stored %d messages: %v", len(h), h)
	}
}
