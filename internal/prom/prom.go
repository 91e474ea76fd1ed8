// Package prom holds the Prometheus plumbing convo serve and convo
// gateway share: the histogram of store call times, the store wrapper that
// fills it, and the /metrics handler. Each command registers its own
// request metrics beside these.
package prom

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// NewRegistry returns a registry holding the Go runtime's and the
// process's collectors, for a command to add its own metrics to.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// NewStoreDuration returns convo_store_duration_seconds, the time of a
// store call by operation and outcome, unregistered.
func NewStoreDuration() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "convo_store_duration_seconds",
		Help:    "Time of a store call, by operation and outcome (ok, or error).",
		Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10), // 0.1 ms … 26 s
	}, []string{"op", "outcome"})
}

// Register registers every collector with reg, stopping at the first error.
func Register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Handler serves what reg gathers, in the Prometheus text format. The
// commands serve it without a token, like /healthz: labels hold routes,
// protocols, upstream names and codes, never a tenant, an id or a path.
func Handler(reg prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// Store times every call of the store it wraps in H (a histogram of
// NewStoreDuration's labels).
type Store struct {
	store.Store
	H *prometheus.HistogramVec
}

func (t Store) done(op string, start time.Time, err error) {
	outcome := "ok"
	if err != nil {
		outcome = "error"
	}
	t.H.WithLabelValues(op, outcome).Observe(time.Since(start).Seconds())
}

// Create times store.Store.Create.
func (t Store) Create(ctx context.Context, c store.Conversation, msgs ...convo.Message) (out store.Conversation, err error) {
	defer func(start time.Time) { t.done("create", start, err) }(time.Now())
	return t.Store.Create(ctx, c, msgs...)
}

// Get times store.Store.Get.
func (t Store) Get(ctx context.Context, tenant, id string) (out store.Conversation, err error) {
	defer func(start time.Time) { t.done("get", start, err) }(time.Now())
	return t.Store.Get(ctx, tenant, id)
}

// Update times store.Store.Update.
func (t Store) Update(ctx context.Context, tenant, id string, title *string, meta json.RawMessage) (out store.Conversation, err error) {
	defer func(start time.Time) { t.done("update", start, err) }(time.Now())
	return t.Store.Update(ctx, tenant, id, title, meta)
}

// Append times store.Store.Append.
func (t Store) Append(ctx context.Context, tenant, id string, version int64, msgs ...convo.Message) (out store.Conversation, err error) {
	defer func(start time.Time) { t.done("append", start, err) }(time.Now())
	return t.Store.Append(ctx, tenant, id, version, msgs...)
}

// Load times store.Store.Load.
func (t Store) Load(ctx context.Context, tenant, id string, from int) (h convo.History, c store.Conversation, err error) {
	defer func(start time.Time) { t.done("load", start, err) }(time.Now())
	return t.Store.Load(ctx, tenant, id, from)
}

// LoadRange times store.Store.LoadRange.
func (t Store) LoadRange(ctx context.Context, tenant, id string, from, n int) (h convo.History, c store.Conversation, err error) {
	defer func(start time.Time) { t.done("load_range", start, err) }(time.Now())
	return t.Store.LoadRange(ctx, tenant, id, from, n)
}

// Message times store.Store.Message.
func (t Store) Message(ctx context.Context, tenant, id, messageID string) (m convo.Message, err error) {
	defer func(start time.Time) { t.done("message", start, err) }(time.Now())
	return t.Store.Message(ctx, tenant, id, messageID)
}

// DeleteMessage times store.Store.DeleteMessage.
func (t Store) DeleteMessage(ctx context.Context, tenant, id string, version int64, messageID string) (out store.Conversation, err error) {
	defer func(start time.Time) { t.done("delete_message", start, err) }(time.Now())
	return t.Store.DeleteMessage(ctx, tenant, id, version, messageID)
}

// Fork times store.Store.Fork.
func (t Store) Fork(ctx context.Context, tenant, id string, at int, c store.Conversation) (out store.Conversation, err error) {
	defer func(start time.Time) { t.done("fork", start, err) }(time.Now())
	return t.Store.Fork(ctx, tenant, id, at, c)
}

// List times store.Store.List.
func (t Store) List(ctx context.Context, tenant string, opts store.ListOptions) (cs []store.Conversation, next string, err error) {
	defer func(start time.Time) { t.done("list", start, err) }(time.Now())
	return t.Store.List(ctx, tenant, opts)
}

// Delete times store.Store.Delete.
func (t Store) Delete(ctx context.Context, tenant, id string) (err error) {
	defer func(start time.Time) { t.done("delete", start, err) }(time.Now())
	return t.Store.Delete(ctx, tenant, id)
}

// Search times store.Store.Search.
func (t Store) Search(ctx context.Context, tenant, query string, opts store.SearchOptions) (hits []store.Hit, next string, err error) {
	defer func(start time.Time) { t.done("search", start, err) }(time.Now())
	return t.Store.Search(ctx, tenant, query, opts)
}

// Batch times store.Store.Batch; its outcome is an error when any write
// failed.
func (t Store) Batch(ctx context.Context, writes []store.Write) []store.WriteResult {
	start := time.Now()
	res := t.Store.Batch(ctx, writes)
	var err error
	for _, r := range res {
		if r.Err != nil {
			err = r.Err
			break
		}
	}
	t.done("batch", start, err)
	return res
}
