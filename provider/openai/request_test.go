package openai

import (
	"testing"

	"github.com/convo-go/convo/provider"

	"github.com/convo-go/convo/provider/internal/codectest"
)

func TestChatRequestRoundTrip(t *testing.T) {
	codectest.RequestRoundTrip(t, Chat(), "testdata/requests/chat_*.json")
}

var _ provider.RequestCodec = ChatCodec{}
