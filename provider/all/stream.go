package all

import (
	"fmt"
	"io"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
	"github.com/convo-go/convo/provider/gemini"
	"github.com/convo-go/convo/provider/ollama"
	"github.com/convo-go/convo/provider/openai"
)

// streamEncoders maps format names to their stream encoders.
var streamEncoders = map[string]func(io.Writer, provider.StreamOptions) provider.StreamEncoder{
	"openai-chat":      openai.NewChatStreamEncoder,
	"openai-responses": openai.NewResponsesStreamEncoder,
	"anthropic":        anthropic.NewStreamEncoder,
	"gemini":           gemini.NewStreamEncoder,
	"ollama":           ollama.NewStreamEncoder,
}

// NewStreamEncoder returns a stream encoder writing the format called name
// (its streamed-reply wire format) to w.
func NewStreamEncoder(name string, w io.Writer, opts provider.StreamOptions) (provider.StreamEncoder, error) {
	f, ok := streamEncoders[name]
	if !ok {
		var names []string
		for _, c := range Formats() {
			if streamEncoders[c.Name()] != nil {
				names = append(names, c.Name())
			}
		}
		return nil, fmt.Errorf("%w %q for stream encoding (known: %s)", provider.ErrUnknownFormat, name, strings.Join(names, ", "))
	}
	return f(w, opts), nil
}

// replyEncoders maps format names to their whole-reply encoders.
var replyEncoders = map[string]func(convo.Message, provider.StreamOptions) []byte{
	"openai-chat":      openai.EncodeChatReply,
	"openai-responses": openai.EncodeResponsesReply,
	"anthropic":        anthropic.EncodeReply,
	"gemini":           gemini.EncodeReply,
	"ollama":           ollama.EncodeReply,
}

// EncodeReply returns a non-streamed response body in the format called
// name for an assistant message.
func EncodeReply(name string, m convo.Message, opts provider.StreamOptions) ([]byte, error) {
	f, ok := replyEncoders[name]
	if !ok {
		return nil, fmt.Errorf("%w %q for reply encoding", provider.ErrUnknownFormat, name)
	}
	return f(m, opts), nil
}
