package gateway_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
)

// TestUpstreamConnectionsReused: the gateway keeps an idle connection to
// an upstream for each stream it had open, where the standard library's
// transport keeps two a host: over plain HTTP (Ollama, a server on the
// same network) every exchange beyond the second would otherwise open a
// connection and leave one behind in TIME_WAIT. Three rounds of sixteen
// concurrent streams open sixteen connections, not forty-four, and three
// more of translated streams none.
func TestUpstreamConnectionsReused(t *testing.T) {
	stream, err := os.ReadFile(recorded["anthropic"].stream)
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int64
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(stream)
		// The body's end comes after its last event, as over a network:
		// a gateway that stopped reading at message_stop would leave it
		// unread, and the connection could not be reused.
		w.(http.Flusher).Flush()
		time.Sleep(time.Millisecond)
	}))
	up.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	up.Start()
	defer up.Close()
	rg := newRig(t, "anthropic", func(o *gateway.Options) { o.Config.Upstreams[0].URL = up.URL })
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	const streams = 16
	// Pass-through, then translation, which ends the client's stream at
	// message_stop and reads the upstream's to its end after.
	for i := range 6 {
		proto := map[bool]string{true: "anthropic", false: "openai-chat"}[i < 3]
		body := requestBody(t, proto, "m", convo.History{convo.User("hi")}, true)
		var wg sync.WaitGroup
		for range streams {
			wg.Go(func() {
				req, _ := http.NewRequest("POST", rg.srv.URL+clientPath(proto, "m", true), bytes.NewReader(body))
				req.Header.Set("X-Api-Key", token)
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				defer resp.Body.Close()
				if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
					t.Errorf("status %d, %v", resp.StatusCode, err)
				}
			})
		}
		wg.Wait()
	}
	if n := conns.Load(); n > streams+2 {
		t.Errorf("%d connections to the upstream for 6 rounds of %d concurrent streams", n, streams)
	}
}
