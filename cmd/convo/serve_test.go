package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

func TestServeUsage(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	os.WriteFile(tokens, []byte("tok1 alice\ntok2\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("# nobody\n"), 0o600)
	db := filepath.Join(dir, "convo.db")
	negPrices := filepath.Join(dir, "prices.json")
	os.WriteFile(negPrices, []byte(`{"claude-*": {"input": "-3", "output": 15}}`), 0o600)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		stderr string
	}{
		{name: "open without tokens", args: []string{"serve", "--addr", "0.0.0.0:0", "--db", db}, code: 2,
			stderr: "refusing to serve 0.0.0.0:0 without authentication"},
		{name: "bad limit", args: []string{"serve", "--max-body", "0"}, code: 2, stderr: "must be positive"},
		{name: "negative price", args: []string{"serve", "--db", db, "--prices", negPrices}, code: 2, stderr: `prices.json: "claude-*".input: negative price -3`},
		{name: "argument", args: []string{"serve", "extra"}, code: 2, stderr: "too many arguments"},
		{name: "bad tokens file", args: []string{"serve", "--tokens", tokens, "--db", db}, code: 1,
			stderr: tokens + `: line 2: want "TOKEN TENANT", got 1 fields`},
		{name: "missing tokens file", args: []string{"serve", "--tokens", filepath.Join(dir, "nope"), "--db", db}, code: 1, stderr: "no such file"},
		{name: "empty tokens file", args: []string{"serve", "--tokens", empty, "--db", db}, code: 1, stderr: "lists no tokens"},
		{name: "bad CONVO_TOKENS", args: []string{"serve", "--db", db}, env: map[string]string{"CONVO_TOKENS": "tok1"}, code: 1,
			stderr: "$CONVO_TOKENS: entry 1: want TOKEN=TENANT"},
		{name: "bad database", args: []string{"serve", "--db", filepath.Join(dir, "no", "such", "dir.db")}, code: 1, stderr: "dir.db"},
		{name: "address in use", args: []string{"serve", "--addr", busy.Addr().String(), "--db", db}, code: 1, stderr: busy.Addr().String()},
		{name: "replay upstream without route", args: []string{"serve", "--db", db, "--upstream", "oa=openai-chat@http://127.0.0.1:1"}, code: 1, stderr: "no routes"},
		{name: "replay upstream key unset", args: []string{"serve", "--db", db, "--upstream", "oa=openai-chat@http://127.0.0.1:1,key-env=OA_KEY", "--route", "*=oa"}, code: 1, stderr: "$OA_KEY is empty"},
		{name: "replay bad upstream", args: []string{"serve", "--db", db, "--upstream", "oa"}, code: 2, stderr: "want NAME=PROTOCOL@URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errb, getenv: func(k string) string { return tt.env[k] }}
			code := run(e, tt.args)
			if code != tt.code || !strings.Contains(errb.String(), tt.stderr) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, errb.String(), tt.code, tt.stderr)
			}
			if strings.Contains(errb.String(), "tok1") {
				t.Errorf("the error shows a token: %q", errb.String())
			}
		})
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost:80": true, "[::1]:8080": true, "127.9.9.9:1": true,
		"0.0.0.0:8080": false, ":8080": false, "[::]:80": false, "192.168.1.2:80": false, "example.com:80": false, "nonsense": false,
	} {
		if got := loopback(addr); got != want {
			t.Errorf("loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"convo.db":                          "convo.db",
		"postgres://u:secret@h:5432/db":     "postgres://u:xxxxx@h:5432/db",
		"postgres://u@h/db?sslmode=require": "postgres://u@h/db?sslmode=require",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// blockingStore holds every Append until release is closed, saying on
// entered that one has started.
type blockingStore struct {
	store.Store
	entered chan struct{}
	release chan struct{}
}

func (b *blockingStore) Append(ctx context.Context, tenant, id string, version int64, msgs ...convo.Message) (store.Conversation, error) {
	b.entered <- struct{}{}
	<-b.release
	return b.Store.Append(ctx, tenant, id, version, msgs...)
}

func post(t *testing.T, url, token, body string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// TestServeShutdownFinishesAppends stops the server while an append is
// inside the store: the append completes, is acknowledged and is on disk,
// and the server stops after it.
func TestServeShutdownFinishesAppends(t *testing.T) {
	db := filepath.Join(t.TempDir(), "convo.db")
	blocking := &blockingStore{entered: make(chan struct{}, 1), release: make(chan struct{})}
	addrc := make(chan string, 1)
	cfg := serveConfig{addr: "127.0.0.1:0", db: db,
		ready: func(a string) { addrc <- a },
		wrap:  func(st store.Store) store.Store { blocking.Store = st; return blocking }}
	stderr := &syncBuffer{}
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: stderr, getenv: func(string) string { return "tok=alice" }}
	if err := cfg.loadTokens(e, ""); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- serve(ctx, e, cfg) }()
	base := "http://" + <-addrc + "/convo/v1/conversations"

	code, body := post(t, base, "tok", `{"title":"t"}`)
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	var c struct{ ID string }
	json.Unmarshal(body, &c)

	type result struct {
		code int
		body []byte
	}
	appended := make(chan result, 1)
	go func() {
		code, body := post(t, base+"/"+c.ID+"/messages", "tok", `{"version":1,"messages":[{"role":"user","id":"in-flight","parts":[{"type":"text","text":"hi"}]}]}`)
		appended <- result{code, body}
	}()
	<-blocking.entered // the append is in the store
	stop()             // as SIGINT would
	waitFor(t, stderr.String, "shutting down")
	select {
	case err := <-served:
		t.Fatalf("the server stopped with an append in flight: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(blocking.release)
	r := <-appended
	if r.code != 200 {
		t.Fatalf("in-flight append: %d %s", r.code, r.body)
	}
	if err := <-served; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if !strings.Contains(stderr.String(), "convo serve: stopped") {
		t.Errorf("stderr: %s", stderr.String())
	}
	checkStored(t, db, "alice", c.ID, "in-flight")
}

// waitFor waits until text() contains want.
func waitFor(t *testing.T, text func() string, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(text(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in: %s", want, text())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkStored opens the database again and checks the message is there.
func checkStored(t *testing.T, db, tenant, conv, msgID string) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := st.Message(t.Context(), tenant, conv, msgID)
	if err != nil {
		t.Fatalf("acknowledged message %s: %v", msgID, err)
	}
	if m.Text() != "hi" {
		t.Errorf("stored %+v", m)
	}
}

// TestServeHelperProcess is the server process of TestServeSignal.
func TestServeHelperProcess(t *testing.T) {
	if os.Getenv("CONVO_SERVE_HELPER") != "1" {
		t.Skip("the child process of TestServeSignal")
	}
	e := &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	os.Exit(run(e, []string{"serve", "--addr", "127.0.0.1:0", "--db", os.Getenv("CONVO_SERVE_DB")}))
}

// TestServeSignal sends SIGTERM to a real "convo serve" process while an
// append is in flight (its handler is reading the body): the append
// completes and is durable, and the process exits 0.
func TestServeSignal(t *testing.T) {
	db := filepath.Join(t.TempDir(), "convo.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeHelperProcess$")
	cmd.Env = append(os.Environ(), "CONVO_SERVE_HELPER=1", "CONVO_SERVE_DB="+db, "CONVO_TOKENS=tok=alice")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	expect := func(want string) string {
		t.Helper()
		timeout := time.After(20 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the server ended without %q", want)
				}
				if strings.Contains(l, want) {
					return l
				}
			case <-timeout:
				t.Fatalf("no %q from the server", want)
			}
		}
	}
	line := expect("listening on http://")
	addr := strings.Fields(strings.SplitN(line, "http://", 2)[1])[0]
	base := "http://" + addr + "/convo/v1/conversations"
	code, body := post(t, base, "tok", `{}`)
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	var c struct{ ID string }
	json.Unmarshal(body, &c)

	// The append's body arrives in two halves; the server asks for it with
	// 100 Continue, which tells us its handler is running.
	full := `{"version":1,"messages":[{"role":"user","id":"in-flight","parts":[{"type":"text","text":"hi"}]}]}`
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", base+"/"+c.ID+"/messages", pr)
	req.ContentLength = int64(len(full))
	req.Header.Set("Authorization", "Bearer tok")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Expect", "100-continue")
	got100 := make(chan struct{})
	req = req.WithContext(httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		Got100Continue: func() { close(got100) },
	}))
	client := &http.Client{Transport: &http.Transport{ExpectContinueTimeout: time.Minute}}
	type result struct {
		code int
		body []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		res, err := client.Do(req)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		done <- result{res.StatusCode, b, err}
	}()
	select {
	case <-got100:
	case <-time.After(20 * time.Second):
		t.Fatal("no 100 Continue")
	}
	half := len(full) / 2
	if _, err := pw.Write([]byte(full[:half])); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	expect("shutting down")
	// The listener closes right after that line: new connections are
	// refused while the in-flight append is still waiting for its body.
	refused := false
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
		if _, err := c.Get("http://" + addr + "/healthz"); err != nil {
			refused = true
			break
		}
	}
	if !refused {
		t.Error("the stopping server kept accepting new connections")
	}
	if _, err := pw.Write([]byte(full[half:])); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	r := <-done
	if r.err != nil || r.code != 200 {
		t.Fatalf("in-flight append: %d %s %v", r.code, r.body, r.err)
	}
	expect("convo serve: stopped")
	if err := cmd.Wait(); err != nil {
		t.Fatalf("server exit: %v", err)
	}
	checkStored(t, db, "alice", c.ID, "in-flight")
}
