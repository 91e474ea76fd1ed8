package provider

import "slices"

// Code names a kind of loss or change a conversion reports. Codes are
// stable: a program may match on them (Options.Accept, Options.OnWarning)
// where it must not match on messages.
type Code string

// The warning codes.
const (
	// CodeSettingDropped: a request setting the target has no member for
	// (top_k for OpenAI, seed for Anthropic) was left out.
	CodeSettingDropped Code = "setting-dropped"
	// CodeSettingMapped: a setting was sent as the target's nearest
	// equivalent (a reasoning effort as a token budget, JSON mode as a
	// schema), by the documented table.
	CodeSettingMapped Code = "setting-mapped"
	// CodeNativeDropped: another provider's native member was left out.
	CodeNativeDropped Code = "native-dropped"
	// CodeToolDropped: a tool the target cannot take (another provider's
	// server tool) was left out.
	CodeToolDropped Code = "tool-dropped"
	// CodeSchemaChanged: a JSON Schema was rewritten or a keyword left out
	// to fit the target's dialect.
	CodeSchemaChanged Code = "schema-changed"
	// CodeReasoningDropped: reasoning the target cannot read (another
	// provider's signed or encrypted reasoning) was left out.
	CodeReasoningDropped Code = "reasoning-dropped"
)

// WarnCode returns a Warning at path with a code.
func WarnCode(code Code, path, format string, args ...any) Warning {
	w := Warnf(path, format, args...)
	w.Code = code
	return w
}

// accepted reports whether the caller chose the loss c.
func (o Options) accepted(c Code) bool {
	if c == "" {
		return false
	}
	if c == CodeReasoningDropped && o.Reasoning == ReasoningDrop {
		return true
	}
	return slices.Contains(o.Accept, c)
}

// Finish applies the caller's warning choices to the warnings of one
// conversion: those with an accepted code are left out, Strict makes the
// rest an error, and OnWarning, when set, receives them instead of the
// returned list.
func (o Options) Finish(warns []Warning) ([]Warning, error) {
	kept := warns[:0:0]
	for _, w := range warns {
		if !o.accepted(w.Code) {
			kept = append(kept, w)
		}
	}
	if err := o.Check(kept); err != nil {
		return kept, err
	}
	if o.OnWarning != nil {
		for _, w := range kept {
			o.OnWarning(w)
		}
		return nil, nil
	}
	if len(kept) == 0 {
		return nil, nil
	}
	return kept, nil
}
