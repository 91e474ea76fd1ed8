package openai

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
)

// lastPiece keeps the piece the accumulator reported for the last event.
type lastPiece struct {
	*respAcc
	last provider.Piece
}

func (l *lastPiece) AddPiece(ev provider.Event) (provider.Piece, error) {
	p, err := l.respAcc.AddPiece(ev)
	l.last = p
	return p, err
}

// TestRespItemPieces checks that the Responses accumulator tells a
// DeltaReader what an item's start changed without a snapshot (which
// re-encodes the whole response): every output_item.added of the recorded
// streams is a new part, and an output_item.done whose copy reads as what
// the events built changes nothing. provider's TestPieces checks that what
// the pieces say is what the snapshots show.
func TestRespItemPieces(t *testing.T) {
	doneQuiet := 0
	for _, name := range []string{"answer", "incomplete", "multi", "tools"} {
		data, err := os.ReadFile("testdata/replies/responses/" + name + ".sse")
		if err != nil {
			t.Fatal(err)
		}
		acc := &lastPiece{respAcc: newRespAcc(provider.Options{})}
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
			switch typ := string(acc.ev.typ); {
			case typ == "response.output_item.added" && (acc.last.Other || acc.last.Kind != provider.DeltaPartStart):
				t.Errorf("%s event %d: %s reported as %+v, want a part start", name, n, typ, acc.last)
			case typ == "response.output_item.done" && !acc.last.Other:
				doneQuiet++
			}
		}
	}
	// incomplete.sse's two items and multi.sse's first end as they were built.
	if doneQuiet < 3 {
		t.Errorf("%d output_item.done events reported as changing nothing, want at least 3", doneQuiet)
	}
}
