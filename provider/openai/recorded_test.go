package openai

import (
	"testing"

	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestRecorded folds every recorded real reply in testdata/recorded/chat
// and testdata/recorded/responses (origins in their README.md files) and
// compares it with the expected message.
func TestRecorded(t *testing.T) {
	t.Run("chat", func(t *testing.T) {
		frame := func(chunks []byte) []byte { return codectest.SSEFromChunks(chunks, false) }
		codectest.Recorded(t, "testdata/recorded/chat", Chat(), frame, nil)
	})
	t.Run("responses", func(t *testing.T) {
		frame := func(chunks []byte) []byte { return codectest.SSEFromChunks(chunks, true) }
		codectest.Recorded(t, "testdata/recorded/responses", Responses(), frame, nil)
	})
}
