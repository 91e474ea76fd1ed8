package replay_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/replay"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// TestMany: bounded concurrency, an interrupted batch finished by running
// it again with nothing replayed twice, totals, and selection that leaves
// the forks out.
func TestMany(t *testing.T) {
	reply, err := os.ReadFile("../" + textJSON)
	if err != nil {
		t.Fatal(err)
	}
	var inflight, peak, calls atomic.Int64
	gate := make(chan struct{}) // holds the upstream until the test lets it answer
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		n := inflight.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-gate
		inflight.Add(-1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(reply)
	}))
	defer up.Close()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	r, err := replay.New(replay.Options{Store: st, Config: gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "oa", Protocol: "openai-chat", URL: up.URL}},
		Routes:    []gateway.Route{{Model: "*", Upstream: "oa"}}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 5 {
		title := "weather"
		if i == 4 {
			title = "other"
		}
		if _, err := st.Create(ctx, store.Conversation{Title: title}, convo.User(title+" question"), convo.Assistant("an answer")); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := r.Select(ctx, "", replay.Selection{Search: "weather"})
	if err != nil || len(ids) != 4 {
		t.Fatalf("select: %v %v", ids, err)
	}
	if _, err := r.Select(ctx, "", replay.Selection{}); err == nil {
		t.Error("a selection of nothing")
	}
	q := replay.Request{Model: "gpt-x"}

	// Interrupted once the first replay is done: the others do not start,
	// or are not stored.
	bctx, cancel := context.WithCancel(ctx)
	go func() { gate <- struct{}{} }() // one answer
	outs := r.Many(bctx, ids, q, 2, func(done, total int, o replay.Outcome) {
		if total != 4 {
			t.Errorf("total %d", total)
		}
		if o.Result != nil {
			cancel()
		}
	})
	close(gate) // the rest answer at once from now on
	first := replay.Total(outs)
	if first.Replayed != 1 || first.Errors != 3 || peak.Load() > 2 {
		t.Fatalf("interrupted batch: %+v, peak %d", first, peak.Load())
	}
	for _, o := range outs {
		if o.Result == nil && !strings.Contains(o.Err, "canceled") {
			t.Errorf("outcome %+v", o)
		}
	}
	// Again: the other three, the first skipped.
	before := calls.Load()
	outs = r.Many(ctx, ids, q, 2, nil)
	total := replay.Total(outs)
	if total.Replayed+total.Skipped != 4 || total.Skipped < 1 || calls.Load()-before != int64(total.Replayed) {
		t.Fatalf("resumed batch: %+v, %d calls", total, calls.Load()-before)
	}
	if total.SameToolCalls != 4 || total.SameFinish != 0 || total.Replay.Input == 0 || total.MeanSimilarity >= 0.1 {
		t.Errorf("totals %+v", total)
	}
	// The forks are not selected, by a search or by time.
	ids2, err := r.Select(ctx, "", replay.Selection{Since: time.Now().Add(-time.Hour)})
	if err != nil || len(ids2) != 5 {
		t.Errorf("since: %d ids, %v", len(ids2), err)
	}
	ids3, _ := r.Select(ctx, "", replay.Selection{Search: "weather", Limit: 2})
	if len(ids3) != 2 {
		t.Errorf("limit: %d", len(ids3))
	}
}
