package codectest

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/convo-go/convo/internal/longstream"
)

// LongTextStream is the gateway bench's long stream as Anthropic sends it
// (package longstream): the 300 text deltas of the recorded OpenAI Chat
// stream as content_block_delta events, written as the recorded
// claude-haiku-4-5 stream writes its own. providers is the path of the
// provider directory.
func LongTextStream(tb testing.TB, providers string) []byte {
	tb.Helper()
	_, events, err := longstream.Load(filepath.Join(providers, ".."))
	if err != nil {
		tb.Fatal(err)
	}
	return bytes.Join(events, nil)
}
