package anthropic

import (
	"io"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

var _ provider.ReplyEncoder = messages{}

// NewStreamEncoder returns a Messages API stream encoder writing to w: the
// provider.ReplyEncoder method of the format, same as NewStreamEncoder.
func (messages) NewStreamEncoder(w io.Writer, opts provider.StreamOptions) provider.StreamEncoder {
	return NewStreamEncoder(w, opts)
}

// EncodeReply returns a Messages API response body for an assistant message:
// the provider.ReplyEncoder method of the format, same as EncodeReply.
func (messages) EncodeReply(m convo.Message, opts provider.StreamOptions) []byte {
	return EncodeReply(m, opts)
}

// CarriesServerTools reports that the Messages API carries the calls and
// results of the tools Anthropic ran (server tool blocks): the
// provider.ServerToolsEncoder method.
func (messages) CarriesServerTools() bool { return true }
