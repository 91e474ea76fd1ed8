package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
)

// TestTranslatedEndsAtMessageStop: a translated stream ends for the
// client when the reply is whole (Anthropic's message_stop), before the
// upstream's body ends; a client that leaves then (openai-go after
// [DONE]) got the whole reply, and the exchange is recorded as such, not
// as a failure.
func TestTranslatedEndsAtMessageStop(t *testing.T) {
	stream, err := os.ReadFile(recorded["anthropic"].stream)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(stream)
		w.(http.Flusher).Flush()
		select { // the body ends only once the client had its [DONE]
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer up.Close()
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	rg := newRig(t, "anthropic", func(o *gateway.Options) { o.Config.Upstreams[0].URL = up.URL })
	body := requestBody(t, "openai-chat", "m", convo.History{convo.User("hi")}, true)
	resp := rg.post(t, "openai-chat", "m", body, true, nil)
	done := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if sc.Text() == "data: [DONE]" {
				done <- true
				return
			}
		}
		done <- false
	}()
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("the client's stream ended without [DONE]")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no [DONE] while the upstream's body had not ended")
	}
	resp.Body.Close() // the client leaves, as openai-go does
	// Let the gateway see it leave before the upstream's body ends.
	time.Sleep(50 * time.Millisecond)
	close(release)
	rg.drain(t)
	h, _, err := rg.st.Load(context.Background(), tenant, resp.Header.Get("Convo-Conversation"), 0)
	if err != nil || len(h) != 2 {
		t.Fatalf("recorded %v, %v", roles(h), err)
	}
	last := h[1]
	var note struct{ Error string }
	_ = json.Unmarshal(last.Native["convo"], &note)
	if last.Finish != convo.FinishToolUse || note.Error != "" || len(last.ToolCalls()) != 1 {
		t.Fatalf("recorded reply %+v (error %q), want the whole reply", last, note.Error)
	}
}
