package gateway

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/pricing"
)

// spend prices the replies the gateway records and counts their tokens and
// cost for /metrics. A nil *spend prices nothing and counts nothing.
type spend struct {
	pricer *pricing.Pricer

	mu   sync.Mutex
	byTM map[tenantModel]*spent // nil without metrics
}

// tenantModel labels what a tenant spent on a model.
type tenantModel struct{ tenant, model string }

// spent adds up exactly (integers), converted to the floats Prometheus
// wants only when scraped.
type spent struct {
	input, output, cacheRead, cacheWrite, reasoning int64
	cost                                            convo.Money
	unpriced                                        int64
}

// maxSpendSeries bounds the label sets of the spend metrics: models come
// from upstream replies, so a tenant's models are not known in advance.
// Past the bound, new pairs are counted under model "other".
const maxSpendSeries = 4096

// price returns reply with its cost filled in, when the reply has usage,
// no cost yet and a known price, and counts its tokens and cost. The
// reply itself is not modified.
func (s *spend) price(tenant string, reply *convo.Message) *convo.Message {
	if s == nil || reply == nil || reply.Role != convo.RoleAssistant || reply.Usage == nil {
		return reply
	}
	if reply.Cost == nil {
		if c, ok := s.pricer.Cost(*reply); ok {
			m := *reply
			m.Cost = &c
			reply = &m
		}
	}
	s.count(tenant, reply)
	return reply
}

func (s *spend) count(tenant string, m *convo.Message) {
	if s.byTM == nil {
		return
	}
	model := ""
	if m.Origin != nil {
		model = m.Origin.Model
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := tenantModel{tenant, model}
	sp := s.byTM[k]
	if sp == nil {
		if len(s.byTM) >= maxSpendSeries {
			k.model = "other"
			sp = s.byTM[k]
		}
		if sp == nil {
			sp = &spent{}
			s.byTM[k] = sp
		}
	}
	u := m.Usage
	sp.input += u.Input
	sp.output += u.Output
	sp.cacheRead += u.CacheRead
	sp.cacheWrite += u.CacheWrite
	sp.reasoning += u.Reasoning
	if m.Cost != nil {
		sp.cost += m.Cost.USD
	} else {
		sp.unpriced++
	}
}

var (
	tokensDesc = prometheus.NewDesc("convo_tokens_total",
		"Tokens of the replies recorded, by tenant, model (the reply's) and kind: input (every input token, cached ones included), output (reasoning included), cache_read, cache_write, reasoning.",
		[]string{"tenant", "model", "kind"}, nil)
	costDesc = prometheus.NewDesc("convo_cost_usd_total",
		"What the priced replies recorded cost, in US dollars, by tenant and model (summed exactly in nano-dollars).",
		[]string{"tenant", "model"}, nil)
	unpricedDesc = prometheus.NewDesc("convo_unpriced_replies_total",
		"Replies recorded with usage but no known price for their model (their cost is unknown, not counted in convo_cost_usd_total), by tenant and model.",
		[]string{"tenant", "model"}, nil)
)

// Describe implements prometheus.Collector.
func (s *spend) Describe(ch chan<- *prometheus.Desc) {
	ch <- tokensDesc
	ch <- costDesc
	ch <- unpricedDesc
}

// Collect implements prometheus.Collector.
func (s *spend) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, sp := range s.byTM {
		for _, kind := range []struct {
			name string
			n    int64
		}{{"input", sp.input}, {"output", sp.output}, {"cache_read", sp.cacheRead}, {"cache_write", sp.cacheWrite}, {"reasoning", sp.reasoning}} {
			ch <- prometheus.MustNewConstMetric(tokensDesc, prometheus.CounterValue, float64(kind.n), k.tenant, k.model, kind.name)
		}
		ch <- prometheus.MustNewConstMetric(costDesc, prometheus.CounterValue, float64(sp.cost)/float64(convo.Dollar), k.tenant, k.model)
		ch <- prometheus.MustNewConstMetric(unpricedDesc, prometheus.CounterValue, float64(sp.unpriced), k.tenant, k.model)
	}
}

// newSpend prices with opts.Pricer and, when the gateway has metrics,
// registers the spend metrics.
func newSpend(opts Options) (*spend, error) {
	s := &spend{pricer: opts.Pricer}
	if opts.Metrics != nil {
		s.byTM = map[tenantModel]*spent{}
		if err := opts.Metrics.Register(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}
