package stream

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/convo-go/convo/internal/codec"
)

// The AWS event-stream framing (application/vnd.amazon.eventstream), as
// Bedrock's ConverseStream and InvokeModelWithResponseStream send it. Each
// message is
//
//	total length    uint32, big-endian: the whole message, CRCs included
//	headers length  uint32, big-endian
//	prelude CRC     uint32: CRC-32 (IEEE) of the 8 bytes above
//	headers         repeated: name length (uint8), name, value type (uint8), value
//	payload         total length - headers length - 16 bytes
//	message CRC     uint32: CRC-32 (IEEE) of everything before it
//
// Header values are typed: 0 true, 1 false, 2 int8, 3 int16, 4 int32,
// 5 int64, 6 byte array (uint16 length), 7 string (uint16 length, UTF-8),
// 8 timestamp (int64 milliseconds since the Unix epoch), 9 UUID (16 bytes);
// numbers are big-endian.

// Limits of the event-stream framing, as AWS defines them.
const (
	// MaxEventStreamPayload bounds the payload of one message (16 MiB).
	MaxEventStreamPayload = 16 << 20
	// MaxEventStreamHeaders bounds the headers of one message (128 KiB).
	MaxEventStreamHeaders = 128 << 10

	preludeLen     = 12 // lengths and prelude CRC
	eventStreamMin = preludeLen + 4
)

// EventStream reads AWS event-stream messages from a byte stream, checking
// both CRCs of every message.
//
// Next turns each message into a codec.Event:
//
//   - an event (":message-type" "event"): Type is its ":event-type" header
//     (contentBlockDelta, messageStop, …), Data its payload;
//   - an exception (":message-type" "exception"): Type is its
//     ":exception-type" header (throttlingException,
//     modelStreamErrorException, …; AWS exception names end in
//     "Exception"), Data its payload, normally {"message":"…"}. It is
//     delivered as an event so the provider's accumulator can report the
//     provider's message and keep the partial reply;
//   - an error (":message-type" "error", which carries ":error-code" and
//     ":error-message" headers and no payload) is the service reporting an
//     error: it ends the stream, and Next returns it as a *codec.APIError
//     (provider.APIError) of provider "bedrock" — the one provider that
//     speaks this framing here — with Type the code and Message the
//     message, the same type every codec reports a provider's error in.
//
// A CRC mismatch, a length outside the limits, a malformed header or a
// stream cut inside a message is an error; io.EOF is returned only at a
// message boundary.
type EventStream struct {
	r       *bufio.Reader
	prelude [preludeLen]byte
	buf     []byte // the rest of the message being read, reused
	n       int    // messages read, for error messages
}

// NewEventStream returns an event-stream reader over r.
func NewEventStream(r io.Reader) *EventStream {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, bufSize)
	}
	return &EventStream{r: br}
}

// ErrCRC is returned (wrapped) when a message's prelude or message CRC does
// not match its bytes.
var ErrCRC = errors.New("event-stream checksum mismatch")

// EventStreamMessage is one message with all its headers.
type EventStreamMessage struct {
	Headers []EventStreamHeader
	Payload []byte
}

// EventStreamHeader is one typed header. Value holds a bool, int8, int16,
// int32, int64, []byte, string, time.Time (UTC) or [16]byte (a UUID).
type EventStreamHeader struct {
	Name  string
	Value any
}

// Header returns the value of the first header called name.
func (m EventStreamMessage) Header(name string) (any, bool) {
	for _, h := range m.Headers {
		if h.Name == name {
			return h.Value, true
		}
	}
	return nil, false
}

