package ollama

import (
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// warnings lists what the Ollama mapping itself drops or changes in h, with
// places in h. The shared rules (foreign reasoning, media, pairing, error
// and summary messages) are provider.Prepare's to report; h is walked here,
// not the prepared history, so that every path names a place the caller
// knows.
func warnings(h convo.History, opts provider.Options) []provider.Warning {
	var w []provider.Warning
	expired := h.Expired()
	for i := range h {
		m := &h[i]
		if expired[i] || m.Role == convo.RoleError {
			continue // provider.Prepare leaves these out
		}
		if m.Name != "" {
			w = append(w, provider.Warnf(msgPath(i), "name %q dropped: Ollama messages have no name", m.Name))
		}
		w = partWarnings(w, i, -1, m.Role, m.Parts, opts)
	}
	return w
}

// partWarnings appends the warnings for ps, the parts of message i or, when
// result ≥ 0, of its part result (a tool result).
func partWarnings(w []provider.Warning, i, result int, role convo.Role, ps []convo.Part, opts provider.Options) []provider.Warning {
	inResult := result >= 0
	lastText := -1
	for j := range ps {
		if isText(&ps[j]) {
			lastText = j
		}
	}
	for j := range ps {
		p := &ps[j]
		// The path is built only when there is something to say.
		path := func() string {
			if inResult {
				return partPath(i, result) + "." + index("parts", j)
			}
			return partPath(i, j)
		}
		if p.Cache != nil {
			w = append(w, provider.Warnf(path(), "cache breakpoint dropped: Ollama has no prompt-cache markers"))
		}
		switch p.Type {
		case convo.TypeRefusal:
			w = append(w, provider.Warnf(path(), "refusal sent as plain text: Ollama has no refusal part"))
		case convo.TypeJSON:
			if !inResult {
				w = append(w, provider.Warnf(path(), "json part sent as text: Ollama content is plain text"))
			}
		case convo.TypeReasoning:
			if role != convo.RoleAssistant && wire.KeptReasoning(p, ProviderID, opts) {
				w = append(w, provider.Warnf(path(), "reasoning in a %s message dropped: Ollama takes thinking on assistant messages only", role))
			}
		case convo.TypeToolCall:
			if p.ArgsRaw != "" || (p.Args != nil && !isObject(p.Args)) {
				w = append(w, provider.Warnf(path(), "tool call arguments are not a JSON object: sent as {}"))
			}
		case convo.TypeImage:
			if acceptsMedia(*p, inResult) && j < lastText {
				w = append(w, provider.Warnf(path(), "image sent after the text: Ollama attaches images to the whole message, not to a place in it"))
			}
		case convo.TypeToolResult:
			if role != convo.RoleTool {
				break
			}
			if !p.Error && len(p.Parts) > 0 && p.Parts[0].Type == convo.TypeText && strings.HasPrefix(p.Parts[0].Text, errorPrefix) {
				w = append(w, provider.Warnf(path(), "successful tool result starts with %q: read back from Ollama it is a failed result", errorPrefix))
			}
			w = partWarnings(w, i, j, role, p.Parts, opts)
		}
		if role == convo.RoleTool && !inResult && p.Type != convo.TypeToolResult && p.Type.Known() {
			w = append(w, provider.Warnf(path(), "%s part in a tool message left out: Ollama tool messages carry one result each", p.Type))
		}
		if p.Raw != nil {
			if _, ok := provider.OpaqueBlock(ProviderID, *p); ok {
				w = append(w, provider.Warnf(path(), "%s part left out: Ollama messages have no place for it", p.Type))
			}
		}
	}
	return w
}
