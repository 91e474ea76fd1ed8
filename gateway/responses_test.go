package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// seen is one request a fake Responses API got.
type seen struct {
	method, path, query, auth, project, body string
}

// call sends a request to the gateway with the bearer tok and returns the
// answer's status, content type and body.
func call(t *testing.T, method, u, tok string) (int, string, []byte) {
	t.Helper()
	return callWith(t, method, u, tok, "")
}

// callWith is call with a request body.
func callWith(t *testing.T, method, u, tok, body string) (int, string, []byte) {
	t.Helper()
	var rb io.Reader
	if body != "" {
		rb = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, u, rb)
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	req.Header.Set("OpenAI-Project", "proj_1")
	req.Header.Set("Cookie", "session=secret-cookie")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), answer
}

// TestResponseForwarded: retrieving, deleting, listing the input items of
// and cancelling a response the gateway did not give go to the upstream
// that serves the Responses API (an "openai" upstream among others, after
// an Anthropic one), as they came: method, path under the upstream's
// base URL, query (but a key in it), the headers OpenAI's protocol
// forwards; with the upstream's key, or, when it has none, the client's
// own; never the gateway token or a cookie. The answer comes back as the
// upstream gave it, an error or a stream included, and nothing is
// recorded, nor the client's key logged.
func TestResponseForwarded(t *testing.T) {
	var mu sync.Mutex
	var got []seen
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), r.Header.Get("Openai-Project"), string(body)})
		mu.Unlock()
		if r.Header.Get("Cookie") != "" {
			t.Errorf("a cookie reached the upstream")
		}
		w.Header().Set("X-Request-Id", "req_1")
		switch {
		case strings.Contains(r.URL.Path, "resp_gone"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":{"message":"Response with id 'resp_gone' not found.","type":"invalid_request_error","param":null,"code":null}}`))
		case r.URL.Query().Get("stream") == "true" || string(body) == `{"stream":true}`:
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte("event: response.completed\ndata: {\"type\":\"response.completed\"}\n\n"))
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = fmt.Fprintf(w, `{"id":"resp_abc","object":"response","method":%q}`, r.Method)
		}
	}))
	t.Cleanup(fake.Close)
	for _, upKey := range []string{"sk-upstream-secret", ""} {
		t.Run(map[bool]string{true: "upstream key", false: "client key"}[upKey != ""], func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "gw.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			var logs bytes.Buffer
			opts := gateway.Options{
				Config: gateway.Config{
					Upstreams: []gateway.Upstream{
						{Name: "claude", Protocol: "anthropic", URL: fake.URL},
						{Name: "oai", Protocol: "openai", URL: fake.URL + "/v1", KeyEnv: "UP_KEY"},
					},
					Routes: []gateway.Route{{Model: "claude-*", Upstream: "claude"}, {Model: "*", Upstream: "oai"}},
				},
				Store:  st,
				Getenv: func(k string) string { return map[string]string{"UP_KEY": upKey}[k] },
				Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			}
			tok, wantAuth := token, "Bearer sk-upstream-secret"
			if upKey == "" {
				opts.Anonymous, tok, wantAuth = true, "sk-client-own", "Bearer sk-client-own"
			} else {
				opts.Tokens = map[string]string{token: tenant}
			}
			gw, err := gateway.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(gw)
			t.Cleanup(srv.Close)
			for _, c := range []struct {
				method, path, body, wantPath, wantQuery string
				status                                  int
				wantBody                                string
			}{
				{"GET", "/v1/responses/resp_abc?include%5B%5D=reasoning.encrypted_content", "", "/v1/responses/resp_abc", "include%5B%5D=reasoning.encrypted_content", 200, `"method":"GET"`},
				{"DELETE", "/v1/responses/resp_abc", "", "/v1/responses/resp_abc", "", 200, `"method":"DELETE"`},
				{"GET", "/v1/responses/resp_abc/input_items?limit=2&order=asc&key=" + tok, "", "/v1/responses/resp_abc/input_items", "limit=2&order=asc", 200, `"method":"GET"`},
				{"POST", "/v1/responses/resp_abc/cancel", "", "/v1/responses/resp_abc/cancel", "", 200, `"method":"POST"`},
				{"GET", "/v1/responses/resp_abc?stream=true", "", "/v1/responses/resp_abc", "stream=true", 200, "event: response.completed\n"},
				{"GET", "/v1/responses/resp_abc", `{"stream":true}`, "/v1/responses/resp_abc", "", 200, "event: response.completed\n"},
				{"GET", "/v1/responses/resp_gone", "", "/v1/responses/resp_gone", "", 404, "not found"},
			} {
				mu.Lock()
				n := len(got)
				mu.Unlock()
				status, _, body := callWith(t, c.method, srv.URL+c.path, tok, c.body)
				if status != c.status || !strings.Contains(string(body), c.wantBody) {
					t.Errorf("%s %s: status %d: %s", c.method, c.path, status, body)
				}
				mu.Lock()
				if len(got) != n+1 {
					t.Fatalf("%s %s: %d upstream requests", c.method, c.path, len(got)-n)
				}
				want := seen{c.method, c.wantPath, c.wantQuery, wantAuth, "proj_1", c.body}
				if s := got[n]; s != want {
					t.Errorf("%s %s: upstream got %+v, want %+v", c.method, c.path, s, want)
				}
				mu.Unlock()
			}
			if upKey == "" {
				// Without a key of its own the upstream needs the
				// client's: a request without one is refused here.
				if status, _, body := call(t, "GET", srv.URL+"/v1/responses/resp_abc", ""); status != http.StatusUnauthorized || !bytes.Contains(body, []byte("UP_KEY")) {
					t.Errorf("no key: status %d: %s", status, body)
				}
			}
			ctx := context.Background()
			if err := gw.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if cs, _, err := st.List(ctx, tenant, store.ListOptions{}); err != nil || len(cs) != 0 || gw.Stats().Recorded != 0 {
				t.Errorf("recorded %d conversations (%v), stats %+v", len(cs), err, gw.Stats())
			}
			if strings.Contains(logs.String(), "sk-client-own") || strings.Contains(logs.String(), "sk-upstream-secret") {
				t.Errorf("a key was logged:\n%s", logs.String())
			}
		})
	}
}

