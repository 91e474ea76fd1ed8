// Package codec holds the values a codec's output is made of — stream
// events, the Accumulator that folds them, warnings and their codes,
// ErrIncomplete, and opaque provider blocks — without the codecs. It
// imports nothing of convo but the root package (and internal/jsonx,
// which the root imports too), so the stream readers (internal/stream)
// and the token counter (tokens) can use these values without importing
// package provider, which re-exports every name here.
package codec

import (
	"errors"
	"fmt"

	"github.com/convo-go/convo"
)

// Warning is something a conversion dropped or changed.
type Warning struct {
	Path string // place in the history or request, e.g. messages[3].parts[1]
	Msg  string
	Code Code // what kind of loss, stable across releases; "" for one not yet classified
}

func (w Warning) String() string {
	if w.Path == "" {
		return w.Msg
	}
	return w.Path + ": " + w.Msg
}

// Warnf returns a Warning at path.
func Warnf(path, format string, args ...any) Warning {
	return Warning{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// Code names a kind of loss or change a conversion reports. Codes are
// stable: a program may match on them where it must not match on messages.
type Code string

// Event is one event of a streamed reply as a stream reader delivers it.
type Event struct {
	// Type is the SSE event name or the AWS event-stream :event-type
	// header; empty for NDJSON lines and unnamed SSE events.
	Type string
	// Data is the event's payload, normally one JSON value.
	Data []byte
}

// Accumulator folds the events of one streamed reply into one assistant
// message. Feed it events in order with Add; Snapshot may be called at any
// time (to show partial text); Message gives the final message once the
// stream is complete and is equal to decoding the same reply non-streamed.
type Accumulator interface {
	Add(ev Event) error
	Snapshot() convo.Message
	// Message returns the final message. An incomplete stream is an error,
	// and the partial message is still returned beside it.
	Message() (convo.Message, []Warning, error)
}

// ErrIncomplete is wrapped by the error of every reply reader whose stream
// ended before the reply was complete.
var ErrIncomplete = errors.New("incomplete reply")
