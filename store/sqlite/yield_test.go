package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// TestBatchYields: a batch made under store.Yielding lets other goroutines
// run after each of its writes; any other batch, and a group of writes
// from concurrent callers (each waiting for the commit), does not.
func TestBatchYields(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "yield.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	yields := 0
	defer func(f func()) { yield = f }(yield)
	yield = func() { yields++ } // only the writer calls it

	writes := make([]store.Write, 3)
	for i := range writes {
		writes[i] = store.Write{Tenant: "t", Create: true, Messages: []convo.Message{convo.User("hi")}}
	}
	for _, c := range []struct {
		ctx  context.Context
		want int
	}{{store.Yielding(ctx), len(writes)}, {ctx, 0}} {
		yields = 0
		for i, r := range s.Batch(c.ctx, writes) {
			if r.Err != nil {
				t.Fatalf("writes[%d]: %v", i, r.Err)
			}
		}
		if yields != c.want {
			t.Errorf("a batch of %d writes, yielding %v: yielded %d times, want %d", len(writes), store.Yields(c.ctx), yields, c.want)
		}
	}

	// A group of four, as the writer gathers them from concurrent callers
	// (the writer goroutine waits for ops meanwhile: the test is the
	// writer here).
	yields = 0
	group := make([]*op, 4)
	for i := range group {
		group[i] = &op{fn: func(context.Context, ptx) error { return nil }, done: make(chan error, 1)}
	}
	s.commit(group)
	for i, o := range group {
		if err := <-o.done; err != nil {
			t.Fatalf("group[%d]: %v", i, err)
		}
	}
	if yields != 0 {
		t.Errorf("a group of %d writes yielded %d times", len(group), yields)
	}
}