// Next returns the next event or exception, io.EOF after the last message.
func (s *EventStream) Next() (codec.Event, error) {
	hdrs, payload, err := s.read()
	if err != nil {
		return codec.Event{}, err
	}
	var msgType, eventType, exceptionType, errCode, errMsg []byte
	err = scanHeaders(hdrs, func(name []byte, typ byte, val []byte) {
		if typ != 7 {
			return
		}
		switch string(name) {
		case ":message-type":
			msgType = val
		case ":event-type":
			eventType = val
		case ":exception-type":
			exceptionType = val
		case ":error-code":
			errCode = val
		case ":error-message":
			errMsg = val
		}
	})
	if err != nil {
		return codec.Event{}, s.errorf("%w", err)
	}
	var typ []byte
	switch string(msgType) {
	case "event", "":
		if eventType == nil {
			return codec.Event{}, s.errorf("event without an :event-type header")
		}
		typ = eventType
	case "exception":
		if exceptionType == nil {
			return codec.Event{}, s.errorf("exception without an :exception-type header")
		}
		typ = exceptionType
	case "error":
		return codec.Event{}, &codec.APIError{Provider: "bedrock", Type: string(errCode), Message: string(errMsg)}
	default:
		return codec.Event{}, s.errorf("unknown :message-type %q", msgType)
	}
	// The payload is copied out of the reused buffer: callers may keep it.
	return codec.Event{Type: EventName(typ), Data: append([]byte(nil), payload...)}, nil
}

// ReadMessage returns the next message with all its headers decoded, or
// io.EOF after the last one.
func (s *EventStream) ReadMessage() (EventStreamMessage, error) {
	hdrs, payload, err := s.read()
	if err != nil {
		return EventStreamMessage{}, err
	}
	var m EventStreamMessage
	err = scanHeaders(hdrs, func(name []byte, typ byte, val []byte) {
		m.Headers = append(m.Headers, EventStreamHeader{Name: string(name), Value: headerValue(typ, val)})
	})
	if err != nil {
		return EventStreamMessage{}, s.errorf("%w", err)
	}
	m.Payload = append([]byte(nil), payload...)
	return m, nil
}

func (s *EventStream) errorf(format string, args ...any) error {
	return fmt.Errorf("event-stream message %d: %w", s.n, fmt.Errorf(format, args...))
}

// read reads one message, checks its lengths and CRCs, and returns its
// header bytes and payload (both in the reused buffer).
func (s *EventStream) read() (headers, payload []byte, err error) {
	s.n++
	if _, err := io.ReadFull(s.r, s.prelude[:]); err != nil {
		if err == io.EOF {
			return nil, nil, io.EOF
		}
		if err == io.ErrUnexpectedEOF {
			return nil, nil, s.errorf("stream cut inside the prelude (%w): %w", io.ErrUnexpectedEOF, codec.ErrIncomplete)
		}
		return nil, nil, err
	}
	p := s.prelude[:]
	total := binary.BigEndian.Uint32(p[0:4])
	hlen := binary.BigEndian.Uint32(p[4:8])
	if want, got := binary.BigEndian.Uint32(p[8:12]), crc32.ChecksumIEEE(p[:8]); want != got {
		return nil, nil, s.errorf("prelude CRC is %08x, the bytes give %08x: %w", want, got, ErrCRC)
	}
	switch {
	case total < eventStreamMin:
		return nil, nil, s.errorf("total length %d is shorter than the %d bytes of prelude and CRC", total, eventStreamMin)
	case hlen > MaxEventStreamHeaders:
		return nil, nil, s.errorf("headers of %d bytes, more than %d: %w", hlen, MaxEventStreamHeaders, ErrTooLarge)
	case hlen > total-eventStreamMin:
		return nil, nil, s.errorf("headers length %d does not fit in total length %d", hlen, total)
	case total-eventStreamMin-hlen > MaxEventStreamPayload:
		return nil, nil, s.errorf("payload of %d bytes, more than %d: %w", total-eventStreamMin-hlen, MaxEventStreamPayload, ErrTooLarge)
	}
	rest := int(total) - preludeLen
	if err := s.fill(rest); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, nil, s.errorf("stream cut inside a message of %d bytes (%w): %w", total, io.ErrUnexpectedEOF, codec.ErrIncomplete)
		}
		return nil, nil, err
	}
	body := s.buf[:rest-4]
	crc := crc32.Update(crc32.ChecksumIEEE(p), crc32.IEEETable, body)
	if want := binary.BigEndian.Uint32(s.buf[rest-4:]); want != crc {
		return nil, nil, s.errorf("message CRC is %08x, the bytes give %08x: %w", want, crc, ErrCRC)
	}
	return body[:hlen], body[hlen:], nil
}

