package bedrock

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
)

// ReadStream reads a whole ConverseStream reply from r and accumulates it.
// It takes either framing and tells them apart by the first byte:
//
//   - the AWS event-stream binary framing, as the HTTP body of
//     ConverseStream arrives (application/vnd.amazon.eventstream): both
//     CRCs of every message are checked;
//   - JSON event lines, one event per line as an object with one member
//     named after the event, as SDKs hand events out and proxies and loggers
//     write them: {"contentBlockDelta":{"contentBlockIndex":0,"delta":{…}}}.
//
// When the stream fails part-way (an exception event, a CRC mismatch, a
// cut), the partial message is returned with the error.
func (c converse) ReadStream(r io.Reader, opts provider.Options) (convo.Message, []provider.Warning, error) {
	r, err := provider.CheckStream(r, Name)
	if err != nil {
		return convo.Message{}, nil, err
	}
	acc := c.NewAccumulator(opts)
	src, err := events(r)
	if err != nil {
		m, warns, _ := acc.Message()
		return m, warns, err
	}
	return stream.Feed(src, acc)
}

// events returns the events of a ConverseStream reply in either framing
// (see ReadStream): Type is the event's name (exceptions are named by their
// type, e.g. "throttlingException"), Data its JSON payload.
func events(r io.Reader) (stream.Source, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	first, err := br.Peek(1)
	if err != nil {
		if err == io.EOF {
			return stream.NewNDJSON(br), nil // no events: the accumulator says the reply is incomplete
		}
		return nil, err
	}
	switch first[0] {
	case '{', ' ', '\t', '\r', '\n', 0xef: // JSON, or a byte-order mark before it
		return &jsonLines{src: stream.NewNDJSON(br)}, nil
	}
	// A binary message starts with its length, whose first byte is 0 for
	// every message under 16 MiB; any other byte is read as binary too, so
	// that a damaged stream fails on its CRC rather than as odd JSON.
	return stream.NewEventStream(br), nil
}

// jsonLines turns lines of the form {"<event>":{…}} into events.
type jsonLines struct {
	src  *stream.NDJSON
	r    jsonx.Reader
	line int
}

// Cut reports whether the last line ended the input without a newline.
func (j *jsonLines) Cut() bool { return j.src.Cut() }

func (j *jsonLines) Next() (provider.Event, error) {
	data, err := j.src.Next()
	if err != nil {
		return provider.Event{}, err
	}
	j.line++
	line := data.Data
	if j.line == 1 && len(line) >= 3 && string(line[:3]) == "\xef\xbb\xbf" {
		line = line[3:]
	}
	j.r.Reset(line, convo.DefaultLimits.MaxDepth)
	var ev provider.Event
	n := 0
	err = j.r.ReadObject(func(k []byte) error {
		n++
		if n > 1 {
			return fmt.Errorf("event line has more than one member (%q and %q): want {\"<event>\":{…}}", ev.Type, k)
		}
		ev.Type = stream.EventName(k)
		start := j.r.Offset()
		if err := j.r.Skip(); err != nil {
			return err
		}
		ev.Data = line[start:j.r.Offset()]
		return nil
	})
	if err == nil {
		err = j.r.ExpectEnd()
	}
	if err == nil && n == 0 {
		err = errors.New(`empty event line: want {"<event>":{…}}`)
	}
	if err != nil {
		return provider.Event{}, fmt.Errorf("line %d: %w", j.line, oneLine(err))
	}
	return ev, nil
}
