package gateway_test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
)

// TestTranslateSendsWhatArrived: a translated stream reaches the client as
// it arrives. The upstream sends its first events and half of the next
// one, then waits until the client has read the text so far: the gateway,
// which writes what several events bring in one go only when the next
// event is already there, must not hold it back waiting for the rest.
func TestTranslateSendsWhatArrived(t *testing.T) {
	raw, err := os.ReadFile(recorded["anthropic"].stream)
	if err != nil {
		t.Fatal(err)
	}
	data := string(raw)
	cut := strings.Index(data, "the weather.")
	if cut < 0 {
		t.Fatal("the recorded stream changed")
	}
	cut -= 20 // inside the event after "Let me check "
	read := make(chan struct{})
	waited := make(chan bool, 1)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(data[:cut]))
		w.(http.Flusher).Flush()
		select {
		case <-read:
			waited <- false
		case <-time.After(20 * time.Second):
			waited <- true
		}
		_, _ = w.Write([]byte(data[cut:]))
	}))
	defer upstream.Close()
	rg := newRig(t, "anthropic", func(o *gateway.Options) { o.Config.Upstreams[0].URL = upstream.URL })
	body := requestBody(t, "openai-chat", "m", convo.History{convo.User("Weather in Paris?")}, true)
	resp := rg.post(t, "openai-chat", "m", body, true, nil)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var got bytes.Buffer
	for sc.Scan() {
		got.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), `"content":"Let me check "`) {
			close(read)
			break
		}
	}
	if <-waited {
		t.Fatalf("the client got the text sent before the upstream paused only after it went on:\n%s", got.String())
	}
	for sc.Scan() {
		got.WriteString(sc.Text() + "\n")
	}
	if !strings.Contains(got.String(), "data: [DONE]") {
		t.Fatalf("stream incomplete:\n%s", got.String())
	}
}

// TestTranslateUsageChunk: an OpenAI Chat client gets the usage chunk of
// a translated stream only when it asked for it
// (stream_options.include_usage), which the gateway reads from the
// request it decoded once.
func TestTranslateUsageChunk(t *testing.T) {
	for _, ask := range []bool{false, true} {
		rg := newRig(t, "anthropic", nil)
		body := requestBody(t, "openai-chat", "m", convo.History{convo.User("Weather in Paris?")}, true)
		if !ask {
			body = bytes.Replace(body, []byte(`"stream_options":{"include_usage":true},`), nil, 1)
		}
		resp := rg.post(t, "openai-chat", "m", body, true, nil)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if has := bytes.Contains(got, []byte(`"choices":[],"usage":{`)); has != ask {
			t.Errorf("include_usage %v: usage chunk sent: %v\n%s", ask, has, got)
		}
	}
}
