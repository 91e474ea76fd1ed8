package gateway_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/store"
	"github.com/convo-go/convo/store/sqlite"
)

// signalWrites is a store whose writes succeed without storing and are
// announced on wrote, so that a test can wait for the recorder to finish
// an exchange.
type signalWrites struct {
	store.Store
	wrote chan int
}

func (s signalWrites) Batch(_ context.Context, writes []store.Write) []store.WriteResult {
	s.wrote <- len(writes)
	return make([]store.WriteResult, len(writes))
}

// Bounds of TestRecordingAllocs, a little above what was measured on
// 2026-12-06 (linux/amd64): 188 allocations for a recorded pass-through
// exchange, the handler's and the recorder's together (httptest's request
// and recorder included; 270 on 2026-12-05), 112 for the same exchange
// with Convo-Record: off (113 while its reply was still copied), and 222
// for an OpenAI Chat client's exchange translated to the Anthropic
// upstream and recorded (259 before the translated stream's deltas had
// room from the start, the Anthropic request's keys were not grown one by
// one, and an absent native member was not unmarshalled). The recorded
// exchange took 213 before the conversation's metadata was appended rather
// than built by json.Marshal of a map and the request's settings were not
// encoded again when unchanged, and 204 (translated: 235) while the writer
// read a short request again even when the queue was not pressed. The
// translated exchange takes 216 since the Anthropic stream's head events
// are read without the general reader and each event in the SSE reader's
// own buffer (the recorded one then 182). The recorded one took 176 on
// 2026-12-07 once a short streamed reply kept the pool's buffer it was
// read into rather than a copy (copyReply). A change
// that makes every exchange allocate more fails here; one that makes it
// allocate less should lower them.
const (
	maxRecordedAllocs   = 180
	maxUnrecordedAllocs = 114
	maxTranslatedAllocs = 219
)

// TestRecordingAllocs guards the allocations of the recording path, the
// hot path of a busy gateway: one streamed Anthropic exchange passed
// through the handler (the upstream replayed in the process), and its
// recording prepared by the writer (the reply's stream folded, the
// request's messages, the store write) up to the store, which discards
// it. testing.AllocsPerRun counts the process's allocations, so the
// writer's goroutine is counted: each run waits for its batch.
func TestRecordingAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are not counted under the race detector")
	}
	if testing.Short() {
		t.Skip("allocation counts: not in -short")
	}
	data, err := os.ReadFile(recorded["anthropic"].stream)
	if err != nil {
		t.Fatal(err)
	}
	sw := signalWrites{openStore(t), make(chan int, 1)}
	gw := replayGateway(t, data, sw, -1) // a batch per exchange, written at once
	bodies := map[string][]byte{
		"anthropic":   []byte(`{"model":"claude-bench","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}]}`),
		"openai-chat": []byte(`{"model":"` + benchModel + `","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Weather in Paris?"}]}`),
	}
	serve := func(client string, record bool) {
		req := httptest.NewRequest("POST", clientPath(client, "claude-bench", true), bytes.NewReader(bodies[client]))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", token)
		req.Header.Set("Authorization", "Bearer "+token)
		if !record {
			req.Header.Set("Convo-Record", "off")
		}
		w := httptest.NewRecorder()
		gw.ServeHTTP(w, req)
		if w.Code != 200 || !bytes.Contains(w.Body.Bytes(), []byte("get_weather")) {
			t.Fatalf("status %d: %s", w.Code, w.Body.String())
		}
		if record {
			if n := <-sw.wrote; n != 1 {
				t.Fatalf("batch of %d writes, want 1", n)
			}
		}
	}
	for _, c := range []struct {
		name   string
		client string
		record bool
		max    float64
	}{
		{"recorded", "anthropic", true, maxRecordedAllocs},
		{"not recorded", "anthropic", false, maxUnrecordedAllocs},
		{"translated, recorded", "openai-chat", true, maxTranslatedAllocs},
	} {
		serve(c.client, c.record) // warm: the first exchange fills caches
		got := testing.AllocsPerRun(50, func() { serve(c.client, c.record) })
		t.Logf("%s: %.0f allocations an exchange (bound %.0f)", c.name, got, c.max)
		if got > c.max {
			t.Errorf("%s: %.0f allocations an exchange, more than %.0f: the recording path allocates more than it did", c.name, got, c.max)
		}
	}
	select {
	case n := <-sw.wrote:
		t.Errorf("an exchange with Convo-Record: off was recorded (%d writes)", n)
	default:
	}
}

