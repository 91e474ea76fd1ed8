package provider_test

import (
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
)

// A codec without candidates gives its one reply.
func TestDecodeRepliesOne(t *testing.T) {
	body := []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
	ms, _, err := provider.DecodeReplies(anthropic.Messages(), body, provider.Options{})
	if err != nil || len(ms) != 1 || ms[0].Text() != "hi" {
		t.Fatalf("%v %+v", err, ms)
	}
	if _, _, err := provider.DecodeReplies(anthropic.Messages(), []byte(`{`), provider.Options{}); err == nil {
		t.Fatal("a broken body decoded")
	}
}
