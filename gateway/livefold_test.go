package gateway_test

import (
	"context"
	"io"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway"
)

// TestLiveFold: a streamed reply folded as it arrives (past
// gateway.SetLiveFrom's length) is recorded exactly as the writer's fold of
// the kept stream records it, for every protocol's recorded stream, whole
// and broken off half-way, and for a long stream at the real threshold.
func TestLiveFold(t *testing.T) {
	cases := []struct {
		name, proto string
		from        int64  // where the live fold starts
		stream      []byte // nil: the recorded one
		cut         bool
	}{
		{name: "long openai-chat", proto: "openai-chat", from: 1 << 20, stream: bigChatStream(3 << 20)},
		{name: "long openai-chat cut", proto: "openai-chat", from: 1 << 20, stream: bigChatStream(3 << 20), cut: true},
	}
	for proto := range recorded {
		if proto == "bedrock" {
			continue // not a client protocol: never passed through
		}
		cases = append(cases,
			struct {
				name, proto string
				from        int64
				stream      []byte
				cut         bool
			}{name: proto, proto: proto, from: 1},
			struct {
				name, proto string
				from        int64
				stream      []byte
				cut         bool
			}{name: proto + " cut", proto: proto, from: 1, cut: true})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			record := func(from int64) (convo.Message, gateway.Stats) {
				gateway.SetLiveFrom(t, from)
				rg := newRig(t, c.proto, nil)
				if c.stream != nil {
					rg.up.stream = c.stream
				}
				rg.up.cut = c.cut
				body := requestBody(t, c.proto, "m", convo.History{convo.User("hi")}, true)
				resp := rg.post(t, c.proto, "m", body, true, nil)
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				rg.drain(t)
				h, _, err := rg.st.Load(context.Background(), tenant, resp.Header.Get("Convo-Conversation"), 0)
				if err != nil || len(h) < 2 {
					t.Fatalf("recorded %v, %v", roles(h), err)
				}
				m := h[len(h)-1]
				if m.IsError() {
					m = h[len(h)-2] // the partial reply, before the error message
				}
				m.ID = ""
				return m, rg.gw.Stats()
			}
			kept, keptStats := record(1 << 62)
			live, liveStats := record(c.from)
			if keptStats.Recorded != 1 || liveStats != keptStats {
				t.Fatalf("stats: kept %+v, live %+v", keptStats, liveStats)
			}
			kept.Time = live.Time // recorded at another moment
			if !kept.Equal(live) {
				a, _ := convo.Marshal(convo.History{kept})
				b, _ := convo.Marshal(convo.History{live})
				t.Errorf("folded live:\n%.2000s\nkept and folded after:\n%.2000s", b, a)
			}
			if len(live.Parts) == 0 {
				t.Error("no reply recorded")
			}
		})
	}
}
