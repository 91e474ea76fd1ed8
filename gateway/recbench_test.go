package gateway_test

import (
	"bytes"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/convo-go/convo/internal/cputime"
)

// BenchmarkRecordedExchange serves one streamed exchange per operation
// (the Anthropic tool stream of BenchmarkGateway, replayed in the process)
// recorded into a real SQLite store, and waits at the end until the
// writer has committed every one: the recording's whole CPU, the store's
// included, without the network. "passthrough" is an Anthropic client,
// "translate" an OpenAI Chat one; both ask for benchModel, as
// BenchmarkGateway's and bench/gateway's clients do.
func BenchmarkRecordedExchange(b *testing.B) {
	data, err := os.ReadFile(recorded["anthropic"].stream)
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct{ name, client, body string }{
		{"passthrough", "anthropic", `{"model":"` + benchModel + `","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}]}`},
		{"translate", "openai-chat", `{"model":"` + benchModel + `","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Weather in Paris?"}]}`},
	} {
		b.Run(mode.name, func(b *testing.B) {
			gw := replayGateway(b, data, openStore(b), 0)
			body := []byte(mode.body)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cputime.Process()
			for i := range b.N {
				if i%1024 == 1023 {
					waitRecorded(b, gw, int64(i)) // the queue holds 4096: a handler finding it full would spool
				}
				req := httptest.NewRequest("POST", clientPath(mode.client, benchModel, true), bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-Api-Key", token)
				req.Header.Set("Authorization", "Bearer "+token)
				w := httptest.NewRecorder()
				gw.ServeHTTP(w, req)
				if w.Code != 200 || !strings.Contains(w.Body.String(), "get_weather") {
					b.Fatalf("status %d: %s", w.Code, w.Body.String())
				}
			}
			waitRecorded(b, gw, int64(b.N))
			if st := gw.Stats(); st.Dropped+st.Failed > 0 {
				b.Fatalf("%+v", st)
			}
			b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
