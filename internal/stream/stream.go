// Package stream reads the framings providers stream replies in — Server-Sent
// Events, newline-delimited JSON and the AWS event-stream — as a sequence of
// codec.Event values, straight from an io.Reader such as an HTTP body.
package stream

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync"

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

// readBufs are the read buffers of the readers given back by Release: a
// gateway reads a stream per exchange, and its buffer need not be garbage
// after each.
var readBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, bufSize) }}

// newReader returns a buffered reader of bufSize over r, one given back by
// a Release when there is one; pooled reports whether it may be given
// back (not when r is a large enough buffered reader already, which is
// used as it is, as bufio.NewReaderSize does).
func newReader(r io.Reader) (br *bufio.Reader, pooled bool) {
	if b, ok := r.(*bufio.Reader); ok && b.Size() >= bufSize {
		return b, false
	}
	br = readBufs.Get().(*bufio.Reader)
	br.Reset(r)
	return br, true
}

// release gives br back, when pooled, for newReader to hand out again.
func release(br *bufio.Reader, pooled bool) {
	if pooled && br != nil {
		br.Reset(nil) // no reference to the stream is kept
		readBufs.Put(br)
	}
}

// ErrTooLarge is returned (wrapped) for an event over the size limit.
var ErrTooLarge = errors.New("event too large")

// Source yields the events of one stream; Next returns io.EOF after the
// last one.
type Source interface {
	Next() (codec.Event, error)
}

// FeedSSE reads the Server-Sent Events of r into acc (Feed) and gives the
// SSE reader's buffer back after. With shared, acc is given each event's
// data in a buffer the next event overwrites (SSE.Share): only for an
// accumulator that keeps no part of an event's data but copies.
func FeedSSE(r io.Reader, acc codec.Accumulator, shared bool) (convo.Message, []codec.Warning, error) {
	src := NewSSE(r)
	defer src.Release()
	if shared {
		src.Share()
	}
	return Feed(src, acc)
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
