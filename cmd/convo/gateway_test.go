package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/store/sqlite"
)

func TestGatewayUsage(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "convo.db")
	cfgFile := filepath.Join(dir, "gw.json")
	os.WriteFile(cfgFile, []byte(`{"upstreams":[{"name":"a","protocol":"anthropic","url":"http://127.0.0.1:1"}],"routes":[{"model":"*","upstream":"a"}],"extra":1}`), 0o600)
	badPrices := filepath.Join(dir, "prices.json")
	os.WriteFile(badPrices, []byte(`{"claude-*": {"input": -3, "output": 15}}`), 0o600)
	eurPrices := filepath.Join(dir, "eur.json")
	os.WriteFile(eurPrices, []byte(`{"claude-*": {"input": 3, "output": 15, "currency": "EUR"}}`), 0o600)
	brokenPrices := filepath.Join(dir, "broken.json")
	os.WriteFile(brokenPrices, []byte(`{"claude-*": {"input": 3,`), 0o600)
	budget := func(name, b string) string {
		f := filepath.Join(dir, name+".json")
		os.WriteFile(f, []byte(`{"upstreams":[{"name":"a","protocol":"anthropic","url":"http://127.0.0.1:1"}],"routes":[{"model":"*","upstream":"a"}],"budgets":[`+b+`]}`), 0o600)
		return f
	}
	tokens := filepath.Join(dir, "tokens")
	os.WriteFile(tokens, []byte("tok-a alice\n"), 0o600)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"budget without period", []string{"gateway", "--db", db, "--config", budget("noperiod", `{"tenant":"a","usd":"5"}`)}, 2, `budgets[0]: no period: want "day" or "month"`},
		{"budget of unknown period", []string{"gateway", "--db", db, "--config", budget("week", `{"tenant":"a","usd":"5","period":"week"}`)}, 2, `budgets[0]: unknown period "week"`},
		{"negative budget", []string{"gateway", "--db", db, "--config", budget("neg", `{"tenant":"a","usd":"-1","period":"day"}`)}, 2, `budgets[0]: negative usd -1`},
		{"budget of no token", []string{"gateway", "--db", db, "--tokens", tokens, "--config", budget("tok", `{"token_sha256":"`+strings.Repeat("ab", 32)+`","usd":"1","period":"day"}`)}, 2, `budgets[0]: token_sha256 abababababab… is the hash of no gateway token`},
		{"upstream without route", []string{"gateway", "--db", db, "--upstream", "a=anthropic@http://h"}, 2, "no routes"},
		{"bad upstream", []string{"gateway", "--db", db, "--upstream", "x"}, 2, "want NAME=PROTOCOL@URL"},
		{"bad route", []string{"gateway", "--db", db, "--upstream", "a=anthropic@http://h", "--route", "x"}, 2, "want MODEL_GLOB=UPSTREAM"},
		{"unknown protocol", []string{"gateway", "--db", db, "--upstream", "a=grpc@http://h", "--route", "*=a"}, 2, `unknown protocol "grpc"`},
		{"bad url", []string{"gateway", "--db", db, "--upstream", "a=anthropic@ftp://h", "--route", "*=a"}, 2, "not an http(s) URL"},
		{"route to nowhere", []string{"gateway", "--db", db, "--upstream", "a=anthropic@http://h", "--route", "*=b"}, 2, `no upstream "b"`},
		{"default route to nowhere", []string{"gateway", "--db", db, "--route", "ft-*=mine"}, 2, `no upstream "mine"`},
		{"bad glob", []string{"gateway", "--db", db, "--route", "[=openai"}, 2, "bad glob"},
		{"config and flags", []string{"gateway", "--db", db, "--config", cfgFile, "--route", "*=a"}, 2, "--config goes without"},
		{"config unknown member", []string{"gateway", "--db", db, "--config", cfgFile}, 2, `unknown field "extra"`},
		{"config missing", []string{"gateway", "--db", db, "--config", filepath.Join(dir, "nope.json")}, 2, "nope.json"},
		{"open without tokens", []string{"gateway", "--addr", "0.0.0.0:0", "--db", db}, 2, "without authentication: give --tokens FILE or set CONVO_TOKENS, or --allow-anonymous"},
		{"bedrock without credentials", []string{"gateway", "--db", db, "--upstream", "b=bedrock@https://bedrock-runtime.us-east-1.amazonaws.com", "--route", "*=b"}, 2, "needs AWS_ACCESS_KEY_ID"},
		{"negative price", []string{"gateway", "--db", db, "--upstream", "a=anthropic@http://h", "--route", "*=a", "--prices", badPrices}, 2, `prices.json: "claude-*".input: negative price -3`},
		{"unknown currency", []string{"gateway", "--db", db, "--upstream", "a=anthropic@http://h", "--route", "*=a", "--prices", eurPrices}, 2, `unknown currency "EUR"`},
		{"prices do not parse", []string{"gateway", "--db", db, "--upstream", "a=anthropic@http://h", "--route", "*=a", "--prices", brokenPrices}, 2, `broken.json: not valid JSON`},
		{"prices missing", []string{"gateway", "--db", db, "--upstream", "a=anthropic@http://h", "--route", "*=a", "--prices", filepath.Join(dir, "none.json")}, 2, `none.json`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
			if code := run(e, tt.args); code != tt.code || !strings.Contains(errb.String(), tt.stderr) || strings.Contains(errb.String(), "gateway: gateway:") {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errb.String(), tt.code, tt.stderr)
			}
		})
	}
}

