package server_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convo-go/convo/server"
)

// TestMetrics: /metrics serves, in Prometheus' text format and without a
// token, requests by route and status, their latency, the store's latency
// and the bytes of bodies in flight.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	ts := newServer(t, backends(t)[0].open(t), func(o *server.Options) { o.Metrics = reg })
	c := ts.create(t, ts.alice, "")
	ts.do(t, "GET", "/convo/v1/conversations/"+c.ID, ts.alice, nil).want(t, 200)
	ts.do(t, "GET", "/convo/v1/conversations/nope", ts.alice, nil).want(t, 404)
	ts.do(t, "GET", "/convo/v1/conversations/nope", "", nil).want(t, 401)
	res := ts.do(t, "GET", "/metrics", "", nil).want(t, 200)
	if ct := res.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q", ct)
	}
	body := string(res.body)
	for _, want := range []string{
		`convo_http_requests_total{code="201",method="POST",route="POST /convo/v1/conversations"} 1`,
		`convo_http_requests_total{code="200",method="GET",route="GET /convo/v1/conversations/{id}"} 1`,
		`convo_http_requests_total{code="404",method="GET",route="GET /convo/v1/conversations/{id}"} 1`,
		`convo_http_requests_total{code="401",method="GET",route="GET /convo/v1/conversations/{id}"} 1`,
		`convo_http_request_duration_seconds_bucket{method="GET",route="GET /convo/v1/conversations/{id}",le="+Inf"} 3`,
		`convo_store_duration_seconds_count{op="create",outcome="ok"} 1`,
		`convo_store_duration_seconds_count{op="get",outcome="error"} 1`,
		`convo_http_inflight_body_bytes 0`,
		`convo_http_inflight_body_bytes_max 1.34217728e+08`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s\n%s", want, body)
		}
	}
	if strings.Contains(body, ts.aliceTenant) || strings.Contains(body, c.ID) {
		t.Error("/metrics names a tenant or a conversation")
	}
}

// TestNoMetrics: without a registry there is no /metrics route.
func TestNoMetrics(t *testing.T) {
	ts := newServer(t, backends(t)[0].open(t), nil)
	ts.do(t, "GET", "/metrics", ts.alice, nil).want(t, 404)
}
