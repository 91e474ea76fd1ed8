// Package all lists every provider codec convo ships, by format name. Import
// it when a program picks formats at run time (a CLI, a server); a program
// that talks to one provider imports only that provider's package.
package all

import (
	"fmt"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
	"github.com/convo-go/convo/provider/bedrock"
	"github.com/convo-go/convo/provider/gemini"
	"github.com/convo-go/convo/provider/litert"
	"github.com/convo-go/convo/provider/ollama"
	"github.com/convo-go/convo/provider/openai"
)

// Formats returns every wire format convo supports, in the order of the
// CLI's documentation. Each is both a request codec and a reply codec.
func Formats() []provider.Format {
	return []provider.Format{
		openai.Chat(),
		openai.Responses(),
		anthropic.Messages(),
		gemini.GenerateContent(),
		ollama.Chat(),
		bedrock.Converse(),
		litert.Conversation(),
	}
}

// Lookup returns the format called name, such as "anthropic".
func Lookup(name string) (provider.Format, error) {
	return provider.Lookup(formats, name)
}

// formats are the formats Lookup looks in, made once: a gateway looks
// formats up for every exchange.
var formats = Formats()

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

// Detect recognises the format of a request body by the rules of
// provider.Detect and returns that format, or nil for a canonical convo
// document. The Detection says which format it chose and why, for the
// caller to tell its user (convo convert --from auto prints it).
func Detect(body []byte) (provider.Format, provider.Detection, error) {
	d, err := provider.Detect(body)
	if err != nil {
		return nil, d, fmt.Errorf("cannot tell the format: %w", err)
	}
	if d.Format == "convo" {
		return nil, d, nil
	}
	c, err := Lookup(d.Format)
	return c, d, err
}
