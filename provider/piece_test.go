package provider_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// snapshotOnly hides an accumulator's AddPiece, so a DeltaReader compares
// snapshots after every event.
type snapshotOnly struct{ provider.Accumulator }

// counting counts the pieces an accumulator reports.
type counting struct {
	provider.PieceAccumulator
	pieces int
}

func (c *counting) AddPiece(ev provider.Event) (provider.Piece, error) {
	p, err := c.PieceAccumulator.AddPiece(ev)
	if p.Kind != 0 {
		c.pieces++
	}
	return p, err
}

// TestPieces reads every recorded stream twice, comparing snapshots after
// every event and with the pieces the accumulator reports: the deltas of
// each event, the final message and the warnings are the same, so the
// accumulators' pieces and the snapshot comparison cannot drift apart.
// Every format's accumulator reports pieces.
func TestPieces(t *testing.T) {
	pieces := map[string]int{}
	eachStream(t, func(t *testing.T, s recordedStream) {
		pa, ok := s.rc.NewAccumulator(provider.Options{}).(provider.PieceAccumulator)
		if !ok {
			t.Fatalf("the %s accumulator is not a PieceAccumulator", s.format)
		}
		c := &counting{PieceAccumulator: pa}
		fast := provider.NewDeltaReader(c)
		slow := provider.NewDeltaReader(snapshotOnly{s.rc.NewAccumulator(provider.Options{})})
		comparePieces(t, s.framing, s.data, fast, slow)
		pieces[s.format] += c.pieces
	})
	for _, s := range streams {
		if pieces[s.format] == 0 {
			t.Errorf("%s: no piece reported in any recorded stream", s.format)
		}
	}
}

// comparePieces feeds the events of a recorded stream to both readers and
// compares what they give.
func comparePieces(t *testing.T, framing string, data []byte, fast, slow *provider.DeltaReader) {
	t.Helper()
	src := source(framing, bytes.NewReader(data))
	for n := 0; ; n++ {
		ev, err := src.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			break // the framing failed: both readers end here
		}
		got, gerr := fast.Add(nil, ev)
		want, werr := slow.Add(nil, ev)
		if fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("event %d: error %v, want %v", n, gerr, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("event %d (%s %s):\n got %s\nwant %s", n, ev.Type, ev.Data, showDeltas(got), showDeltas(want))
		}
		if gerr != nil {
			break
		}
	}
	got, gm, gw, gerr := fast.Finish(nil)
	want, wm, ww, werr := slow.Finish(nil)
	if fmt.Sprint(gerr) != fmt.Sprint(werr) {
		t.Fatalf("finish: error %v, want %v", gerr, werr)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("finish:\n got %s\nwant %s", showDeltas(got), showDeltas(want))
	}
	if !reflect.DeepEqual(gm, wm) {
		t.Errorf("message:\n got %+v\nwant %+v", gm, wm)
	}
	if !reflect.DeepEqual(gw, ww) {
		t.Errorf("warnings:\n got %v\nwant %v", gw, ww)
	}
}

func showDeltas(ds []provider.Delta) string {
	var b bytes.Buffer
	for _, d := range ds {
		fmt.Fprintf(&b, "\n  %s %d %q", d.Kind, d.Index, d.Text)
		if d.Part != nil {
			fmt.Fprintf(&b, " %s %q %q", d.Part.Type, d.Part.Text, argsOf(d.Part))
		}
	}
	return b.String()
}

func argsOf(p *convo.Part) string {
	if p.Args != nil {
		return string(p.Args)
	}
	return p.ArgsRaw
}

// TestPiecesAlone feeds every recorded stream to an accumulator through
// AddPiece alone, with no snapshot between events (as a reader that
// never needs one would): the text pieces reported for each part end the
// text that part has once the stream is read.
func TestPiecesAlone(t *testing.T) {
	eachStream(t, func(t *testing.T, s recordedStream) {
		acc := s.rc.NewAccumulator(provider.Options{}).(provider.PieceAccumulator)
		texts := map[int]string{}
		src := s.events()
		for {
			ev, err := src.Next()
			if err != nil {
				break
			}
			p, err := acc.AddPiece(ev)
			if err != nil {
				break
			}
			if p.Kind == provider.DeltaText {
				texts[p.Index] += p.Text
			}
		}
		m := acc.Snapshot()
		for i, text := range texts {
			if i >= len(m.Parts) || !strings.HasSuffix(m.Parts[i].Text, text) {
				t.Errorf("pieces %q reported for part %d, not the end of its text in %+v", text, i, m.Parts)
			}
		}
	})
}