// TestGatewayRecordsBeforeExit: an exchange answered before shutdown is in
// the store when the command returns, and the upstream key never reaches
// the log.
func TestGatewayRecordsBeforeExit(t *testing.T) {
	sse, err := os.ReadFile("../../provider/anthropic/testdata/reply/tool_use.sse")
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "sk-secret-upstream" {
			w.WriteHeader(401)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(sse)
	}))
	defer up.Close()
	db := filepath.Join(t.TempDir(), "convo.db")
	addrc := make(chan string, 1)
	stderr := &syncBuffer{}
	vars := map[string]string{"CONVO_TOKENS": "tok=alice", "UP_KEY": "sk-secret-upstream"}
	e := &env{stdin: strings.NewReader(""), stdout: &bytes.Buffer{}, stderr: stderr, getenv: func(k string) string { return vars[k] }}
	cfg := gatewayConfig{addr: "127.0.0.1:0", db: db, ready: func(a string) { addrc <- a }}
	cfg.opts.Config.Upstreams = []gateway.Upstream{{Name: "a", Protocol: "anthropic", URL: up.URL, KeyEnv: "UP_KEY"}}
	cfg.opts.Config.Routes = []gateway.Route{{Model: "*", Upstream: "a"}}
	cfg.opts.Tokens, cfg.tokenFrom = map[string]string{"tok": "alice"}, "$CONVO_TOKENS"
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- runGatewayServer(ctx, e, cfg) }()
	base := "http://" + <-addrc
	req, _ := http.NewRequest("POST", base+"/v1/messages", strings.NewReader(`{"model":"claude-x","stream":true,"max_tokens":10,"messages":[{"role":"user","content":"Weather?"}]}`))
	req.Header.Set("X-Api-Key", "tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, sse) {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	conv := resp.Header.Get("Convo-Conversation")
	// The command serves the gateway's metrics and the process's.
	mresp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	for _, want := range []string{`convo_gateway_requests_total{code="200",protocol="anthropic",route="POST /v1/messages",upstream="a"} 1`, "go_goroutines", "process_resident_memory_bytes"} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	stop() // as SIGTERM does
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "stopped (1 exchanges recorded, 0 dropped, 0 failed)") || strings.Contains(stderr.String(), "sk-secret") {
		t.Fatalf("stderr: %s", stderr.String())
	}
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h, _, err := st.Load(context.Background(), "alice", conv, 0)
	if err != nil || len(h) != 2 || !h[1].HasToolCalls() {
		t.Fatalf("%v %v", h, err)
	}
}

