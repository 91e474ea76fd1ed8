package anthropic

import (
	"testing"

	"github.com/convo-go/convo/provider"

	"github.com/convo-go/convo/provider/internal/codectest"
)

func TestRequestRoundTrip(t *testing.T) {
	codectest.RequestRoundTrip(t, Messages{}, "testdata/requests/*.json")
}

var _ provider.RequestCodec = Messages{}
