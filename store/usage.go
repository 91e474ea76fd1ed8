package store

import (
	"context"
	"time"

	"github.com/convo-go/convo"
)

// What a store answers about usage: the tokens and cost of the assistant
// messages it holds that carry usage or a cost (convo.Message.Usage,
// convo.Message.Cost), added up by a grouping over a time range.
//
// A message counts at its Time, or when it was stored if it has none. A
// message counts in the conversation it was appended to: the copies a
// Fork makes are not counted again (the spend happened once), and a
// message deleted, or a conversation, takes its usage with it. Content
// expiry keeps usage and cost.

// UsageGroup is what Usage adds up by.
type UsageGroup string

// The groupings of Usage.
const (
	ByNone         UsageGroup = ""             // one row: the total
	ByModel        UsageGroup = "model"        // the reply's model (Origin.Model)
	ByConversation UsageGroup = "conversation" // most costly first
	ByTenant       UsageGroup = "tenant"
	ByDay          UsageGroup = "day" // UTC days
)

// Known reports whether g is a grouping of Usage.
func (g UsageGroup) Known() bool {
	switch g {
	case ByNone, ByModel, ByConversation, ByTenant, ByDay:
		return true
	}
	return false
}

// UsageQuery selects what Usage adds up.
type UsageQuery struct {
	// Tenant is whose usage; AllTenants adds up every tenant's instead
	// (an operator's question, never a tenant's).
	Tenant     string
	AllTenants bool
	By         UsageGroup
	// Since and Until bound the time range, Since included and Until
	// not; a zero one is unbounded.
	Since, Until time.Time
	// Limit bounds the rows (0: DefaultUsageLimit; more than
	// MaxUsageLimit: MaxUsageLimit).
	Limit int
}

// The row limits of Usage.
const (
	DefaultUsageLimit = 1000
	MaxUsageLimit     = 100000
)

// UsageRow is one group's usage.
type UsageRow struct {
	// Key is the group's: the model, the conversation id, the tenant or
	// the day (YYYY-MM-DD); empty for the total.
	Key string
	// Tenant is the conversation's tenant, with ByConversation.
	Tenant string
	// Messages counts the assistant messages added up, Unpriced those of
	// them without a cost: their cost is unknown, not in Cost.
	Messages, Unpriced int64
	// Tokens by kind, as convo.Usage counts them (Input includes cached
	// tokens, Output reasoning).
	Input, Output, CacheRead, CacheWrite, Reasoning int64
	// Cost adds up the priced messages' costs, exactly.
	Cost convo.Money
}

// UsageReporter is a Store that answers usage questions. The SQLite and
// PostgreSQL stores are, from an index kept by every write.
type UsageReporter interface {
	// Usage adds up the tokens and cost of the assistant messages q
	// selects, by q.By: groups ordered by key (days and models in order;
	// ByConversation most costly first), no row for a group with
	// nothing. An unknown grouping or a Since after Until is ErrInvalid.
	Usage(ctx context.Context, q UsageQuery) ([]UsageRow, error)
}

// UsageJSON is a usage row in JSON, as `convo store usage --json` prints
// it and GET /convo/v1/usage answers it: the grouping's key under its
// name (model, conversation with its tenant, tenant or day; none for the
// total), the tokens by kind and the cost as an exact decimal string.
type UsageJSON struct {
	Model        *string `json:"model,omitempty"`
	Conversation *string `json:"conversation,omitempty"`
	Tenant       *string `json:"tenant,omitempty"`
	Day          *string `json:"day,omitempty"`
	Messages     int64   `json:"messages"`
	Unpriced     int64   `json:"unpriced_messages"`
	Input        int64   `json:"input_tokens"`
	Output       int64   `json:"output_tokens"`
	Cached       int64   `json:"cached_tokens"`
	CacheWrite   int64   `json:"cache_write_tokens"`
	Reasoning    int64   `json:"reasoning_tokens"`
	// Cost adds up the priced messages' costs in dollars ("0.012"); the
	// unpriced messages' cost is unknown, not in it.
	Cost string `json:"cost_usd"`
}

// UsageRowsJSON returns rows, grouped by by, in their JSON form: never
// nil, so that no rows is an empty array.
func UsageRowsJSON(by UsageGroup, rows []UsageRow) []UsageJSON {
	out := make([]UsageJSON, len(rows))
	for i, r := range rows {
		u := UsageJSON{Messages: r.Messages, Unpriced: r.Unpriced, Input: r.Input, Output: r.Output, Cached: r.CacheRead,
			CacheWrite: r.CacheWrite, Reasoning: r.Reasoning, Cost: r.Cost.String()}
		key := rows[i].Key
		switch by {
		case ByModel:
			u.Model = &key
		case ByConversation:
			u.Conversation, u.Tenant = &key, &rows[i].Tenant
		case ByTenant:
			u.Tenant = &key
		case ByDay:
			u.Day = &key
		}
		out[i] = u
	}
	return out
}
