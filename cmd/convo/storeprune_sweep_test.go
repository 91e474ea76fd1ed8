package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// TestStartSweeper: the sweeper that --retention starts in convo serve and
// convo gateway reads the policy file and expires content on its schedule;
// a bad policy or interval is refused before anything runs.
func TestStartSweeper(t *testing.T) {
	dir := t.TempDir()
	st, err := sqlite.Open(t.Context(), filepath.Join(dir, "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Create(t.Context(), store.Conversation{Tenant: "acme"}, convo.User("my secret"))
	if err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(dir, "retention.json")
	os.WriteFile(policy, []byte(`{"acme": {"content": "1ms"}}`), 0o600)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"acme": {"content": "soon"}}`), 0o600)
	log := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := startSweeper(ctx, bad, time.Millisecond, st, log); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("a bad policy: %v", err)
	}
	if err := startSweeper(ctx, policy, 0, st, log); err == nil {
		t.Error("a zero --sweep-every was taken")
	}
	time.Sleep(5 * time.Millisecond) // older than the policy's 1ms
	if err := startSweeper(ctx, policy, 10*time.Millisecond, st, log); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		got, err := st.Get(t.Context(), "acme", c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := store.ContentExpired(got); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the sweeper never expired the conversation's content")
		}
	}
	h, _, err := st.Load(t.Context(), "acme", c.ID, 0)
	if err != nil || len(h) != 1 || strings.Contains(h[0].Text(), "secret") {
		t.Errorf("after the sweep: %v, %+v", err, h)
	}
}
