package provider

import (
	"slices"

	"github.com/convo-go/convo/internal/codec"
)

// Code names a kind of loss or change a conversion reports. Codes are
// stable: a program may match on them (Options.Accept, Options.OnWarning)
// where it must not match on messages.
type Code = codec.Code

// The warning codes.
const (
	// CodeSettingDropped: a request setting the target has no member for
	// (top_k for OpenAI, seed for Anthropic) was left out.
	CodeSettingDropped Code = "setting-dropped"
	// CodeSettingRefused: a setting the target model refuses in this
	// request (temperature while it thinks, per Request.Target) was left
	// out.
	CodeSettingRefused Code = "setting-refused"
	// CodeModelUnknown: the target model is not in the model catalogue;
	// its family's entry was used, or none, and the model-aware rules
	// (Request.Target) may not fit it.
	CodeModelUnknown Code = "model-unknown"
	// CodeCandidatesDropped: a request for several candidate replies
	// (Request.Candidates > 1) was left out for a target that returns one
	// reply per request: the target's answer is one of them.
	CodeCandidatesDropped Code = "candidates-dropped"
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
	// CodeReasoningAsText: reasoning was sent as assistant text
	// (Options.Reasoning is ReasoningText).
	CodeReasoningAsText Code = "reasoning-as-text"
	// CodeSignatureDropped: another provider's signature on reasoning was
	// left out and its text sent as plain reasoning.
	CodeSignatureDropped Code = "signature-dropped"
	// CodeMessageDropped: a message was left out (an error message, or one
	// with nothing the target can take).
	CodeMessageDropped Code = "message-dropped"
	// CodeSystemAsUser: a system message after the conversation started
	// was sent as user text.
	CodeSystemAsUser Code = "system-as-user"
	// CodePartDropped: a part of a type convo does not know was left out.
	CodePartDropped Code = "part-dropped"
	// CodeMediaReplaced: media the target cannot take was replaced by a
	// text placeholder (Options.Media is MediaPlaceholder).
	CodeMediaReplaced Code = "media-replaced"
	// CodeResultInserted: a tool call without a result got an error result
	// (Options.Repair).
	CodeResultInserted Code = "result-inserted"
	// CodeResultDropped: a tool result that answers no call was left out
	// (Options.Repair).
	CodeResultDropped Code = "result-dropped"
	// CodeCallsPending: the history ends on tool calls without results.
	CodeCallsPending Code = "calls-pending"
	// CodeTextTrimmed: white space the target refuses was trimmed.
	CodeTextTrimmed Code = "text-trimmed"
	// CodeApprovalDropped: a tool approval request or its answer was left
	// out for a target without tool approvals (a denied call is sent with
	// an error result instead).
	CodeApprovalDropped Code = "approval-dropped"
	// CodeCitationDropped: a citation the target has no form for (an
	// OpenAI file citation for Anthropic, any citation for Gemini) was left
	// out; the text it supports is sent.
	CodeCitationDropped Code = "citation-dropped"
	// CodeServerToolDropped: the call or result of a tool another
	// provider ran itself was left out (Options.ServerTools is
	// ServerToolsDrop, the default).
	CodeServerToolDropped Code = "server-tool-dropped"
	// CodeServerToolAsText: the call or result of a tool another provider
	// ran was sent as assistant text (Options.ServerTools is
	// ServerToolsText).
	CodeServerToolAsText Code = "server-tool-as-text"
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
	// A mode set explicitly is a loss the caller chose: it is not warned
	// about on every turn.
	switch {
	case c == CodeReasoningDropped && o.Reasoning == ReasoningDrop,
		c == CodeReasoningAsText && o.Reasoning == ReasoningText,
		c == CodeMediaReplaced && o.Media == MediaPlaceholder,
		c == CodeServerToolDropped && o.ServerTools == ServerToolsDrop,
		c == CodeServerToolAsText && o.ServerTools == ServerToolsText:
		return true
	}
	return slices.Contains(o.Accept, c)
}

// Finish applies the caller's warning choices to the warnings of one
// conversion: those with an accepted code are left out, Strict makes the
// rest an error, and OnWarning, when set, receives them instead of the
// returned list. The list returned may share warns' array.
func (o Options) Finish(warns []Warning) ([]Warning, error) {
	kept := warns
	if slices.ContainsFunc(warns, func(w Warning) bool { return o.accepted(w.Code) }) {
		// A copy only when some are left out: most conversions accept
		// none, and their warnings are the caller's to keep.
		kept = warns[:0:0]
		for _, w := range warns {
			if !o.accepted(w.Code) {
				kept = append(kept, w)
			}
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
