package openai

import (
	"io"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

var _ provider.ReplyEncoder = chat{}

// NewStreamEncoder returns a Chat Completions stream encoder writing to w: the
// provider.ReplyEncoder method of the format, same as NewChatStreamEncoder.
func (chat) NewStreamEncoder(w io.Writer, opts provider.StreamOptions) provider.StreamEncoder {
	return NewChatStreamEncoder(w, opts)
}

// EncodeReply returns a Chat Completions response body for an assistant message:
// the provider.ReplyEncoder method of the format, same as EncodeChatReply.
func (chat) EncodeReply(m convo.Message, opts provider.StreamOptions) []byte {
	return EncodeChatReply(m, opts)
}

var _ provider.ReplyEncoder = responses{}

// NewStreamEncoder returns a Responses API stream encoder writing to w: the
// provider.ReplyEncoder method of the format, same as NewResponsesStreamEncoder.
func (responses) NewStreamEncoder(w io.Writer, opts provider.StreamOptions) provider.StreamEncoder {
	return NewResponsesStreamEncoder(w, opts)
}

// EncodeReply returns a Responses API response body for an assistant message:
// the provider.ReplyEncoder method of the format, same as EncodeResponsesReply.
func (responses) EncodeReply(m convo.Message, opts provider.StreamOptions) []byte {
	return EncodeResponsesReply(m, opts)
}

var _ provider.CandidatesEncoder = chat{}

// EncodeReplies returns a Chat Completions response body with every
// message of ms as a choice: the provider.CandidatesEncoder method of the
// format, same as EncodeChatReplies.
func (chat) EncodeReplies(ms []convo.Message, opts provider.StreamOptions) []byte {
	return EncodeChatReplies(ms, opts)
}

var _ provider.ServerToolsEncoder = responses{}

// CarriesServerTools reports that Responses replies carry the items of the
// tools OpenAI ran (web_search_call, mcp_call, …): provider.EncoderOf
// keeps OpenAI's provider-run tool parts for it.
func (responses) CarriesServerTools() bool { return true }
