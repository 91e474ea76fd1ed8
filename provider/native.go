package provider

import (
	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/codec"
)

// OpaquePart wraps a provider block convo has no part type for (a server
// tool call, a citation block, …) so it survives a round trip: its type is
// "<provider>:<wire type>" and its Raw object holds the block verbatim under
// native.<provider>. The same provider's codec sends it back unchanged with
// OpaqueBlock; every other target skips it with a warning.
func OpaquePart(providerID, wireType string, block []byte) convo.Part {
	return codec.OpaquePart(providerID, wireType, block)
}

// OpaqueBlock returns the provider block kept by OpaquePart, if p is one of
// providerID's.
func OpaqueBlock(providerID string, p convo.Part) ([]byte, bool) {
	return codec.OpaqueBlock(providerID, p)
}
