package all

import (
	"fmt"
	"io"
	"strings"

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
		for _, c := range Codecs() {
			if streamEncoders[c.Name()] != nil {
				names = append(names, c.Name())
			}
		}
		return nil, fmt.Errorf("%w %q for stream encoding (known: %s)", provider.ErrUnknownFormat, name, strings.Join(names, ", "))
	}
	return f(w, opts), nil
}
