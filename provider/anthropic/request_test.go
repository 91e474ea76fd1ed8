package anthropic

import (
	"testing"

	"github.com/convo-go/convo/provider"

	"github.com/convo-go/convo/provider/internal/codectest"
)

func TestRequestRoundTrip(t *testing.T) {
	codectest.RequestRoundTrip(t, messages{}, "testdata/requests/*.json")
}

var _ provider.RequestCodec = messages{}
