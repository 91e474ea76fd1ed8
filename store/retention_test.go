package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

func TestParsePolicy(t *testing.T) {
	p, err := store.ParsePolicy(strings.NewReader(`{"acme":{"content":"30d","metadata":"365d"},"":{"content":"12h"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p["acme"] != (store.Retention{Content: 30 * 24 * time.Hour, Metadata: 365 * 24 * time.Hour}) || p[""] != (store.Retention{Content: 12 * time.Hour}) {
		t.Errorf("policy %+v", p)
	}
	for _, bad := range []string{`{"a":{"content":"-1d"}}`, `{"a":{"content":"soon"}}`, `{"a":{"ttl":"1d"}}`, `[]`} {
		if _, err := store.ParsePolicy(strings.NewReader(bad)); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestSweep: the sweeper prunes each tenant of the policy by the clock it
// is given.
func TestSweep(t *testing.T) {
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c, err := st.Create(context.Background(), store.Conversation{ID: "a", Tenant: "acme"}, convo.User("secret plans"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Create(context.Background(), store.Conversation{ID: "a", Tenant: "kept"}, convo.User("kept plans")); err != nil {
		t.Fatal(err)
	}
	clock := func() time.Time { return c.Updated.Add(2 * time.Hour) }
	ctx, cancel := context.WithCancel(context.Background())
	var got store.Pruned
	store.Sweep(ctx, st, store.Policy{"acme": {Content: time.Hour}}, time.Hour, clock, func(tenant string, p store.Pruned, err error) {
		if tenant != "acme" || err != nil {
			t.Errorf("report %q %v", tenant, err)
		}
		got = p
		cancel()
	})
	if got.ContentExpired != 1 {
		t.Fatalf("pruned %+v", got)
	}
	h, _, _ := st.Load(context.Background(), "acme", "a", 0)
	if len(h) != 1 || len(h[0].Parts) != 0 {
		t.Errorf("acme's content kept: %+v", h)
	}
	h, _, _ = st.Load(context.Background(), "kept", "a", 0)
	if len(h) != 1 || h[0].Text() != "kept plans" {
		t.Errorf("a tenant outside the policy was pruned: %+v", h)
	}
}
