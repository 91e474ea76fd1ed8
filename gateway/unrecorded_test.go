package gateway_test

import (
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"testing"

	"github.com/convo-go/convo/internal/cputime"
)

// BenchmarkUnrecorded serves one streamed Anthropic exchange per operation
// (the tool stream, replayed in the process by the same transport) two
// ways: "reverse" through httputil.ReverseProxy, flushing every write, and
// "gateway" through the gateway's handler with Convo-Record: off. Issue 35
// asks the second to cost at most 1.1× the first; without the network and
// the kernel, the difference is the gateway's own work per exchange.
func BenchmarkUnrecorded(b *testing.B) {
	data, err := os.ReadFile(recorded["anthropic"].stream)
	if err != nil {
		b.Fatal(err)
	}
	u, _ := url.Parse("http://upstream.invalid")
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.Transport = replayTransport{data}
	handlers := map[string]http.Handler{"reverse": rp, "gateway": replayGateway(b, data, openStore(b), 0)}
	body := []byte(`{"model":"claude-bench","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}]}`)
	for _, mode := range []string{"reverse", "gateway"} {
		h := handlers[mode]
		b.Run(mode, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cputime.Process()
			for range b.N {
				serveStream(b, h, body, len(data), false)
			}
			b.ReportMetric(float64((cputime.Process()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
