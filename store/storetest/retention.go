package storetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// testRetention: store.Prune with a clock the test controls (the "now" it
// passes) expires content, keeps metadata and says so, then deletes; other
// tenants are untouched; pruning again changes nothing.
func testRetention(t *testing.T, s store.Store) {
	if _, ok := s.(store.ContentExpirer); !ok {
		t.Skip("the store cannot expire content")
	}
	reply := convo.Assistant("Take an umbrella to Zanzibar.", call("c1", "weather"))
	reply.ID = "r1"
	reply.Origin = &convo.Origin{Provider: "anthropic", Model: "claude-x"}
	reply.Usage = &convo.Usage{Input: 12, Output: 7}
	reply.Finish = convo.FinishToolUse
	user := convo.User("Weather in Zanzibar? mail me at z@example.com")
	user.ID = "u1"
	a := mustCreate(t, s, store.Conversation{ID: "a", Tenant: "t", Title: "Zanzibar trip", Meta: []byte(`{"team":"x","n":1}`)}, user, reply)
	other := mustCreate(t, s, store.Conversation{ID: "a", Tenant: "u"}, convo.User("Zanzibar for the other tenant"))
	r := store.Retention{Content: time.Hour, Metadata: 24 * time.Hour}
	t0 := a.Updated

	p, err := store.Prune(ctx(t), s, "t", r, t0.Add(30*time.Minute))
	if err != nil || p != (store.Pruned{}) {
		t.Fatalf("prune before the content TTL: %+v, %v", p, err)
	}
	at := t0.Add(2 * time.Hour)
	if p, err = store.Prune(ctx(t), s, "t", r, at); err != nil || p.ContentExpired != 1 || p.Deleted != 0 {
		t.Fatalf("prune after the content TTL: %+v, %v", p, err)
	}
	h, c, err := s.Load(ctx(t), "t", "a", 0)
	if err != nil || len(h) != 2 {
		t.Fatalf("load after expiry: %d messages, %v", len(h), err)
	}
	if when, ok := store.ContentExpired(c); !ok || !when.Equal(at) {
		t.Errorf("the conversation does not say its content expired at %v: meta %s", at, c.Meta)
	}
	if !strings.HasPrefix(string(c.Meta), `{"team":"x","n":1,`) {
		t.Errorf("the conversation's metadata was not kept as written: %s", c.Meta)
	}
	if c.Title != "Zanzibar trip" || c.Messages != 2 || !c.Updated.Equal(a.Updated) || c.Version <= a.Version {
		t.Errorf("conversation after expiry %+v (was %+v)", c, a)
	}
	for i, m := range h {
		if len(m.Parts) != 0 || !strings.Contains(string(m.Native["convo"]), `"content":"expired"`) {
			t.Errorf("messages[%d] still holds content or does not say it expired: %+v", i, m)
		}
	}
	if m := h[1]; m.ID != "r1" || m.Usage == nil || m.Usage.Output != 7 || m.Origin == nil || m.Origin.Model != "claude-x" || m.Finish != convo.FinishToolUse {
		t.Errorf("the reply's metadata was not kept: %+v", m)
	}
	if hits, _, err := s.Search(ctx(t), "t", "Zanzibar", store.SearchOptions{}); err != nil || len(hits) != 0 {
		t.Errorf("expired content still found by search: %d hits, %v", len(hits), err)
	}
	cs, _, err := s.List(ctx(t), "t", store.ListOptions{})
	if err != nil || len(cs) != 1 {
		t.Fatalf("list after expiry: %v, %v", cs, err)
	}
	if _, ok := store.ContentExpired(cs[0]); !ok {
		t.Error("the listed conversation does not say its content expired")
	}
	// Again: nothing left to expire.
	if p, err = store.Prune(ctx(t), s, "t", r, at.Add(time.Minute)); err != nil || p != (store.Pruned{}) {
		t.Errorf("second prune: %+v, %v", p, err)
	}
	if p, err = store.Prune(ctx(t), s, "t", r, t0.Add(25*time.Hour)); err != nil || p.Deleted != 1 {
		t.Fatalf("prune after the metadata TTL: %+v, %v", p, err)
	}
	if _, err := s.Get(ctx(t), "t", "a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("get after the metadata TTL: %v", err)
	}
	h, c, err = s.Load(ctx(t), "u", "a", 0)
	if err != nil || c.Version != other.Version || h[0].Text() != "Zanzibar for the other tenant" {
		t.Errorf("another tenant's conversation changed: %v %+v", err, c)
	}
}
