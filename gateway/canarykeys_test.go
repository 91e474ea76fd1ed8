package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/telemetry"
)

// TestClientKeysNeverKept: clients keeping their own provider keys, one
// canary key for OpenAI and one for Anthropic, through two upstreams
// without keys of their own (and one that quotes the key it refuses, and
// one that is down), without gateway tokens and with them in Convo-Token.
// Each key reaches only the upstream of its provider, in that upstream's
// header; then the logs, /metrics, the spans (content captured) and
// everything the store wrote — the SQLite files with the WAL, or every
// PostgreSQL row — are searched for the keys.
func TestClientKeysNeverKept(t *testing.T) {
	for _, tokens := range []bool{false, true} {
		name := map[bool]string{false: "anonymous", true: "convo-token"}[tokens]
		t.Run(name+"/sqlite", func(t *testing.T) {
			st, dump := sqliteDump(t)
			clientKeysNeverKept(t, st, dump, tokens)
		})
		t.Run(name+"/postgres", func(t *testing.T) {
			st, dump := postgresDump(t)
			clientKeysNeverKept(t, st, dump, tokens)
		})
	}
}

const (
	canaryOpenAI    = "sk-proj-CANARY-oa-91c4e7"
	canaryAnthropic = "sk-ant-CANARY-an-2d7e05"
)

// keyCase is one request of clientKeysNeverKept and what it must come to.
type keyCase struct {
	client, model string
	key           string // the client's own key, where its SDK sends it
	code          int
	at            string // the fake that must get it ("" none)
}

func clientKeysNeverKept(t *testing.T, st store.Store, dump dumpFunc, tokens bool) {
	defer st.Close()
	fakes := map[string]*fakeUpstream{"a": newFake(t, "openai-chat"), "b": newFake(t, "anthropic")}
	quoting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		fmt.Fprintf(w, `{"error":{"message":"Incorrect API key provided: %s.","type":"invalid_request_error"}}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}))
	defer quoting.Close()
	var logs bytes.Buffer
	spans := tracetest.NewSpanRecorder()
	reg := prometheus.NewRegistry()
	opts := gateway.Options{
		Config: gateway.Config{
			Upstreams: []gateway.Upstream{
				{Name: "a", Protocol: "openai-chat", URL: fakes["a"].URL + "/v1", KeyEnv: "A_KEY"},
				{Name: "b", Protocol: "anthropic", URL: fakes["b"].URL, KeyEnv: "B_KEY"},
				{Name: "quoting", Protocol: "openai-chat", URL: quoting.URL + "/v1"},
				{Name: "down", Protocol: "openai-chat", URL: "http://127.0.0.1:1/v1"},
			},
			Routes: []gateway.Route{{Model: "a-*", Upstream: "a"}, {Model: "b-*", Upstream: "b"}, {Model: "q-*", Upstream: "quoting"}, {Model: "down-*", Upstream: "down"}},
		},
		Store:     st,
		Anonymous: !tokens,
		Getenv:    func(string) string { return "" },
		Logger:    slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Metrics:   reg,
		Telemetry: telemetry.New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)), telemetry.Options{CaptureContent: true}),
	}
	if tokens {
		opts.Tokens = map[string]string{token: tenant}
	}
	gw, err := gateway.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, gw)
	cases := []keyCase{
		{"openai-chat", "a-1", canaryOpenAI, 200, "a"},
		{"openai-responses", "a-1", canaryOpenAI, 200, "a"}, // translated within OpenAI
		{"anthropic", "b-1", canaryAnthropic, 200, "b"},
		{"openai-chat", "b-1", canaryOpenAI, 401, ""},  // another provider's upstream
		{"anthropic", "a-1", canaryAnthropic, 401, ""}, // and the other way
		{"gemini", "a-1", canaryOpenAI, 401, ""},
		{"openai-chat", "q-1", canaryOpenAI, 401, ""}, // the upstream refuses it, quoting it
		{"openai-chat", "down-1", canaryOpenAI, 502, ""},
	}
	for _, c := range cases {
		for _, stream := range []bool{false, true} {
			sendClientKey(t, srv, fakes, c, stream, tokens)
		}
	}
	metrics := get(t, srv+"/metrics")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := gw.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if s := gw.Stats(); s.Recorded < 8 {
		t.Fatalf("too little recorded for the search to prove anything: %+v", s)
	}
	search := func(what string, data []byte) {
		for _, c := range []string{canaryOpenAI, canaryAnthropic} {
			if bytes.Contains(data, []byte(c)) {
				t.Errorf("client key %q found in %s", c, what)
			}
		}
	}
	search("the logs", logs.Bytes())
	search("/metrics", metrics)
	if !bytes.Contains(metrics, []byte("convo_gateway_requests_total")) || logs.Len() == 0 || len(spans.Ended()) == 0 {
		t.Fatal("no metrics, logs or spans: the search proved nothing")
	}
	for _, s := range spans.Ended() {
		search("span "+s.Name(), spanBytes(s))
	}
	dump(search)
	st.Close()
	dump(search)
}

// sendClientKey sends c and checks which upstream got which key.
func sendClientKey(t *testing.T, srv string, fakes map[string]*fakeUpstream, c keyCase, stream, tokens bool) {
	t.Helper()
	for _, f := range fakes {
		f.last.Store(nil)
	}
	hdr := keyCarriers[c.client](c.key)
	if c.client == "gemini" {
		hdr = map[string]string{"key": c.key}
	}
	if tokens {
		hdr["Convo-Token"] = token
	}
	path := clientPath(c.client, c.model, stream)
	if k, ok := hdr["key"]; ok {
		path += map[bool]string{false: "?", true: "&"}[strings.Contains(path, "?")] + "key=" + k
	}
	req, _ := http.NewRequest("POST", srv+path, bytes.NewReader(requestBody(t, c.client, c.model, convo.History{convo.User("hello " + c.model)}, stream)))
	for k, v := range hdr {
		if k != "key" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != c.code {
		t.Errorf("%s %s: status %d %s, want %d", c.client, c.model, resp.StatusCode, body, c.code)
	}
	for name, f := range fakes {
		r := f.last.Load()
		switch {
		case name == c.at && r == nil:
			t.Errorf("%s %s: upstream %s got nothing", c.client, c.model, name)
		case name == c.at && authOf(f.proto, r.Header) != wantAuth(f.proto, c.key):
			t.Errorf("%s %s: upstream %s got %q", c.client, c.model, name, authOf(f.proto, r.Header))
		case name != c.at && r != nil:
			t.Errorf("%s %s: upstream %s got the request", c.client, c.model, name)
		}
	}
}

// spanBytes is everything a span holds as text.
func spanBytes(s sdktrace.ReadOnlySpan) []byte {
	b := []byte(s.Name() + " " + s.Status().Description)
	for _, kv := range s.Attributes() {
		b = fmt.Appendf(b, " %s=%s", kv.Key, kv.Value.String())
	}
	for _, ev := range s.Events() {
		b = fmt.Appendf(b, " event %s", ev.Name)
		for _, kv := range ev.Attributes {
			b = fmt.Appendf(b, " %s=%s", kv.Key, kv.Value.String())
		}
	}
	return b
}

func get(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b
}
