package server

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convo-go/convo/internal/prom"
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
		store: prom.NewStoreDuration(),
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
	if err := prom.Register(reg, m.requests, m.latency, m.store, inflight, budget); err != nil {
		return nil, err
	}
	// Served without a token, like /healthz: the labels hold routes and
	// codes, never a tenant, an id or a path.
	s.mux.Handle(metricsRoute, prom.Handler(reg))
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
