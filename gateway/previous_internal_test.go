package gateway

import (
	"context"
	"testing"
	"time"
)

// TestResponseID: the id a translated Responses reply gets names its
// conversation and message back, whatever the conversation id (a client
// may name its own), and no other id reads as one.
func TestResponseID(t *testing.T) {
	for _, conv := range []string{"conv_0193a7c1e5f24b6c8d9e0f1a2b3c4d5e", "loop.1_msg_x", "Geschäft «7»"} {
		id := responseID(conv, "msg_0193a7c1e5f24b6c")
		c, m, ok := parseResponseID(id)
		if !ok || c != conv || m != "msg_0193a7c1e5f24b6c" {
			t.Errorf("%q: %q gives %q %q %v", conv, id, c, m, ok)
		}
	}
	for _, id := range []string{"resp_68af0c2a9d8c81959d3b55bbc7a8e1f2", "resp_.msg_1", "resp_Y29udg.item_1", "chatcmpl-1", ""} {
		if _, _, ok := parseResponseID(id); ok {
			t.Errorf("%q read as the gateway's", id)
		}
	}
}

// TestHandedWait: a request naming a reply still under way waits until its
// exchange is queued for recording, and one naming any other, or the same
// of another tenant, does not.
func TestHandedWait(t *testing.T) {
	var h flights
	h.start("t", "msg_1")
	h.start("t", "msg_1") // the same key twice: ends with the last
	done := make(chan struct{})
	go func() {
		h.wait(context.Background(), "t", []string{"msg_1"})
		close(done)
	}()
	for range 2 {
		select {
		case <-done:
			t.Fatal("the wait ended before the exchange did")
		case <-time.After(20 * time.Millisecond):
		}
		h.end("t", "msg_1")
	}
	<-done
	h.start("t", "msg_3")
	h.wait(context.Background(), "t", []string{"msg_2"})     // nothing under way: at once
	h.wait(context.Background(), "other", []string{"msg_3"}) // another tenant's: at once
	h.end("t", "msg_3")
	if len(h.m) != 0 {
		t.Errorf("%d replies still noted", len(h.m))
	}
}
