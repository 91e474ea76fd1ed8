package gemini

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
)

// runPieces counts what the accumulator reports to a DeltaReader.
type runPieces struct {
	*accumulator
	starts, snapshots int
}

func (c *runPieces) AddPiece(ev provider.Event) (provider.Piece, error) {
	p, err := c.accumulator.AddPiece(ev)
	if !p.Other && p.Kind == provider.DeltaPartStart {
		c.starts++
	}
	return p, err
}

func (c *runPieces) Snapshot() convo.Message {
	c.snapshots++
	return c.accumulator.Snapshot()
}

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
	acc := &runPieces{accumulator: newAccumulator(provider.Options{})}
	dr := provider.NewDeltaReader(acc)
	src := stream.NewSSE(bytes.NewReader(data))
	for n := 0; ; n++ {
		ev, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dr.Add(nil, ev); err != nil {
			t.Fatalf("event %d: %v", n, err)
		}
	}
	if acc.starts != 1 || acc.snapshots != 2 {
		t.Errorf("%d part starts, %d snapshots; want 1, 2", acc.starts, acc.snapshots)
	}
}
