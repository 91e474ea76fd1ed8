package openai

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

// chatPieces counts what the Chat accumulator reports to a DeltaReader.
type chatPieces struct {
	*chatAcc
	starts, firstArgs, snapshots int
}

func (c *chatPieces) AddPiece(ev provider.Event) (provider.Piece, error) {
	p, err := c.chatAcc.AddPiece(ev)
	switch {
	case p.Other:
	case p.Kind == provider.DeltaPartStart:
		c.starts++
	case p.Kind == provider.DeltaArgs && p.First:
		c.firstArgs++
	}
	return p, err
}

func (c *chatPieces) Snapshot() convo.Message {
	c.snapshots++
	return c.chatAcc.Snapshot()
}

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
		acc := &chatPieces{chatAcc: newChatAcc(provider.Options{})}
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
				t.Fatalf("%s event %d: %v", tt.name, n, err)
			}
		}
		if acc.starts != tt.starts || acc.firstArgs != tt.firstArgs || tt.snapshot >= 0 && acc.snapshots != tt.snapshot {
			t.Errorf("%s: %d part starts, %d first pieces of arguments, %d snapshots; want %d, %d, %d",
				tt.name, acc.starts, acc.firstArgs, acc.snapshots, tt.starts, tt.firstArgs, tt.snapshot)
		}
	}
}
