package anthropic

import (
	"testing"

	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestRecorded folds every recorded real Messages API reply in
// testdata/recorded (origins in its README.md) and compares it with the
// expected message.
func TestRecorded(t *testing.T) {
	frame := func(chunks []byte) []byte { return codectest.SSEFromChunks(chunks, true) }
	codectest.Recorded(t, "testdata/recorded", Messages(), frame, nil)
}
