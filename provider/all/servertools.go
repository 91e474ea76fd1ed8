package all

import (
	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// serverCarriers names the provider whose own provider-run tool calls and
// results each reply format carries (Anthropic's server tool blocks). Every
// other format, and every other provider's runs, have no form there: a
// client reading them as its own tool calls would run them.
var serverCarriers = map[string]string{
	"anthropic": "anthropic",
}

// serverFilter leaves the parts of provider-run tools the format cannot
// carry out of a stream, with every delta of theirs.
type serverFilter struct {
	enc      provider.StreamEncoder
	provider string
	skip     map[[2]int]bool // candidate, index
}

func (f *serverFilter) Write(d provider.Delta) error {
	key := [2]int{d.Candidate, d.Index}
	switch d.Kind {
	case provider.DeltaPartStart:
		if d.Part != nil && d.Part.IsServerTool() && d.Part.Provider != f.provider {
			f.skip[key] = true
			return nil
		}
	case provider.DeltaText, provider.DeltaArgs, provider.DeltaSignature, provider.DeltaEncrypted, provider.DeltaPartEnd:
		if f.skip[key] {
			return nil
		}
	}
	return f.enc.Write(d)
}

// withoutServerTools returns m without the provider-run tool parts the
// format called name cannot carry (m itself when there are none).
func withoutServerTools(name string, m convo.Message) convo.Message {
	keep := func(p convo.Part) bool { return !p.IsServerTool() || p.Provider == serverCarriers[name] }
	for i, p := range m.Parts {
		if keep(p) {
			continue
		}
		parts := append([]convo.Part(nil), m.Parts[:i]...)
		for _, q := range m.Parts[i+1:] {
			if keep(q) {
				parts = append(parts, q)
			}
		}
		m.Parts = parts
		return m
	}
	return m
}
