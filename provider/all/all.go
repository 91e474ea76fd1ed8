// Package all lists every provider codec convo ships, by format name. Import
// it when a program picks formats at run time (a CLI, a server); a program
// that talks to one provider imports only that provider's package.
package all

import (
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
	"github.com/convo-go/convo/provider/bedrock"
	"github.com/convo-go/convo/provider/gemini"
	"github.com/convo-go/convo/provider/ollama"
	"github.com/convo-go/convo/provider/openai"
)

// Codecs returns a codec for every wire format convo supports, in the order
// of the CLI's documentation.
func Codecs() []provider.Codec {
	return []provider.Codec{
		openai.Chat(),
		openai.Responses(),
		anthropic.Codec(),
		gemini.Codec(),
		ollama.Codec(),
		bedrock.Codec(),
	}
}

// Lookup returns the codec for a format name such as "anthropic".
func Lookup(name string) (provider.Codec, error) {
	return provider.Lookup(Codecs(), name)
}