// discardWriter is a streaming http.ResponseWriter that keeps nothing of
// the body, so that what an exchange allocates is the gateway's.
type discardWriter struct {
	h    http.Header
	code int
	n    int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(code int)        { d.code = code }
func (d *discardWriter) Write(p []byte) (int, error) { d.n += len(p); return len(p), nil }
func (d *discardWriter) Flush()                      {}

// TestUnrecordedReplyNotKept checks that a pass-through exchange with
// Convo-Record: off keeps nothing of its reply: a 128 KiB stream
// allocates a small part of its size (the request, the headers, the
// handler), where a kept copy would be more than all of it.
func TestUnrecordedReplyNotKept(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts: not in -short")
	}
	long := pingedStream(t, 128<<10)
	gw := replayGateway(t, long, openStore(t), 0)
	per := bytesPerExchange(func() { serveStream(t, gw, benchBody, len(long), false) })
	t.Logf("%d bytes allocated an exchange for a reply of %d", per, len(long))
	if per > len(long)/4 {
		t.Errorf("%d bytes allocated an exchange with Convo-Record: off for a reply of %d: the reply is kept", per, len(long))
	}
}

// TestRecordedReplyChunksReused checks that a recorded exchange's copy of
// its reply is made in pooled chunks, given back once the writer has
// decoded it: a 128 KiB stream (pings make it long, not its text)
// allocates a small part of its size an exchange, where chunks allocated
// anew are more than all of it.
func TestRecordedReplyChunksReused(t *testing.T) {
	if raceEnabled {
		t.Skip("allocations are not counted under the race detector")
	}
	if testing.Short() {
		t.Skip("allocation counts: not in -short")
	}
	long := pingedStream(t, 128<<10)
	sw := signalWrites{openStore(t), make(chan int, 1)}
	gw := replayGateway(t, long, sw, -1)
	per := bytesPerExchange(func() {
		serveStream(t, gw, benchBody, len(long), true)
		<-sw.wrote
	})
	t.Logf("%d bytes allocated a recorded exchange for a reply of %d", per, len(long))
	if per > len(long)/2 {
		t.Errorf("%d bytes allocated a recorded exchange for a reply of %d: the tap's chunks are not reused", per, len(long))
	}
}

// benchBody is an Anthropic client's streamed request.
var benchBody = []byte(`{"model":"claude-bench","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}]}`)

// pingedStream is the recorded Anthropic stream made about size bytes
// longer by pings before its end, which the gateway passes through as
// they are: long, without more text.
func pingedStream(tb testing.TB, size int) []byte {
	tb.Helper()
	data, err := os.ReadFile(recorded["anthropic"].stream)
	if err != nil {
		tb.Fatal(err)
	}
	end := bytes.LastIndex(data, []byte("event: message_stop"))
	ping := []byte("event: ping\ndata: {\"type\": \"ping\"}\n\n")
	return append(append(append([]byte(nil), data[:end]...), bytes.Repeat(ping, size/len(ping))...), data[end:]...)
}

// bytesPerExchange returns the bytes the process allocates a call of
// serve, over 20 calls after one that fills pools and caches.
func bytesPerExchange(serve func()) int {
	serve()
	const runs = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		serve()
	}
	runtime.ReadMemStats(&after)
	return int(after.TotalAlloc-before.TotalAlloc) / runs
}

// serveStream sends body to h as an Anthropic client's streamed request,
// with Convo-Record: off unless record, and fails unless h answers 200
// with n bytes.
func serveStream(tb testing.TB, h http.Handler, body []byte, n int, record bool) {
	tb.Helper()
	req := httptest.NewRequest("POST", clientPath("anthropic", "claude-bench", true), bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Api-Key", token)
	if !record {
		req.Header.Set("Convo-Record", "off")
	}
	w := &discardWriter{h: http.Header{}}
	h.ServeHTTP(w, req)
	if w.code != 200 || w.n != n {
		tb.Fatalf("status %d, %d bytes of %d", w.code, w.n, n)
	}
}

// openStore opens a SQLite store in a temporary directory, closed when
// the test ends.
func openStore(tb testing.TB) *sqlite.Store {
	tb.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "gw.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// replayGateway is a gateway recording into st whose one Anthropic
// upstream answers every request with data, in the process (see
// replayTransport); closed when the test ends.
func replayGateway(tb testing.TB, data []byte, st store.Store, batchDelay time.Duration) *gateway.Gateway {
	tb.Helper()
	gw, err := gateway.New(gateway.Options{
		Config: gateway.Config{
			Upstreams: []gateway.Upstream{{Name: "a", Protocol: "anthropic", URL: "http://upstream.invalid"}},
			Routes:    []gateway.Route{{Model: "*", Upstream: "a"}},
		},
		Store:      st,
		Tokens:     map[string]string{token: tenant},
		Client:     &http.Client{Transport: replayTransport{data}},
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		BatchDelay: batchDelay,
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { gw.Close(context.Background()) })
	return gw
}
