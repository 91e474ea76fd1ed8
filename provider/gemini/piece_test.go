package gemini

import (
	"os"
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestRunStartPieces checks that the accumulator tells a DeltaReader
// without a snapshot that a run of text began after the thought of
// thinking.sse: the reader takes one for the first chunk (the reply's
// origin) and one for the signed empty part at the end. provider's
// TestPieces checks that what the pieces say is what the snapshots show.
func TestRunStartPieces(t *testing.T) {
	data, err := os.ReadFile("testdata/replies/thinking.sse")
	if err != nil {
		t.Fatal(err)
	}
	c := codectest.Pieces(t, newAccumulator(provider.Options{}), data, nil)
	if c.Starts != 1 || c.Snapshots != 2 {
		t.Errorf("%d part starts, %d snapshots; want 1, 2", c.Starts, c.Snapshots)
	}
}
