package server_test

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
	"github.com/convo-go/convo/provider/openai"
	"github.com/convo-go/convo/server"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// backend opens stores for a test: a new database (dsn), and a store on a
// database (openDSN), which may be opened more than once.
type backend struct {
	name    string
	dsn     func(t *testing.T) string
	openDSN func(t *testing.T, dsn string) store.Store
}

// open opens a store on a new database.
func (b backend) open(t *testing.T) store.Store { return b.openDSN(t, b.dsn(t)) }

// backends are the real stores the server is tested on: SQLite always,
// PostgreSQL when CONVO_TEST_POSTGRES names a database.
func backends(t *testing.T) []backend {
	bs := []backend{{
		name: "sqlite",
		dsn:  func(t *testing.T) string { return filepath.Join(t.TempDir(), "convo.db") },
		openDSN: func(t *testing.T, dsn string) store.Store {
			st, err := sqlite.Open(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return st
		},
	}}
	if pg := postgresBackend(t); pg != nil {
		bs = append(bs, *pg)
	}
	return bs
}

// each runs f once per backend.
func each(t *testing.T, f func(t *testing.T, open func(t *testing.T) store.Store)) {
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { f(t, b.open) })
	}
}

// tserver is the handler over a real store behind a loopback listener, with
// two tenants whose names are unique to the test (so tests can share a
// PostgreSQL database).
type tserver struct {
	*httptest.Server
	st          store.Store
	alice, bob  string // tokens
	aliceTenant string
	bobTenant   string
	logs        *lockedBuffer
}

func unique() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func newServer(t *testing.T, st store.Store, mod func(*server.Options)) *tserver {
	t.Helper()
	return newServerLike(t, st, &tserver{alice: "tok-alice-" + unique(), bob: "tok-bob-" + unique(),
		aliceTenant: "alice-" + unique(), bobTenant: "bob-" + unique()}, mod)
}

// newServerLike starts a server over st with the tokens and tenants of like:
// another instance of the same service.
func newServerLike(t *testing.T, st store.Store, like *tserver, mod func(*server.Options)) *tserver {
	t.Helper()
	ts := &tserver{st: st, alice: like.alice, bob: like.bob, aliceTenant: like.aliceTenant, bobTenant: like.bobTenant, logs: &lockedBuffer{}}
	opts := server.Options{
		Tokens:  map[string]string{ts.alice: ts.aliceTenant, ts.bob: ts.bobTenant},
		Formats: []provider.Format{openai.Chat(), openai.Responses(), anthropic.Messages()},
		Items:   server.ItemFuncs{Encode: openai.EncodeItems, Decode: openai.DecodeItems},
		Logger:  slog.New(slog.NewTextHandler(ts.logs, nil)),
	}
	if mod != nil {
		mod(&opts)
	}
	h, err := server.New(st, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts.Server = httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// response is a finished request.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request; body is a string, []byte or nil.
func (ts *tserver) do(t *testing.T, method, path, token string, body any) response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		t.Fatalf("body of type %T", body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, ts.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// want fails the test unless the response has status.
func (r response) want(t *testing.T, status int) response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	return r
}

// decode decodes the body into v, which it zeroes first: a member the body
// leaves out must not keep an earlier value.
func (r response) decode(t *testing.T, v any) {
	t.Helper()
	reflect.ValueOf(v).Elem().SetZero()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

// problem is the problem document of an error response.
type problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Instance string `json:"instance"`
	Errors   []struct {
		Path   string `json:"path"`
		Detail string `json:"detail"`
	} `json:"errors"`
	Version *int64 `json:"version"`
	Error   *struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// problem checks that r is a problem document of status and kind.
func (r response) problem(t *testing.T, status int, kind string) problem {
	t.Helper()
	r.want(t, status)
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q, want application/problem+json", ct)
	}
	var p problem
	r.decode(t, &p)
	if p.Type != server.ProblemTypePrefix+kind || p.Status != status || p.Title != http.StatusText(status) {
		t.Fatalf("problem %+v, want type %s%s status %d", p, server.ProblemTypePrefix, kind, status)
	}
	return p
}

// conversation is the native API's description of a conversation.
type conversation struct {
	ID         string          `json:"id"`
	Title      string          `json:"title"`
	Meta       json.RawMessage `json:"meta"`
	Version    int64           `json:"version"`
	Messages   int             `json:"messages"`
	ForkedFrom string          `json:"forked_from"`
	ForkedAt   *int            `json:"forked_at"`
	Created    string          `json:"created"`
	Updated    string          `json:"updated"`
}

// create makes a conversation for token with the canonical messages msgs
// (a JSON array) and returns its description.
func (ts *tserver) create(t *testing.T, token, msgs string) conversation {
	t.Helper()
	body := `{"title":"test"}`
	if msgs != "" {
		body = `{"title":"test","messages":` + msgs + `}`
	}
	var c conversation
	ts.do(t, "POST", "/convo/v1/conversations", token, body).want(t, http.StatusCreated).decode(t, &c)
	return c
}

func (ts *tserver) load(t *testing.T, tenant, id string) (convo.History, store.Conversation) {
	t.Helper()
	h, c, err := ts.st.Load(t.Context(), tenant, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	return h, c
}

const (
	userHi     = `{"role":"user","parts":[{"type":"text","text":"hi"}]}`
	assistHi   = `{"role":"assistant","parts":[{"type":"text","text":"hello"}]}`
	callF      = `{"role":"assistant","parts":[{"type":"tool_call","id":"c1","name":"f","args":{"x":1}}]}`
	resultF    = `{"role":"tool","parts":[{"type":"tool_result","id":"c1","name":"f","parts":[{"type":"text","text":"42"}]}]}`
	orphanF    = `{"role":"tool","parts":[{"type":"tool_result","id":"c9","name":"f","parts":[{"type":"text","text":"?"}]}]}`
	exampleDoc = "../testdata/v1/example.json"
)

func exampleMessages(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(exampleDoc)
	if err != nil {
		t.Fatal(err)
	}
	h, err := convo.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// codec returns the server's codec called name.
func (ts *tserver) codec(t *testing.T, name string) provider.Codec {
	t.Helper()
	for _, c := range []provider.Codec{openai.Chat(), openai.Responses(), anthropic.Messages()} {
		if c.Name() == name {
			return c
		}
	}
	t.Fatalf("no codec %q", name)
	return nil
}

// providerOptions are the options of an export without query parameters.
func providerOptions() provider.Options { return provider.Options{} }

// jsonEqual compares two JSON documents as values.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
