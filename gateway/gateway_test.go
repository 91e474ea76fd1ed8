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
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// recorded are recorded replies of each protocol, plain and streamed, with
// tool calls, reasoning (signatures, encrypted content) and usage.
var recorded = map[string]struct{ plain, stream string }{
	"openai-chat":      {"../provider/openai/testdata/replies/chat/tools.json", "../provider/openai/testdata/replies/chat/tools.sse"},
	"openai-responses": {"../provider/openai/testdata/replies/responses/tools.json", "../provider/openai/testdata/replies/responses/tools.sse"},
	"anthropic":        {"../provider/anthropic/testdata/reply/tool_use.json", "../provider/anthropic/testdata/reply/tool_use.sse"},
	"gemini":           {"../provider/gemini/testdata/replies/signed.json", "../provider/gemini/testdata/replies/signed.sse"},
	"ollama":           {"../provider/ollama/testdata/replies/tools.json", "../provider/ollama/testdata/replies/tools.ndjson"},
	"bedrock":          {"../provider/bedrock/testdata/replies/tool_use.json", "../provider/bedrock/testdata/replies/tool_use.bin"},
}

// clientPaths are the gateway endpoints of each protocol.
func clientPath(proto, model string, stream bool) string {
	switch proto {
	case "openai-chat":
		return "/v1/chat/completions"
	case "openai-responses":
		return "/v1/responses"
	case "anthropic":
		return "/v1/messages"
	case "gemini":
		if stream {
			return "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
		}
		return "/v1beta/models/" + model + ":generateContent"
	}
	return "/api/chat"
}

// fakeUpstream replays a recorded reply and remembers the last request.
type fakeUpstream struct {
	*httptest.Server
	proto         string
	plain, stream []byte
	ndjson        bool
	status        int
	retryAfter    string
	cut           bool   // end the stream half-way with a broken connection
	cutBefore     string // with cut, end it just before this instead
	last          atomic.Pointer[http.Request]
	lastBody      atomic.Pointer[[]byte]
}

func newFake(t testing.TB, proto string) *fakeUpstream {
	t.Helper()
	f := &fakeUpstream{proto: proto, ndjson: proto == "ollama"}
	var err error
	if f.plain, err = os.ReadFile(recorded[proto].plain); err != nil {
		t.Fatal(err)
	}
	if f.stream, err = os.ReadFile(recorded[proto].stream); err != nil {
		t.Fatal(err)
	}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.last.Store(r)
		f.lastBody.Store(&body)
		if f.status != 0 {
			if f.retryAfter != "" {
				w.Header().Set("Retry-After", f.retryAfter)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(f.status)
			_, _ = w.Write([]byte(`{"error":{"message":"slow down","type":"rate_limit_error"}}`))
			return
		}
		if proto == "bedrock" && r.Header.Get("Authorization") != "AWS4-HMAC-SHA256 test-signature" {
			w.WriteHeader(403)
			return
		}
		streamed := strings.Contains(r.URL.Path, "streamGenerateContent") || strings.HasSuffix(r.URL.Path, "/converse-stream") || bytes.Contains(body, []byte(`"stream":true`)) ||
			(f.ndjson && !bytes.Contains(body, []byte(`"stream":false`)))
		if !streamed {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(f.plain)
			return
		}
		ct := "text/event-stream"
		if f.ndjson {
			ct = "application/x-ndjson"
		}
		if proto == "bedrock" {
			ct = "application/vnd.amazon.eventstream"
		}
		w.Header().Set("Content-Type", ct)
		data := f.stream
		if f.cut {
			end := len(data) / 2
			if i := bytes.Index(data, []byte(f.cutBefore)); f.cutBefore != "" && i >= 0 {
				end = i
			}
			data = data[:end]
		}
		// Chunk by chunk, flushed, as a provider streams.
		for len(data) > 0 {
			n := min(len(data), 97)
			_, _ = w.Write(data[:n])
			w.(http.Flusher).Flush()
			data = data[n:]
		}
		if f.cut {
			panic(http.ErrAbortHandler) // a broken connection
		}
	}))
	t.Cleanup(f.Close)
	return f
}

type rig struct {
	gw  *gateway.Gateway
	srv *httptest.Server
	st  store.Store
	up  *fakeUpstream
}

const token, tenant = "tok-alice", "alice"