// fill reads the next n bytes into s.buf. The buffer grows with the bytes
// that actually arrive, so a prelude that claims megabytes costs nothing
// until they do.
func (s *EventStream) fill(n int) error {
	const step = 1 << 20
	if cap(s.buf) >= n || n <= step {
		if cap(s.buf) < n {
			s.buf = make([]byte, n)
		}
		s.buf = s.buf[:n]
		_, err := io.ReadFull(s.r, s.buf)
		return err
	}
	s.buf = s.buf[:0]
	for len(s.buf) < n {
		k := min(step, n-len(s.buf))
		s.buf = slices.Grow(s.buf, k)
		m, err := io.ReadFull(s.r, s.buf[len(s.buf):len(s.buf)+k])
		s.buf = s.buf[:len(s.buf)+m]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
	}
	return nil
}

// headerSizes are the value sizes of the fixed-size header types.
var headerSizes = [10]int{0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16}

// scanHeaders walks the header bytes, calling fn with each header's name,
// type and raw value bytes (for strings and byte arrays, without the length).
func scanHeaders(b []byte, fn func(name []byte, typ byte, val []byte)) error {
	for i := 0; i < len(b); {
		n := int(b[i])
		i++
		if n == 0 {
			return errors.New("header with an empty name")
		}
		if i+n+1 > len(b) {
			return errors.New("header name runs past the headers")
		}
		name := b[i : i+n]
		i += n
		typ := b[i]
		i++
		var val []byte
		switch typ {
		case 0, 1, 2, 3, 4, 5, 8, 9:
			size := headerSizes[typ]
			if i+size > len(b) {
				return fmt.Errorf("header %q: value runs past the headers", name)
			}
			val = b[i : i+size]
			i += size
		case 6, 7:
			if i+2 > len(b) {
				return fmt.Errorf("header %q: value length runs past the headers", name)
			}
			size := int(binary.BigEndian.Uint16(b[i:]))
			i += 2
			if i+size > len(b) {
				return fmt.Errorf("header %q: value runs past the headers", name)
			}
			val = b[i : i+size]
			i += size
			if typ == 7 && !utf8.Valid(val) {
				return fmt.Errorf("header %q: string value is not UTF-8", name)
			}
		default:
			return fmt.Errorf("header %q has unknown value type %d", name, typ)
		}
		fn(name, typ, val)
	}
	return nil
}

func headerValue(typ byte, v []byte) any {
	switch typ {
	case 0:
		return true
	case 1:
		return false
	case 2:
		return int8(v[0])
	case 3:
		return int16(binary.BigEndian.Uint16(v))
	case 4:
		return int32(binary.BigEndian.Uint32(v))
	case 5:
		return int64(binary.BigEndian.Uint64(v))
	case 6:
		return append([]byte(nil), v...)
	case 7:
		return string(v)
	case 8:
		return time.UnixMilli(int64(binary.BigEndian.Uint64(v))).UTC()
	default: // 9
		var u [16]byte
		copy(u[:], v)
		return u
	}
}

// EventName returns the event or exception name, without allocating for
// the names Bedrock sends on every event, in either framing.
func EventName(b []byte) string {
	switch string(b) {
	case "contentBlockDelta":
		return "contentBlockDelta"
	case "contentBlockStart":
		return "contentBlockStart"
	case "contentBlockStop":
		return "contentBlockStop"
	case "messageStart":
		return "messageStart"
	case "messageStop":
		return "messageStop"
	case "metadata":
		return "metadata"
	case "chunk":
		return "chunk"
	}
	return string(b)
}

// Ready reports whether the next message is already in the read buffer
// (see SSE.Ready): its prelude, and as many bytes as it says it has.
func (s *EventStream) Ready() bool {
	n := s.r.Buffered()
	if n < preludeLen {
		return false
	}
	p, _ := s.r.Peek(4)
	return uint32(n) >= binary.BigEndian.Uint32(p)
}
