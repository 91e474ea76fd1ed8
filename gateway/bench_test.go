package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/cputime"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"

	"github.com/convo-go/convo/gateway"
	"github.com/convo-go/convo/store"
)

// replayTransport answers every upstream request with a recorded stream,
// in the process: no network, so a benchmark measures the gateway's own
// work.
type replayTransport struct{ data []byte }

func (rt replayTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	return &http.Response{StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:  http.Header{"Content-Type": {"text/event-stream"}},
		Body:    io.NopCloser(bytes.NewReader(rt.data)),
		Request: r}, nil
}

// discardWrites is a store whose writes succeed without storing, so the
// recording costs the gateway only what it does itself.
type discardWrites struct{ store.Store }

func (discardWrites) Batch(_ context.Context, writes []store.Write) []store.WriteResult {
	return make([]store.WriteResult, len(writes))
}

// benchModel is the model BenchmarkGateway's clients ask for: one the
// model catalogue knows, as bench/gateway's does (an unknown model adds a
// warning, and its family's lookup, to every translated exchange).
const benchModel = "claude-sonnet-4-5"

// BenchmarkGateway serves one streamed exchange per operation through the
// gateway's handler, the upstream a recorded Anthropic stream (thinking,
// text, a tool call: 19 events) replayed in the process and the store's
// writes discarded: "translate" is an OpenAI Chat client, "passthrough"
// an Anthropic one. It measures the handler's CPU and allocations without
// the network and the store (bench/gateway measures them whole);
// cpu-ns/op is the process's CPU time per exchange (GC and the recorder's
// goroutine included), steadier than the wall time on a shared machine.
func BenchmarkGateway(b *testing.B) {
	data, err := os.ReadFile(recorded["anthropic"].stream)
	if err != nil {
		b.Fatal(err)
	}
	st := openStore(b)
	gw := replayGateway(b, data, discardWrites{st}, 0)
	// The client's stream is written to one buffer, reused: a server
	// writes it to its connection's buffer, and growing a new recorder's
	// body each exchange (a few kilobytes more when translating) was the
	// benchmark's own cost.
	var out bytes.Buffer
	serve := func(b *testing.B, client string, body []byte) {
		req := httptest.NewRequest("POST", clientPath(client, benchModel, true), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("X-Api-Key", token)
		out.Reset()
		w := httptest.NewRecorder()
		w.Body = &out
		gw.ServeHTTP(w, req)
		if w.Code != 200 || !bytes.Contains(out.Bytes(), []byte("get_weather")) {
			b.Fatalf("status %d: %s", w.Code, out.Bytes())
		}
	}
	// The requests of bench/gateway; a Chat client's next turn of a
	// conversation stored beforehand (the reply, with its signed thinking,
	// then the tool's result): the gateway finds it, reads the reply back
	// from the store and translates; and a Chat client's two steps of a
	// new tool loop each operation, the second restoring the reply the
	// gateway kept from the first.
	continues, loop := continued(b, st, data)
	bodies := map[string][]byte{
		"translate":   []byte(`{"model":"` + benchModel + `","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Weather in Paris?"}]}`),
		"passthrough": []byte(`{"model":"` + benchModel + `","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}]}`),
		"continue":    continues,
	}
	for _, mode := range []string{"translate", "passthrough", "continue", "loop"} {
		client := map[string]string{"passthrough": "anthropic"}[mode]
		if client == "" {
			client = "openai-chat"
		}
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			var steps [][2][]byte
			if mode == "loop" {
				for i := range b.N {
					steps = append(steps, loop(i))
				}
			}
			b.ResetTimer()
			cpu0 := cputime.Process()
			for i := range b.N {
				if mode != "loop" {
					serve(b, client, bodies[mode])
					continue
				}
				serve(b, client, steps[i][0])
				serve(b, client, steps[i][1])
			}
			// The recording is written by another goroutine, at the
			// same time: its CPU is counted, as in the gateway's process.
			b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// continued stores a conversation — a question and the Anthropic reply in
// data — as the gateway records it, and returns an OpenAI Chat client's
// next request: the reply as the client got it and its tool call's result;
// and a function giving the two requests of such a loop on question i.
func continued(b *testing.B, st store.Store, data []byte) ([]byte, func(i int) [2][]byte) {
	acc, err := all.Lookup("anthropic")
	if err != nil {
		b.Fatal(err)
	}
	reply, _, err := acc.ReadStream(bytes.NewReader(data), provider.Options{})
	if err != nil {
		b.Fatal(err)
	}
	h := convo.History{convo.User("Weather in Paris?"), reply}
	meta, _ := json.Marshal(map[string]string{"convo_gateway_fingerprint": gateway.Fingerprint(h)})
	res := st.Batch(context.Background(), []store.Write{{Tenant: tenant, ID: "conv-bench", Create: true, Messages: h, Meta: meta}})
	if res[0].Err != nil {
		b.Fatal(res[0].Err)
	}
	next := func(h convo.History) []byte {
		return requestBody(b, "openai-chat", benchModel, append(h, answers(reply, `{"temp_c":18}`)), true)
	}
	return next(h), func(i int) [2][]byte {
		q := convo.History{convo.User("Weather in Paris? (" + strconv.Itoa(i) + ")")}
		return [2][]byte{requestBody(b, "openai-chat", benchModel, q, true), next(append(q, reply))}
	}
}