func newRig(t testing.TB, proto string, mod func(*gateway.Options)) *rig {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "gw.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	up := newFake(t, proto)
	opts := gateway.Options{
		Config: gateway.Config{
			Upstreams: []gateway.Upstream{{Name: "up", Protocol: proto, URL: up.URL + "/v1", KeyEnv: "UP_KEY"}},
			Routes:    []gateway.Route{{Model: "*", Upstream: "up"}},
		},
		Store:  st,
		Tokens: map[string]string{token: tenant},
		Getenv: func(k string) string {
			if k == "UP_KEY" {
				return "sk-upstream-secret"
			}
			return ""
		},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if proto == "anthropic" || proto == "gemini" || proto == "ollama" || proto == "bedrock" {
		opts.Config.Upstreams[0].URL = up.URL
	}
	opts.SignBedrock = func(req *http.Request, body []byte) error {
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 test-signature")
		return nil
	}
	if mod != nil {
		mod(&opts)
	}
	gw, err := gateway.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	return &rig{gw: gw, srv: srv, st: st, up: up}
}

// requestBody is what a client of proto sends for h.
func requestBody(t testing.TB, proto, model string, h convo.History, stream bool) []byte {
	t.Helper()
	c, err := all.Lookup(proto)
	if err != nil {
		t.Fatal(err)
	}
	conv, _, err := c.Encode(h, provider.Options{Repair: true})
	if err != nil {
		t.Fatal(err)
	}
	head := `{"model":"` + model + `",`
	if proto == "gemini" {
		head = "{"
	}
	if stream && proto != "gemini" && proto != "ollama" {
		head += `"stream":true,`
	}
	if stream && proto == "openai-chat" {
		head += `"stream_options":{"include_usage":true},`
	}
	if !stream && proto == "ollama" {
		head += `"stream":false,`
	}
	return append([]byte(head), conv[1:]...)
}

func (rg *rig) post(t testing.TB, proto, model string, body []byte, stream bool, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", rg.srv.URL+clientPath(proto, model, stream), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	switch proto {
	case "anthropic":
		req.Header.Set("X-Api-Key", token)
	case "gemini":
		req.Header.Set("X-Goog-Api-Key", token)
	default:
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func (rg *rig) drain(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rg.gw.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

var protos = []string{"openai-chat", "openai-responses", "anthropic", "gemini", "ollama"}

// TestPassThrough: for every protocol, plain and streamed, the client gets
// the upstream's bytes unchanged; the upstream gets the client's bytes with
// the upstream key instead of the gateway token; the store gets the
// request's messages and the reply; a next request that carries the reply
// back (in the client's own rendering) is appended to the same
// conversation.
func TestPassThrough(t *testing.T) {
	for _, proto := range protos {
		for _, stream := range []bool{false, true} {
			name := proto + map[bool]string{false: "/plain", true: "/stream"}[stream]
			t.Run(name, func(t *testing.T) {
				rg := newRig(t, proto, nil)
				model := "m-1"
				h := convo.History{convo.System("Be brief."), convo.User("Weather in Paris?")}
				body := requestBody(t, proto, model, h, stream)
				resp := rg.post(t, proto, model, body, stream, nil)
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("status %d: %s", resp.StatusCode, got)
				}
				want := rg.up.plain
				if stream {
					want = rg.up.stream
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("client got other bytes than the upstream sent:\n%s", got)
				}
				conv := resp.Header.Get("Convo-Conversation")
				ids := strings.Split(resp.Header.Get("Convo-Message-Ids"), ",")
				if conv == "" || len(ids) != 3 {
					t.Fatalf("headers: %v", resp.Header)
				}
				// The upstream saw the client's bytes and the upstream key only.
				ur := rg.up.last.Load()
				if !bytes.Equal(*rg.up.lastBody.Load(), body) {
					t.Errorf("upstream got other bytes than the client sent")
				}
				for k, v := range ur.Header {
					if strings.Contains(strings.Join(v, ","), token) {
						t.Errorf("gateway token forwarded upstream in %s", k)
					}
				}
				if !strings.Contains(ur.Header.Get("Authorization")+ur.Header.Get("X-Api-Key")+ur.Header.Get("X-Goog-Api-Key"), "sk-upstream-secret") {
					t.Errorf("upstream key not sent: %v", ur.Header)
				}

				// A second turn, carrying the reply back as the client renders it.
				reply := wantReply(t, proto, want, stream)
				h2 := append(append(h[:len(h):len(h)], reply), convo.User("And tomorrow?"))
				if reply.HasToolCalls() {
					h2 = append(h[:len(h):len(h)], reply, answers(reply, `{"temp_c":18}`))
				}
				body2 := requestBody(t, proto, model, h2, stream)
				resp2 := rg.post(t, proto, model, body2, stream, nil)
				io.Copy(io.Discard, resp2.Body)
				resp2.Body.Close()
				if c2 := resp2.Header.Get("Convo-Conversation"); c2 != conv {
					t.Errorf("second turn recorded in %s, want %s (continuation by fingerprint)", c2, conv)
				}
				rg.drain(t)

				stored, _, err := rg.st.Load(context.Background(), tenant, conv, 0)
				if err != nil {
					t.Fatal(err)
				}
				if len(stored) < 5 || !stored[len(stored)-1].IsAssistant() || !stored[3].IsToolResult() && !stored[3].IsUser() {
					t.Fatalf("stored %v, want 2 asked, 1 reply, the next turn, 1 reply", roles(stored))
				}
				if stored[0].ID != ids[0] || stored[2].ID != ids[2] {
					t.Errorf("stored ids %s %s, headers said %v", stored[0].ID, stored[2].ID, ids)
				}
				got2 := stored[2]
				got2.ID, got2.Time = reply.ID, reply.Time
				if !reflect.DeepEqual(got2, reply) {
					t.Errorf("stored reply differs from the upstream's:\n got %+v\nwant %+v", got2, reply)
				}
				if st := rg.gw.Stats(); st.Recorded != 2 || st.Dropped != 0 || st.Failed != 0 {
					t.Errorf("stats %+v", st)
				}
			})
		}
	}
}

func roles(h convo.History) []convo.Role {
	var rs []convo.Role
	for _, m := range h {
		rs = append(rs, m.Role)
	}
	return rs
}

// wantReply decodes a recorded reply as convo reads it.
func wantReply(t testing.TB, proto string, data []byte, stream bool) convo.Message {
	t.Helper()
	rc, _ := all.Lookup(proto)
	var m convo.Message
	var err error
	if stream {
		m, _, err = rc.ReadStream(bytes.NewReader(data), provider.Options{})
	} else {
		m, _, err = rc.DecodeReply(data, provider.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestUpstreamErrors: an upstream 429 reaches the client with its body and
// Retry-After, and is recorded as an error message.
func TestUpstreamErrors(t *testing.T) {
	rg := newRig(t, "anthropic", nil)
	rg.up.status, rg.up.retryAfter = 429, "7"
	body := requestBody(t, "anthropic", "m", convo.History{convo.User("hi")}, true)
	resp := rg.post(t, "anthropic", "m", body, true, nil)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || !bytes.Contains(got, []byte("slow down")) {
		t.Fatalf("%d %v %s", resp.StatusCode, resp.Header, got)
	}
	rg.drain(t)
	h, _, err := rg.st.Load(context.Background(), tenant, resp.Header.Get("Convo-Conversation"), 0)
	if err != nil || len(h) != 2 || !h[1].IsError() || !strings.Contains(h[1].Text(), "slow down") {
		t.Fatalf("recorded %v, %v", h, err)
	}
}

// TestMidStreamFailure: an upstream stream that breaks ends the client's
// stream with its protocol's error event, and the partial reply and an
// error message are recorded.
func TestMidStreamFailure(t *testing.T) {
	rg := newRig(t, "anthropic", nil)
	rg.up.cut = true
	body := requestBody(t, "anthropic", "m", convo.History{convo.User("hi")}, true)
	resp := rg.post(t, "anthropic", "m", body, true, nil)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.HasSuffix(got, []byte("\n\n")) || !bytes.Contains(got, []byte("event: error\n")) {
		t.Fatalf("stream does not end with an error event:\n%s", got)
	}
	rg.drain(t)
	h, _, err := rg.st.Load(context.Background(), tenant, resp.Header.Get("Convo-Conversation"), 0)
	if err != nil || len(h) < 2 || !h[len(h)-1].IsError() {
		t.Fatalf("recorded %v, %v", roles(h), err)
	}
}

// TestMidStreamFailureAfterToolCall: a stream that breaks after a tool
// call was streamed cannot be followed by an error message (only results
// may follow calls), so the failure is recorded on the partial reply, and
// the exchange is kept rather than refused by the store.
func TestMidStreamFailureAfterToolCall(t *testing.T) {
	rg := newRig(t, "anthropic", nil)
	rg.up.cut, rg.up.cutBefore = true, "event: message_delta"
	body := requestBody(t, "anthropic", "m", convo.History{convo.User("hi")}, true)
	resp := rg.post(t, "anthropic", "m", body, true, nil)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(got, []byte("event: error\n")) {
		t.Fatalf("stream does not end with an error event:\n%s", got)
	}
	rg.drain(t)
	if s := rg.gw.Stats(); s.Failed != 0 || s.Recorded != 1 {
		t.Fatalf("stats %+v", s)
	}
	h, _, err := rg.st.Load(context.Background(), tenant, resp.Header.Get("Convo-Conversation"), 0)
	if err != nil || len(h) != 2 {
		t.Fatalf("recorded %v, %v", roles(h), err)
	}
	last := h[1]
	var note struct{ Error string }
	_ = json.Unmarshal(last.Native["convo"], &note)
	if last.Role != convo.RoleAssistant || len(last.ToolCalls()) == 0 || last.Finish != convo.FinishError || note.Error == "" {
		t.Fatalf("partial reply %+v (convo note %q)", last, note.Error)
	}
}

// TestAuth: a wrong or missing token is refused in the client's protocol.
func TestAuth(t *testing.T) {
	rg := newRig(t, "openai-chat", nil)
	req, _ := http.NewRequest("POST", rg.srv.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m","messages":[]}`))
	req.Header.Set("Authorization", "Bearer wrong")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var e struct {
		Error struct{ Type string }
	}
	if resp.StatusCode != 401 || json.Unmarshal(got, &e) != nil || e.Error.Type != "authentication_error" {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
	if rg.up.last.Load() != nil {
		t.Fatal("an unauthenticated request reached the upstream")
	}
}

// TestBodyLimit: a body over the limit is refused with 413 before any
// upstream request.
func TestBodyLimit(t *testing.T) {
	rg := newRig(t, "anthropic", func(o *gateway.Options) { o.MaxBodyBytes = 100 })
	body := requestBody(t, "anthropic", "m", convo.History{convo.User(strings.Repeat("x", 200))}, false)
	resp := rg.post(t, "anthropic", "m", body, false, nil)
	resp.Body.Close()
	if resp.StatusCode != 413 || rg.up.last.Load() != nil {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// TestExplicitConversation: Convo-Conversation names the conversation an
// exchange is recorded in.
func TestExplicitConversation(t *testing.T) {
	rg := newRig(t, "ollama", nil)
	body := requestBody(t, "ollama", "m", convo.History{convo.User("hi")}, true)
	resp := rg.post(t, "ollama", "m", body, true, map[string]string{"Convo-Conversation": "my-conv"})
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Convo-Conversation") != "my-conv" {
		t.Fatal(resp.Header)
	}
	rg.drain(t)
	if h, _, err := rg.st.Load(context.Background(), tenant, "my-conv", 0); err != nil || len(h) != 2 {
		t.Fatalf("%v %v", roles(h), err)
	}
}

// TestExplicitConversationAtOnce: a client that names its conversation and
// sends the next turn the moment the reply ends, before the first is
// written, still continues it: the gateway waits for the tenant's queued
// recordings before it looks the conversation up, as it does for one it
// recognises.
func TestExplicitConversationAtOnce(t *testing.T) {
	rg := newRig(t, "openai-chat", nil)
	hdr := map[string]string{"Convo-Conversation": "my-conv"}
	h := convo.History{convo.User("hi")}
	for turn := range 2 {
		resp := rg.post(t, "openai-chat", "m", requestBody(t, "openai-chat", "m", h, false), false, hdr)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h = append(h, wantReply(t, "openai-chat", got, false), convo.User("turn "+strconv.Itoa(turn+2)))
	}
	rg.drain(t)
	if s := rg.gw.Stats(); s.Recorded != 2 || s.Failed != 0 {
		t.Errorf("stats %+v, want both exchanges recorded", s)
	}
	stored, _, err := rg.st.Load(context.Background(), tenant, "my-conv", 0)
	if n := strings.Count(fmt.Sprint(roles(stored)), "assistant"); err != nil || n != 2 {
		t.Errorf("stored %v, %v; want both replies", roles(stored), err)
	}
}

// TestBadConversationHeader: a Convo-Conversation that cannot name a
// conversation is refused before any upstream request.
func TestBadConversationHeader(t *testing.T) {
	rg := newRig(t, "ollama", nil)
	for _, id := range []string{"a/b", "has space", strings.Repeat("x", 300)} {
		body := requestBody(t, "ollama", "m", convo.History{convo.User("hi")}, true)
		resp := rg.post(t, "ollama", "m", body, true, map[string]string{"Convo-Conversation": id})
		resp.Body.Close()
		if resp.StatusCode != 400 || rg.up.last.Load() != nil {
			t.Fatalf("%q: status %d", id, resp.StatusCode)
		}
	}
}

// blockingStore holds every Batch until release is closed; entered gets
// a value as each Batch starts.
type blockingStore struct {
	store.Store
	release chan struct{}
	entered chan struct{}
}

func (b *blockingStore) Batch(ctx context.Context, writes []store.Write) []store.WriteResult {
	b.entered <- struct{}{}
	<-b.release
	return b.Store.Batch(ctx, writes)
}

// TestQueueFull: with the writer held up and the queue full, exchanges are
// still answered at once; the recordings that do not fit are dropped and
// counted, the others written when the writer resumes — Close waits for
// them.
func TestQueueFull(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{}, 10)
	reg := prometheus.NewRegistry()
	rg := newRig(t, "openai-chat", func(o *gateway.Options) {
		o.Metrics = reg
		o.QueueSize = 2
		o.Store = &blockingStore{Store: o.Store, release: release, entered: entered}
	})
	const n = 6
	for i := 0; i < n; i++ {
		if i == 1 {
			<-entered // the writer holds the first record
		}
		body := requestBody(t, "openai-chat", "m", convo.History{convo.User("hi " + strings.Repeat("!", i))}, true)
		resp := rg.post(t, "openai-chat", "m", body, true, nil)
		if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != 200 {
			t.Fatal(resp.StatusCode, err)
		}
		resp.Body.Close()
	}

	close(release)
	rg.drain(t)
	st := rg.gw.Stats()
	// One record is with the writer, two wait in the queue, and are
	// written together: one batch.
	if len(entered) != 1 {
		t.Errorf("the two queued records took %d batches, want 1", len(entered))
	}
	if st.Recorded != 3 || st.Dropped != n-3 || st.Failed != 0 {
		t.Fatalf("stats %+v, want 3 recorded and %d dropped", st, n-3)
	}
	// The metrics count the same.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() == "convo_gateway_recordings_total" {
			for _, m := range mf.GetMetric() {
				got[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
			}
		}
	}
	if got["written"] != 3 || got["dropped"] != n-3 || got["failed"] != 0 {
		t.Errorf("convo_gateway_recordings_total %v, want 3 written and %d dropped", got, n-3)
	}
}

// TestClientDisconnect: a client that goes away mid-stream cancels the
// upstream request.
func TestClientDisconnect(t *testing.T) {
	cancelled := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			close(cancelled)
		case <-time.After(10 * time.Second):
		}
	}))
	defer upstream.Close()
	rg := newRig(t, "anthropic", func(o *gateway.Options) { o.Config.Upstreams[0].URL = upstream.URL })
	ctx, cancel := context.WithCancel(context.Background())
	body := requestBody(t, "anthropic", "m", convo.History{convo.User("hi")}, true)
	req, _ := http.NewRequestWithContext(ctx, "POST", rg.srv.URL+"/v1/messages", bytes.NewReader(body))
	req.Header.Set("X-Api-Key", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream request was not cancelled")
	}
	// The handler records the exchange once it sees the upstream end.
	for i := 0; rg.gw.Stats().Recorded == 0 && i < 500; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	rg.drain(t)
	h, _, err := rg.st.Load(context.Background(), tenant, resp.Header.Get("Convo-Conversation"), 0)
	if err != nil || !h[len(h)-1].IsError() {
		t.Fatalf("recorded %v %v", roles(h), err)
	}
}

// view is what every protocol carries of a reply.
type view struct {
	Text, Reasoning string
	Calls           []string
	Input, Output   int64
}

func viewOf(m convo.Message) view {
	var v view
	for _, p := range m.Parts {
		switch p.Type {
		case convo.TypeText, convo.TypeRefusal:
			v.Text += p.Text
		case convo.TypeReasoning:
			v.Reasoning += p.Text + strings.Join(p.Summary, "\n\n")
		case convo.TypeToolCall:
			var args any
			_ = json.Unmarshal(p.Args, &args)
			b, _ := json.Marshal(args)
			v.Calls = append(v.Calls, unsynth(p.ID)+" "+p.Name+" "+string(b))
		}
	}
	if m.Usage != nil {
		v.Input, v.Output = m.Usage.Input, m.Usage.Output
	}
	return v
}

// TestTranslate: for every pair of client and upstream protocols, plain and
// streamed, the client reads the upstream's reply in its own protocol (its
// text, reasoning, tool calls and usage), the store holds the upstream's
// reply as convo reads it, and the client's next turn — carrying the reply
// back in the client's rendering — continues the same conversation. Pairs
// whose requests cannot be converted yet are answered 501.
func TestTranslate(t *testing.T) {
	for _, client := range protos {
		for _, upstream := range append(protos, "bedrock") {
			if client == upstream {
				continue
			}
			for _, stream := range []bool{false, true} {
				name := client + "->" + upstream + map[bool]string{false: "/plain", true: "/stream"}[stream]
				t.Run(name, func(t *testing.T) {
					rg := newRig(t, upstream, nil)
					model := "m-1"
					h := convo.History{convo.System("Be brief."), convo.User("Weather in Paris?")}
					body := requestBody(t, client, model, h, stream)
					resp := rg.post(t, client, model, body, stream, nil)
					got, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					_, e1 := all.LookupRequest(client)
					_, e2 := all.LookupRequest(upstream)
					if e1 != nil || e2 != nil {
						if resp.StatusCode != http.StatusNotImplemented {
							t.Fatalf("status %d, want 501: %s", resp.StatusCode, got)
						}
						return
					}
					if resp.StatusCode != 200 {
						t.Fatalf("status %d: %s", resp.StatusCode, got)
					}
					upData := rg.up.plain
					if stream {
						upData = rg.up.stream
					}
					want := wantReply(t, upstream, upData, stream)
					seen := wantReply(t, client, got, stream)
					if gv, wv := viewOf(seen), viewOf(want); !reflect.DeepEqual(gv, wv) {
						t.Fatalf("client saw\n %+v\nupstream sent\n %+v\n%s", gv, wv, got)
					}
					conv := resp.Header.Get("Convo-Conversation")

					h2 := append(h[:len(h):len(h)], seen, convo.User("And tomorrow?"))
					if seen.HasToolCalls() {
						h2 = append(h[:len(h):len(h)], seen, answers(seen, `{"temp_c":18}`))
					}
					resp2 := rg.post(t, client, model, requestBody(t, client, model, h2, stream), stream, nil)
					got2, _ := io.ReadAll(resp2.Body)
					resp2.Body.Close()
					if c2 := resp2.Header.Get("Convo-Conversation"); c2 != conv {
						t.Errorf("second turn recorded in %s, want %s", c2, conv)
					}
					// What the client's protocol could not carry back of
					// the reply reaches the upstream from the record.
					body2 := *rg.up.lastBody.Load()
					for _, tok := range opaque(want) {
						if !bytes.Contains(body2, []byte(tok)) {
							t.Errorf("the second request to the upstream lacks %.24q… of its first reply:\n%s", tok, body2)
						}
					}
					checkPaired(t, upstream, body2)
					if seen.HasToolCalls() {
						thirdStep(t, rg, client, upstream, model, stream, append(h2, wantReply(t, client, got2, stream)), want, body2)
					}
					rg.drain(t)
					stored, _, err := rg.st.Load(context.Background(), tenant, conv, 0)
					if err != nil || len(stored) < 5 {
						t.Fatalf("stored %v, %v", roles(stored), err)
					}
					r := stored[2]
					r.ID, r.Time = want.ID, want.Time
					// A call id convo made up for Ollama is the one the
					// client was told, which the stream reader may make
					// up differently at its end (DeltaReader keeps the
					// first).
					for i := range r.Parts {
						if i < len(want.Parts) && unsynth(r.Parts[i].ID) == "made-up" && unsynth(want.Parts[i].ID) == "made-up" {
							r.Parts[i].ID = want.Parts[i].ID
						}
					}
					if !reflect.DeepEqual(r, want) {
						t.Errorf("stored reply differs from the upstream's:\n got %+v\nwant %+v", r, want)
					}
				})
			}
		}
	}
}

// thirdStep sends a tool loop's third step, h with the results of its last
// reply's calls: every step of the turn, the first one's as much as the
// second's, reaches the upstream with what the client's protocol could not
// carry back of it (the upstream replays the same reply at each step, so
// each of its opaque values is in the third request twice as often as in
// the second, body2).
func thirdStep(t *testing.T, rg *rig, client, upstream, model string, stream bool, h convo.History, want convo.Message, body2 []byte) {
	t.Helper()
	resp := rg.post(t, client, model, requestBody(t, client, model, append(h, answers(h[len(h)-1], `{"temp_c":19}`)), stream), stream, nil)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("third step: status %d: %s", resp.StatusCode, got)
	}
	body3 := *rg.up.lastBody.Load()
	for _, tok := range opaque(want) {
		if n2, n3 := bytes.Count(body2, []byte(tok)), bytes.Count(body3, []byte(tok)); n3 < 2*n2 {
			t.Errorf("the third request to the upstream has %.24q… %d times, want %d (twice the second's):\n%s", tok, n3, 2*n2, body3)
		}
	}
	checkPaired(t, upstream, body3)
}

// answers is the results of m's tool calls, each out.
func answers(m convo.Message, out string) convo.Message {
	var results []convo.Part
	for _, c := range m.ToolCalls() {
		results = append(results, convo.ToolResult(c.ID, c.Name, out))
	}
	return convo.ToolResults(results...)
}

// checkPaired checks that every tool result of a request body names a call
// made before it.
func checkPaired(t *testing.T, proto string, body []byte) {
	t.Helper()
	c, err := all.LookupRequest(proto)
	if err != nil {
		t.Fatal(err)
	}
	r, _, err := c.DecodeRequest(body, provider.Options{})
	if err != nil {
		t.Fatalf("the upstream's request: %v", err)
	}
	calls := map[string]bool{}
	for _, m := range r.History {
		for _, p := range m.Parts {
			switch {
			case p.Type == convo.TypeToolCall:
				calls[p.ID] = true
			case p.Type == convo.TypeToolResult && !calls[p.ID]:
				t.Errorf("the upstream's request has a result for call %q, which it does not make:\n%s", p.ID, body)
			case p.Type == convo.TypeToolResult && !strings.Contains(p.Text+fmt.Sprint(p.Parts), "temp_c"):
				t.Errorf("the upstream's request lost the client's result for call %q:\n%s", p.ID, body)
			}
		}
	}
}

// opaque returns what of m only its provider reads: reasoning signatures
// and encrypted reasoning, and Gemini's signatures on other parts.
func opaque(m convo.Message) []string {
	var out []string
	for _, p := range m.Parts {
		if p.Signature != "" || p.Encrypted != "" {
			out = append(out, p.Signature+p.Encrypted)
		}
		var g struct {
			Sig string `json:"thoughtSignature"`
		}
		if json.Unmarshal(p.Native["gemini"], &g) == nil && g.Sig != "" {
			out = append(out, g.Sig)
		}
	}
	return out
}

// TestTranslateMidStreamFailure: an Anthropic stream that breaks reaches an
// OpenAI Chat client as an error chunk, and is recorded as an error.
func TestTranslateMidStreamFailure(t *testing.T) {
	rg := newRig(t, "anthropic", nil)
	rg.up.cut = true
	body := requestBody(t, "openai-chat", "m", convo.History{convo.User("hi")}, true)
	resp := rg.post(t, "openai-chat", "m", body, true, nil)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	lines := strings.Split(strings.TrimSpace(string(got)), "\n\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, `data: {"error":{"message":`) {
		t.Fatalf("stream does not end with an error chunk:\n%s", got)
	}
	for i := 0; rg.gw.Stats().Recorded == 0 && i < 500; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	rg.drain(t)
	h, _, err := rg.st.Load(context.Background(), tenant, resp.Header.Get("Convo-Conversation"), 0)
	if err != nil || !h[len(h)-1].IsError() {
		t.Fatalf("recorded %v, %v", roles(h), err)
	}
}

// unsynth hides tool-call ids convo makes up (provider.SynthID).
func unsynth(id string) string {
	if len(id) == len("call_")+16 && strings.HasPrefix(id, "call_") && strings.Trim(id[5:], "0123456789abcdef") == "" {
		return "made-up"
	}
	return id
}

// TestTranslatedUpstreamError: an Anthropic 429 reaches an OpenAI Chat
// client as an OpenAI error, with Retry-After.
func TestTranslatedUpstreamError(t *testing.T) {
	rg := newRig(t, "anthropic", nil)
	rg.up.status, rg.up.retryAfter = 429, "3"
	resp := rg.post(t, "openai-chat", "m", requestBody(t, "openai-chat", "m", convo.History{convo.User("hi")}, true), true, nil)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var e struct {
		Error struct{ Message, Type string }
	}
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" || json.Unmarshal(got, &e) != nil ||
		e.Error.Type != "rate_limit_exceeded" || e.Error.Message != "slow down" {
		t.Fatalf("%d %v %s", resp.StatusCode, resp.Header, got)
	}
}

// TestModels lists the routes.
func TestModels(t *testing.T) {
	rg := newRig(t, "openai-chat", nil)
	req, _ := http.NewRequest("GET", rg.srv.URL+"/v1/models", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(got) != `{"object":"list","data":[{"id":"*","object":"model","created":0,"owned_by":"up"}]}` {
		t.Fatalf("%d %s", resp.StatusCode, got)
	}
}

// TestTranslateStateful: a client that asks for state its provider stored
// — a Responses client's previous response (one the gateway did not give),
// conversation or stored prompt, a Gemini client's cached content — cannot
// have it from a translated route: it gets a clear error in its own shape,
// naming the member, and nothing reaches the upstream (which would get the
// request without that part of its context). Passed through, the provider
// resolves it.
func TestTranslateStateful(t *testing.T) {
	outputs := `"input":[{"type":"function_call_output","call_id":"call_1","output":"18"}]`
	for _, c := range []struct{ client, member, body string }{
		{"openai-responses", "previous_response_id", `{"model":"m-1","previous_response_id":"resp_68af0c2a",` + outputs + `}`},
		{"openai-responses", "conversation", `{"model":"m-1","conversation":"conv_68af0c2a",` + outputs + `}`},
		{"openai-responses", "prompt", `{"model":"m-1","prompt":{"id":"pmpt_68af0c2a","version":"2"},"input":"Paris"}`},
		{"gemini", "cachedContent", `{"cachedContent":"cachedContents/68af0c2a","contents":[{"role":"user","parts":[{"text":"And Paris?"}]}]}`},
	} {
		rg := newRig(t, "anthropic", nil)
		resp := rg.post(t, c.client, "m-1", []byte(c.body), false, nil)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var e struct {
			Error struct{ Message string }
		}
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(got, &e) != nil || !strings.Contains(e.Error.Message, c.member) {
			t.Errorf("%s: status %d: %s", c.member, resp.StatusCode, got)
		}
		if rg.up.lastBody.Load() != nil {
			t.Errorf("%s: the request reached the upstream: %s", c.member, *rg.up.lastBody.Load())
		}
		same := newRig(t, c.client, nil)
		resp = same.post(t, c.client, "m-1", []byte(c.body), false, nil)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Equal(*same.up.lastBody.Load(), []byte(c.body)) {
			t.Errorf("%s: passed through with status %d", c.member, resp.StatusCode)
		}
	}
}

// TestTranslationWarningsLogged: what translating a request changed is
// on the exchange's one log line — an OpenAI Chat request without
// max_tokens sent to Anthropic gets the model's maximum output — not on a
// line of its own; a passed-through exchange's line has none.
func TestTranslationWarningsLogged(t *testing.T) {
	logs := &lockedLog{}
	rg := newRig(t, "anthropic", func(o *gateway.Options) {
		o.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	})
	for _, client := range []string{"openai-chat", "anthropic"} {
		body := requestBody(t, client, "claude-sonnet-4-5", convo.History{convo.User("hi")}, true)
		if client == "openai-chat" {
			body = []byte(`{"model":"claude-sonnet-4-5","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
		}
		resp := rg.post(t, client, "claude-sonnet-4-5", body, true, nil)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	rg.drain(t)
	logs.mu.Lock()
	defer logs.mu.Unlock()
	var lines []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(logs.buf.Bytes()), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if m["msg"] != "gateway" {
			t.Errorf("a line other than the exchanges': %s", l)
			continue
		}
		lines = append(lines, m)
	}
	if len(lines) != 2 {
		t.Fatalf("%d exchange lines, want 2:\n%s", len(lines), logs.buf.Bytes())
	}
	if w, _ := lines[0]["warning"].(string); lines[0]["warnings"] != 1.0 || !strings.Contains(w, "max_tokens") {
		t.Errorf("translated exchange's line %v: want its one warning, about max_tokens", lines[0])
	}
	if _, ok := lines[1]["warnings"]; ok {
		t.Errorf("passed-through exchange's line %v has warnings", lines[1])
	}
}
