package sqlite

import (
	"context"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/internal/backend"
)

var _ store.SpendKeeper = (*Store)(nil)

const (
	// chargeSpend adds to a counter, stopping at the largest amount
	// rather than overflowing (an overflow would fail the batch).
	chargeSpend = `INSERT INTO spend (tenant, key, day, usd) VALUES (?1, ?2, ?3, ?4)
		ON CONFLICT (tenant, key, day) DO UPDATE SET usd =
			CASE WHEN usd > 9223372036854775807 - excluded.usd THEN 9223372036854775807 ELSE usd + excluded.usd END`
	// selectSpent reads a counter's days (a month's at most 31 rows),
	// added up in Go: SQLite's sum fails on overflow.
	selectSpent = `SELECT usd FROM spend WHERE tenant = ?1 AND key = ?2 AND day >= ?3 AND day < ?4`
)

// dayText is a spend day as the spend table keeps it.
const dayText = "2006-01-02"

// Spent returns what the tenant's counter key adds up to over the days
// from since's to until's (migration 6).
func (s *Store) Spent(ctx context.Context, tenant, key string, since, until time.Time) (convo.Money, error) {
	rows, err := s.r.QueryContext(ctx, selectSpent, tenant, key,
		store.SpendDay(since).Format(dayText), store.SpendDay(until).Format(dayText))
	if err != nil {
		return 0, wrap(err)
	}
	defer rows.Close()
	var sum convo.Money
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return 0, wrap(err)
		}
		sum = backend.AddMoney(sum, convo.Money(v))
	}
	return sum, wrap(rows.Err())
}

// charge applies a batch's charges in its transaction.
func charge(ctx context.Context, tx ptx, cs []backend.Charge) error {
	for _, c := range cs {
		if _, err := tx.ExecContext(ctx, chargeSpend, c.Tenant, c.Key, c.Day.Format(dayText), int64(c.USD)); err != nil {
			return wrap(err)
		}
	}
	return nil
}
