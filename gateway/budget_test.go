package gateway_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/pricing"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/postgres"
	"github.com/convo-go/convo/store/storetest"
)

// replyCost is what one reply of the recorded Anthropic stream costs at
// budgetPrices: 472×3 + 89×15 per million.
const replyCost = convo.Money(2_751_000)

func budgetPricer(t testing.TB) *pricing.Pricer {
	prices, err := pricing.ParseTable([]byte(`{"claude-sonnet-4-5*": {"input": "3", "output": "15"}}`), "test")
	if err != nil {
		t.Fatal(err)
	}
	return pricing.New(prices.Lookup)
}

// waitRecorded waits until the gateway has recorded n exchanges.
func waitRecorded(t testing.TB, gw *gateway.Gateway, n int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); gw.Stats().Recorded < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d exchanges recorded, want %d", gw.Stats().Recorded, n)
		}
	}
}

func ask(t testing.TB, rg *rig, proto string) *http.Response {
	t.Helper()
	h := convo.History{convo.User("Weather in Paris?")}
	resp := rg.post(t, proto, "claude-sonnet-4-5", requestBody(t, proto, "claude-sonnet-4-5", h, true), true, nil)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// TestBudget: a tenant's requests go while its day's spend is under its
// budget; once the recorded replies' cost reaches it, each request is
// refused before the upstream with 429 in its own protocol and
// Retry-After to the end of the UTC day, and counted.
func TestBudget(t *testing.T) {
	reg := prometheus.NewRegistry()
	alice := tenant
	rg := newRig(t, "anthropic", func(o *gateway.Options) {
		o.Metrics, o.Pricer = reg, budgetPricer(t)
		o.Config.Budgets = []gateway.Budget{
			{Tenant: &alice, USD: 2*replyCost - 1, Period: "day"},
			{Tenant: &alice, USD: 100 * convo.Dollar, Period: "month"},
		}
	})
	for i := range 2 {
		if resp := ask(t, rg, "anthropic"); resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d under budget: %s", i, resp.Status)
		}
		waitRecorded(t, rg.gw, int64(i+1))
	}
	n, err := rg.st.(store.SpendKeeper).Spent(context.Background(), tenant, "tenant", time.Now(), time.Now().Add(24*time.Hour))
	if err != nil || n != 2*replyCost {
		t.Fatalf("spent %s (%v), want %s", n, err, 2*replyCost)
	}
	calls := rg.up.last.Load()
	shapes := map[string]string{
		"anthropic":        `"type":"rate_limit_error"`,
		"openai-chat":      `"type":"rate_limit_exceeded"`,
		"openai-responses": `"type":"rate_limit_exceeded"`,
		"gemini":           `"status":"RESOURCE_EXHAUSTED"`,
		"ollama":           `"error":"over budget`,
	}
	for proto, shape := range shapes {
		h := convo.History{convo.User("again")}
		resp := rg.post(t, proto, "claude-sonnet-4-5", requestBody(t, proto, "claude-sonnet-4-5", h, false), false, nil)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("%s over budget: %s %s", proto, resp.Status, body)
		}
		if !json.Valid(body) || !strings.Contains(string(body), shape) || !strings.Contains(string(body), `over budget: tenant \"alice\" has spent its daily budget`) {
			t.Errorf("%s: body %s, want %s", proto, body, shape)
		}
		secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		end := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
		if err != nil || secs < 1 || time.Duration(secs)*time.Second > time.Until(end)+2*time.Second {
			t.Errorf("%s: Retry-After %q, want the seconds to %s", proto, resp.Header.Get("Retry-After"), end)
		}
	}
	if rg.up.last.Load() != calls {
		t.Error("a request over budget reached the upstream")
	}
	mresp, err := http.Get(rg.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	if want := `convo_budget_refused_total{budget="tenant",period="day",tenant="alice"} 5`; !strings.Contains(string(b), want+"\n") {
		t.Errorf("/metrics lacks %s", want)
	}
}

