package ollama

import (
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

func TestRequestRoundTrip(t *testing.T) {
	codectest.RequestRoundTrip(t, chat{}, "testdata/whole/*.json")
}

// Ollama streams unless told not to.
func TestRequestStreamDefault(t *testing.T) {
	r, _, err := chat{}.DecodeRequest([]byte(`{"model":"m","messages":[]}`), provider.Options{})
	if err != nil || !r.Stream {
		t.Fatalf("stream = %v, %v", r, err)
	}
}

var _ provider.RequestCodec = chat{}
