package provider

import (
	"errors"
	"fmt"
	"io"
	"slices"

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

// ReplyEncoder is implemented by the Formats convo can also answer in, the
// reverse of ReplyCodec: a program that serves a provider's API (convo
// gateway, a fake upstream in a test) writes replies with it. The five
// formats a client can speak have one — openai.Chat, openai.Responses,
// anthropic.Messages, gemini.GenerateContent and ollama.Chat; Bedrock
// Converse and LiteRT are read only. Get it with EncoderOf:
//
//	enc, err := provider.EncoderOf(anthropic.Messages())
//	if err != nil {
//		return err // a format convo only reads
//	}
//	body := enc.EncodeReply(reply, provider.StreamOptions{Model: "claude-sonnet-4-5"})
type ReplyEncoder interface {
	// NewStreamEncoder returns an encoder writing one streamed reply to w
	// in the format's framing (SSE, NDJSON), event by event as deltas
	// arrive: what the format's accumulator folds back into the message
	// the deltas describe.
	NewStreamEncoder(w io.Writer, opts StreamOptions) StreamEncoder
	// EncodeReply returns a whole (not streamed) response body for an
	// assistant message, the one DecodeReply reads back.
	EncodeReply(m convo.Message, opts StreamOptions) []byte
}

// CandidatesEncoder is implemented by the ReplyEncoders of formats whose
// response carries several candidate replies (Gemini's candidates, OpenAI
// Chat's choices): the reverse of CandidatesDecoder. Their stream encoders
// also write every candidate (Delta.Candidate).
type CandidatesEncoder interface {
	// EncodeReplies returns a response body holding every message of ms
	// as one candidate, in order.
	EncodeReplies(ms []convo.Message, opts StreamOptions) []byte
}

// EncodeReplies returns a response body with every message of ms as a
// candidate when e is a CandidatesEncoder, else with the first, and a
// warning saying how many were left out. ms must not be empty.
func EncodeReplies(e ReplyEncoder, ms []convo.Message, opts StreamOptions) ([]byte, []Warning, error) {
	if len(ms) == 0 {
		return nil, nil, errors.New("no reply to encode")
	}
	if ce, ok := e.(CandidatesEncoder); ok {
		return ce.EncodeReplies(ms, opts), nil, nil
	}
	var warns []Warning
	if len(ms) > 1 {
		warns = append(warns, Warnf("candidates", "the format carries one reply: %d candidates besides the first left out", len(ms)-1))
	}
	return e.EncodeReply(ms[0], opts), warns, nil
}

// ErrNoEncoder is returned (wrapped) by EncoderOf for a format convo reads
// replies of but does not write.
var ErrNoEncoder = errors.New("no reply encoder")

// ServerToolsEncoder is implemented by the ReplyEncoders whose format
// carries the calls and results of tools its own provider ran (Anthropic's
// server tool blocks): CarriesServerTools reports true.
type ServerToolsEncoder interface {
	CarriesServerTools() bool
}

// EncoderOf returns the reply and stream encoders of f, or an error
// wrapping ErrNoEncoder that names f when it has none.
//
// The encoders leave out the calls and results of tools a provider ran
// itself (Part.IsServerTool) unless f carries them and they are its own
// provider's: written as ordinary calls, a client would run them.
func EncoderOf(f Format) (ReplyEncoder, error) {
	e, ok := f.(ReplyEncoder)
	if !ok {
		return nil, fmt.Errorf("format %q: %w: convo reads its replies but does not write them", f.Name(), ErrNoEncoder)
	}
	own := ""
	if c, ok := e.(ServerToolsEncoder); ok && c.CarriesServerTools() {
		own = f.Provider()
	}
	se := serverTools{enc: e, own: own}
	if ce, ok := e.(CandidatesEncoder); ok {
		return serverToolsCandidates{se, ce}, nil
	}
	return se, nil
}

// serverTools is a ReplyEncoder leaving out the provider-run tool parts
// of every provider but own.
type serverTools struct {
	enc ReplyEncoder
	own string
}

func (s serverTools) keep(p *convo.Part) bool {
	return !p.IsServerTool() || (s.own != "" && p.Provider == s.own)
}

func (s serverTools) without(m convo.Message) convo.Message {
	for i := range m.Parts {
		if s.keep(&m.Parts[i]) {
			continue
		}
		parts := slices.Clone(m.Parts[:i])
		for j := i + 1; j < len(m.Parts); j++ {
			if s.keep(&m.Parts[j]) {
				parts = append(parts, m.Parts[j])
			}
		}
		m.Parts = parts
		return m
	}
	return m
}

func (s serverTools) EncodeReply(m convo.Message, opts StreamOptions) []byte {
	return s.enc.EncodeReply(s.without(m), opts)
}

func (s serverTools) NewStreamEncoder(w io.Writer, opts StreamOptions) StreamEncoder {
	return &serverToolsStream{enc: s.enc.NewStreamEncoder(w, opts), tools: s}
}

// serverToolsCandidates is serverTools for a CandidatesEncoder.
type serverToolsCandidates struct {
	serverTools
	ce CandidatesEncoder
}

func (s serverToolsCandidates) EncodeReplies(ms []convo.Message, opts StreamOptions) []byte {
	out := make([]convo.Message, len(ms))
	for i, m := range ms {
		out[i] = s.without(m)
	}
	return s.ce.EncodeReplies(out, opts)
}

// serverToolsStream leaves the parts keep refuses out of a stream, with
// every delta of theirs.
type serverToolsStream struct {
	enc   StreamEncoder
	tools serverTools
	skip  map[[2]int]bool // candidate, index; made for the first part left out
}

func (f *serverToolsStream) Write(d Delta) error {
	switch d.Kind {
	case DeltaPartStart:
		if d.Part != nil && !f.tools.keep(d.Part) {
			if f.skip == nil {
				f.skip = map[[2]int]bool{}
			}
			f.skip[[2]int{d.Candidate, d.Index}] = true
			return nil
		}
	case DeltaText, DeltaArgs, DeltaSignature, DeltaEncrypted, DeltaPartEnd:
		// Nearly every delta is a piece, and nearly every stream leaves
		// no part out: those skip the map's lookup (a call and a hash of
		// the key, every piece of a translated stream).
		if len(f.skip) > 0 && f.skip[[2]int{d.Candidate, d.Index}] {
			return nil
		}
	}
	return f.enc.Write(d)
}
