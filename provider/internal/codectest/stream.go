package codectest

import (
	"bytes"
	"errors"
	"io"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
)

// PieceCounts is what an accumulator told a DeltaReader over one stream:
// the parts it reported begun (DeltaPartStart), the tool calls whose first
// piece of arguments it reported (Piece.First), and the snapshots the
// reader took because no piece said what an event changed.
type PieceCounts struct {
	Starts, FirstArgs, Snapshots int
}

// Pieces reads the server-sent events of data through a DeltaReader over
// acc, event by event as a client would, and counts what acc reported.
// each, when not nil, is called after every event with the counts so far.
func Pieces(t TB, acc provider.PieceAccumulator, data []byte, each func(n int, ev provider.Event, c PieceCounts)) PieceCounts {
	t.Helper()
	c := &counting{PieceAccumulator: acc}
	dr := provider.NewDeltaReader(c)
	src := stream.NewSSE(bytes.NewReader(data))
	for n := 0; ; n++ {
		ev, err := src.Next()
		if errors.Is(err, io.EOF) {
			return c.PieceCounts
		}
		if err != nil {
			t.Fatalf("event %d: %v", n, err)
		}
		if _, err := dr.Add(nil, ev); err != nil {
			t.Fatalf("event %d: %v", n, err)
		}
		if each != nil {
			each(n, ev, c.PieceCounts)
		}
	}
}

// counting counts what the accumulator it wraps reports.
type counting struct {
	provider.PieceAccumulator
	PieceCounts
}

func (c *counting) AddPiece(ev provider.Event) (provider.Piece, error) {
	p, err := c.PieceAccumulator.AddPiece(ev)
	switch {
	case p.Other:
	case p.Kind == provider.DeltaPartStart:
		c.Starts++
	case p.Kind == provider.DeltaArgs && p.First:
		c.FirstArgs++
	}
	return p, err
}

func (c *counting) Snapshot() convo.Message {
	c.Snapshots++
	return c.PieceAccumulator.Snapshot()
}

// WriteDeltas writes m as a stream through enc: the deltas a streamed
// reply of m would bring (provider.MessageDeltas), in order.
func WriteDeltas(t TB, enc provider.StreamEncoder, m convo.Message) {
	t.Helper()
	for _, d := range provider.MessageDeltas(m) {
		if err := enc.Write(d); err != nil {
			t.Fatalf("writing the deltas: %v", err)
		}
	}
}

// Transcode reads the server-sent events of sse through dr, as the gateway
// reads an upstream's stream, and writes every delta dr gives, Finish's
// included, to enc. It returns what Finish returns: the message and the
// warnings.
func Transcode(t TB, dr *provider.DeltaReader, sse []byte, enc provider.StreamEncoder) (convo.Message, []provider.Warning) {
	t.Helper()
	write := func(ds []provider.Delta) {
		for _, d := range ds {
			if err := enc.Write(d); err != nil {
				t.Fatalf("writing a delta: %v", err)
			}
		}
	}
	src := stream.NewSSE(bytes.NewReader(sse))
	var ds []provider.Delta
	for n := 0; ; n++ {
		ev, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("event %d: %v", n, err)
		}
		if ds, err = dr.Add(ds[:0], ev); err != nil {
			t.Fatalf("event %d: %v", n, err)
		}
		write(ds)
	}
	ds, m, warns, err := dr.Finish(ds[:0])
	if err != nil {
		t.Fatalf("finishing the stream: %v", err)
	}
	write(ds)
	return m, warns
}
