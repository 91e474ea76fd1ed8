package backend

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/store"
)

// BenchmarkPrepareWrite prepares what convo gateway's recorder writes for
// one exchange of bench/gateway's tool stream (the question, and the
// reply with its reasoning, text and tool call, as the Anthropic codec
// reads them), as a new conversation: the store's work before its
// transaction, in the writer's goroutine.
func BenchmarkPrepareWrite(b *testing.B) {
	var q, a convo.Message
	for _, m := range []struct {
		doc string
		to  *convo.Message
	}{
		{`{"role":"user","parts":[{"type":"text","text":"Weather in Paris?"}],"native":{"anthropic":{"string_content":true}}}`, &q},
		{`{"role":"assistant","origin":{"provider":"anthropic","model":"claude-sonnet-4-5-20250929","response_id":"msg_01XFDUDYJgAACzvnptvVoYEL"},"usage":{"input":472,"output":89},"finish":"tool_use","parts":[{"type":"reasoning","text":"The user wants the weather in Paris. I'll call get_weather.","signature":"EqQBCkYIBxgCKkBq2nEa1vBv7c3mTzLf3Yw9x1bq","provider":"anthropic","model":"claude-sonnet-4-5-20250929"},{"type":"text","text":"Let me check the weather.\n"},{"type":"tool_call","id":"toolu_01A09q90qw90lq917835lq9","name":"get_weather","args":{"city":"Paris","units":["c"]}}],"native":{"anthropic":{"stop_reason":"tool_use","usage":{"service_tier":"standard"}}}}`, &a},
	} {
		var err error
		if *m.to, err = convo.UnmarshalMessage([]byte(m.doc)); err != nil {
			b.Fatal(err)
		}
	}
	now := time.Now()
	q.ID, q.Time, a.ID, a.Time = "msg_q", now, "msg_a", now
	w := store.Write{Tenant: "t", ID: "conv_1", Create: true, Version: store.AnyVersion, Messages: []convo.Message{q, a},
		Meta: json.RawMessage(`{"convo_gateway_fingerprint":"` + store.NewID("fp") + `","convo_request":{"max_tokens":1024}}`)}
	b.ReportAllocs()
	for b.Loop() {
		pw, err := PrepareWrite(0, w, 0, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Check(nil, pw.H); err != nil {
			b.Fatal(err)
		}
	}
}
