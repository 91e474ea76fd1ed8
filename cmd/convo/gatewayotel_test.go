package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/convo-go/convo/gateway"
)

// TestGatewayOTLP: with --otlp, convo gateway exports a span per exchange
// over OTLP/HTTP, flushed before it exits; messages only with --otel-content.
func TestGatewayOTLP(t *testing.T) {
	up, _ := anthropicUpstream(t)
	var mu sync.Mutex
	var got []*collectortrace.ExportTraceServiceRequest
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if r.URL.Path != "/v1/traces" || proto.Unmarshal(b, &req) != nil {
			w.WriteHeader(400)
			return
		}
		mu.Lock()
		got = append(got, &req)
		mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	defer recv.Close()

	addrc := make(chan string, 1)
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: &syncBuffer{}, getenv: func(string) string { return "" }}
	cfg := gatewayConfig{addr: "127.0.0.1:0", db: filepath.Join(t.TempDir(), "convo.db"), ready: func(a string) { addrc <- a },
		otlp: recv.URL + "/v1/traces", otelContent: true}
	cfg.opts.Config.Upstreams = []gateway.Upstream{{Name: "a", Protocol: "anthropic", URL: up.URL}}
	cfg.opts.Config.Routes = []gateway.Route{{Model: "*", Upstream: "a"}}
	cfg.opts.Anonymous, cfg.tokenFrom = true, "none"
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- runGatewayServer(ctx, e, cfg) }()
	resp, err := http.Post("http://"+<-addrc+"/v1/messages", "application/json",
		strings.NewReader(`{"model":"claude-x","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"Weather?"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	stop()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var names []string
	var input string
	for _, req := range got {
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					names = append(names, sp.Name)
					for _, kv := range sp.Attributes {
						if kv.Key == "gen_ai.input.messages" {
							input = kv.Value.GetStringValue()
						}
					}
				}
			}
		}
	}
	if len(names) != 1 || names[0] != "chat claude-x" || !strings.Contains(input, "Weather?") {
		t.Errorf("exported spans %v, input messages %q", names, input)
	}
}
