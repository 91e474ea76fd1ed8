package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/pricing"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/store"
)

// usageReply is an assistant message of model with usage, at t, and with
// a cost when cost is not empty.
func usageReply(t *testing.T, model string, at time.Time, in, out int64, cost string) string {
	m := convo.Assistant("answer")
	m.Time = at
	m.Origin = &convo.Origin{Provider: "anthropic", Model: model}
	m.Usage = &convo.Usage{Input: in, Output: out}
	if cost != "" {
		usd, err := convo.ParseMoney(cost)
		if err != nil {
			t.Fatal(err)
		}
		m.Cost = &convo.Cost{USD: usd}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestUsage: GET /convo/v1/usage adds up the caller's tenant's usage only,
// in the shape of convo store usage --json; the server prices appended
// replies that carry usage and no cost (Options.Pricer), and keeps the
// cost of one that carries it.
func TestUsage(t *testing.T) {
	prices, err := pricing.ParseTable([]byte(`{"sonnet*": {"input": "3", "output": "15"}}`), "test")
	if err != nil {
		t.Fatal(err)
	}
	day1 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	day2 := day1.Add(24 * time.Hour)
	each(t, func(t *testing.T, open func(*testing.T) store.Store) {
		ts := newServer(t, open(t), func(o *server.Options) {
			o.Pricer, o.Metrics = pricing.New(prices.Lookup), prometheus.NewRegistry()
		})
		user := `{"role":"user","parts":[{"type":"text","text":"q"}]}`
		ts.do(t, "POST", "/convo/v1/conversations", ts.alice,
			`{"id":"a","messages":[`+user+`,`+usageReply(t, "sonnet-4", day1, 1_000_000, 100_000, "")+`]}`).want(t, http.StatusCreated)
		ts.do(t, "POST", "/convo/v1/conversations/a/messages", ts.alice,
			`{"version":1,"messages":[`+user+`,`+usageReply(t, "sonnet-4", day2, 1000, 0, "9")+`,`+user+`,`+usageReply(t, "llama", day2, 5, 5, "")+`]}`).want(t, http.StatusOK)
		ts.do(t, "POST", "/convo/v1/conversations", ts.bob,
			`{"id":"b","messages":[`+user+`,`+usageReply(t, "sonnet-4", day1, 7, 7, "")+`]}`).want(t, http.StatusCreated)

		get := func(token, query string) string {
			t.Helper()
			var rows []json.RawMessage
			ts.do(t, "GET", "/convo/v1/usage"+query, token, nil).want(t, http.StatusOK).decode(t, &rows)
			b, _ := json.Marshal(rows)
			return string(b)
		}
		for _, c := range []struct{ token, query, want string }{
			// 1M input at $3 and 100k output at $15: $4.5, priced by the server;
			// $9 as sent; llama has no price: unpriced.
			{ts.alice, "", `[{"messages":3,"unpriced_messages":1,"input_tokens":1001005,"output_tokens":100005,"cached_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"cost_usd":"13.5"}]`},
			{ts.alice, "?by=model", `[{"model":"llama","messages":1,"unpriced_messages":1,"input_tokens":5,"output_tokens":5,"cached_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"cost_usd":"0"},` +
				`{"model":"sonnet-4","messages":2,"unpriced_messages":0,"input_tokens":1001000,"output_tokens":100000,"cached_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"cost_usd":"13.5"}]`},
			{ts.alice, "?by=day&since=2026-12-02", `[{"day":"2026-12-02","messages":2,"unpriced_messages":1,"input_tokens":1005,"output_tokens":5,"cached_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"cost_usd":"9"}]`},
			{ts.alice, "?by=day&until=2026-12-01T11:00:00Z", `[{"day":"2026-12-01","messages":1,"unpriced_messages":0,"input_tokens":1000000,"output_tokens":100000,"cached_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"cost_usd":"4.5"}]`},
			{ts.alice, "?by=tenant", `[{"tenant":"` + ts.aliceTenant + `","messages":3,"unpriced_messages":1,"input_tokens":1001005,"output_tokens":100005,"cached_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"cost_usd":"13.5"}]`},
			{ts.alice, "?by=conversation&limit=1", `[{"conversation":"a","tenant":"` + ts.aliceTenant + `","messages":3,"unpriced_messages":1,"input_tokens":1001005,"output_tokens":100005,"cached_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"cost_usd":"13.5"}]`},
			{ts.bob, "?by=tenant", `[{"tenant":"` + ts.bobTenant + `","messages":1,"unpriced_messages":0,"input_tokens":7,"output_tokens":7,"cached_tokens":0,"cache_write_tokens":0,"reasoning_tokens":0,"cost_usd":"0.000126"}]`},
			{ts.alice, "?since=2027-01-01", `[]`},
		} {
			if got := get(c.token, c.query); got != c.want {
				t.Errorf("%s:\n got %s\nwant %s", c.query, got, c.want)
			}
		}
		ts.do(t, "GET", "/convo/v1/usage?by=week", ts.alice, nil).problem(t, http.StatusBadRequest, "bad-request")
		ts.do(t, "GET", "/convo/v1/usage?since=yesterday", ts.alice, nil).problem(t, http.StatusBadRequest, "bad-request")
		ts.do(t, "GET", "/convo/v1/usage?limit=0", ts.alice, nil).problem(t, http.StatusBadRequest, "bad-request")
		ts.do(t, "GET", "/convo/v1/usage?since=2026-12-03&until=2026-12-01", ts.alice, nil).problem(t, http.StatusUnprocessableEntity, "invalid")
		ts.do(t, "GET", "/convo/v1/usage", "", nil).want(t, http.StatusUnauthorized)
	})
}
