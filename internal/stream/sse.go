package stream

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/convo-go/convo/internal/codec"
)

// SSE reads Server-Sent Events as the HTML standard defines them: lines end
// in CRLF, LF or CR; lines starting with ':' are comments; "data" lines are
// joined with newlines; a blank line dispatches the event; an event with no
// data is not dispatched; an unfinished event at the end is discarded. The
// "id" and "retry" fields are read and ignored. OpenAI's "[DONE]" sentinel
// arrives as an ordinary event whose data is [DONE].
type SSE struct {
	r      *bufio.Reader
	ch     *Chunks // instead of r: a stream in memory, read where it lies
	pooled bool    // r may be given back (Release)
	max    int
	first  bool
	data   []byte
	event  string
	has    bool // data has at least one data line
	line   []byte
	// names are the event names seen last, reused: a stream repeats a few
	// names (content_block_delta) for most of its events. Names every
	// stream of a provider has are in knownNames, made once.
	names [4]string
	next  int // the slot of names the next new name takes
	// skipLF is set after a CR: a LF right after it belongs to the same
	// line end.
	skipLF bool
	shared bool // Next returns data in s.data, not a copy (Share)
	// slab holds the data of the short events returned, one after the
	// other (see keep).
	slab []byte
	// one is the value of the event's only data line so far, when it
	// lies in a chunk of ch (inPlace): an event of one line, most of
	// them, is that slice, not copied into data.
	one     []byte
	inPlace bool
}

// Event data up to slabMax bytes is kept in slabs of up to slabSize bytes,
// each event's a slice of the slab the earlier ones are in: one allocation
// for tens of events instead of one each. A new slab has room for what is
// already buffered (the rest of a stream read from memory), or twice the
// last one's, whichever is more: a short stream does not take 4 KiB. A
// slab is never written again where an event's data lies, so an event's
// data stays the caller's as long as it wants it; a caller that keeps one
// event's data keeps its slab, no more than slabSize bytes, in memory.
const (
	slabSize = 4 << 10
	slabMax  = slabSize / 4
)

// keep returns a copy of data that the reader never writes again.
func (s *SSE) keep(data []byte) []byte {
	if len(data) == 0 {
		return []byte{}
	}
	if len(data) > slabMax {
		return bytes.Clone(data)
	}
	if cap(s.slab)-len(s.slab) < len(data) {
		s.slab = make([]byte, 0, min(slabSize, max(len(data)+s.buffered(), 2*cap(s.slab), 256)))
	}
	i := len(s.slab)
	s.slab = append(s.slab, data...)
	// Capped: an append to the event's data copies it rather than
	// writing over the next event's.
	return s.slab[i:len(s.slab):len(s.slab)]
}

// NewSSE returns an SSE reader over r with the MaxEvent limit.
func NewSSE(r io.Reader) *SSE {
	if c, ok := r.(*Chunks); ok {
		return &SSE{ch: c, max: MaxEvent, first: true}
	}
	br, pooled := newReader(r)
	return &SSE{r: br, pooled: pooled, max: MaxEvent, first: true}
}

// Share makes Next return each event's data in a buffer of s's that the
// next call overwrites, instead of a copy of its own: for a consumer that
// copies what it keeps (an accumulator folding a stream), which saves a
// copy and an allocation an event.
func (s *SSE) Share() { s.shared = true }

// Release gives the reader's read buffer back for another reader, once
// the stream is done with (the events read keep their data, which never
// aliases it); s must not be used after.
func (s *SSE) Release() {
	release(s.r, s.pooled)
	s.r, s.pooled = nil, false
}

// Next returns the next event, or io.EOF after the last.
func (s *SSE) Next() (codec.Event, error) {
	for {
		line, stable, err := s.readLine()
		if err != nil {
			return codec.Event{}, err
		}
		if s.first {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
			s.first = false
		}
		if len(line) == 0 {
			if !s.has {
				s.event = ""
				continue
			}
			return s.dispatch(), nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte{' '})
		}
		switch string(field) {
		case "data":
			if err := s.addData(value, stable); err != nil {
				return codec.Event{}, err
			}
		case "event":
			s.event = s.name(value)
		}
	}
}

// addData adds a data line's value to the event; stable says it lies in
// a chunk the reader never writes (a *Chunks): the first such line is
// kept where it is.
func (s *SSE) addData(value []byte, stable bool) error {
	n := len(s.data)
	if s.inPlace {
		n = len(s.one) + 1
	}
	if n+len(value)+1 > s.max {
		return fmt.Errorf("SSE event of more than %d bytes: %w", s.max, ErrTooLarge)
	}
	switch {
	case stable && !s.has:
		s.one, s.inPlace = value, true
	case s.inPlace:
		s.data = append(append(append(append(s.data, s.one...), '\n'), value...), '\n')
		s.one, s.inPlace = nil, false
	default:
		s.data = append(append(s.data, value...), '\n')
	}
	s.has = true
	return nil
}

// dispatch returns the event the data lines read make, and starts the next.
func (s *SSE) dispatch() codec.Event {
	var data []byte
	switch {
	case s.inPlace && s.shared:
		// Capped where its line ends (readLine). Only for a consumer
		// that copies what it keeps: a chunk may be reused once the
		// stream is decoded (the gateway's tap pools them).
		data = s.one
	case s.inPlace:
		data = s.keep(s.one)
	case s.shared:
		data = bytes.TrimSuffix(s.data, []byte{'\n'})
	default:
		data = s.keep(bytes.TrimSuffix(s.data, []byte{'\n'}))
	}
	ev := codec.Event{Type: s.event, Data: data}
	s.data, s.event, s.has = s.data[:0], "", false
	s.one, s.inPlace = nil, false
	return ev
}

