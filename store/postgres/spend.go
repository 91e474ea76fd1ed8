package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/internal/backend"
)

var _ store.SpendKeeper = (*Store)(nil)

const (
	// chargeSpend adds to a counter, stopping at the largest amount
	// rather than overflowing (an overflow would fail the batch).
	chargeSpend = `INSERT INTO spend (tenant, key, day, usd) VALUES ($1, $2, $3, $4)
		ON CONFLICT (tenant, key, day) DO UPDATE SET usd =
			CASE WHEN spend.usd > 9223372036854775807 - excluded.usd THEN 9223372036854775807 ELSE spend.usd + excluded.usd END`
	// selectSpent adds up a counter's days; the sum is numeric, so it
	// cannot overflow before it is bounded.
	selectSpent = `SELECT least(coalesce(sum(usd), 0), 9223372036854775807)::bigint
		FROM spend WHERE tenant = $1 AND key = $2 AND day >= $3 AND day < $4`
)

// Spent returns what the tenant's counter key adds up to over the days
// from since's to until's (migration 6).
func (s *Store) Spent(ctx context.Context, tenant, key string, since, until time.Time) (convo.Money, error) {
	var v int64
	err := s.pool.QueryRow(ctx, selectSpent, tenant, key, store.SpendDay(since), store.SpendDay(until)).Scan(&v)
	return convo.Money(v), wrap(err)
}

// charge applies a batch's charges in its transaction, the counters in
// the order Charges sorts them (their rows are locked so by every batch),
// in one round trip.
func charge(ctx context.Context, tx pgx.Tx, cs []backend.Charge) error {
	if len(cs) == 0 {
		return nil
	}
	var b pgx.Batch
	for _, c := range cs {
		b.Queue(chargeSpend, c.Tenant, c.Key, c.Day, int64(c.USD))
	}
	return wrap(tx.SendBatch(ctx, &b).Close())
}
