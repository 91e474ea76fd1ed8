package openai

import (
	"testing"

	"github.com/convo-go/convo/provider/internal/codectest"
)

func TestCutStreams(t *testing.T) {
	codectest.Cut(t, Chat(), "testdata/replies/chat/*.sse")
	codectest.Cut(t, Responses(), "testdata/replies/responses/*.sse")
}
