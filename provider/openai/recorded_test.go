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
		skip := map[string]string{
			"derived-annotations-empty-terminal-output.sse": "issue 10: a terminal response.completed with an empty output erases every item streamed before it",
		}
		codectest.Recorded(t, "testdata/recorded/responses", Responses(), frame, skip)
	})
}
