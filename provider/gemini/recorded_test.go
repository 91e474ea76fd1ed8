package gemini

import (
	"testing"

	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestRecorded folds every recorded real generateContent and
// streamGenerateContent reply in testdata/recorded (origins in its
// README.md) and compares it with the expected message. The expected
// messages of the streamed function-call arguments (partialArgs) were
// written by hand from the recordings before convo could read them.
func TestRecorded(t *testing.T) {
	frame := func(chunks []byte) []byte { return codectest.SSEFromChunks(chunks, false) }
	codectest.Recorded(t, "testdata/recorded", GenerateContent(), frame, nil)
}
