package storetest

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// spent reads a counter, failing the test on an error.
func spent(t *testing.T, sk store.SpendKeeper, tenant, key string, since, until time.Time) convo.Money {
	t.Helper()
	v, err := sk.Spent(ctx(t), tenant, key, since, until)
	if err != nil {
		t.Fatalf("Spent(%q, %q): %v", tenant, key, err)
	}
	return v
}

// testSpend: charges count with the writes that apply, by tenant, key and
// UTC day; a write that fails charges nothing.
func testSpend(t *testing.T, s store.Store) {
	sk, ok := s.(store.SpendKeeper)
	if !ok {
		t.Skip("the store keeps no spend")
	}
	day1 := time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC)
	day2 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	nov, dec, jan := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), day2, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := spent(t, sk, "acme", "tenant", nov, jan); got != 0 {
		t.Fatalf("never charged: %s", got)
	}
	ch := func(key string, day time.Time, usd convo.Money) store.Charge {
		return store.Charge{Key: key, Day: day, USD: usd}
	}
	orphan := convo.ToolResults(convo.ToolResult("nope", "lookup", "no call"))
	res := s.Batch(ctx(t), []store.Write{
		{Tenant: "acme", ID: "a", Create: true, Messages: []convo.Message{convo.User("q")},
			Charges: []store.Charge{ch("tenant", day1, 3*convo.Dollar), ch("token:x", day1, 1)}},
		{Tenant: "acme", ID: "a", Version: store.AnyVersion, Messages: []convo.Message{orphan}, // invalid: charges nothing
			Charges: []store.Charge{ch("tenant", day1, 100*convo.Dollar)}},
		{Tenant: "acme", ID: "missing", Version: store.AnyVersion, Messages: []convo.Message{convo.User("x")},
			Charges: []store.Charge{ch("tenant", day1, 100*convo.Dollar)}},
		{Tenant: "acme", ID: "a", Version: store.AnyVersion, Messages: []convo.Message{convo.Assistant("r")},
			Charges: []store.Charge{ch("tenant", day1.Add(-time.Hour), 2), ch("tenant", day2, convo.Dollar/4)}},
		{Tenant: "other", ID: "o", Create: true, Charges: []store.Charge{ch("tenant", day1, 7)}},
		{Tenant: "acme", ID: "neg", Create: true, Charges: []store.Charge{ch("tenant", day1, -1)}},
		{Tenant: "acme", ID: "nokey", Create: true, Charges: []store.Charge{ch("", day1, 1)}},
		{Tenant: "acme", ID: "noday", Create: true, Charges: []store.Charge{{Key: "tenant", USD: 1}}},
	})
	for i, want := range []error{nil, store.ErrInvalid, store.ErrNotFound, nil, nil, store.ErrInvalid, store.ErrInvalid, store.ErrInvalid} {
		if want == nil && res[i].Err != nil {
			t.Fatalf("writes[%d]: %v", i, res[i].Err)
		}
		if want != nil {
			wantErr(t, fmt.Sprintf("writes[%d]", i), res[i].Err, want)
		}
	}
	for _, c := range []struct {
		tenant, key  string
		since, until time.Time
		want         convo.Money
	}{
		{"acme", "tenant", nov, dec, 3*convo.Dollar + 2},
		{"acme", "tenant", dec, jan, convo.Dollar / 4},
		{"acme", "tenant", nov, jan, 3*convo.Dollar + 2 + convo.Dollar/4},
		{"acme", "tenant", day1, day1, 0},                                 // until excluded
		{"acme", "tenant", day1, day2.Add(time.Hour), 3*convo.Dollar + 2}, // days, not instants
		{"acme", "token:x", nov, jan, 1},
		{"other", "tenant", nov, jan, 7},
		{"other", "token:x", nov, jan, 0},
		{"nobody", "tenant", nov, jan, 0},
	} {
		if got := spent(t, sk, c.tenant, c.key, c.since, c.until); got != c.want {
			t.Errorf("Spent(%q, %q, %s, %s) = %s, want %s", c.tenant, c.key, c.since.Format(time.DateOnly), c.until.Format(time.DateOnly), got, c.want)
		}
	}
	// A counter stops at the largest amount, and so does a sum of days.
	big := convo.Money(math.MaxInt64 - 10)
	for _, day := range []time.Time{day1, day1, day2} {
		if r := s.Batch(ctx(t), []store.Write{{Tenant: "big", ID: "b", Create: true, Version: store.AnyVersion, Charges: []store.Charge{ch("tenant", day, big)}}}); r[0].Err != nil {
			t.Fatal(r[0].Err)
		}
	}
	if got := spent(t, sk, "big", "tenant", nov, jan); got != math.MaxInt64 {
		t.Errorf("overflowing sum: %s, want the largest Money", got)
	}
	if got := spent(t, sk, "big", "tenant", dec, jan); got != big {
		t.Errorf("one day: %s, want %s", got, big)
	}
}

// testSpendConcurrent: batches charging one counter at once lose nothing.
func testSpendConcurrent(t *testing.T, s store.Store) {
	sk, ok := s.(store.SpendKeeper)
	if !ok {
		t.Skip("the store keeps no spend")
	}
	day := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	const workers, each = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				// Two writes a batch: the counter is charged once, with both.
				res := s.Batch(ctx(t), []store.Write{
					{Tenant: "t", ID: fmt.Sprintf("c%d-%d", w, i), Create: true, Charges: []store.Charge{{Key: "tenant", Day: day, USD: 1}}},
					{Tenant: "t", ID: fmt.Sprintf("d%d-%d", w, i), Create: true, Charges: []store.Charge{{Key: "tenant", Day: day, USD: 10}}},
				})
				for _, r := range res {
					if r.Err != nil {
						errs <- r.Err
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got, want := spent(t, sk, "t", "tenant", day, day.Add(24*time.Hour)), convo.Money(workers*each*11); got != want {
		t.Errorf("spent %s, want %s", got, want)
	}
}

// BenchSpent measures what a budget check asks the store: a month's spend
// of one counter, among 100 tenants' counters charged every day of two
// months.
func BenchSpent(b *testing.B, s store.Store) {
	sk, ok := s.(store.SpendKeeper)
	if !ok {
		b.Skip("the store keeps no spend")
	}
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var ws []store.Write
	for tn := range 100 {
		var cs []store.Charge
		for d := range 61 {
			cs = append(cs, store.Charge{Key: "tenant", Day: start.AddDate(0, 0, d), USD: convo.Dollar})
		}
		ws = append(ws, store.Write{Tenant: fmt.Sprintf("t%d", tn), ID: "c", Create: true, Charges: cs})
	}
	for _, r := range s.Batch(b.Context(), ws) {
		if r.Err != nil {
			b.Fatal(r.Err)
		}
	}
	dec, jan := start.AddDate(0, 1, 0), start.AddDate(0, 2, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		v, err := sk.Spent(b.Context(), fmt.Sprintf("t%d", i%100), "tenant", dec, jan)
		if err != nil || v != 31*convo.Dollar {
			b.Fatalf("%s %v", v, err)
		}
	}
}
