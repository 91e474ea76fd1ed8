package anthropic_test

import (
	"os"
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestPiecesWithoutSnapshots checks that the accumulator tells a
// DeltaReader what every event of a stream of text, thinking and tool
// use blocks changed, message_start and a tool call's first piece of
// arguments included, so the reader takes no snapshot (each copies every
// block so far). provider's TestPieces checks that what the pieces say is
// what the snapshots show.
func TestPiecesWithoutSnapshots(t *testing.T) {
	for _, name := range []string{"tool_use", "refusal", "stop_sequence"} {
		data, err := os.ReadFile("testdata/reply/" + name + ".sse")
		if err != nil {
			t.Fatal(err)
		}
		acc := anthropic.Messages().NewAccumulator(provider.Options{}).(provider.PieceAccumulator)
		codectest.Pieces(t, acc, data, func(n int, ev provider.Event, c codectest.PieceCounts) {
			if c.Snapshots > 0 {
				t.Fatalf("%s event %d (%s): a snapshot was taken", name, n, ev.Type)
			}
		})
	}
}
