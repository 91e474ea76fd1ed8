package gateway_test

import (
	"bytes"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo/internal/cputime"
)

// BenchmarkRecordedExchange serves one streamed pass-through exchange per
// operation (the Anthropic tool stream of BenchmarkGateway, replayed in the
// process) recorded into a real SQLite store, and waits at the end until
// the writer has committed every one: the recording's whole CPU, the
// store's included, without the network.
func BenchmarkRecordedExchange(b *testing.B) {
	data, err := os.ReadFile(recorded["anthropic"].stream)
	if err != nil {
		b.Fatal(err)
	}
	gw := replayGateway(b, data, openStore(b), 0)
	body := []byte(`{"model":"claude-bench","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}]}`)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cputime.Process()
	wait := func(n int) {
		for {
			st := gw.Stats()
			if st.Dropped+st.Failed > 0 {
				b.Fatalf("%+v", st)
			}
			if st.Recorded >= int64(n) {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	for i := range b.N {
		if i%1024 == 1023 {
			wait(i) // the queue holds 4096: a handler finding it full would spool
		}
		req := httptest.NewRequest("POST", clientPath("anthropic", "claude-bench", true), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Api-Key", token)
		w := httptest.NewRecorder()
		gw.ServeHTTP(w, req)
		if w.Code != 200 || !strings.Contains(w.Body.String(), "get_weather") {
			b.Fatalf("status %d: %s", w.Code, w.Body.String())
		}
	}
	wait(b.N)
	b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}
