package gateway

import (
	"context"
	"slices"
	"sync"

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
// content as the client's copy (one fingerprint), the end of what is
// stored, and nothing redacted.
// The upstream's codec applies the usual rules to it (another provider's
// reasoning is left out).
func (g *Gateway) restore(ctx context.Context, x *exchange, req *provider.Request) {
	n := x.continued
	if n == 0 || x.continuedFP == "" || n > len(req.History) || req.History[n-1].Role != convo.RoleAssistant {
		return
	}
	stored, fp, ok := g.rec.replies.take(x.tenant, x.rec.conv)
	if !ok || fp != x.continuedFP {
		// Not kept, or kept before another gateway wrote the
		// conversation: the store says.
		stored, fp, ok = g.rec.last(ctx, x.tenant, x.rec.conv)
	}
	// The conversation must end where the request's stored part does: a
	// client sending an older turn again (a retry, another branch) gets no
	// later reply in its place.
	if !ok || fp != x.continuedFP || stored.Role != convo.RoleAssistant || redacted(stored.Native, stored.Parts) {
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
	stored.Parts = slices.Clone(stored.Parts) // the cached or loaded copy stays as stored
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

// replies keeps, per conversation, the reply its last recorded write ended
// with, as stored: the next request of a conversation translated through a
// tool loop restores it without reading the store back (a read of the last
// message cost 40 to 160 µs of CPU, against about 10 µs kept). A
// request takes the entry it uses; a miss (another gateway recorded it, a
// retry, a write that ended with a failure) reads the store. Bounded in
// bytes, cleared when full, as the fingerprint cache is.
type replies struct {
	mu    sync.Mutex
	m     map[string]kept // by tenant \x00 conversation
	bytes int
}

// kept is a conversation's reply and the conversation's fingerprint with it.
type kept struct {
	reply convo.Message
	fp    string
}

// maxReplyCache bounds the bytes (estimated) replies keeps; one reply
// larger than maxReplyEntry is not kept.
const (
	maxReplyCache = 32 << 20
	maxReplyEntry = 1 << 20
)

// put notes the messages a write stored in a conversation, whose
// fingerprint is now fp: its reply when they end with one, or that there is
// none to restore.
func (r *replies) put(tenant, conv, fp string, msgs []convo.Message) {
	key := tenant + "\x00" + conv
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.m[key]; ok {
		r.bytes -= old.reply.EstimatedBytes()
		delete(r.m, key)
	}
	if fp == "" || len(msgs) == 0 || msgs[len(msgs)-1].Role != convo.RoleAssistant {
		return
	}
	m := msgs[len(msgs)-1]
	n := m.EstimatedBytes()
	if n > maxReplyEntry {
		return
	}
	if r.m == nil || r.bytes+n > maxReplyCache {
		r.m, r.bytes = map[string]kept{}, 0
	}
	r.m[key] = kept{m, fp}
	r.bytes += n
}

// take returns and forgets the reply kept for a conversation, and the
// conversation's fingerprint with it.
func (r *replies) take(tenant, conv string) (convo.Message, string, bool) {
	key := tenant + "\x00" + conv
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.m[key]
	if ok {
		r.bytes -= k.reply.EstimatedBytes()
		delete(r.m, key)
	}
	return k.reply, k.fp, ok
}
