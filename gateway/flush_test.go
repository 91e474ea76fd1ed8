package gateway_test

import (
	"bytes"
	"net/http/httptest"
	"os"
	"testing"
)

// flushCounter is a client's connection that counts the gateway's
// flushes: each is a write to the network.
type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++; f.ResponseRecorder.Flush() }

// TestTranslatedFlushes: a translated stream whose events all arrived
// together goes to the client in as few writes as pass-through's copy
// makes of them: one, not the first event's translation in a write of its
// own, nor what came before message_stop in another before the end of
// the client's stream (the reply is whole at message_stop).
func TestTranslatedFlushes(t *testing.T) {
	data, err := os.ReadFile(recorded["anthropic"].stream)
	if err != nil {
		t.Fatal(err)
	}
	gw := replayGateway(t, data, discardWrites{openStore(t)}, 0)
	for _, c := range []struct {
		client string
		body   string
		want   int
	}{
		{"openai-chat", `{"model":"` + benchModel + `","stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}]}`, 1},
		{"anthropic", `{"model":"` + benchModel + `","max_tokens":1024,"stream":true,"messages":[{"role":"user","content":"Weather in Paris?"}]}`, 1},
	} {
		req := httptest.NewRequest("POST", clientPath(c.client, benchModel, true), bytes.NewReader([]byte(c.body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("X-Api-Key", token)
		w := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
		gw.ServeHTTP(w, req)
		if w.Code != 200 || !bytes.Contains(w.Body.Bytes(), []byte("get_weather")) {
			t.Fatalf("%s: status %d: %s", c.client, w.Code, w.Body.Bytes())
		}
		if w.flushes != c.want {
			t.Errorf("%s: %d flushes, want %d", c.client, w.flushes, c.want)
		}
	}
}
