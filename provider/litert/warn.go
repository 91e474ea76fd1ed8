package litert

import (
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// warnings lists what the LiteRT-LM mapping itself drops or changes in h,
// with places in h. The shared rules (foreign reasoning, media, pairing,
// error and summary messages, later system messages) are
// provider.Prepare's to report; h is walked here, not the prepared
// history, so that every path names a place the caller knows.
func warnings(h convo.History, opts provider.Options) []provider.Warning {
	var w []provider.Warning
	expired := h.Expired()
	var r jsonx.Reader
	for i := range h {
		m := &h[i]
		if expired[i] || m.Role == convo.RoleError {
			continue // provider.Prepare leaves these out
		}
		if m.Name != "" {
			w = append(w, provider.Warnf(msgPath(i), "name %q dropped: LiteRT-LM messages have no name", m.Name))
		}
		w = partWarnings(w, i, -1, m.Role, m.Parts, opts, &r)
	}
	return w
}

// partWarnings appends the warnings for ps, the parts of message i or, when
// result ≥ 0, of its part result (a tool result).
func partWarnings(w []provider.Warning, i, result int, role convo.Role, ps []convo.Part, opts provider.Options, r *jsonx.Reader) []provider.Warning {
	inResult := result >= 0
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
			w = append(w, provider.Warnf(path(), "cache breakpoint dropped: LiteRT-LM has no prompt-cache markers"))
		}
		switch p.Type {
		case convo.TypeRefusal:
			w = append(w, provider.Warnf(path(), "refusal sent as plain text: LiteRT-LM has no refusal part"))
		case convo.TypeJSON:
			if !inResult {
				w = append(w, provider.Warnf(path(), "json part sent as text: LiteRT-LM has no json part"))
			}
		case convo.TypeReasoning:
			if role != convo.RoleAssistant && wire.KeptReasoning(p, ProviderID, opts) {
				w = append(w, provider.Warnf(path(), "reasoning in a %s message dropped: LiteRT-LM takes the thought channel on assistant messages only", role))
			}
		case convo.TypeToolResult:
			if role == convo.RoleTool {
				w = resultWarnings(w, path, p, r)
				w = partWarnings(w, i, j, role, p.Parts, opts, r)
			}
		}
		if role == convo.RoleTool && !inResult && p.Type != convo.TypeToolResult && p.Type.Known() {
			w = append(w, provider.Warnf(path(), "%s part in a tool message left out: convo tool messages hold results only", p.Type))
		}
	}
	return w
}

// resultWarnings says when a result changes shape on the wire: text and
// json joined into one string, or a successful result that would read back
// as a failed one.
func resultWarnings(w []provider.Warning, path func() string, p *convo.Part, r *jsonx.Reader) []provider.Warning {
	form := "tool_response"
	var pn wire.Members
	if p.Native[ProviderID] != nil {
		pn, _ = wire.ReadNative(p.Native, ProviderID, r)
		if string(pn.Value(markForm)) == `"plain"` {
			form = "plain"
		} else if string(pn.Value("type")) == `"function_response"` {
			form = "function_response"
		}
	}
	body := p.Parts
	if form != "plain" {
		n, parts := split(p, pn)
		body = parts[:n]
	}
	njson, firstText := 0, ""
	for k := range body {
		q := &body[k]
		if k == 0 && q.Type == convo.TypeText {
			firstText = q.Text
		}
		if q.Type == convo.TypeJSON {
			njson++
		}
	}
	if form == "tool_response" && njson > 0 && len(body) > 1 {
		w = append(w, provider.Warnf(path(), "tool result text and json joined into one string response"))
	}
	if p.Error {
		return w
	}
	switch {
	case form != "tool_response" && strings.HasPrefix(firstText, errorPrefix):
		w = append(w, provider.Warnf(path(), "successful tool result starts with %q: read back from LiteRT-LM it is a failed result", errorPrefix))
	case form == "tool_response" && len(body) == 1 && njson == 1:
		if _, ok := errorValue(body[0].Value, nil); ok {
			w = append(w, provider.Warnf(path(), `successful tool result is {"error": …}: read back from LiteRT-LM it is a failed result`))
		}
	}
	return w
}
