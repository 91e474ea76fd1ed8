package convo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/convo-go/convo/internal/jsonx"
)

// A Decoder reads a canonical document (the envelope, a bare array or JSON
// Lines, as Unmarshal accepts) from a reader one message at a time, so a
// history of any length is read holding only the message at hand: memory is
// about twice the largest message, not the document. Limits.MaxBytes bounds
// each message, not the document.
//
//	d := convo.NewDecoder(f)
//	for {
//		m, err := d.Next()
//		if err == io.EOF {
//			break
//		}
//		if err != nil {
//			return err // names the place: messages[41].parts[0].text: …
//		}
//		use(m)
//	}
type Decoder struct {
	r     io.Reader
	l     Limits
	buf   []byte
	pos   int  // bytes of buf consumed
	eof   bool // r is exhausted
	err   error
	state int // what the next token is (see the constants)
	i     int // index of the next message
	// envelope members seen, for the checks at its end
	envelope, format, messages bool
	dec                        decoder
	// skip, after an error inside a message whose JSON value was whole, is
	// that value's length, so that Resume can step over it; 0 otherwise.
	skip int
}

const (
	stStart    = iota // nothing read yet
	stLines           // JSON Lines: objects separated by white space
	stArray           // inside a bare array
	stEnvArray        // inside the envelope's messages array
	stEnvelope        // between envelope members
	stEnd             // the document is complete
)

const decoderChunk = 64 << 10

// eoi is what peek returns at the end of the input.
const eoi = -1

// NewDecoder returns a Decoder reading r with DefaultLimits.
func NewDecoder(r io.Reader) *Decoder { return DefaultLimits.NewDecoder(r) }

// NewDecoder returns a Decoder reading r within the limits l.
func (l Limits) NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: r, l: l.WithDefaults()}
}

// Next returns the next message, or io.EOF after the last one of a
// complete document. Any other error ends the decoding, unless Resume
// steps over the message that caused it.
func (d *Decoder) Next() (Message, error) {
	if d.err != nil {
		return Message{}, d.err
	}
	d.skip = 0
	m, err := d.next()
	if err != nil {
		d.err = err
	}
	return m, err
}

func (d *Decoder) next() (Message, error) {
	for {
		c, err := d.peek()
		if err != nil {
			return Message{}, err
		}
		if c == eoi && (d.state == stArray || d.state == stEnvArray || d.state == stEnvelope) {
			return Message{}, errors.New("unexpected end of input: the document is cut off")
		}
		switch d.state {
		case stStart:
			if err := d.start(c); err != nil {
				return Message{}, err
			}
		case stLines:
			if c == eoi {
				d.state = stEnd
				continue
			}
			return d.message()
		case stArray, stEnvArray:
			if c == ']' {
				d.pos++
				if d.state == stArray {
					d.state = stEnd
				} else {
					d.state = stEnvelope
				}
				continue
			}
			if d.i > 0 {
				if err := d.comma(c); err != nil {
					return Message{}, err
				}
			}
			return d.message()
		case stEnvelope:
			if err := d.member(c); err != nil {
				return Message{}, err
			}
		case stEnd:
			return Message{}, d.end(c)
		}
	}
}

// Resume lets decoding go on after Next failed on a message whose JSON
// value was whole but not a valid message (a wrong member, a bad value):
// it steps over that message, whose index the next message does not
// reuse, and reports true. After any other error (broken JSON, a document
// cut off, a message over the size limit) the next message cannot be
// found, and Resume reports false: decoding stays ended. A validator uses
// it to report every bad message of a document in one pass.
func (d *Decoder) Resume() bool {
	if d.err == nil || d.skip == 0 {
		return false
	}
	d.pos += d.skip
	d.i++
	d.skip, d.err = 0, nil
	return true
}

// start tells the document's form from its first byte c (after a byte
// order mark, which it skips): an envelope, a bare array or JSON Lines.
func (d *Decoder) start(c int) error {
	for len(d.buf)-d.pos < 3 && !d.eof {
		if err := d.fill(); err != nil {
			return err
		}
	}
	if bytes.HasPrefix(d.buf[d.pos:], []byte("\xef\xbb\xbf")) {
		d.pos += 3
		return nil
	}
	switch c {
	case eoi:
		d.state = stEnd // no lines
	case '[':
		d.pos++
		d.state = stArray
	case '{':
		env, err := d.isEnvelope()
		if err != nil {
			return err
		}
		if env {
			d.pos++
			d.envelope, d.state = true, stEnvelope
		} else {
			d.state = stLines
		}
	default:
		return fmt.Errorf("not a convo document: want an object, an array or JSON Lines, got %q", rune(c))
	}
	return nil
}

// comma reads the separator c before a message that is not the first of
// its array.
func (d *Decoder) comma(c int) error {
	if c != ',' {
		return at(fmt.Errorf("want , or ] after a message, got %q", rune(c)), index("messages", d.i))
	}
	d.pos++
	_, err := d.peek()
	return err
}

// end checks what follows a complete document (c must be the end of the
// input) and that an envelope had its members; it returns io.EOF when all
// is well.
func (d *Decoder) end(c int) error {
	if c != eoi {
		return fmt.Errorf("data after the end of the document: %q", rune(c))
	}
	if d.envelope && !d.format {
		return errors.New(`envelope has no "format"`)
	}
	if d.envelope && !d.messages {
		return errors.New(`envelope has no "messages"`)
	}
	return io.EOF
}

