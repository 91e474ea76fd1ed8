package server

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// metricsRoute serves the metrics when Options.Metrics is set; it is not
// among routes because it is optional and public.
const metricsRoute = "GET /metrics"

// metrics are the server's Prometheus metrics. A nil *metrics records
// nothing.
type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	store    *prometheus.HistogramVec
}

// newMetrics registers the server's metrics with reg and serves what reg
// gathers at GET /metrics on mux.
func (s *Server) newMetrics(reg *prometheus.Registry) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "convo_http_requests_total",
			Help: "HTTP requests answered, by route (the pattern that served it), method and status code.",
		}, []string{"route", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "convo_http_request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its answer, by route and method.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10), // 0.5 ms … 131 s
		}, []string{"route", "method"}),
		store: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "convo_store_duration_seconds",
			Help:    "Time of a store call, by operation and outcome (ok, or error).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10), // 0.1 ms … 26 s
		}, []string{"op", "outcome"}),
	}
	inflight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "convo_http_inflight_body_bytes",
		Help: "Bytes of request bodies held now, of the budget convo_http_inflight_body_bytes_max.",
	}, func() float64 { return float64(s.inflight.Load()) })
	budget := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "convo_http_inflight_body_bytes_max",
		Help: "The budget of request body bytes held at once (Options.MaxInflightBytes).",
	})
	budget.Set(float64(s.opts.MaxInflightBytes))
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.store, inflight, budget} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	// Served without a token, like /healthz: the labels hold routes and
	// codes, never a tenant, an id or a path.
	s.mux.Handle(metricsRoute, promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: nil}))
	return m, nil
}

// request records one answered request. route is empty for requests the
// mux never reached (a refused body of an unknown route, say).
func (m *metrics) request(route, method string, code int, took time.Duration) {
	if m == nil {
		return
	}
	if route == "" {
		route = "none"
	}
	if !knownMethod(method) {
		method = "other" // the label's values stay few whatever clients send
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(route, method).Observe(took.Seconds())
}

func knownMethod(m string) bool {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return true
	}
	return false
}

// timedStore times every call of the store it wraps.
type timedStore struct {
	store.Store
	h *prometheus.HistogramVec
}

func (t timedStore) done(op string, start time.Time, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	t.h.WithLabelValues(op, outcome).Observe(time.Since(start).Seconds())
}

func (t timedStore) Create(ctx context.Context, c store.Conversation, msgs ...convo.Message) (out store.Conversation, err error) {
	defer func(start time.Time) { t.done("create", start, err) }(time.Now())
	return t.Store.Create(ctx, c, msgs...)
}

func (t timedStore) Get(ctx context.Context, tenant, id string) (out store.Conversation, err error) {
	defer func(start time.Time) { t.done("get", start, err) }(time.Now())
	return t.Store.Get(ctx, tenant, id)
}

func (t timedStore) Update(ctx context.Context, tenant, id string, title *string, meta json.RawMessage) (out store.Conversation, err error) {
	defer func(start time.Time) { t.done("update", start, err) }(time.Now())
	return t.Store.Update(ctx, tenant, id, title, meta)
}

func (t timedStore) Append(ctx context.Context, tenant, id string, version int64, msgs ...convo.Message) (out store.Conversation, err error) {
	defer func(start time.Time) { t.done("append", start, err) }(time.Now())
	return t.Store.Append(ctx, tenant, id, version, msgs...)
}

func (t timedStore) Load(ctx context.Context, tenant, id string, from int) (h convo.History, c store.Conversation, err error) {
	defer func(start time.Time) { t.done("load", start, err) }(time.Now())
	return t.Store.Load(ctx, tenant, id, from)
}

func (t timedStore) LoadRange(ctx context.Context, tenant, id string, from, n int) (h convo.History, c store.Conversation, err error) {
	defer func(start time.Time) { t.done("load_range", start, err) }(time.Now())
	return t.Store.LoadRange(ctx, tenant, id, from, n)
}

func (t timedStore) Message(ctx context.Context, tenant, id, messageID string) (m convo.Message, err error) {
	defer func(start time.Time) { t.done("message", start, err) }(time.Now())
	return t.Store.Message(ctx, tenant, id, messageID)
}

func (t timedStore) DeleteMessage(ctx context.Context, tenant, id string, version int64, messageID string) (out store.Conversation, err error) {
	defer func(start time.Time) { t.done("delete_message", start, err) }(time.Now())
	return t.Store.DeleteMessage(ctx, tenant, id, version, messageID)
}

func (t timedStore) Fork(ctx context.Context, tenant, id string, at int, c store.Conversation) (out store.Conversation, err error) {
	defer func(start time.Time) { t.done("fork", start, err) }(time.Now())
	return t.Store.Fork(ctx, tenant, id, at, c)
}

func (t timedStore) List(ctx context.Context, tenant string, opts store.ListOptions) (cs []store.Conversation, next string, err error) {
	defer func(start time.Time) { t.done("list", start, err) }(time.Now())
	return t.Store.List(ctx, tenant, opts)
}

func (t timedStore) Delete(ctx context.Context, tenant, id string) (err error) {
	defer func(start time.Time) { t.done("delete", start, err) }(time.Now())
	return t.Store.Delete(ctx, tenant, id)
}

func (t timedStore) Search(ctx context.Context, tenant, query string, opts store.SearchOptions) (hits []store.Hit, next string, err error) {
	defer func(start time.Time) { t.done("search", start, err) }(time.Now())
	return t.Store.Search(ctx, tenant, query, opts)
}
