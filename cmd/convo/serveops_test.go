package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestServeEnv: CONVO_ADDR and CONVO_DB set what --addr and --db leave
// unset; the flags win over them.
func TestServeEnv(t *testing.T) {
	vars := map[string]string{"CONVO_ADDR": "127.0.0.1:9999", "CONVO_DB": "/tmp/from-env.db"}
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: func(k string) string { return vars[k] }}
	cfg, err := parseServe(e, nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.addr != "127.0.0.1:9999" || cfg.db != "/tmp/from-env.db" {
		t.Errorf("from the environment: addr %q, db %q", cfg.addr, cfg.db)
	}
	cfg, err = parseServe(e, []string{"--addr", "127.0.0.1:1", "--db", "flag.db", "--log-format", "json"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.addr != "127.0.0.1:1" || cfg.db != "flag.db" || !cfg.jsonLog {
		t.Errorf("flags: addr %q, db %q, json %v", cfg.addr, cfg.db, cfg.jsonLog)
	}
	if _, _, code := runCLI(t, "", "serve", "--log-format", "xml"); code != 2 {
		t.Errorf("--log-format xml: exit %d", code)
	}
}

// TestServeJSONLogAndMetrics: with --log-format json every log line is a
// JSON object, and /metrics serves the Go runtime's and the server's
// metrics.
func TestServeJSONLogAndMetrics(t *testing.T) {
	addrc := make(chan string, 1)
	cfg := serveConfig{addr: "127.0.0.1:0", db: filepath.Join(t.TempDir(), "convo.db"), jsonLog: true,
		ready: func(a string) { addrc <- a }}
	stderr := &syncBuffer{}
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: stderr, getenv: func(string) string { return "tok=alice" }}
	if err := cfg.loadTokens(e, ""); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, e, cfg) }()
	base := "http://" + <-addrc
	if code, body := post(t, base+"/convo/v1/conversations", "tok", `{}`); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{"go_goroutines", "process_resident_memory_bytes", `convo_http_requests_total{code="201"`, "convo_store_duration_seconds_bucket"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	stop()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	logged := 0
	for line := range strings.Lines(stderr.String()) {
		var v map[string]any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Errorf("not a JSON line: %q", line)
		}
		if v["msg"] == "request" {
			logged++
		}
	}
	if logged < 2 || !strings.Contains(stderr.String(), `"msg":"stopped"`) {
		t.Errorf("%d request lines logged:\n%s", logged, stderr.String())
	}
}