// TestBedrockSigner: Bedrock requests carry an AWS SigV4 signature for the
// upstream's region, made by the AWS SDK's signer; without credentials a
// Bedrock upstream is refused at start.
func TestBedrockSigner(t *testing.T) {
	vars := map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret"}
	sign, err := bedrockSigner(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"messages":[]}`)
	req, _ := http.NewRequest("POST", "https://bedrock-runtime.eu-west-3.amazonaws.com/model/m/converse", bytes.NewReader(body))
	if err := sign(req, body); err != nil {
		t.Fatal(err)
	}
	auth := req.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") || !strings.Contains(auth, "/eu-west-3/bedrock/aws4_request") || strings.Contains(auth, "secret") {
		t.Fatalf("Authorization %q", auth)
	}
	if _, err := bedrockSigner(func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") {
		t.Fatalf("no credentials: %v", err)
	}
}

// TestGatewayDefaults: without flags the gateway has the default upstreams
// and routes, records into $CONVO_DB (else convo.db), and serves loopback
// clients without gateway tokens; --route goes before the default routes;
// --allow-anonymous lets it listen elsewhere without tokens.
func TestGatewayDefaults(t *testing.T) {
	def := gateway.DefaultConfig()
	tests := []struct {
		name   string
		args   []string
		vars   map[string]string
		db     string
		routes []gateway.Route
		anon   bool
	}{
		{"no flags", nil, nil, "convo.db", def.Routes, true},
		{"CONVO_DB", nil, map[string]string{"CONVO_DB": "/tmp/x.db"}, "/tmp/x.db", def.Routes, true},
		{"--db over CONVO_DB", []string{"--db", "y.db"}, map[string]string{"CONVO_DB": "/tmp/x.db"}, "y.db", def.Routes, true},
		{"tokens", nil, map[string]string{"CONVO_TOKENS": "tok=alice"}, "convo.db", def.Routes, false},
		{"extra route", []string{"--route", "ft:gpt-*=openai"}, nil, "convo.db", append([]gateway.Route{{Model: "ft:gpt-*", Upstream: "openai"}}, def.Routes...), true},
		{"allow anonymous", []string{"--addr", "0.0.0.0:8787", "--allow-anonymous"}, nil, "convo.db", def.Routes, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return tt.vars[k] }}
			cfg, err := parseGateway(e, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.db != tt.db || cfg.opts.Anonymous != tt.anon || !reflect.DeepEqual(cfg.opts.Config.Upstreams, def.Upstreams) || !reflect.DeepEqual(cfg.opts.Config.Routes, tt.routes) {
				t.Fatalf("db %q anonymous %v config %+v", cfg.db, cfg.opts.Anonymous, cfg.opts.Config)
			}
		})
	}
}

// TestGatewayHelpExampleRuns: the example of `convo gateway -h` starts a
// gateway as printed, without its key in the environment (its clients then
// send their own), and the start-up line says whose key each upstream gets.
func TestGatewayHelpExampleRuns(t *testing.T) {
	args := strings.Fields(strings.ReplaceAll(examples["gateway"], "'", ""))
	if args[0] != "convo" || args[1] != "gateway" {
		t.Fatalf("example %q", examples["gateway"])
	}
	for _, key := range []string{"", "sk-from-env"} {
		stderr := &syncBuffer{}
		vars := map[string]string{"CONVO_DB": filepath.Join(t.TempDir(), "convo.db"), "OPENAI_API_KEY": key}
		e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: stderr, getenv: func(k string) string { return vars[k] }}
		cfg, err := parseGateway(e, append(args[2:], "--addr", "127.0.0.1:0"))
		if err != nil {
			t.Fatal(err)
		}
		ctx, stop := context.WithCancel(context.Background())
		cfg.ready = func(string) { stop() }
		if err := runGatewayServer(ctx, e, cfg); err != nil {
			t.Fatal(err)
		}
		want := "upstreams oa=openai with clients' keys"
		if key != "" {
			want = "upstreams oa=openai with $OPENAI_API_KEY"
		}
		if !strings.Contains(stderr.String(), want) || strings.Contains(stderr.String(), "sk-from-env") {
			t.Errorf("stderr: %s", stderr.String())
		}
	}
}
