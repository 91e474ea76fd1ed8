package provider

import (
	"slices"

	"github.com/convo-go/convo/catalog"
)

// TargetOf describes a catalogue entry as a request's conversion needs it
// (Request.Target). The entry's name is the one the request sends, not the
// catalogue's, so that a dated id or a family fallback keeps its own.
// A family fallback (catalog.MatchFamily) describes the model by its
// family's entry, as the catalogue's warning says; a model the catalogue
// does not know at all (catalog.MatchNone) is the zero Model, and the
// encoders then follow only what the request says.
func TargetOf(name string, m catalog.Model, match catalog.Match) Model {
	if match.Kind == catalog.MatchNone {
		return Model{}
	}
	return Model{
		Name:                 name,
		MaxOutput:            m.MaxOutput,
		Thinking:             m.Thinking.Mode,
		Efforts:              slices.Clone(m.Thinking.Efforts),
		MinBudget:            m.Thinking.MinBudget,
		MaxBudget:            m.Thinking.MaxBudget,
		RefusesWhileThinking: slices.Clone(m.RefusesWhileThinking),
		StructuredOutput:     m.StructuredOutput,
		StrictTools:          m.StrictTools,
	}
}
