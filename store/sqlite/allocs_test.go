package sqlite_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// Bounds of TestBatchAllocs: a write that creates its conversation, and
// one that continues it. Measured 115 and 169 (6 December 2026: the new
// conversation inserted without asking for it first, the search index's
// rowid bound, one UPDATE of a continued conversation's row; 143 and 179
// on 5 December, 252 and 239 through sql.Tx and with a savepoint a write);
// 113 and 169 once a new conversation's metadata was no longer checked
// and compacted twice (backend.PrepareWrite); 111 and 167 once a decoded
// message's parts stack was pooled (convo.UnmarshalMessage); 101 and 157
// once a message that surely reads back as itself is no longer decoded
// again (backend.readsBackAs); 100 and 156 once the pairing check stopped
// copying the messages into a history of its own (backend.Check); 99 and
// 155 once the Validator made one string a part's path, not two, and its
// table of approval requests only for a history that has one; 111 and 172
// once the store wrote the index of metadata itself (migration 9: reading
// the metadata and a statement for each member, where a trigger allocated
// nothing in Go but cost the batched exchange more CPU than they do:
// BenchmarkExchange/batch); 101 and 162 once a Batch's messages, usage and
// metadata rows went in at its end, several rows a statement (stage).
const (
	maxCreateAllocs   = 104
	maxContinueAllocs = 165
)

// TestBatchAllocs counts what the store allocates to write what convo
// gateway's recorder writes for an exchange — the question and the reply,
// with usage, and the conversation's fingerprint as metadata — in a batch
// of its own: a new conversation, and the next exchange of one. The
// writer runs its statements on its own connection, not through sql.Tx,
// whose statements and queries allocated a sql.Stmt each and a goroutine
// each query; a write that creates its conversation inserts it without
// asking whether it exists.
func TestBatchAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are not counted under the race detector")
	}
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "allocs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	i := 0
	write := func(id string, create bool) store.Write {
		i++
		reply := convo.Assistant(fmt.Sprintf("Answer %d: showers on Saturday, dry on Sunday.", i))
		reply.Origin = &convo.Origin{Provider: "anthropic", Model: "claude-x"}
		reply.Usage = &convo.Usage{Input: 812, Output: 96, Total: 908}
		reply.Finish = convo.FinishStop
		return store.Write{Tenant: "t", ID: id, Create: create, Version: store.AnyVersion,
			Messages: []convo.Message{convo.User(fmt.Sprintf("Question %d: the weather in Paris?", i)), reply},
			Meta:     json.RawMessage(fmt.Sprintf(`{"convo_gateway_fingerprint":"%064d"}`, i))}
	}
	batch := func(w store.Write) {
		if res := s.Batch(ctx, []store.Write{w}); res[0].Err != nil {
			t.Fatal(res[0].Err)
		}
	}
	batch(write("warm", true)) // the first write fills caches
	for _, c := range []struct {
		name   string
		create bool
		max    float64
	}{{"create", true, maxCreateAllocs}, {"continue", false, maxContinueAllocs}} {
		// The writes made beforehand: only the store's allocations count.
		var ws []store.Write
		for k := range 51 { // AllocsPerRun runs the function once more
			id := "warm"
			if c.create {
				id = fmt.Sprintf("new%d", k)
			}
			ws = append(ws, write(id, c.create))
		}
		k := 0
		got := testing.AllocsPerRun(50, func() { batch(ws[k]); k++ })
		t.Logf("%s: %.0f allocations a write (bound %.0f)", c.name, got, c.max)
		if got > c.max {
			t.Errorf("%s: %.0f allocations a write, more than %.0f: the write path allocates more than it did", c.name, got, c.max)
		}
	}
}
