package openai

import (
	"os"
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestChatPartStartPieces checks that the Chat accumulator tells a
// DeltaReader without a snapshot (which writes and decodes the whole
// reply so far) that a text began — the reasoning of reasoning.sse, the
// refusal of refusal.sse — and that a tool call's arguments began, for
// each of the two calls of tools.sse. provider's TestPieces checks that
// what the pieces say is what the snapshots show.
func TestChatPartStartPieces(t *testing.T) {
	for _, tt := range []struct {
		name                        string
		starts, firstArgs, snapshot int
	}{
		{"reasoning", 1, 0, -1}, // the content's chunks carry logprobs: snapshots
		{"refusal", 1, 0, 1},    // only for the first event (the reply's origin)
		{"tools", 0, 2, 3},      // the first event and each call's start (its id and name)
	} {
		data, err := os.ReadFile("testdata/replies/chat/" + tt.name + ".sse")
		if err != nil {
			t.Fatal(err)
		}
		c := codectest.Pieces(t, newChatAcc(provider.Options{}), data, nil)
		if c.Starts != tt.starts || c.FirstArgs != tt.firstArgs || tt.snapshot >= 0 && c.Snapshots != tt.snapshot {
			t.Errorf("%s: %d part starts, %d first pieces of arguments, %d snapshots; want %d, %d, %d",
				tt.name, c.Starts, c.FirstArgs, c.Snapshots, tt.starts, tt.firstArgs, tt.snapshot)
		}
	}
}
