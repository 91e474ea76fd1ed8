package store

import (
	"context"
	"time"

	"github.com/convo-go/convo"
)

// What a store keeps of spend: counters of money by tenant, key and UTC
// day, added to by the writes that record what was spent (Write.Charges),
// in the same transaction, so that several processes writing one database
// share the counters and a write that fails charges nothing. The gateway
// keeps its budgets' spend so (gateway.Budget).

// Charge adds an amount to one of the tenant's spend counters.
type Charge struct {
	// Key names the counter within the write's tenant: 1 to MaxIDBytes
	// bytes of UTF-8 ("tenant", "token:…").
	Key string `json:"key"`
	// Day is the UTC day the amount counts on; its time of day is
	// ignored.
	Day time.Time `json:"day"`
	// USD is the amount, not negative.
	USD convo.Money `json:"usd"`
}

// SpendKeeper is a Store that keeps spend counters: the SQLite and
// PostgreSQL stores are. A store that is not one ignores Write.Charges.
type SpendKeeper interface {
	// Spent returns what the tenant's counter key adds up to over the UTC
	// days from since's up to until's (excluded); zero for a counter
	// never charged. A sum past the range of convo.Money is the largest
	// Money, as is a counter charged past it.
	Spent(ctx context.Context, tenant, key string, since, until time.Time) (convo.Money, error)
}

// SpendDay is a day as the spend counters count it: the UTC date of t at
// midnight.
func SpendDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