// TestBudgetToken: a token's budget caps that token, not its tenant's
// other tokens.
func TestBudgetToken(t *testing.T) {
	sum := sha256.Sum256([]byte(token))
	rg := newRig(t, "anthropic", func(o *gateway.Options) {
		o.Pricer = budgetPricer(t)
		o.Tokens = map[string]string{token: tenant, "tok-other": tenant}
		o.Config.Budgets = []gateway.Budget{{TokenSHA256: hex.EncodeToString(sum[:]), USD: replyCost, Period: "month"}}
	})
	if resp := ask(t, rg, "anthropic"); resp.StatusCode != http.StatusOK {
		t.Fatal(resp.Status)
	}
	waitRecorded(t, rg.gw, 1)
	if resp := ask(t, rg, "anthropic"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("token over budget: %s", resp.Status)
	}
	h := convo.History{convo.User("other token")}
	resp := rg.post(t, "anthropic", "claude-sonnet-4-5", requestBody(t, "anthropic", "claude-sonnet-4-5", h, true), true,
		map[string]string{"X-Api-Key": "tok-other"})
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("another token of the tenant: %s", resp.Status)
	}
}

// TestBudgetRecordOff: a budgeted request that asks Convo-Record: off is
// still charged — recorded as metadata, its content left out — so that
// the header cannot lift a budget.
func TestBudgetRecordOff(t *testing.T) {
	alice := tenant
	rg := newRig(t, "anthropic", func(o *gateway.Options) {
		o.Pricer = budgetPricer(t)
		o.Config.Budgets = []gateway.Budget{{Tenant: &alice, USD: replyCost, Period: "day"}}
	})
	h := convo.History{convo.User("Weather in Paris?")}
	resp := rg.post(t, "anthropic", "claude-sonnet-4-5", requestBody(t, "anthropic", "claude-sonnet-4-5", h, true), true,
		map[string]string{"Convo-Record": "off"})
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatal(resp.Status)
	}
	conv := resp.Header.Get("Convo-Conversation")
	waitRecorded(t, rg.gw, 1)
	stored, _, err := rg.st.Load(context.Background(), tenant, conv, 0)
	if err != nil || len(stored) != 1 || len(stored[0].Parts) != 0 || stored[0].Cost == nil || stored[0].Cost.USD != replyCost {
		t.Fatalf("stored %+v (%v), want the reply's metadata and cost only", stored, err)
	}
	resp = rg.post(t, "anthropic", "claude-sonnet-4-5", requestBody(t, "anthropic", "claude-sonnet-4-5", h, true), true,
		map[string]string{"Convo-Record": "off"})
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("over budget with Convo-Record: off: %s", resp.Status)
	}
}

// TestBudgetConfig: a budget that cannot work is refused with its place.
func TestBudgetConfig(t *testing.T) {
	base := `{"upstreams":[{"name":"u","protocol":"anthropic","url":"http://127.0.0.1:1"}],"routes":[{"model":"*","upstream":"u"}],"budgets":[%s]}`
	for _, tt := range []struct{ budget, want string }{
		{`{"tenant":"a","usd":"5"}`, `budgets[0]: no period: want "day" or "month"`},
		{`{"tenant":"a","usd":"5","period":"week"}`, `budgets[0]: unknown period "week"`},
		{`{"tenant":"a","usd":"-5","period":"day"}`, `budgets[0]: negative usd -5`},
		{`{"tenant":"a","period":"day"}`, `budgets[0]: no usd`},
		{`{"tenant":"a","usd":"1e3","period":"day"}`, `budgets[0]: usd: amount "1e3"`},
		{`{"usd":"5","period":"day"}`, `budgets[0]: want one of tenant and token_sha256`},
		{`{"tenant":"a","token_sha256":"00","usd":"5","period":"day"}`, `budgets[0]: want one of tenant and token_sha256`},
		{`{"token_sha256":"abc","usd":"5","period":"day"}`, `budgets[0]: token_sha256: want the 64 hexadecimal digits`},
		{`{"tenant":"a","usd":5,"period":"day","cap":1}`, `budgets[0]: json: unknown field "cap"`},
		{`{"tenant":"a","usd":5,"period":"day"},{"tenant":"a","usd":"6","period":"day"}`, `budgets[1]: a second day budget for tenant "a"`},
		{`{"tenant":"a","usd":12.5,"period":"day"}`, ``},
	} {
		c, err := gateway.ParseConfig(strings.NewReader(strings.Replace(base, "%s", tt.budget, 1)))
		if err == nil {
			err = c.Validate()
		}
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.budget, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s: error %v, want %q", tt.budget, err, tt.want)
		case tt.want == "" && c.Budgets[0].USD != 12*convo.Dollar+convo.Dollar/2:
			t.Errorf("usd %s, want 12.5", c.Budgets[0].USD)
		}
	}
	// A token budget names a gateway token.
	sum := sha256.Sum256([]byte("not a token"))
	_, err := gateway.New(gateway.Options{Store: newRig(t, "anthropic", nil).st, Tokens: map[string]string{token: tenant},
		Config: gateway.Config{Upstreams: []gateway.Upstream{{Name: "u", Protocol: "anthropic", URL: "http://127.0.0.1:1"}},
			Routes: []gateway.Route{{Model: "*", Upstream: "u"}}, Budgets: []gateway.Budget{{TokenSHA256: hex.EncodeToString(sum[:]), USD: 1, Period: "day"}}}})
	if err == nil || !strings.Contains(err.Error(), "is the hash of no gateway token") {
		t.Errorf("a budget of no token: %v", err)
	}
}

