package anthropic_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
)

// snapshots counts the snapshots a DeltaReader takes of an accumulator.
type snapshots struct {
	provider.PieceAccumulator
	n int
}

func (s *snapshots) Snapshot() convo.Message {
	s.n++
	return s.PieceAccumulator.Snapshot()
}

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
		acc := &snapshots{PieceAccumulator: anthropic.Messages().NewAccumulator(provider.Options{}).(provider.PieceAccumulator)}
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
				t.Fatalf("%s event %d: %v", name, n, err)
			}
			if acc.n > 0 {
				t.Fatalf("%s event %d (%s): a snapshot was taken", name, n, ev.Type)
			}
		}
	}
}
