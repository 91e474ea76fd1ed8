package postgres

import (
	"context"
	"fmt"
	"strconv"

	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/internal/backend"
)

var _ store.UsageReporter = (*Store)(nil)

// usageCTE inserts the usage index's rows of cols ($a: row index, $a+1:
// at, $a+2: model, $a+3…$a+7: tokens, $a+8: cost, -1 for none) for the
// messages of CTE c (pk, first, tenant).
func usageCTE(a int) string {
	return fmt.Sprintf(`, usage_rows AS (
	INSERT INTO usage (conv, pos, tenant, at, model, input, output, cache_read, cache_write, reasoning, cost)
	SELECT c.pk, c.first + x.i, c.tenant, x.at, x.model, x.input, x.output, x.cr, x.cw, x.re, nullif(x.cost, -1)
	FROM c, unnest($%d::bigint[], $%d::bigint[], $%d::text[], $%d::bigint[], $%d::bigint[], $%d::bigint[], $%d::bigint[], $%d::bigint[], $%d::bigint[])
		AS x (i, at, model, input, output, cr, cw, re, cost)
)`, a, a+1, a+2, a+3, a+4, a+5, a+6, a+7, a+8)
}

// addUsage adds row i's usage, if any, to the arrays usageCTE unnests.
func (c *cols) addUsage(i int, u *backend.Usage) {
	if u == nil {
		return
	}
	c.uRow, c.uAt, c.uModel = append(c.uRow, int64(i)), append(c.uAt, u.At), append(c.uModel, u.Model)
	c.uIn, c.uOut, c.uCR, c.uCW, c.uRe = append(c.uIn, u.Input), append(c.uOut, u.Output), append(c.uCR, u.CacheRead),
		append(c.uCW, u.CacheWrite), append(c.uRe, u.Reasoning)
	c.uCost = append(c.uCost, u.Cost)
}

// withUsage returns args followed by the arrays usageCTE unnests.
func (c *cols) withUsage(args ...any) []any {
	return append(args, nonNil(c.uRow), nonNil(c.uAt), nonNilS(c.uModel), nonNil(c.uIn), nonNil(c.uOut),
		nonNil(c.uCR), nonNil(c.uCW), nonNil(c.uRe), nonNil(c.uCost))
}

// nonNil and nonNilS send an empty array rather than NULL, which unnest
// would read as no rows anyway but a typed parameter wants explicit.
func nonNil(a []int64) []int64 {
	if a == nil {
		return []int64{}
	}
	return a
}

func nonNilS(a []string) []string {
	if a == nil {
		return []string{}
	}
	return a
}

// Usage adds up the tokens and cost of the assistant messages q selects,
// from the usage index (migration 5).
func (s *Store) Usage(ctx context.Context, q store.UsageQuery) ([]store.UsageRow, error) {
	query, args, err := backend.UsageSQL(q, func(i int) string { return "$" + strconv.Itoa(i) })
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, query, args...)
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
