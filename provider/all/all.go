// Package all lists every provider codec convo ships, by format name. Import
// it when a program picks formats at run time (a CLI, a server); a program
// that talks to one provider imports only that provider's package.
package all

import (
	"github.com/convo-go/convo/provider"
)

// Codecs returns a codec for every wire format convo supports.
func Codecs() []provider.Codec {
	return []provider.Codec{}
}

// Lookup returns the codec for a format name such as "anthropic".
func Lookup(name string) (provider.Codec, error) {
	return provider.Lookup(Codecs(), name)
}
