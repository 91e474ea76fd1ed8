package gateway_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
)

// TestMetrics: /metrics serves, in Prometheus' text format and without a
// token, requests by route, protocol, upstream and status, the time to
// first byte, the upstream's latency, the recordings and the store's
// latency — and names no conversation, and no tenant or model outside
// the spend metrics (cost_test.go), which are by tenant and model.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	rg := newRig(t, "anthropic", func(o *gateway.Options) { o.Metrics = reg })
	h := convo.History{convo.User("Weather in Paris?")}
	for _, client := range []string{"anthropic", "openai-chat"} { // pass-through, translated
		resp := rg.post(t, client, "claude-test", requestBody(t, client, "claude-test", h, true), true, nil)
		if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != 200 {
			t.Fatal(resp.StatusCode, err)
		}
		resp.Body.Close()
	}
	req, _ := http.NewRequest("POST", rg.srv.URL+"/v1/messages", strings.NewReader(`{}`))
	resp, err := http.DefaultClient.Do(req) // no token
	if err != nil || resp.StatusCode != 401 {
		t.Fatal(resp.StatusCode, err)
	}
	resp.Body.Close()
	rg.drain(t)

	resp, err = http.Get(rg.srv.URL + "/metrics")
	if err != nil || resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	body := string(b)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q", ct)
	}
	for _, want := range []string{
		`convo_gateway_requests_total{code="200",protocol="anthropic",route="POST /v1/messages",upstream="up"} 1`,
		`convo_gateway_requests_total{code="200",protocol="openai-chat",route="POST /v1/chat/completions",upstream="up"} 1`,
		`convo_gateway_requests_total{code="401",protocol="anthropic",route="POST /v1/messages",upstream="none"} 1`,
		`convo_gateway_time_to_first_byte_seconds_count{route="POST /v1/messages",upstream="up"} 1`,
		`convo_gateway_time_to_first_byte_seconds_count{route="POST /v1/messages",upstream="none"} 1`,
		`convo_gateway_time_to_first_byte_seconds_count{route="POST /v1/chat/completions",upstream="up"} 1`,
		`convo_gateway_upstream_duration_seconds_count{outcome="ok",upstream="up"} 2`,
		`convo_gateway_recordings_total{outcome="written"} 2`,
		`convo_gateway_recordings_total{outcome="dropped"} 0`,
		`convo_gateway_recordings_total{outcome="failed"} 0`,
		`convo_gateway_recordings_queued 0`,
		`convo_gateway_recordings_queue_capacity 4096`,
		`convo_gateway_recordings_queued_bytes 0`,
		`convo_store_duration_seconds_count{op="batch",outcome="ok"} `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s\n%s", want, body)
		}
	}
	for _, line := range strings.Split(body, "\n") {
		spend := strings.HasPrefix(line, "convo_tokens_total{") || strings.HasPrefix(line, "convo_cost_usd_total{") ||
			strings.HasPrefix(line, "convo_unpriced_replies_total{")
		for _, secret := range []string{tenant, "claude-test", "conv_"} {
			if strings.Contains(line, secret) && (!spend || secret == "conv_") {
				t.Errorf("/metrics names %q: %s", secret, line)
			}
		}
	}
}

// TestNoMetrics: without a registry there is no /metrics route.
func TestNoMetrics(t *testing.T) {
	rg := newRig(t, "anthropic", nil)
	resp, err := http.Get(rg.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 && resp.StatusCode != 405 {
		t.Fatalf("GET /metrics without a registry: %d", resp.StatusCode)
	}
}
