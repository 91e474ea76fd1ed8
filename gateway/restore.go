package gateway

import (
	"context"
	"slices"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/redact"
)

// restore puts back into a translated request the stored reply it
// continues, where the client's protocol could not carry all of it: the
// reasoning with its signature or encrypted content, signatures on the
// parts they came on (Gemini), item ids and phases. Without them an
// Anthropic upstream thinking through a tool loop refuses the loop's next
// request ("expected thinking or redacted_thinking"), Gemini 3 gets the
// bypass signature instead of its own, and OpenAI Responses loses the
// reasoning it would go on from. Only the request's last assistant
// message is restored — the one those rules ask for, which a client's
// protocol may have split into several (a Responses client sends an item
// each) — and only from a stored reply that is its whole self: the same
// content as the client's copy (one fingerprint) and nothing redacted.
// The upstream's codec applies the usual rules to it (another provider's
// reasoning is left out).
func (g *Gateway) restore(ctx context.Context, x *exchange, req *provider.Request) {
	n := x.continued
	if n == 0 || n > len(req.History) || req.History[n-1].Role != convo.RoleAssistant {
		return
	}
	stored, ok := g.rec.last(ctx, x.tenant, x.rec.conv)
	if !ok || stored.Role != convo.RoleAssistant || redacted(stored.Native, stored.Parts) {
		return
	}
	start := n - 1
	for start > 0 && req.History[start-1].Role == convo.RoleAssistant {
		start--
	}
	sent := req.History[start:n]
	if Fingerprint(convo.History{stored}) != Fingerprint(sent) {
		return
	}
	// The client's call ids are the ones its results name (ids convo made
	// up for a protocol without them differ from the stored ones).
	var calls []convo.Part
	for i := range sent {
		calls = append(calls, sent[i].ToolCalls()...)
	}
	k := 0
	for i := range stored.Parts {
		if p := &stored.Parts[i]; p.Type == convo.TypeToolCall && !p.IsServerTool() && k < len(calls) {
			p.ID = calls[k].ID
			k++
		}
	}
	stored.ID = sent[0].ID
	// A new slice: x.history, the recording's, stays as the client sent it.
	req.History = slices.Concat(req.History[:start], convo.History{stored}, req.History[n:])
}

// redacted reports whether redaction changed a message (its Native) or any
// of its parts.
func redacted(n convo.Native, parts []convo.Part) bool {
	if len(redact.Redacted(n)) > 0 {
		return true
	}
	for i := range parts {
		if redacted(parts[i].Native, parts[i].Parts) {
			return true
		}
	}
	return false
}
