package all

import (
	"fmt"
	"io"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// NewStreamEncoder returns a stream encoder writing the format called name
// (its streamed-reply wire format) to w: Encoder(name)'s. The calls and
// results of tools a provider ran itself go only to a format that carries
// them (Anthropic's own, as server tool blocks); elsewhere they are left
// out.
func NewStreamEncoder(name string, w io.Writer, opts provider.StreamOptions) (provider.StreamEncoder, error) {
	e, err := Encoder(name)
	if err != nil {
		return nil, err
	}
	return e.NewStreamEncoder(w, opts), nil
}

// EncodeReply returns a non-streamed response body in the format called
// name for an assistant message, leaving out provider-run tools as
// NewStreamEncoder does.
func EncodeReply(name string, m convo.Message, opts provider.StreamOptions) ([]byte, error) {
	e, err := Encoder(name)
	if err != nil {
		return nil, err
	}
	return e.EncodeReply(m, opts), nil
}

// EncodeReplies returns a non-streamed response body in the format called
// name holding every message of ms as one candidate reply, in order (the
// response to a request with n > 1 or candidateCount > 1). A format with
// one reply per response gets the first message, and a warning says how
// many were left out (provider.EncodeReplies).
func EncodeReplies(name string, ms []convo.Message, opts provider.StreamOptions) ([]byte, []provider.Warning, error) {
	e, err := Encoder(name)
	if err != nil {
		return nil, nil, err
	}
	return provider.EncodeReplies(e, ms, opts)
}

// StreamsCandidates reports whether the stream encoder of the format called
// name writes several candidates (Delta.Candidate); for the others a
// DeltaReader should report only the first (see
// provider.DeltaReader.ReadCandidates).
func StreamsCandidates(name string) bool {
	e, err := Encoder(name)
	if err != nil {
		return false
	}
	_, ok := e.(provider.CandidatesEncoder)
	return ok
}

// Encoder returns the reply and stream encoders of the format called name
// (provider.EncoderOf of Lookup(name)), which leave out the provider-run
// tools the format cannot carry.
// Bedrock and LiteRT have none: the error wraps provider.ErrNoEncoder and
// lists the formats that do.
func Encoder(name string) (provider.ReplyEncoder, error) {
	f, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	e, err := provider.EncoderOf(f)
	if err != nil {
		var names []string
		for _, f := range Formats() {
			if _, ok := f.(provider.ReplyEncoder); ok {
				names = append(names, f.Name())
			}
		}
		return nil, fmt.Errorf("%w (formats with encoders: %s)", err, strings.Join(names, ", "))
	}
	return e, nil
}
