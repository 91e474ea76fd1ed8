package gateway_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/pricing"
)

// TestCost: each recorded reply carries its cost, priced from its usage
// and model when recorded; /metrics counts its tokens by kind and its cost
// by tenant and model; a reply whose model has no price is recorded
// without a cost (unknown, not zero) and counted as unpriced.
func TestCost(t *testing.T) {
	prices, err := pricing.ParseTable([]byte(`{"claude-sonnet-4-5*": {"input": "3", "output": "15"}}`), "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		pricer  *pricing.Pricer
		cost    string // "" for unknown
		metrics []string
	}{
		{"priced", pricing.New(prices.Lookup), "0.002751", []string{ // 472×3 + 89×15 per million
			`convo_tokens_total{kind="input",model="claude-sonnet-4-5-20250929",tenant="alice"} 472`,
			`convo_tokens_total{kind="output",model="claude-sonnet-4-5-20250929",tenant="alice"} 89`,
			`convo_tokens_total{kind="cache_read",model="claude-sonnet-4-5-20250929",tenant="alice"} 0`,
			`convo_cost_usd_total{model="claude-sonnet-4-5-20250929",tenant="alice"} 0.002751`,
			`convo_unpriced_replies_total{model="claude-sonnet-4-5-20250929",tenant="alice"} 0`,
		}},
		{"unpriced", pricing.New(), "", []string{
			`convo_tokens_total{kind="input",model="claude-sonnet-4-5-20250929",tenant="alice"} 472`,
			`convo_cost_usd_total{model="claude-sonnet-4-5-20250929",tenant="alice"} 0`,
			`convo_unpriced_replies_total{model="claude-sonnet-4-5-20250929",tenant="alice"} 1`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			rg := newRig(t, "anthropic", func(o *gateway.Options) { o.Metrics, o.Pricer = reg, tt.pricer })
			h := convo.History{convo.User("Weather in Paris?")}
			resp := rg.post(t, "anthropic", "claude-sonnet-4-5", requestBody(t, "anthropic", "claude-sonnet-4-5", h, true), true, nil)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			conv := resp.Header.Get("Convo-Conversation")
			rg.drain(t)
			got, _, err := rg.st.Load(context.Background(), tenant, conv, 0)
			if err != nil {
				t.Fatal(err)
			}
			reply := got[len(got)-1]
			if reply.Role != convo.RoleAssistant || reply.Usage == nil {
				t.Fatalf("last message %s, usage %v", reply.Role, reply.Usage)
			}
			switch {
			case tt.cost == "" && reply.Cost != nil:
				t.Errorf("unpriced reply recorded with cost %s", reply.Cost.USD)
			case tt.cost != "" && (reply.Cost == nil || reply.Cost.USD.String() != tt.cost):
				t.Errorf("cost %+v, want %s", reply.Cost, tt.cost)
			}
			mresp, err := http.Get(rg.srv.URL + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(mresp.Body)
			mresp.Body.Close()
			for _, want := range tt.metrics {
				if !strings.Contains(string(b), want+"\n") {
					t.Errorf("/metrics lacks %s", want)
				}
			}
			if strings.Contains(string(b), conv) {
				t.Error("/metrics names a conversation")
			}
		})
	}
}
