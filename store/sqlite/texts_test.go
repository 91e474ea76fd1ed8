package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/internal/backend"
)

// TestTextsInsertedLate checks the search index of a group of writes
// whose rows wait for the commit (texts): a write rolled back leaves no
// rows, and a statement that deletes rows sees those added before it in
// the same transaction. Each case fails when texts misses the rollback or
// the flush before readsIndex.
func TestTextsInsertedLate(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "texts.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	create := func(id string, texts ...string) func(context.Context, ptx) error {
		msgs := make([]convo.Message, len(texts))
		for i, text := range texts {
			msgs[i] = convo.Message{Role: convo.RoleUser, Parts: []convo.Part{convo.Text(text)}}
		}
		cr, err := backend.PrepareCreate(store.Conversation{Tenant: "t", ID: id}, msgs, 0)
		if err != nil {
			t.Fatal(err)
		}
		return func(ctx context.Context, tx ptx) error {
			pk, err := insertConv(ctx, tx, cr.Conversation, int64(len(cr.Rows)), cr.Open)
			if err != nil {
				return err
			}
			return insertMessages(ctx, tx, pk, cr.Conversation.Tenant, 0, cr.Rows)
		}
	}
	failAfter := func(fn func(context.Context, ptx) error) func(context.Context, ptx) error {
		return func(ctx context.Context, tx ptx) error {
			if err := fn(ctx, tx); err != nil {
				return err
			}
			return errors.New("failing on purpose")
		}
	}
	deleteFirst := func(ctx context.Context, tx ptx) error {
		r, err := getConv(ctx, tx, "t", "c1")
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, deleteText, r.pk, 0)
		return err
	}
	group := []*op{
		{fn: create("c1", "alpha", "bravo"), done: make(chan error, 1)},
		{fn: failAfter(create("c2", "charlie")), done: make(chan error, 1)},
		{fn: deleteFirst, done: make(chan error, 1)},
		{fn: create("c3", "delta"), done: make(chan error, 1)},
	}
	s.commit(group)
	for i, o := range group {
		if err := <-o.done; (err != nil) != (i == 1) {
			t.Fatalf("write %d: %v", i, err)
		}
	}

	// A batch whose second write fails after its first message's row
	// was added (the second message's id is taken).
	taken := convo.Message{ID: "msg_taken", Role: convo.RoleUser, Parts: []convo.Part{convo.Text("golf")}}
	res := s.Batch(ctx, []store.Write{
		{Tenant: "t", ID: "c4", Create: true, Messages: []convo.Message{taken}},
		{Tenant: "t", ID: "c4", Version: store.AnyVersion, Messages: []convo.Message{
			{Role: convo.RoleUser, Parts: []convo.Part{convo.Text("echo")}}, taken}},
		{Tenant: "t", ID: "c4", Version: store.AnyVersion, Messages: []convo.Message{
			{Role: convo.RoleUser, Parts: []convo.Part{convo.Text("foxtrot")}}}},
	})
	if res[0].Err != nil || res[1].Err == nil || res[2].Err != nil {
		t.Fatalf("batch: %v, %v, %v", res[0].Err, res[1].Err, res[2].Err)
	}

	for word, want := range map[string]int{"alpha": 0, "bravo": 1, "charlie": 0, "delta": 1, "echo": 0, "foxtrot": 1, "golf": 1} {
		hits, _, err := s.Search(ctx, "t", word, store.SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != want {
			t.Errorf("search %q: %d hits, want %d", word, len(hits), want)
		}
	}
}
