package stream

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/convo-go/convo/internal/codec"
)

// NDJSON reads newline-delimited JSON: one event per non-blank line, the
// line's bytes as Data. A CR before the LF is removed.
type NDJSON struct {
	r      *bufio.Reader
	pooled bool // r may be given back (Release)
	max    int
	cut    bool // the last line returned ended the input without a newline
}

// NewNDJSON returns an NDJSON reader over r with the MaxEvent limit.
func NewNDJSON(r io.Reader) *NDJSON {
	br, pooled := newReader(r)
	return &NDJSON{r: br, pooled: pooled, max: MaxEvent}
}

// Release gives the reader's read buffer back for another reader, once
// the stream is done with (the events read keep their data, which never
// aliases it); n must not be used after.
func (n *NDJSON) Release() {
	release(n.r, n.pooled)
	n.r, n.pooled = nil, false
}

// Cut reports whether the line Next returned last ended the input without
// a newline: when it does not parse, the stream was cut inside it.
func (n *NDJSON) Cut() bool { return n.cut }

// Next returns the next line as an event, or io.EOF after the last.
func (n *NDJSON) Next() (codec.Event, error) {
	n.cut = false
	var line []byte
	for {
		chunk, err := n.r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > n.max {
			return codec.Event{}, fmt.Errorf("NDJSON line of more than %d bytes: %w", n.max, ErrTooLarge)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return codec.Event{}, err
		}
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) > 0 {
			n.cut = err == io.EOF
			return codec.Event{Data: trimmed}, nil
		}
		if err == io.EOF {
			return codec.Event{}, io.EOF
		}
		line = line[:0]
	}
}

// Ready reports whether the next event is already in the read buffer (see
// SSE.Ready): a whole line with something other than white space on it.
func (n *NDJSON) Ready() bool {
	buf, _ := n.r.Peek(n.r.Buffered())
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return false
		}
		for _, c := range buf[:i] {
			if c > ' ' && c < 0x7f {
				return true // printable ASCII: TrimSpace cannot make the line blank
			}
		}
		buf = buf[i+1:]
	}
}
