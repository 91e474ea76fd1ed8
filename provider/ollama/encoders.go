package ollama

import (
	"io"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

var _ provider.ReplyEncoder = chat{}

// NewStreamEncoder returns a /api/chat stream encoder writing to w: the
// provider.ReplyEncoder method of the format, same as NewStreamEncoder.
func (chat) NewStreamEncoder(w io.Writer, opts provider.StreamOptions) provider.StreamEncoder {
	return NewStreamEncoder(w, opts)
}

// EncodeReply returns a /api/chat response body for an assistant message:
// the provider.ReplyEncoder method of the format, same as EncodeReply.
func (chat) EncodeReply(m convo.Message, opts provider.StreamOptions) []byte {
	return EncodeReply(m, opts)
}
