package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// usageReply is an assistant reply of model at t with usage and, when
// nanos ≥ 0, a cost.
func usageReply(model string, t time.Time, in, out, cached, reasoning int64, nanos int64) convo.Message {
	m := convo.Assistant("answer")
	m.Time = t
	m.Origin = &convo.Origin{Provider: "anthropic", Model: model}
	m.Usage = &convo.Usage{Input: in, Output: out, CacheRead: cached, Reasoning: reasoning}
	m.Finish = convo.FinishStop
	if nanos >= 0 {
		m.Cost = &convo.Cost{USD: convo.Money(nanos)}
	}
	return m
}

// usageRows renders rows one a line: key tenant messages/unpriced
// in/out/cached/cache_write/reasoning cost.
func usageRows(rows []store.UsageRow) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s %s %d/%d %d/%d/%d/%d/%d %s\n", r.Key, r.Tenant, r.Messages, r.Unpriced,
			r.Input, r.Output, r.CacheRead, r.CacheWrite, r.Reasoning, r.Cost)
	}
	return b.String()
}

func testUsage(t *testing.T, s store.Store) {
	ur, ok := s.(store.UsageReporter)
	if !ok {
		t.Skip("the store does not answer usage questions")
	}
	day1 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	day2 := day1.Add(24 * time.Hour)
	a := mustCreate(t, s, store.Conversation{Tenant: "acme", ID: "a"}, convo.User("q"),
		usageReply("sonnet", day1, 1000, 100, 800, 0, 5_000_000), convo.User("q2"),
		usageReply("gpt", day1.Add(time.Hour), 2000, 300, 0, 200, 7_000_000))
	mustCreate(t, s, store.Conversation{Tenant: "acme", ID: "b"}, convo.User("q"),
		usageReply("sonnet", day2, 500, 50, 0, 0, -1)) // unpriced
	mustCreate(t, s, store.Conversation{Tenant: "other", ID: "c"}, convo.User("q"),
		usageReply("sonnet", day2, 9, 9, 0, 0, 1))
	// A message without usage or cost adds nothing; a fork's copies are not counted again.
	mustAppend(t, s, a, convo.User("q3"), convo.Assistant("no usage"))
	mustFork(t, s, "acme", "a", 2, store.Conversation{ID: "fork"})

	tests := []struct {
		name string
		q    store.UsageQuery
		want string
	}{
		{"total", store.UsageQuery{Tenant: "acme"}, "  3/1 3500/450/800/0/200 0.012\n"},
		{"by model", store.UsageQuery{Tenant: "acme", By: store.ByModel},
			"gpt  1/0 2000/300/0/0/200 0.007\nsonnet  2/1 1500/150/800/0/0 0.005\n"},
		{"by day", store.UsageQuery{Tenant: "acme", By: store.ByDay},
			"2026-12-01  2/0 3000/400/800/0/200 0.012\n2026-12-02  1/1 500/50/0/0/0 0\n"},
		{"by conversation", store.UsageQuery{Tenant: "acme", By: store.ByConversation},
			"a acme 2/0 3000/400/800/0/200 0.012\nb acme 1/1 500/50/0/0/0 0\n"},
		{"range", store.UsageQuery{Tenant: "acme", By: store.ByModel, Since: day1.Add(30 * time.Minute), Until: day2},
			"gpt  1/0 2000/300/0/0/200 0.007\n"},
		{"until excluded", store.UsageQuery{Tenant: "acme", Until: day1}, ""},
		{"every tenant", store.UsageQuery{AllTenants: true, By: store.ByTenant},
			"acme  3/1 3500/450/800/0/200 0.012\nother  1/0 9/9/0/0/0 0.000000001\n"},
		{"limit", store.UsageQuery{AllTenants: true, By: store.ByConversation, Limit: 1},
			"a acme 2/0 3000/400/800/0/200 0.012\n"},
		{"no such tenant", store.UsageQuery{Tenant: "nobody", By: store.ByModel}, ""},
	}
	for _, tt := range tests {
		rows, err := ur.Usage(ctx(t), tt.q)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := usageRows(rows); got != tt.want {
			t.Errorf("%s:\ngot\n%swant\n%s", tt.name, got, tt.want)
		}
	}

	// Deleting a message or a conversation takes its usage with it.
	h, a2 := mustLoad(t, s, "acme", "a")
	if _, err := s.DeleteMessage(ctx(t), "acme", "a", a2.Version, h[3].ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx(t), "acme", "b"); err != nil {
		t.Fatal(err)
	}
	rows, err := ur.Usage(ctx(t), store.UsageQuery{Tenant: "acme", By: store.ByModel})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := usageRows(rows), "sonnet  1/0 1000/100/800/0/0 0.005\n"; got != want {
		t.Errorf("after deletions:\ngot\n%swant\n%s", got, want)
	}

	for _, q := range []store.UsageQuery{
		{Tenant: "acme", By: "week"},
		{Tenant: "acme", Since: day2, Until: day1},
		{Tenant: strings.Repeat("x", store.MaxTenantBytes+1)},
	} {
		if _, err := ur.Usage(ctx(t), q); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("Usage(%+v): %v, want ErrInvalid", q, err)
		}
	}
}

