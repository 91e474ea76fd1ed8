package gemini

import (
	"io"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

var _ provider.ReplyEncoder = generateContent{}

// NewStreamEncoder returns a generateContent stream encoder writing to w: the
// provider.ReplyEncoder method of the format, same as NewStreamEncoder.
func (generateContent) NewStreamEncoder(w io.Writer, opts provider.StreamOptions) provider.StreamEncoder {
	return NewStreamEncoder(w, opts)
}

// EncodeReply returns a generateContent response body for an assistant message:
// the provider.ReplyEncoder method of the format, same as EncodeReply.
func (generateContent) EncodeReply(m convo.Message, opts provider.StreamOptions) []byte {
	return EncodeReply(m, opts)
}

var _ provider.CandidatesEncoder = generateContent{}

// EncodeReplies returns a generateContent response body with every message
// of ms as a candidate: the provider.CandidatesEncoder method of the
// format, same as the package function EncodeReplies.
func (generateContent) EncodeReplies(ms []convo.Message, opts provider.StreamOptions) []byte {
	return EncodeReplies(ms, opts)
}

var _ provider.ServerToolsEncoder = generateContent{}

// CarriesServerTools reports true: Gemini replies carry Gemini's own code
// execution parts (executableCode, codeExecutionResult), so the encoders
// provider.EncoderOf returns keep them (provider.ServerToolsEncoder).
func (generateContent) CarriesServerTools() bool { return true }