// TestResponseNoUpstream: with no upstream serving the Responses API, a
// response the gateway did not give is a 404 in OpenAI's shape saying so.
func TestResponseNoUpstream(t *testing.T) {
	rg := newRig(t, "anthropic", nil)
	for _, method := range []string{"GET", "DELETE"} {
		status, ct, body := call(t, method, rg.srv.URL+"/v1/responses/resp_68af0c2a", token)
		var e struct {
			Error struct{ Message, Type string }
		}
		if status != http.StatusNotFound || ct != "application/json" || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error.Message, "no upstream serves the OpenAI Responses API") {
			t.Errorf("%s: status %d %s: %s", method, status, ct, body)
		}
	}
}

// TestOwnResponseEndpoints: for a response the gateway gave on a
// translated route, the gateway answers from its record: the response
// streamed again (?stream=true), its input items (the recorded
// conversation before it, the response it went on from included, newest
// first unless asked otherwise, by pages), and a clear refusal in
// OpenAI's shape to delete (the record stays: the response is still
// there) or cancel it. Another key gets 404.
func TestOwnResponseEndpoints(t *testing.T) {
	rg := newRig(t, "anthropic", func(o *gateway.Options) { o.Tokens["tok-other"] = "other" })
	resp := rg.post(t, "openai-responses", "m-1", []byte(`{"model":"m-1","input":"Weather in Paris?"}`), false, nil)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	first := responseIDOf(t, got, false)
	call1 := wantReply(t, "openai-responses", got, false).ToolCalls()[0]
	next := fmt.Sprintf(`{"model":"m-1","previous_response_id":%q,"input":[{"type":"function_call_output","call_id":%q,"output":"{\"temp_c\":18}"}]}`, first, call1.ID)
	resp = rg.post(t, "openai-responses", "m-1", []byte(next), false, nil)
	got, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	second := responseIDOf(t, got, false)
	base := rg.srv.URL + "/v1/responses/"

	// Asked for as OpenAI documents it, and as openai-go asks.
	for _, ask := range [][2]string{{"?stream=true", ""}, {"", `{"stream":true}`}} {
		status, ct, body := callWith(t, "GET", base+second+ask[0], token, ask[1])
		if status != 200 || ct != "text/event-stream" || responseIDOf(t, body, true) != second || !bytes.Contains(body, []byte("event: response.completed")) {
			t.Errorf("streamed again (%s%s): status %d %s:\n%s", ask[0], ask[1], status, ct, body)
		}
	}

	type page struct {
		Object string
		Data   []struct {
			ID, Type, Role string
			CallID         string `json:"call_id"`
		}
		FirstID string `json:"first_id"`
		LastID  string `json:"last_id"`
		HasMore bool   `json:"has_more"`
	}
	items := func(id, query string) page {
		t.Helper()
		status, _, body := call(t, "GET", base+id+"/input_items"+query, token)
		var p page
		if status != 200 || json.Unmarshal(body, &p) != nil || p.Object != "list" {
			t.Fatalf("input items of %s%s: status %d: %s", id, query, status, body)
		}
		return p
	}
	kinds := func(p page) (out []string) {
		for _, it := range p.Data {
			out = append(out, it.Type+" "+it.Role+it.CallID)
		}
		return out
	}
	if p := items(first, ""); len(p.Data) != 1 || p.Data[0].Role != "user" || p.HasMore {
		t.Errorf("first response's input items: %+v", p)
	}
	all := items(second, "?order=asc")
	k := kinds(all)
	if len(k) < 4 || k[0] != "message user" || k[len(k)-1] != "function_call_output "+call1.ID || !strings.Contains(strings.Join(k, ","), "function_call "+call1.ID) {
		t.Errorf("second response's input items, oldest first: %v", k)
	}
	desc := items(second, "")
	if d := kinds(desc); len(d) != len(k) || d[0] != k[len(k)-1] || d[len(d)-1] != k[0] {
		t.Errorf("newest first: %v, oldest first %v", d, k)
	}
	// By pages of two, oldest first: the pages put together are the whole.
	var ids []string
	for q := "?order=asc&limit=2"; ; {
		p := items(second, q)
		for _, it := range p.Data {
			ids = append(ids, it.ID)
		}
		if !p.HasMore {
			break
		}
		q = "?order=asc&limit=2&after=" + p.LastID
	}
	if len(ids) != len(all.Data) || ids[0] != all.FirstID || ids[len(ids)-1] != all.LastID {
		t.Errorf("by pages: %v, whole %+v", ids, all)
	}
	for _, q := range []string{"?limit=0", "?limit=101", "?order=up", "?after=item_nope"} {
		if status, _, body := call(t, "GET", base+second+"/input_items"+q, token); status != http.StatusBadRequest {
			t.Errorf("input items%s: status %d: %s", q, status, body)
		}
	}

	for _, c := range []struct{ method, path, want string }{
		{"DELETE", second, "convo store rm"},
		{"POST", second + "/cancel", "nothing to cancel"},
	} {
		status, _, body := call(t, c.method, base+c.path, token)
		var e struct {
			Error struct{ Message, Type string }
		}
		if status != http.StatusBadRequest || json.Unmarshal(body, &e) != nil || e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, c.want) {
			t.Errorf("%s %s: status %d: %s", c.method, c.path, status, body)
		}
	}
	if status, _, body := call(t, "GET", base+second, token); status != 200 || responseIDOf(t, body, false) != second {
		t.Errorf("after DELETE: status %d: %s", status, body)
	}
	for _, path := range []string{second, second + "/input_items"} {
		if status, _, body := call(t, "GET", base+path, "tok-other"); status != http.StatusNotFound {
			t.Errorf("%s with another key: status %d: %s", path, status, body)
		}
	}
}