// testUsageBatch: a batch write (the gateway's) indexes usage as Append does.
func testUsageBatch(t *testing.T, s store.Store) {
	ur, ok := s.(store.UsageReporter)
	if !ok {
		t.Skip("the store does not answer usage questions")
	}
	at := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	res := s.Batch(ctx(t), []store.Write{
		{Tenant: "t", ID: "x", Create: true, Messages: []convo.Message{convo.User("q"), usageReply("m", at, 10, 5, 0, 0, 42)}},
		{Tenant: "t", ID: "x", Version: store.AnyVersion, Messages: []convo.Message{convo.User("q"), usageReply("m", at, 1, 1, 0, 0, -1)}},
	})
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("write %d: %v", i, r.Err)
		}
	}
	rows, err := ur.Usage(ctx(t), store.UsageQuery{Tenant: "t", By: store.ByModel})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := usageRows(rows), "m  2/1 11/6/0/0/0 0.000000042\n"; got != want {
		t.Errorf("got\n%swant\n%s", got, want)
	}
}

// BenchUsage fills s with n conversations of one question and one priced
// reply each (spread over 30 days, four models, ten tenants), then
// measures the usage questions of one tenant's month: by model, by day,
// the 100 most costly conversations, and every tenant's total. It
// reports the time of each (ns/op is that of all four).
func BenchUsage(b *testing.B, s store.Store, n int) {
	ur, ok := s.(store.UsageReporter)
	if !ok {
		b.Skip("the store does not answer usage questions")
	}
	ctx := b.Context()
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	models := []string{"claude-sonnet-4-5", "gpt-5", "gemini-3-pro", "llama3"}
	const batch = 500
	for i := 0; i < n; i += batch {
		var ws []store.Write
		for j := i; j < min(n, i+batch); j++ {
			at := start.Add(time.Duration(j) * 30 * 24 * time.Hour / time.Duration(n))
			ws = append(ws, store.Write{Tenant: fmt.Sprint("tenant", j%10), Create: true, Messages: []convo.Message{
				convo.User("q"), usageReply(models[j%len(models)], at, 1000+int64(j%100), 200, 500, 20, int64(j%1000)*1000)}})
		}
		for k, r := range s.Batch(ctx, ws) {
			if r.Err != nil {
				b.Fatalf("write %d: %v", i+k, r.Err)
			}
		}
	}
	qs := []store.UsageQuery{
		{Tenant: "tenant3", By: store.ByModel, Since: start, Until: start.AddDate(0, 1, 0)},
		{Tenant: "tenant3", By: store.ByDay, Since: start, Until: start.AddDate(0, 1, 0)},
		{Tenant: "tenant3", By: store.ByConversation, Since: start, Until: start.AddDate(0, 1, 0), Limit: 100},
		{AllTenants: true, By: store.ByTenant},
	}
	names := []string{"model", "day", "conversation", "tenants"}
	spent := make([]time.Duration, len(qs))
	b.ResetTimer()
	for b.Loop() {
		for i, q := range qs {
			t0 := time.Now()
			rows, err := ur.Usage(ctx, q)
			spent[i] += time.Since(t0)
			if err != nil || len(rows) == 0 {
				b.Fatalf("%s: %d rows, %v", names[i], len(rows), err)
			}
		}
	}
	for i, name := range names {
		b.ReportMetric(float64(spent[i].Microseconds())/1000/float64(b.N), "ms/"+name)
	}
}
