package server_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
	"github.com/convo-go/convo/provider/openai"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/server/ui"
	"github.com/convo-go/convo/store/sqlite"
	"github.com/prometheus/client_golang/prometheus"
)

// TestCredentialsNeverStored sends a canary token through every route of
// convo serve — in Authorization, and where other clients put keys
// (x-api-key, x-goog-api-key, key=) — with a refused canary too, then
// searches the SQLite database file and its WAL, the logs (at debug level)
// and /metrics for them.
func TestCredentialsNeverStored(t *testing.T) {
	const good, bad = "srvtok-CANARY-5b7c1e", "srvtok-CANARY-refused-a2f4"
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "convo.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var logs lockedBuffer
	h, err := server.New(st, server.Options{
		Tokens:  map[string]string{good: "canary-tenant"},
		Formats: []provider.Format{openai.Chat(), openai.Responses(), anthropic.Messages()},
		Items:   server.ItemFuncs{Encode: openai.EncodeItems, Decode: openai.DecodeItems},
		Logger:  slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Metrics: prometheus.NewRegistry(),
		UI:      true,
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	srv := hs.URL
	msg := `{"role":"user","parts":[{"type":"text","text":"hi"}]}`
	calls := []struct{ method, path, body string }{
		{"GET", "/healthz", ""},
		{"POST", "/convo/v1/conversations", `{"id":"c1","messages":[` + msg + `]}`},
		{"GET", "/convo/v1/conversations", ""},
		{"GET", "/convo/v1/conversations/c1", ""},
		{"PATCH", "/convo/v1/conversations/c1", `{"title":"t"}`},
		{"POST", "/convo/v1/conversations/c1/messages", `{"messages":[{"role":"assistant","parts":[{"type":"text","text":"hello"}]}]}`},
		{"GET", "/convo/v1/conversations/c1/messages", ""},
		{"GET", "/convo/v1/conversations/c1/messages/nope", ""},
		{"POST", "/convo/v1/conversations/c1/fork", `{"id":"c2","at":1}`},
		{"GET", "/convo/v1/conversations/c1/export?format=openai-chat", ""},
		{"GET", "/convo/v1/formats", ""},
		{"GET", "/convo/v1/search?q=hello", ""},
		{"POST", "/v1/conversations", `{"items":[{"type":"message","role":"user","content":"hi"}]}`},
		{"GET", "/v1/conversations/c1", ""},
		{"POST", "/v1/conversations/c1", `{"metadata":{"k":"v"}}`},
		{"POST", "/v1/conversations/c1/items", `{"items":[{"type":"message","role":"user","content":"more"}]}`},
		{"GET", "/v1/conversations/c1/items", ""},
		{"GET", "/v1/conversations/c1/items/nope", ""},
		{"DELETE", "/v1/conversations/c2", ""},
		{"DELETE", "/convo/v1/conversations/c1/messages/nope", ""},
		{"GET", "/ui/", ""},
		{"GET", "/ui/c/c1", ""},
		{"POST", "/ui/signin", "token=TOKEN&next=/ui/"},
		{"GET", "/nowhere", ""},
		{"DELETE", "/convo/v1/conversations/c1", ""},
	}
	carriers := []func(*http.Request, string){
		func(r *http.Request, tok string) { r.Header.Set("Authorization", "Bearer "+tok) },
		func(r *http.Request, tok string) { r.Header.Set("X-Api-Key", tok) },
		func(r *http.Request, tok string) { r.Header.Set("X-Goog-Api-Key", tok) },
		func(r *http.Request, tok string) {
			q := r.URL.Query()
			q.Set("key", tok)
			r.URL.RawQuery = q.Encode()
		},
		func(r *http.Request, tok string) { r.AddCookie(&http.Cookie{Name: ui.CookieName, Value: tok}) },
	}
	ok := 0
	for _, tok := range []string{good, bad} {
		for ci, carry := range carriers {
			for _, c := range calls {
				body := strings.ReplaceAll(c.body, "TOKEN", tok)
				req, _ := http.NewRequest(c.method, srv+c.path, strings.NewReader(body))
				switch {
				case strings.HasPrefix(body, "token="):
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				case body != "":
					req.Header.Set("Content-Type", "application/json")
				}
				carry(req, tok)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				var b bytes.Buffer
				b.ReadFrom(resp.Body)
				resp.Body.Close()
				if resp.StatusCode < 300 {
					ok++
				}
				// The viewer's sign-in page links back to the URL asked
				// for, query included: a key= there goes back to the
				// client that sent it, and is neither stored nor logged.
				reflected := ci == 3 && strings.HasPrefix(c.path, "/ui/")
				if !reflected && strings.Contains(b.String(), tok) {
					t.Errorf("%s %s (carrier %d): the response echoes the token", c.method, c.path, ci)
				}
			}
		}
	}
	if ok < len(calls) {
		t.Fatalf("only %d requests succeeded: the routes were not exercised", ok)
	}
	req, _ := http.NewRequest("GET", srv+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var metrics bytes.Buffer
	metrics.ReadFrom(resp.Body)
	resp.Body.Close()
	search := func(what string, data []byte) {
		for _, tok := range []string{good, bad} {
			if bytes.Contains(data, []byte(tok)) {
				t.Errorf("token %q found in %s", tok, what)
			}
		}
	}
	if metrics.Len() == 0 || len(logs.String()) == 0 {
		t.Fatal("no metrics or no logs: the search would prove nothing")
	}
	search("/metrics", metrics.Bytes())
	search("the logs", []byte(logs.String()))
	check := func() {
		files, _ := filepath.Glob(filepath.Join(dir, "convo.db*"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			search(filepath.Base(f), data)
		}
	}
	check()
	st.Close()
	check()
}