// knownNames are the event names of the providers' streams, as strings
// made once for every stream: Anthropic's, and the most frequent of
// OpenAI Responses'.
var knownNames = [...]string{
	"content_block_delta", "content_block_start", "content_block_stop", "message_start", "message_delta", "message_stop", "ping", "error",
	"response.output_text.delta", "response.reasoning_summary_text.delta", "response.function_call_arguments.delta",
	"response.created", "response.in_progress", "response.output_item.added", "response.output_item.done",
	"response.content_part.added", "response.content_part.done", "response.output_text.done", "response.completed",
}

// name returns value as a string: one of knownNames or names when it is
// there.
func (s *SSE) name(value []byte) string {
	for _, n := range knownNames {
		if n == string(value) {
			return n
		}
	}
	for _, n := range s.names {
		if n == string(value) {
			return n
		}
	}
	n := string(value)
	s.names[s.next] = n
	s.next = (s.next + 1) % len(s.names)
	return n
}

// lineEnd returns the index of the first CR or LF in b, or -1: as
// bytes.IndexAny(b, "\r\n"), without building a set for every line.
func lineEnd(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return bytes.IndexByte(b, '\r')
	}
	if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
		return j
	}
	return i
}

// readLine returns the next line without its terminator (CRLF, LF or CR).
// A stream that ends without a final terminator still yields its last line.
// The line is valid until the next call: it may be in the read buffer.
// From a *Chunks, a line that lies whole in one chunk is that chunk's
// bytes, which stay as they are (stable).
func (s *SSE) readLine() (line []byte, stable bool, err error) {
	if s.ch != nil {
		return s.chunkLine()
	}
	s.line = s.line[:0]
	for {
		if s.r.Buffered() == 0 {
			if _, err := s.r.Peek(1); err != nil {
				if err == io.EOF && len(s.line) > 0 {
					return s.line, false, nil
				}
				return nil, false, err
			}
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		if s.skipLF {
			s.skipLF = false
			if buf[0] == '\n' {
				s.r.Discard(1)
				continue
			}
		}
		i := lineEnd(buf)
		if i < 0 {
			s.line = append(s.line, buf...)
			s.r.Discard(len(buf))
			if len(s.line) > s.max {
				return nil, false, fmt.Errorf("SSE line of more than %d bytes: %w", s.max, ErrTooLarge)
			}
			continue
		}
		s.skipLF = buf[i] == '\r'
		if len(s.line) == 0 {
			// The whole line is in the read buffer: Next is done with it
			// before it reads again, which is when the buffer changes.
			s.r.Discard(i + 1)
			return buf[:i:i], false, nil
		}
		s.line = append(s.line, buf[:i]...)
		s.r.Discard(i + 1)
		return s.line, false, nil
	}
}

// chunkLine is readLine from s.ch: the same lines, a chunk standing for
// the read buffer, but one that is never refilled.
func (s *SSE) chunkLine() ([]byte, bool, error) {
	s.line = s.line[:0]
	for {
		buf := s.ch.current()
		if buf == nil {
			if len(s.line) > 0 {
				return s.line, false, nil
			}
			return nil, false, io.EOF
		}
		if s.skipLF {
			s.skipLF = false
			if buf[0] == '\n' {
				s.ch.advance(1)
				continue
			}
		}
		i := s.ch.lineEnd(buf)
		if i < 0 {
			s.line = append(s.line, buf...)
			s.ch.advance(len(buf))
			if len(s.line) > s.max {
				return nil, false, fmt.Errorf("SSE line of more than %d bytes: %w", s.max, ErrTooLarge)
			}
			continue
		}
		s.skipLF = buf[i] == '\r'
		s.ch.advance(i + 1)
		if len(s.line) == 0 {
			return buf[:i:i], true, nil
		}
		s.line = append(s.line, buf[:i]...)
		return s.line, false, nil
	}
}

// buffered is how much of the stream is read but not yet returned, at
// least.
func (s *SSE) buffered() int {
	if s.ch != nil {
		return len(s.ch.current())
	}
	return s.r.Buffered()
}

// Ready reports whether the next event is already in the read buffer, so
// that Next returns it without reading from the underlying reader, and so
// without waiting for the network. It can report false when the event is
// there (a caller that flushes its output when the next event is not
// ready only flushes more often), never true when it is not.
func (s *SSE) Ready() bool {
	if s.ch != nil {
		return true // in memory: Next never waits
	}
	buf, _ := s.r.Peek(s.r.Buffered())
	if s.skipLF && len(buf) > 0 && buf[0] == '\n' {
		buf = buf[1:]
	}
	// Next is between events: no data line is pending. Walk the buffered
	// lines as Next would: a blank line after a data line dispatches.
	has := false
	for {
		i := lineEnd(buf)
		if i < 0 {
			return false // the rest is not a whole line yet
		}
		line := buf[:i]
		switch {
		case len(line) == 0:
			if has {
				return true
			}
		case string(line) == "data" || bytes.HasPrefix(line, []byte("data:")):
			has = true
		}
		if buf[i] == '\r' && i+1 < len(buf) && buf[i+1] == '\n' {
			i++
		}
		buf = buf[i+1:]
	}
}
