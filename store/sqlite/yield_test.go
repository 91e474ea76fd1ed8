package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/background"
	"github.com/convo-go/convo/store"
)

// TestBackgroundWrites: a write made under store.Yielding runs on a thread
// of lower priority than the process's, a write made otherwise on one of
// the process's; so does a group of writes that are not all in the
// background. A Batch under store.Yielding is stored as any other.
func TestBackgroundWrites(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "background.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	base, err := background.ThreadNice()
	if err != nil {
		t.Skip(err)
	}
	for _, c := range []struct {
		ctx  context.Context
		want int
	}{{store.Yielding(ctx), min(base+background.Nice, 19)}, {ctx, base}, {store.Yielding(ctx), min(base+background.Nice, 19)}} {
		var nice int
		if err := s.write(c.ctx, func(context.Context, ptx) error { nice, _ = background.ThreadNice(); return nil }); err != nil {
			t.Fatal(err)
		}
		if nice != c.want {
			t.Errorf("a write, in the background %v: ran at nice %d, want %d", store.Yields(c.ctx), nice, c.want)
		}
	}
	if inBackground([]*op{{background: true}, {background: false}}) || !inBackground([]*op{{background: true}, {background: true}}) {
		t.Error("a group is in the background when all of its writes are, only then")
	}
	for i, r := range s.Batch(store.Yielding(ctx), []store.Write{
		{Tenant: "t", ID: "a", Create: true, Messages: []convo.Message{convo.User("hi")}},
		{Tenant: "t", ID: "b", Create: true, Messages: []convo.Message{convo.User("there")}},
	}) {
		if r.Err != nil || r.Conversation.Messages != 1 {
			t.Fatalf("writes[%d]: %+v", i, r)
		}
	}
}
