package ollama

import (
	"testing"

	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestRecorded folds every recorded real /api/chat reply in
// testdata/recorded (origins in its README.md) and compares it with the
// expected message.
func TestRecorded(t *testing.T) {
	frame := func(chunks []byte) []byte { return chunks }
	codectest.Recorded(t, "testdata/recorded", Chat(), frame, nil)
}