// TestBudgetTwoGateways: two gateways on one PostgreSQL share a tenant's
// budget. Clients of both race at the limit; the replies past it are at
// most the requests in flight when the spend reached it (a request waits
// for its tenant's recordings queued on its gateway before it is checked):
// one per client. The overspend measured is logged.
func TestBudgetTwoGateways(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	alice := tenant
	const replies, clients = 20, 8 // the budget buys 20 replies; 8 clients on each gateway
	var rigs [2]*rig
	var stores [2]store.Store
	for i := range rigs {
		st, err := postgres.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		stores[i] = st
		rigs[i] = newRig(t, "anthropic", func(o *gateway.Options) {
			o.Store, o.Pricer = st, budgetPricer(t)
			o.Config.Budgets = []gateway.Budget{{Tenant: &alice, USD: replies * replyCost, Period: "day"}}
		})
	}
	var ok, refused atomic.Int64
	var wg sync.WaitGroup
	for c := range 2 * clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				resp := ask(t, rigs[c%2], "anthropic")
				if resp.StatusCode == http.StatusTooManyRequests {
					refused.Add(1)
					return
				}
				if resp.StatusCode != http.StatusOK {
					t.Errorf("%s", resp.Status)
					return
				}
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	for _, rg := range rigs {
		rg.drain(t)
	}
	spent, err := stores[1].(store.SpendKeeper).Spent(context.Background(), tenant, "tenant", time.Now(), time.Now().Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if spent != convo.Money(ok.Load())*replyCost {
		t.Errorf("spent %s for %d replies of %s", spent, ok.Load(), replyCost)
	}
	over := ok.Load() - replies
	t.Logf("%d clients on 2 gateways: %d replies for a budget of %d (overspend %d replies, $%s)", 2*clients, ok.Load(), replies, over, convo.Money(max(over, 0))*replyCost)
	if over < 0 || over > 2*clients {
		t.Errorf("%d replies for a budget of %d with %d clients: overspend past the bound of %d", ok.Load(), replies, 2*clients, 2*clients)
	}
}

// failingSpend is a store whose spend cannot be read.
type failingSpend struct{ store.Store }

func (failingSpend) Spent(context.Context, string, string, time.Time, time.Time) (convo.Money, error) {
	return 0, store.ErrUnavailable
}

// TestBudgetStoreDown: a budget the store cannot answer about lets the
// request go (the gateway serves while its store is away), counted.
func TestBudgetStoreDown(t *testing.T) {
	reg := prometheus.NewRegistry()
	alice := tenant
	rg := newRig(t, "anthropic", func(o *gateway.Options) {
		o.Store, o.Metrics = failingSpend{o.Store}, reg
		o.Config.Budgets = []gateway.Budget{{Tenant: &alice, USD: 0, Period: "day"}}
	})
	if resp := ask(t, rg, "anthropic"); resp.StatusCode != http.StatusOK {
		t.Fatalf("unchecked request: %s", resp.Status)
	}
	mresp, err := http.Get(rg.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	if want := "convo_budget_check_errors_total 1\n"; !strings.Contains(string(b), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}
