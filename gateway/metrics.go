package gateway

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convo-go/convo/internal/prom"
)

// metrics are the gateway's Prometheus metrics. A nil *metrics records
// nothing.
type metrics struct {
	requests *prometheus.CounterVec
	ttfb     *prometheus.HistogramVec
	upstream *prometheus.HistogramVec
	store    *prometheus.HistogramVec
}

// latencyBuckets span 0.5 ms to 131 s, as convo serve's request latency.
var latencyBuckets = prometheus.ExponentialBuckets(0.0005, 4, 10)

// newMetrics registers the gateway's metrics with reg and serves what reg
// gathers at GET /metrics, without a token (as convo serve does): the
// labels hold routes, protocols, upstream names and codes, never a tenant,
// a model or a conversation (only the spend metrics, cost.go, are by
// tenant and model).
func (g *Gateway) newMetrics(reg *prometheus.Registry) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "convo_gateway_requests_total",
			Help: "Client requests answered, by route (the endpoint's pattern), client protocol, upstream (none: not routed) and status code.",
		}, []string{"route", "protocol", "upstream", "code"}),
		ttfb: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "convo_gateway_time_to_first_byte_seconds",
			Help:    "Time from a client request's arrival to the first byte of its answer, by route and upstream.",
			Buckets: latencyBuckets,
		}, []string{"route", "upstream"}),
		upstream: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "convo_gateway_upstream_duration_seconds",
			Help:    "Time from sending a request upstream to the end of its reply (or its failure), by upstream and outcome (ok, error: an error status, a transport failure or a stream cut).",
			Buckets: latencyBuckets,
		}, []string{"upstream", "outcome"}),
		store: prom.NewStoreDuration(),
	}
	rc := g.rec
	queued := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "convo_gateway_recordings_queued",
		Help: "Exchanges answered and waiting to be recorded, of the queue's capacity convo_gateway_recordings_queue_capacity.",
	}, func() float64 { return float64(len(rc.q)) })
	capacity := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "convo_gateway_recordings_queue_capacity",
		Help: "The size of the recording queue (Options.QueueSize).",
	})
	capacity.Set(float64(cap(rc.q)))
	queuedBytes := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "convo_gateway_recordings_queued_bytes",
		Help: "The memory the exchanges waiting to be recorded hold, estimated, of Options.QueueBytes.",
	}, func() float64 {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		return float64(rc.bytes)
	})
	cs := []prometheus.Collector{m.requests, m.ttfb, m.upstream, m.store, queued, capacity, queuedBytes}
	for outcome, n := range map[string]func() int64{"written": rc.recorded.Load, "dropped": rc.dropped.Load, "failed": rc.failed.Load} {
		cs = append(cs, prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "convo_gateway_recordings_total",
			Help:        "Exchanges recorded, by outcome: written to the store, dropped (the queue full without a spool, the spool full, or the gateway closing), failed (the store refused them).",
			ConstLabels: prometheus.Labels{"outcome": outcome},
		}, func() float64 { return float64(n()) }))
	}
	cs = append(cs, rc.spoolMetrics()...)
	if err := prom.Register(reg, cs...); err != nil {
		return nil, err
	}
	g.mux.Handle("GET /metrics", prom.Handler(reg))
	return m, nil
}

// meteredWriter notes what the metrics want of an answer: its status and
// when its first byte went out.
type meteredWriter struct {
	http.ResponseWriter
	status int
	first  time.Time
}

func (w *meteredWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *meteredWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.first.IsZero() {
		w.first = time.Now()
	}
	return w.ResponseWriter.Write(b)
}

// Flush passes flushes on: streams are flushed event by event.
func (w *meteredWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *meteredWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// metered wraps the handler of a client endpoint.
func (g *Gateway) metered(route, protocol string, h func(http.ResponseWriter, *http.Request, *exchange)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		x := &exchange{start: time.Now()}
		if g.metrics == nil {
			h(w, r, x)
			return
		}
		mw := &meteredWriter{ResponseWriter: w}
		h(mw, r, x)
		end := time.Now()
		m, up := g.metrics, "none"
		if x.up != nil {
			up = x.up.Name
		}
		if mw.status == 0 {
			mw.status = http.StatusOK
		}
		m.requests.WithLabelValues(route, protocol, up, strconv.Itoa(mw.status)).Inc()
		if !mw.first.IsZero() {
			m.ttfb.WithLabelValues(route, up).Observe(mw.first.Sub(x.start).Seconds())
		}
		if !x.upStart.IsZero() {
			// The exchange's record says whether the upstream failed (the
			// writer only reads it).
			outcome := "ok"
			if x.rec != nil && x.rec.fail != "" {
				outcome = "error"
			}
			m.upstream.WithLabelValues(up, outcome).Observe(end.Sub(x.upStart).Seconds())
		}
	}
}

// spoolMetrics are the metrics of the spool and the store's health (zero
// without a spool).
func (rc *recorder) spoolMetrics() []prometheus.Collector {
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	counter := func(name, help string, f func() int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(f()) })
	}
	// Read when gathered: the spool opens after the metrics are made.
	spooled := func() int64 {
		if rc.dur == nil {
			return 0
		}
		return rc.dur.spooled.Load()
	}
	retried := func() int64 {
		if rc.dur == nil {
			return 0
		}
		return rc.dur.retried.Load()
	}
	return []prometheus.Collector{
		gauge("convo_gateway_spool_exchanges", "Exchanges in the spool, waiting to be written to the store.",
			func() float64 { return float64(rc.spoolStats().Frames) }),
		gauge("convo_gateway_spool_bytes", "The spool's files' bytes, of --spool-max-bytes.",
			func() float64 { return float64(rc.spoolStats().Bytes) }),
		gauge("convo_gateway_spool_oldest_age_seconds", "How long the oldest exchange in the spool has waited for the store (0: none waits).",
			func() float64 {
				if t := rc.spoolStats().Oldest; !t.IsZero() {
					return time.Since(t).Seconds()
				}
				return 0
			}),
		gauge("convo_gateway_store_failing", "1 while the store fails the recorder's writes (since the last failure, until a write succeeds), else 0.",
			func() float64 {
				rc.health.mu.Lock()
				defer rc.health.mu.Unlock()
				if rc.health.err != "" {
					return 1
				}
				return 0
			}),
		counter("convo_gateway_recordings_spooled_total", "Exchanges written to the spool because the store failed or fell behind (each counted written once replayed).", spooled),
		counter("convo_gateway_recordings_retried_total", "Spooled exchanges whose write to the store failed and was tried again.", retried),
	}
}
