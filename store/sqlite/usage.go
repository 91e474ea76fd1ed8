package sqlite

import (
	"context"
	"strconv"

	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/internal/backend"
)

var _ store.UsageReporter = (*Store)(nil)

// Usage adds up the tokens and cost of the assistant messages q selects,
// from the usage index (migration 5).
func (s *Store) Usage(ctx context.Context, q store.UsageQuery) ([]store.UsageRow, error) {
	query, args, err := backend.UsageSQL(q, func(i int) string { return "?" + strconv.Itoa(i) })
	if err != nil {
		return nil, err
	}
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, wrap(err)
	}
	defer rows.Close()
	var out []store.UsageRow
	for rows.Next() {
		r, err := backend.ScanUsage(rows, q.By)
		if err != nil {
			return nil, wrap(err)
		}
		out = append(out, r)
	}
	return out, wrap(rows.Err())
}
