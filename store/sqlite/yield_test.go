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
// of the SCHED_IDLE policy, a write made otherwise on one of the process's
// (SCHED_OTHER, its nice value); so does a group of writes that are not
// all in the background. A Batch under store.Yielding is stored as any
// other.
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
		ctx          context.Context
		policy, nice int
	}{{store.Yielding(ctx), schedIdle, base}, {ctx, 0, base}, {store.Yielding(ctx), schedIdle, base}} {
		var policy, nice int
		if err := s.write(c.ctx, func(context.Context, ptx) error {
			policy = threadPolicy()
			nice, _ = background.ThreadNice()
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if policy != c.policy || nice != c.nice {
			t.Errorf("a write, in the background %v: ran at policy %d, nice %d; want %d, %d", store.Yields(c.ctx), policy, nice, c.policy, c.nice)
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
