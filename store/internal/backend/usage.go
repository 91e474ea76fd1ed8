package backend

import (
	"fmt"
	"strings"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// Usage is what a stored assistant message adds to the usage index: its
// tokens and cost, at its time, by its model.
type Usage struct {
	At                                              int64 // microseconds since the Unix epoch, UTC
	Model                                           string
	Input, Output, CacheRead, CacheWrite, Reasoning int64
	Cost                                            int64 // nano-dollars; NoCost when unknown
}

// NoCost is Usage.Cost for a message without a cost.
const NoCost = -1

// UsageOf returns what m adds to the usage index, or nil: an assistant
// message with usage or a cost counts; now is its time when it has none.
func UsageOf(m *convo.Message, now time.Time) *Usage {
	if m.Role != convo.RoleAssistant || (m.Usage == nil && m.Cost == nil) {
		return nil
	}
	u := &Usage{At: now.UnixMicro(), Cost: NoCost}
	if !m.Time.IsZero() {
		u.At = m.Time.UnixMicro()
	}
	if m.Origin != nil {
		u.Model = m.Origin.Model
	}
	if m.Usage != nil {
		u.Input, u.Output, u.CacheRead, u.CacheWrite, u.Reasoning = m.Usage.Input, m.Usage.Output, m.Usage.CacheRead, m.Usage.CacheWrite, m.Usage.Reasoning
	}
	if m.Cost != nil {
		u.Cost = int64(m.Cost.USD)
	}
	return u
}

// microsPerDay turns a time in microseconds into its UTC day number.
const microsPerDay = 86_400_000_000

// UsageSQL returns the query of q for a backend whose placeholders ph
// writes (ph(1) is the first), over the table usage (conv, pos, tenant,
// at, model, input, output, cache_read, cache_write, reasoning, cost) and
// conversations (pk, id), and its arguments. The query is built from
// fixed fragments only; every value is an argument.
func UsageSQL(q store.UsageQuery, ph func(int) string) (string, []any, error) {
	if !q.By.Known() {
		return "", nil, fmt.Errorf("%w: unknown grouping %q (want model, conversation, tenant or day)", store.ErrInvalid, q.By)
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && q.Since.After(q.Until) {
		return "", nil, fmt.Errorf("%w: since %s is after until %s", store.ErrInvalid, q.Since.Format(time.RFC3339), q.Until.Format(time.RFC3339))
	}
	if !q.AllTenants {
		if err := checkString(q.Tenant, "tenant", 0, store.MaxTenantBytes); err != nil {
			return "", nil, invalidf("%v", err)
		}
	}
	limit := q.Limit
	if limit <= 0 {
		limit = store.DefaultUsageLimit
	}
	limit = min(limit, store.MaxUsageLimit)
	var key, order string
	switch q.By {
	case store.ByNone:
		key, order = "''", "1"
	case store.ByModel:
		key, order = "u.model", "1"
	case store.ByTenant:
		key, order = "u.tenant", "1"
	case store.ByDay:
		key, order = fmt.Sprintf("u.at / %d", int64(microsPerDay)), "1"
	case store.ByConversation:
		// Grouped by the conversation's key, the id looked up only for
		// the rows returned. "+ 0" keeps SQLite from walking the primary
		// key for its order instead of the time range's index.
		key, order = "u.conv + 0", "8 DESC, 1"
	}
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return ph(len(args))
	}
	if !q.AllTenants {
		where = append(where, "u.tenant = "+arg(q.Tenant))
	}
	if !q.Since.IsZero() {
		where = append(where, "u.at >= "+arg(q.Since.UnixMicro()))
	}
	if !q.Until.IsZero() {
		where = append(where, "u.at < "+arg(q.Until.UnixMicro()))
	}
	// Sums are cast back to bigint: PostgreSQL sums bigints as numeric.
	tenant := "''"
	if q.By == store.ByConversation {
		tenant = "min(u.tenant)"
	}
	sql := "SELECT " + key + " AS k, " + tenant + ` AS tenant, count(*) AS n, count(u.cost) AS priced,
	CAST(coalesce(sum(u.input), 0) AS bigint) AS input, CAST(coalesce(sum(u.output), 0) AS bigint) AS output,
	CAST(coalesce(sum(u.cache_read), 0) AS bigint) AS cache_read, CAST(coalesce(sum(u.cost), 0) AS bigint) AS cost,
	CAST(coalesce(sum(u.cache_write), 0) AS bigint) AS cache_write, CAST(coalesce(sum(u.reasoning), 0) AS bigint) AS reasoning
FROM usage u`
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	sql += " GROUP BY 1 ORDER BY " + order + " LIMIT " + arg(int64(limit))
	if q.By == store.ByConversation {
		sql = `SELECT c.id, g.tenant, g.n, g.priced, g.input, g.output, g.cache_read, g.cost, g.cache_write, g.reasoning
FROM (` + sql + `) g JOIN conversations c ON c.pk = g.k ORDER BY g.cost DESC, c.id`
	}
	return sql, args, nil
}

// UsageScanner reads one row of a UsageSQL query.
type UsageScanner interface{ Scan(dest ...any) error }

// ScanUsage reads a row of the query UsageSQL made for by.
func ScanUsage(sc UsageScanner, by store.UsageGroup) (store.UsageRow, error) {
	var r store.UsageRow
	var key any
	var priced, cost int64
	if err := sc.Scan(&key, &r.Tenant, &r.Messages, &priced, &r.Input, &r.Output, &r.CacheRead, &cost, &r.CacheWrite, &r.Reasoning); err != nil {
		return r, err
	}
	r.Unpriced, r.Cost = r.Messages-priced, convo.Money(cost)
	switch k := key.(type) {
	case int64:
		if by == store.ByDay {
			r.Key = time.UnixMicro(k * microsPerDay).UTC().Format(time.DateOnly)
		} else {
			r.Key = fmt.Sprint(k)
		}
	case string:
		r.Key = k
	case []byte:
		r.Key = string(k)
	case nil:
	default:
		r.Key = fmt.Sprint(k)
	}
	return r, nil
}
