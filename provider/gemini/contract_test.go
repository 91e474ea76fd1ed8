package gemini

import (
	"testing"

	"github.com/convo-go/convo/provider/internal/codectest"
)

func TestCutStreams(t *testing.T) {
	codectest.Cut(t, ReplyCodec(), "testdata/replies/*.sse")
}
