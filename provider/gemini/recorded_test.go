package gemini

import (
	"testing"

	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestRecorded folds every recorded real generateContent and
// streamGenerateContent reply in testdata/recorded (origins in its
// README.md) and compares it with the expected message.
func TestRecorded(t *testing.T) {
	frame := func(chunks []byte) []byte { return codectest.SSEFromChunks(chunks, false) }
	// Streamed function-call arguments (streamFunctionCallArguments): the
	// expected messages were assembled by hand from the partialArgs.
	const partialArgs = "issue 10: Gemini streamed function-call arguments (functionCall.partialArgs, willContinue) are rejected (\"functionCall has no name\")"
	skip := map[string]string{
		"vercel-google-stream-tool-call-arguments.chunks.txt":                                      partialArgs,
		"vercel-google-stream-no-args-tool-call.chunks.txt":                                        partialArgs,
		"vercel-google-stream-tool-call-array-arguments-missing-terminal-function-call.chunks.txt": partialArgs,
		"vercel-google-vertex-stream-tool-call-arguments-nested.1.chunks.txt":                      partialArgs,
	}
	codectest.Recorded(t, "testdata/recorded", ReplyCodec(), frame, skip)
}
