package provider

import (
	"io"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/codec"
)

// Event is one event of a streamed reply as a stream reader delivers it:
// Type is the SSE event name or the AWS event-stream :event-type header
// (empty for NDJSON lines and unnamed SSE events), Data the event's payload,
// normally one JSON value.
type Event = codec.Event

// Accumulator folds the events of one streamed reply into one assistant
// message. Feed it events in order with Add(Event) error; Snapshot()
// convo.Message may be called at any time (to show partial text);
// Message() (convo.Message, []Warning, error) gives the final message once
// the stream is complete and is equal to decoding the same reply
// non-streamed. An incomplete stream is an error wrapping ErrIncomplete,
// and the partial message is still returned beside it.
type Accumulator = codec.Accumulator

// ReplyCodec decodes a provider's replies.
type ReplyCodec interface {
	// DecodeReply decodes a response body into one assistant message with
	// Usage, Finish and Origin.
	DecodeReply(body []byte, opts Options) (convo.Message, []Warning, error)
	// NewAccumulator returns an accumulator for one streamed reply.
	NewAccumulator(opts Options) Accumulator
	// ReadStream reads a whole stream in the provider's framing (SSE,
	// NDJSON, AWS event-stream, …) from r, such as an HTTP body, and
	// accumulates it.
	ReadStream(r io.Reader, opts Options) (convo.Message, []Warning, error)
}

// CandidatesDecoder is implemented by the reply codecs of APIs that return
// several candidate replies to one request (OpenAI Chat with n > 1, Gemini
// with candidateCount > 1). DecodeReplies returns one assistant message per
// candidate, in the API's index order; the first is the message DecodeReply
// returns, and only it carries the response's Usage, which counts them all.
type CandidatesDecoder interface {
	DecodeReplies(body []byte, opts Options) ([]convo.Message, []Warning, error)
}

// DecodeReplies decodes every candidate reply of a response body with c:
// all of them when c is a CandidatesDecoder, else the one message of
// DecodeReply. DecodeReply alone keeps the first candidate and warns about
// the others.
func DecodeReplies(c ReplyCodec, body []byte, opts Options) ([]convo.Message, []Warning, error) {
	if cd, ok := c.(CandidatesDecoder); ok {
		return cd.DecodeReplies(body, opts)
	}
	m, warns, err := c.DecodeReply(body, opts)
	if err != nil && m.Role == "" {
		return nil, warns, err
	}
	return []convo.Message{m}, warns, err
}

// CandidatesAccumulator is implemented by the accumulators of APIs that
// stream several candidate replies to one request (OpenAI Chat with n > 1,
// whose chunks carry choices[].index; Gemini with candidateCount > 1,
// whose chunks carry candidates[].index). The accumulator keeps every
// candidate; Snapshot and Message give the first (index 0), as for any
// accumulator, and Message warns that the others were left out.
type CandidatesAccumulator interface {
	Accumulator
	// Candidates returns how many candidates the stream has shown so far:
	// 1 until one with another index than 0 comes.
	Candidates() int
	// SnapshotCandidate returns candidate i (the i-th in index order, i <
	// Candidates()) as accumulated so far; SnapshotCandidate(0) is
	// Snapshot. A candidate that comes later with a lower index than one
	// already seen moves those after it (no API sends them so).
	SnapshotCandidate(i int) convo.Message
	// Messages returns every candidate's final message in index order:
	// the first is Message's, and only it carries the usage, which counts
	// them all. Each is what DecodeReplies makes of the same candidate
	// non-streamed. A stream that ended before every candidate finished
	// is an error wrapping ErrIncomplete, with the partial messages.
	Messages() ([]convo.Message, []Warning, error)
}

// AccumulatedReplies returns every candidate reply acc folded: all of them
// when acc is a CandidatesAccumulator, else the one message of Message.
// It is the streamed counterpart of DecodeReplies.
func AccumulatedReplies(acc Accumulator) ([]convo.Message, []Warning, error) {
	if ca, ok := acc.(CandidatesAccumulator); ok {
		return ca.Messages()
	}
	m, warns, err := acc.Message()
	return []convo.Message{m}, warns, err
}

// Format is one provider wire format: the request codec and the reply codec
// of the same API in one value. Every provider package returns one Format
// per wire format it speaks, from a constructor named after the API
// (openai.Chat, openai.Responses, anthropic.Messages, gemini.GenerateContent,
// ollama.Chat, bedrock.Converse, litert.Conversation).
//
// A Format also encodes and decodes whole request bodies (RequestCodec,
// which includes Codec).
type Format interface {
	RequestCodec
	ReplyCodec
}
