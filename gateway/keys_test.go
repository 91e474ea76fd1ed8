package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// keyGateway starts a gateway over the upstreams ups (each named to a
// fake) and routes, with env as its environment and tokens (none:
// anonymous).
func keyGateway(t *testing.T, ups []gateway.Upstream, fakes map[string]*fakeUpstream, routes []gateway.Route, env map[string]string, tokens map[string]string) (*rig, string) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "gw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	for i, u := range ups {
		if f := fakes[u.Name]; f != nil {
			ups[i].URL = f.URL
			if strings.HasPrefix(u.Protocol, "openai") {
				ups[i].URL += "/v1"
			}
		}
	}
	gw, err := gateway.New(gateway.Options{
		Config:    gateway.Config{Upstreams: ups, Routes: routes},
		Store:     st,
		Tokens:    tokens,
		Anonymous: len(tokens) == 0,
		Getenv:    func(k string) string { return env[k] },
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		SignBedrock: func(req *http.Request, _ []byte) error {
			req.Header.Set("Authorization", "AWS4-HMAC-SHA256 test-signature")
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &rig{gw: gw, st: st}, newServer(t, gw)
}

// send posts a plain request of client protocol proto for model, with the
// headers hdr (a "key" entry goes in the query string), and returns the
// status and body.
func send(t *testing.T, srv, proto, model string, hdr map[string]string) (int, []byte) {
	t.Helper()
	path := clientPath(proto, model, false)
	if k, ok := hdr["key"]; ok {
		path += "?key=" + url.QueryEscape(k)
	}
	body := requestBody(t, proto, model, convo.History{convo.User("hello")}, false)
	req, _ := http.NewRequest("POST", srv+path, bytes.NewReader(body))
	for k, v := range hdr {
		if k != "key" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, got
}

// TestRouteGlobs: a route is a glob over the whole model name, so an exact
// route takes that model only (gpt-4, not gpt-4o), and the first route that
// matches wins, whatever comes after it.
func TestRouteGlobs(t *testing.T) {
	tests := []struct {
		name   string
		routes []gateway.Route
		model  string
		want   string // the upstream that gets the request; "": 404
	}{
		{"exact", []gateway.Route{{Model: "gpt-4", Upstream: "a"}, {Model: "gpt-4*", Upstream: "b"}, {Model: "*", Upstream: "c"}}, "gpt-4", "a"},
		{"exact is not a prefix", []gateway.Route{{Model: "gpt-4", Upstream: "a"}, {Model: "gpt-4*", Upstream: "b"}, {Model: "*", Upstream: "c"}}, "gpt-4o", "b"},
		{"exact alone", []gateway.Route{{Model: "gpt-4", Upstream: "a"}}, "gpt-4o", ""},
		{"fall through", []gateway.Route{{Model: "gpt-4", Upstream: "a"}, {Model: "gpt-4*", Upstream: "b"}, {Model: "*", Upstream: "c"}}, "claude-x", "c"},
		{"first wins over exact", []gateway.Route{{Model: "*", Upstream: "a"}, {Model: "gpt-4", Upstream: "b"}}, "gpt-4", "a"},
		{"first of two globs", []gateway.Route{{Model: "gpt-*", Upstream: "b"}, {Model: "gpt-4*", Upstream: "a"}}, "gpt-4o", "b"},
		{"class", []gateway.Route{{Model: "o[0-9]*", Upstream: "a"}}, "o3-mini", "a"},
		{"class refuses", []gateway.Route{{Model: "o[0-9]*", Upstream: "a"}}, "omni", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakes := map[string]*fakeUpstream{}
			var ups []gateway.Upstream
			for _, n := range []string{"a", "b", "c"} {
				fakes[n] = newFake(t, "openai-chat")
				ups = append(ups, gateway.Upstream{Name: n, Protocol: "openai-chat"})
			}
			_, srv := keyGateway(t, ups, fakes, tt.routes, nil, nil)
			code, body := send(t, srv, "openai-chat", tt.model, nil)
			got := ""
			for n, f := range fakes {
				if f.last.Load() != nil {
					got += n
				}
			}
			if got != tt.want || (tt.want == "") != (code == 404) {
				t.Fatalf("model %s went to %q (status %d %s), want %q", tt.model, got, code, body, tt.want)
			}
		})
	}
}

// TestDefaultConfig: the default upstreams are the providers' public APIs
// with their SDKs' key variables, and the default routes send each
// provider's model names to it — a Responses client's to OpenAI's
// /responses, a Chat client's to /chat/completions — and no other name
// anywhere. The table is checked against fakes standing in for the APIs.
func TestDefaultConfig(t *testing.T) {
	def := gateway.DefaultConfig()
	urls := map[string]string{}
	for _, u := range def.Upstreams {
		urls[u.Name] = u.Protocol + " " + u.URL + " $" + u.KeyEnv
	}
	want := map[string]string{
		"openai":    "openai https://api.openai.com/v1 $OPENAI_API_KEY",
		"anthropic": "anthropic https://api.anthropic.com $ANTHROPIC_API_KEY",
		"gemini":    "gemini https://generativelanguage.googleapis.com $GEMINI_API_KEY",
	}
	if len(urls) != len(want) {
		t.Fatalf("upstreams %v", urls)
	}
	for n, w := range want {
		if urls[n] != w {
			t.Errorf("upstream %s: %q, want %q", n, urls[n], w)
		}
	}
	tests := []struct{ client, model, upstream, path string }{
		{"openai-chat", "gpt-4o", "openai", "/v1/chat/completions"},
		{"openai-responses", "gpt-5", "openai", "/v1/responses"},
		{"openai-chat", "o3-mini", "openai", "/v1/chat/completions"},
		{"openai-responses", "o1", "openai", "/v1/responses"},
		{"openai-chat", "chatgpt-4o-latest", "openai", "/v1/chat/completions"},
		{"anthropic", "claude-sonnet-4-5", "anthropic", "/v1/messages"},
		{"gemini", "gemini-2.5-flash", "gemini", "/v1beta/models/gemini-2.5-flash:generateContent"},
		{"anthropic", "gpt-4o", "openai", "/v1/chat/completions"}, // translated to Chat Completions
		{"openai-chat", "claude-opus-4-1", "anthropic", "/v1/messages"},
		{"openai-chat", "omni-1", "", ""},
		{"openai-chat", "text-embedding-3-small", "", ""},
		{"gemini", "gemma-3", "", ""},
		{"openai-chat", "llama3", "", ""},
	}
	env := map[string]string{"OPENAI_API_KEY": "sk-oa", "ANTHROPIC_API_KEY": "sk-an", "GEMINI_API_KEY": "sk-ge"}
	for _, tt := range tests {
		t.Run(tt.client+"/"+tt.model, func(t *testing.T) {
			fakes := map[string]*fakeUpstream{"anthropic": newFake(t, "anthropic"), "gemini": newFake(t, "gemini")}
			if tt.client == "openai-responses" {
				fakes["openai"] = newFake(t, "openai-responses")
			} else {
				fakes["openai"] = newFake(t, "openai-chat")
			}
			c := gateway.DefaultConfig()
			_, srv := keyGateway(t, c.Upstreams, fakes, c.Routes, env, nil)
			code, body := send(t, srv, tt.client, tt.model, nil)
			got, path := "", ""
			for n, f := range fakes {
				if r := f.last.Load(); r != nil {
					got, path = n, r.URL.Path
				}
			}
			if got != tt.upstream || path != tt.path || (tt.upstream == "") != (code == 404) || tt.upstream != "" && code != 200 {
				t.Fatalf("went to %q %q (status %d %s), want %q %q", got, path, code, body, tt.upstream, tt.path)
			}
		})
	}
}

// keyCarriers are where each client protocol's SDK sends its API key.
var keyCarriers = map[string]func(key string) map[string]string{
	"openai-chat":      func(k string) map[string]string { return map[string]string{"Authorization": "Bearer " + k} },
	"openai-responses": func(k string) map[string]string { return map[string]string{"Authorization": "Bearer " + k} },
	"anthropic":        func(k string) map[string]string { return map[string]string{"X-Api-Key": k} },
	"gemini":           func(k string) map[string]string { return map[string]string{"X-Goog-Api-Key": k} },
	"ollama":           func(k string) map[string]string { return map[string]string{"Authorization": "Bearer " + k} },
}

// authOf is the credential an upstream of protocol proto got.
func authOf(proto string, h http.Header) string {
	switch proto {
	case "anthropic":
		return "x-api-key " + h.Get("X-Api-Key")
	case "gemini":
		return "x-goog-api-key " + h.Get("X-Goog-Api-Key")
	}
	return h.Get("Authorization")
}

// wantAuth is how an upstream of protocol proto is sent key k.
func wantAuth(proto, k string) string {
	switch proto {
	case "anthropic":
		return "x-api-key " + k
	case "gemini":
		return "x-goog-api-key " + k
	}
	return "Bearer " + k
}

// TestClientKeyForwarded: a client's own key goes to an upstream without a
// key of its own that speaks its provider's API, in that upstream's own
// header (a Gemini client's key= as x-goog-api-key, an OpenAI Chat client's
// to a Responses upstream as a bearer token); an upstream with a key gets
// its own; a request to another provider's upstream without a key is
// refused with a 401 in the client's shape naming the upstream and its
// variable, and nothing is sent.
func TestClientKeyForwarded(t *testing.T) {
	const clientKey = "sk-client-7f3e"
	tests := []struct {
		client, upstream string
		carrier          map[string]string // nil: the client protocol's own
		upKey            string            // the upstream's own key, "" none
		want             string            // what the upstream gets; "": refused
	}{
		{"openai-chat", "openai-chat", nil, "", "Bearer " + clientKey},
		{"openai-responses", "openai-responses", nil, "", "Bearer " + clientKey},
		{"anthropic", "anthropic", nil, "", "x-api-key " + clientKey},
		{"gemini", "gemini", nil, "", "x-goog-api-key " + clientKey},
		{"gemini", "gemini", map[string]string{"key": clientKey}, "", "x-goog-api-key " + clientKey},
		{"ollama", "ollama", nil, "", "Bearer " + clientKey},
		{"openai-chat", "openai-responses", nil, "", "Bearer " + clientKey},
		{"anthropic", "anthropic", map[string]string{"Authorization": "Bearer " + clientKey}, "", "x-api-key " + clientKey},
		{"anthropic", "anthropic", nil, "sk-own", "x-api-key sk-own"},
		{"openai-chat", "openai-chat", nil, "sk-own", "Bearer sk-own"},
		{"openai-chat", "anthropic", nil, "sk-own", "x-api-key sk-own"},
		{"openai-chat", "anthropic", nil, "", ""},
		{"anthropic", "gemini", nil, "", ""},
		{"gemini", "openai-chat", map[string]string{"key": clientKey}, "", ""},
		{"anthropic", "anthropic", map[string]string{}, "", ""}, // no key at all
	}
	for _, tt := range tests {
		t.Run(tt.client+">"+tt.upstream, func(t *testing.T) {
			fake := newFake(t, tt.upstream)
			ups := []gateway.Upstream{{Name: "up", Protocol: tt.upstream, KeyEnv: "UP_KEY"}}
			_, srv := keyGateway(t, ups, map[string]*fakeUpstream{"up": fake}, []gateway.Route{{Model: "*", Upstream: "up"}}, map[string]string{"UP_KEY": tt.upKey}, nil)
			carrier := tt.carrier
			if carrier == nil {
				carrier = keyCarriers[tt.client](clientKey)
			}
			code, body := send(t, srv, tt.client, "m-1", carrier)
			r := fake.last.Load()
			if tt.want == "" {
				if code != 401 || r != nil || !bytes.Contains(body, []byte(`upstream \"up\"`)) || !bytes.Contains(body, []byte("$UP_KEY")) || !errorShaped(tt.client, body) {
					t.Fatalf("status %d %s, upstream reached: %v", code, body, r != nil)
				}
				return
			}
			if code != 200 || r == nil {
				t.Fatalf("status %d %s", code, body)
			}
			if got := authOf(tt.upstream, r.Header); got != tt.want {
				t.Errorf("upstream got %q, want %q", got, tt.want)
			}
			if strings.Contains(r.URL.RawQuery, clientKey) {
				t.Errorf("key in the upstream URL: %s", r.URL)
			}
		})
	}
}

// errorShaped reports whether body is an error in protocol proto's shape.
func errorShaped(proto string, body []byte) bool {
	var e struct {
		Type  string          `json:"type"`
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Error) == 0 {
		return false
	}
	var inner struct {
		Type, Status string
		Code         int
	}
	switch proto {
	case "anthropic":
		return e.Type == "error" && json.Unmarshal(e.Error, &inner) == nil && inner.Type == "authentication_error"
	case "gemini":
		return json.Unmarshal(e.Error, &inner) == nil && inner.Status == "UNAUTHENTICATED" && inner.Code == 401
	case "ollama":
		var s string
		return json.Unmarshal(e.Error, &s) == nil
	}
	return json.Unmarshal(e.Error, &inner) == nil && inner.Type == "authentication_error"
}

// TestConvoToken: with gateway tokens, a client sends its token in
// Convo-Token and its own provider key where its SDK does; the exchange is
// its tenant's and the key goes upstream. A wrong Convo-Token, or a
// provider key where a token is expected, is refused with a message naming
// Convo-Token; a token sent in place of the key is not forwarded, and an
// upstream with no key then refuses it in words.
func TestConvoToken(t *testing.T) {
	fake := newFake(t, "openai-chat")
	ups := []gateway.Upstream{{Name: "up", Protocol: "openai-chat", KeyEnv: "UP_KEY"}}
	gw, srv := keyGateway(t, ups, map[string]*fakeUpstream{"up": fake}, []gateway.Route{{Model: "*", Upstream: "up"}}, nil, map[string]string{token: tenant})
	tests := []struct {
		name string
		hdr  map[string]string
		code int
		say  string
	}{
		{"token and key", map[string]string{"Convo-Token": token, "Authorization": "Bearer sk-mine"}, 200, ""},
		{"wrong token", map[string]string{"Convo-Token": "nope", "Authorization": "Bearer sk-mine"}, 401, "invalid gateway token in Convo-Token"},
		{"key without token", map[string]string{"Authorization": "Bearer sk-mine"}, 401, "send it in Convo-Token"},
		{"nothing", map[string]string{}, 401, "no gateway token"},
		{"token in the key's place", map[string]string{"Authorization": "Bearer " + token}, 401, "has no key of its own and the request carries no OpenAI API key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake.last.Store(nil)
			code, body := send(t, srv, "openai-chat", "m-1", tt.hdr)
			if code != tt.code || !bytes.Contains(body, []byte(tt.say)) {
				t.Fatalf("status %d %s", code, body)
			}
			r := fake.last.Load()
			if tt.code != 200 {
				if r != nil {
					t.Fatal("a refused request reached the upstream")
				}
				return
			}
			if got := r.Header.Get("Authorization"); got != "Bearer sk-mine" || r.Header.Get("Convo-Token") != "" {
				t.Errorf("upstream got %q, Convo-Token %q", got, r.Header.Get("Convo-Token"))
			}
		})
	}
	gw.drain(t)
	convs, _, err := gw.st.List(context.Background(), tenant, store.ListOptions{})
	if err != nil || len(convs) != 1 {
		t.Fatalf("tenant %s has %d conversations (%v)", tenant, len(convs), err)
	}
}

// TestUpstreamHeadersAllowed: whatever a client sends — a canary in every
// header that can hold a credential (Authorization, x-api-key,
// x-goog-api-key, Cookie, Proxy-Authorization), in key=, in the gateway
// token and in headers of no protocol — the request an upstream receives
// holds only the headers its protocol allows, the canary in none, for
// every client and upstream protocol. An upstream with a key of its own
// gets that key, never the client's.
func TestUpstreamHeadersAllowed(t *testing.T) {
	const canary = "CANARY-hdr-5be1"
	clientHdr := map[string]string{
		"Authorization": "Bearer " + canary, "X-Api-Key": canary, "X-Goog-Api-Key": canary, "key": canary,
		"Cookie": "session=" + canary, "Proxy-Authorization": "Basic " + canary, "X-Forwarded-For": canary,
		"X-Custom-Header": canary, "Convo-Token": canary, "Openai-Organization": "org-1", "Anthropic-Beta": "b-1",
	}
	common := []string{"Content-Type", "Content-Length", "Accept", "Accept-Encoding", "User-Agent"}
	allowed := map[string][]string{
		"openai-chat":      {"Authorization", "Openai-Organization", "Openai-Project", "Openai-Beta"},
		"openai-responses": {"Authorization", "Openai-Organization", "Openai-Project", "Openai-Beta"},
		"anthropic":        {"X-Api-Key", "Anthropic-Version", "Anthropic-Beta"},
		"gemini":           {"X-Goog-Api-Key"},
		"ollama":           {"Authorization"},
		"bedrock":          {"Authorization"},
	}
	for _, tokens := range []map[string]string{nil, {canary: tenant}} {
		for _, client := range protos {
			for _, upProto := range append(protos[:len(protos):len(protos)], "bedrock") {
				name := client + ">" + upProto + map[bool]string{true: "/anonymous", false: "/tokens"}[tokens == nil]
				t.Run(name, func(t *testing.T) {
					fake := newFake(t, upProto)
					ups := []gateway.Upstream{{Name: "up", Protocol: upProto, KeyEnv: "UP_KEY"}}
					_, srv := keyGateway(t, ups, map[string]*fakeUpstream{"up": fake}, []gateway.Route{{Model: "*", Upstream: "up"}}, map[string]string{"UP_KEY": "sk-own"}, tokens)
					if code, body := send(t, srv, client, "m-1", clientHdr); code != 200 {
						t.Fatalf("status %d %s", code, body)
					}
					r := fake.last.Load()
					for k, v := range r.Header {
						if !slices.Contains(common, k) && !slices.Contains(allowed[upProto], k) {
							t.Errorf("upstream got header %s: %v", k, v)
						}
						if strings.Contains(strings.Join(v, ","), canary) {
							t.Errorf("upstream got the client's canary in %s", k)
						}
					}
					if strings.Contains(r.URL.String(), canary) {
						t.Errorf("upstream URL %s", r.URL)
					}
					if want := wantAuth(upProto, "sk-own"); upProto != "bedrock" && authOf(upProto, r.Header) != want {
						t.Errorf("upstream auth %q, want %q", authOf(upProto, r.Header), want)
					}
				})
			}
		}
	}
}
