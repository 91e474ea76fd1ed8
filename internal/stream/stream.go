// Package stream reads the framings providers stream replies in — Server-Sent
// Events, newline-delimited JSON and the AWS event-stream — as a sequence of
// codec.Event values, straight from an io.Reader such as an HTTP body.
package stream

import (
	"errors"
	"fmt"
	"io"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/codec"
)

// MaxEvent is the largest event a reader accepts by default: large enough
// for an inline image in one delta, small enough that a hostile stream
// cannot exhaust memory.
const MaxEvent = 64 << 20

// bufSize is the read buffer of each reader. An event larger than it is
// still read whole (a reader gathers a line or a message across refills);
// replies stream in events of a few hundred bytes, and a gateway holds one
// reader per open stream, so a small buffer keeps memory per stream small
// (it was 64 KiB: 32 MiB for 512 streams).
const bufSize = 4 << 10

// ErrTooLarge is returned (wrapped) for an event over the size limit.
var ErrTooLarge = errors.New("event too large")

// Source yields the events of one stream; Next returns io.EOF after the
// last one.
type Source interface {
	Next() (codec.Event, error)
}

// Feed reads every event of src into acc and returns the accumulated
// message. When reading fails part-way the partial message is returned with
// the error, so a caller can still show what arrived.
func Feed(src Source, acc codec.Accumulator) (convo.Message, []codec.Warning, error) {
	for n := 0; ; n++ {
		ev, err := src.Next()
		if errors.Is(err, io.EOF) {
			return acc.Message()
		}
		if err == nil {
			err = acc.Add(ev)
		}
		if err != nil {
			m, warns, _ := acc.Message()
			if c, ok := src.(interface{ Cut() bool }); ok && c.Cut() && !errors.Is(err, codec.ErrIncomplete) {
				// The last line ended the input without its newline and
				// did not make sense: the stream was cut inside it. (A
				// source that frames lines itself has Cut too.)
				return m, warns, fmt.Errorf("event %d: %w: %w", n, err, codec.ErrIncomplete)
			}
			return m, warns, fmt.Errorf("event %d: %w", n, err)
		}
	}
}
