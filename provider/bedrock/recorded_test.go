package bedrock

import (
	"testing"

	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestRecorded folds every recorded real Converse and ConverseStream reply
// in testdata/recorded (origins in its README.md) and compares it with the
// expected message. ReadStream takes the event payloads one JSON object a
// line as well as the binary event-stream, so chunk files need no framing.
func TestRecorded(t *testing.T) {
	frame := func(chunks []byte) []byte { return chunks }
	codectest.Recorded(t, "testdata/recorded", Converse(), frame, nil)
}
