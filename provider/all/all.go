// Package all lists every provider codec convo ships, by format name. Import
// it when a program picks formats at run time (a CLI, a server); a program
// that talks to one provider imports only that provider's package.
package all

import (
	"fmt"
	"strings"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
	"github.com/convo-go/convo/provider/bedrock"
	"github.com/convo-go/convo/provider/gemini"
	"github.com/convo-go/convo/provider/litert"
	"github.com/convo-go/convo/provider/ollama"
	"github.com/convo-go/convo/provider/openai"
)

// Codecs returns a request codec for every wire format convo supports, in
// the order of the CLI's documentation.
func Codecs() []provider.Codec {
	return []provider.Codec{
		openai.Chat(),
		openai.Responses(),
		anthropic.Codec(),
		gemini.Codec(),
		ollama.Codec(),
		bedrock.Codec(),
		litert.Codec(),
	}
}

// Lookup returns the request codec for a format name such as "anthropic".
func Lookup(name string) (provider.Codec, error) {
	return provider.Lookup(Codecs(), name)
}

// replies maps format names to their reply codecs.
func replies() map[string]provider.ReplyCodec {
	return map[string]provider.ReplyCodec{
		"openai-chat":      openai.Chat(),
		"openai-responses": openai.Responses(),
		"anthropic":        anthropic.ReplyCodec(),
		"gemini":           gemini.ReplyCodec(),
		"ollama":           ollama.ReplyCodec(),
		"bedrock":          bedrock.ReplyCodec(),
		"litert":           litert.ReplyCodec(),
	}
}

// LookupReply returns the reply codec (responses and streams) for a format
// name.
func LookupReply(name string) (provider.ReplyCodec, error) {
	r, ok := replies()[name]
	if !ok {
		var names []string
		for _, c := range Codecs() {
			if _, ok := replies()[c.Name()]; ok {
				names = append(names, c.Name())
			}
		}
		return nil, fmt.Errorf("%w %q for replies (known: %s)", provider.ErrUnknownFormat, name, strings.Join(names, ", "))
	}
	return r, nil
}

// LookupRequest returns the whole-request codec for a format name.
func LookupRequest(name string) (provider.RequestCodec, error) {
	c, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	rc, ok := c.(provider.RequestCodec)
	if !ok {
		return nil, fmt.Errorf("%w %q for whole requests", provider.ErrUnknownFormat, name)
	}
	return rc, nil
}
