package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo"
)

// TestBudgetPeriod: a budget's period is the UTC day or month holding
// the moment, whatever the moment's zone.
func TestBudgetPeriod(t *testing.T) {
	paris := time.FixedZone("CET", 3600)
	for _, tt := range []struct {
		month      bool
		now        time.Time
		start, end string
	}{
		{false, time.Date(2026, 12, 5, 23, 59, 59, 0, time.UTC), "2026-12-05", "2026-12-06"},
		{false, time.Date(2026, 12, 6, 0, 30, 0, 0, paris), "2026-12-05", "2026-12-06"}, // 23:30 UTC
		{true, time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC), "2026-12-01", "2027-01-01"},
		{true, time.Date(2027, 2, 28, 12, 0, 0, 0, time.UTC), "2027-02-01", "2027-03-01"},
	} {
		b := &budget{month: tt.month}
		start, end := b.period(tt.now)
		if start.Format(time.DateOnly) != tt.start || end.Format(time.DateOnly) != tt.end || start.Location() != time.UTC {
			t.Errorf("%v month=%v: [%s, %s), want [%s, %s)", tt.now, tt.month, start, end, tt.start, tt.end)
		}
	}
}

// fixedSpend is a store's spend, the same for every counter.
type fixedSpend convo.Money

func (f fixedSpend) Spent(context.Context, string, string, time.Time, time.Time) (convo.Money, error) {
	return convo.Money(f), nil
}

// TestBudgetRetryAfter: the refusal of a spent monthly budget says when
// the month ends, and the budget found spent is refused from memory.
func TestBudgetRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 31, 23, 0, 0, 0, time.UTC)
	sk := fixedSpend(5 * convo.Dollar)
	bs := &budgets{st: sk, log: slog.New(slog.NewTextHandler(io.Discard, nil)), now: func() time.Time { return now }}
	b := &budget{limit: 5 * convo.Dollar, month: true, tenant: "acme", key: "tenant", what: `tenant "acme"`, kind: "tenant"}
	o := bs.over(context.Background(), []*budget{b})
	if o == nil || !o.end.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("over %+v", o)
	}
	w := httptest.NewRecorder()
	bs.refuse(w, protocols["anthropic"], o)
	if w.Code != 429 || w.Header().Get("Retry-After") != "3600" || !strings.Contains(w.Body.String(), "monthly budget of $5; it renews at 2027-01-01T00:00:00Z") {
		t.Errorf("%d, Retry-After %q, %s", w.Code, w.Header().Get("Retry-After"), w.Body)
	}
	bs.st = fixedSpend(0) // spend only grows: the budget stays spent until the month ends
	if bs.over(context.Background(), []*budget{b}) == nil {
		t.Error("a spent budget let through before its period ended")
	}
	now = now.Add(time.Hour) // a new month
	if o := bs.over(context.Background(), []*budget{b}); o != nil {
		t.Errorf("spent in the new month: %+v", o)
	}
}
