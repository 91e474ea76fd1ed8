package codec

import (
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
)

// OpaquePart wraps a provider block convo has no part type for (a server
// tool call, a citation block, …) so it survives a round trip: its type is
// "<provider>:<wire type>" and its Raw object holds the block verbatim under
// native.<provider>. The same provider's codec sends it back unchanged with
// OpaqueBlock; every other target skips it with a warning.
func OpaquePart(providerID, wireType string, block []byte) convo.Part {
	t := providerID + ":" + wireType
	raw := make([]byte, 0, len(block)+len(t)+32)
	raw = append(raw, `{"type":`...)
	raw = jsonx.AppendString(raw, t)
	raw = append(raw, `,"native":{`...)
	raw = jsonx.AppendString(raw, providerID)
	raw = append(raw, ':')
	raw = append(raw, block...)
	raw = append(raw, "}}"...)
	return convo.Part{Type: convo.PartType(t), Raw: raw}
}

// OpaqueBlock returns the provider block kept by OpaquePart, if p is one of
// providerID's.
func OpaqueBlock(providerID string, p convo.Part) ([]byte, bool) {
	if p.Raw == nil || !strings.HasPrefix(string(p.Type), providerID+":") {
		return nil, false
	}
	var block []byte
	r := jsonx.NewReader(p.Raw, 0)
	err := r.ReadObject(func(key []byte) error {
		if string(key) != "native" {
			return r.Skip()
		}
		return r.ReadObject(func(k []byte) error {
			if string(k) != providerID {
				return r.Skip()
			}
			var err error
			block, err = r.ReadRaw()
			return err
		})
	})
	return block, err == nil && block != nil
}