// member reads the envelope between members: a separator, a key and the
// start of its value, or the envelope's end.
func (d *Decoder) member(c int) error {
	switch {
	case c == '}':
		d.pos++
		d.state = stEnd
		return nil
	case c == ',' && (d.format || d.messages):
		d.pos++
		return nil
	case c != '"':
		return fmt.Errorf("envelope: want a member name, got %q", rune(c))
	}
	n, err := d.value()
	if err != nil {
		return err
	}
	var key string
	if err := json.Unmarshal(d.buf[d.pos:d.pos+n], &key); err != nil {
		return fmt.Errorf("envelope: %w", err)
	}
	d.pos += n
	c, err = d.peek()
	if err != nil {
		return err
	}
	if c != ':' {
		return fmt.Errorf("envelope: want : after %q", key)
	}
	d.pos++
	c, err = d.peek()
	if err != nil {
		return err
	}
	switch key {
	case "format":
		if c != '"' {
			return at(errors.New("want a string"), "format")
		}
		n, err := d.value()
		if err != nil {
			return at(err, "format")
		}
		var f string
		if err := json.Unmarshal(d.buf[d.pos:d.pos+n], &f); err != nil {
			return at(err, "format")
		}
		if f != FormatV1 {
			return at(fmt.Errorf("unsupported format %q (this reader knows %s)", f, FormatV1), "format")
		}
		d.pos += n
		d.format = true
	case "messages":
		if c != '[' {
			return at(errors.New("want an array"), "messages")
		}
		d.pos++
		d.messages, d.state = true, stEnvArray
	default:
		return fmt.Errorf("unknown envelope member %q", key)
	}
	return nil
}

// isEnvelope reports whether the object at the decoder's position begins
// with an envelope member.
func (d *Decoder) isEnvelope() (bool, error) {
	// The first key is within the first few bytes (after white space).
	for len(d.buf)-d.pos < 64 && !d.eof {
		if err := d.fill(); err != nil {
			return false, err
		}
	}
	return isEnvelope(d.buf[d.pos:]), nil
}

// message decodes the message starting at the decoder's position.
func (d *Decoder) message() (Message, error) {
	i := d.i
	if d.pos >= len(d.buf) {
		return Message{}, errors.New("unexpected end of input: the document is cut off")
	}
	if d.buf[d.pos] != '{' {
		return Message{}, at(fmt.Errorf("want a message object, got %q", d.buf[d.pos]), index("messages", i))
	}
	n, err := d.value()
	if err != nil {
		return Message{}, at(err, index("messages", i))
	}
	d.dec.r = jsonx.NewReader(d.buf[d.pos:d.pos+n], d.l.MaxDepth)
	var m Message
	err = d.dec.message(&m)
	if err == nil {
		err = d.dec.r.ExpectEnd()
	}
	if err != nil {
		d.skip = n // the value is whole JSON; only its content is wrong
		return Message{}, at(err, index("messages", i))
	}
	d.pos += n
	d.i++
	return m, nil
}

// peek skips white space and returns the next byte, or eoi at the end of
// the input.
func (d *Decoder) peek() (int, error) {
	for {
		for d.pos < len(d.buf) {
			switch c := d.buf[d.pos]; c {
			case ' ', '\t', '\r', '\n':
				d.pos++
			default:
				return int(c), nil
			}
		}
		if d.eof {
			return eoi, nil
		}
		if err := d.fill(); err != nil {
			return 0, err
		}
	}
}

// value returns the length of the complete JSON value (object, array or
// string) at the decoder's position, reading more input as needed and
// refusing a value longer than MaxBytes.
func (d *Decoder) value() (int, error) {
	scanned, depth, inString, escaped := 0, 0, false, false
	for {
		b := d.buf[d.pos:]
		for ; scanned < len(b); scanned++ {
			c := b[scanned]
			switch {
			case inString:
				switch {
				case escaped:
					escaped = false
				case c == '\\':
					escaped = true
				case c == '"':
					inString = false
					if depth == 0 {
						return scanned + 1, nil
					}
				}
			case c == '"':
				inString = true
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				depth--
				if depth == 0 {
					return scanned + 1, nil
				}
				if depth < 0 {
					return 0, fmt.Errorf("unexpected %q", c)
				}
			}
		}
		if int64(scanned) > d.l.MaxBytes {
			return 0, fmt.Errorf("message of more than %d bytes: %w", d.l.MaxBytes, jsonx.ErrTooLarge)
		}
		if d.eof {
			return 0, errors.New("unexpected end of input inside a value")
		}
		if err := d.fill(); err != nil {
			return 0, err
		}
	}
}

// fill reads more input, first moving what is left to the buffer's start
// so the buffer holds at most the value being read and one chunk.
func (d *Decoder) fill() error {
	if d.pos > 0 {
		n := copy(d.buf, d.buf[d.pos:])
		d.buf, d.pos = d.buf[:n], 0
	}
	if cap(d.buf)-len(d.buf) < decoderChunk {
		nb := make([]byte, len(d.buf), 2*cap(d.buf)+decoderChunk)
		copy(nb, d.buf)
		d.buf = nb
	}
	n, err := d.r.Read(d.buf[len(d.buf):cap(d.buf)])
	d.buf = d.buf[:len(d.buf)+n]
	if err == io.EOF {
		d.eof = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading document: %w", err)
	}
	return nil
}
