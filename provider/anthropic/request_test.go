package anthropic

import (
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"

	"github.com/convo-go/convo/provider/internal/codectest"
)

func TestRequestRoundTrip(t *testing.T) {
	codectest.RequestRoundTrip(t, messages{}, "testdata/requests/*.json")
}

var _ provider.RequestCodec = messages{}

// Another provider's encrypted reasoning is dropped with a warning, unless
// the caller chose to drop it.
func TestRequestChosenLoss(t *testing.T) {
	h := convo.History{
		convo.User("hi"),
		convo.Assistant("hello", convo.Part{Type: convo.TypeReasoning, Provider: "openai", Encrypted: "gAAA"}),
		convo.User("again"),
	}
	r := &provider.Request{Model: "m", MaxTokens: 10, History: h}
	_, warns, err := messages{}.EncodeRequest(r, provider.Options{})
	if err != nil || len(warns) != 1 || warns[0].Code != provider.CodeReasoningDropped {
		t.Fatalf("default: %v %v", warns, err)
	}
	_, warns, err = messages{}.EncodeRequest(r, provider.Options{Reasoning: provider.ReasoningDrop, Strict: true})
	if err != nil || len(warns) != 0 {
		t.Fatalf("chosen: %v %v", warns, err)
	}
}
