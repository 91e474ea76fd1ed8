package gateway

import (
	"context"
	"slices"
	"sync"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/redact"
)

// restore puts back into a translated request the stored replies it
// continues, where the client's protocol could not carry all of them: the
// reasoning with its signature or encrypted content, signatures on the
// parts they came on (Gemini), item ids and phases. Without them an
// Anthropic upstream thinking through a tool loop refuses the loop's next
// request ("expected thinking or redacted_thinking"), Gemini 3 gets the
// bypass signature instead of its own on every step's function calls, and
// OpenAI Responses loses the reasoning it would go on from. Every
// assistant message of the request's current turn (since its last user
// message) is restored, from the last back — each the reply to one step of
// a tool loop, which a client's protocol may have split into several
// messages (a Responses client sends an item each) — and only from a
// stored reply that is its whole self: the same content as the client's
// copy (one fingerprint), in a conversation that ends where the request's
// stored part does, nothing redacted. The upstream's codec applies the
// usual rules to them (another provider's reasoning is left out).
func (g *Gateway) restore(ctx context.Context, x *exchange, req *provider.Request) {
	n := x.continued
	if n == 0 || x.continuedFP == "" || n > len(req.History) || req.History[n-1].Role != convo.RoleAssistant {
		return
	}
	turn, fp, ok := g.rec.replies.take(x.tenant, x.rec.conv)
	if !ok || fp != x.continuedFP {
		// Not kept, or kept before another gateway wrote the
		// conversation: the store says.
		var h convo.History
		h, fp, ok = g.rec.tail(ctx, x.tenant, x.rec.conv, maxTurnLoad)
		turn = turnOf(nil, h)
	}
	// The conversation must end where the request's stored part does: a
	// client sending an older turn again (a retry, another branch) gets no
	// later reply in its place.
	if !ok || fp != x.continuedFP {
		return
	}
	runs := assistantRuns(req.History[:n])
	k := 0
	for k < len(runs) && k < len(turn) {
		s, r := &turn[len(turn)-1-k], runs[len(runs)-1-k]
		if redacted(s.Native, s.Parts) || fingerprint(convo.History{*s}, x.client.looseIDs) != fingerprint(req.History[r[0]:r[1]], x.client.looseIDs) {
			break
		}
		k++
	}
	if k == 0 {
		return
	}
	stored := turn[len(turn)-k:]
	x.rec.turn = stored
	// A new slice: x.history, the recording's, stays as the client sent it.
	out := make(convo.History, 0, len(req.History))
	next := 0
	for j, r := range runs[len(runs)-k:] {
		out = append(out, req.History[next:r[0]]...)
		out = append(out, withIDs(stored[j], req.History[r[0]:r[1]]))
		next = r[1]
	}
	req.History = append(out, req.History[next:]...)
}

// maxTurnLoad bounds the messages a restore reads back from the store: a
// tool loop longer than that has only its last steps restored when the
// gateway did not keep them.
const maxTurnLoad = 32

// assistantRuns returns where the runs of consecutive assistant messages
// of h's current turn (after its last user message) start and end.
func assistantRuns(h convo.History) [][2]int {
	var runs [][2]int
	for i := len(h) - 1; i >= 0 && h[i].Role != convo.RoleUser; i-- {
		if h[i].Role != convo.RoleAssistant {
			continue
		}
		end := i + 1
		for i > 0 && h[i-1].Role == convo.RoleAssistant {
			i--
		}
		runs = append(runs, [2]int{i, end})
	}
	slices.Reverse(runs)
	return runs
}

// turnOf appends to turn the replies among msgs, messages of a
// conversation in order, starting again after each user message: what
// turn and msgs hold of the conversation's current turn.
func turnOf(turn, msgs []convo.Message) []convo.Message {
	for _, m := range msgs {
		switch m.Role {
		case convo.RoleUser:
			turn = turn[:0]
		case convo.RoleAssistant:
			turn = append(turn, m)
		}
	}
	return turn
}

// withIDs returns the stored reply with the tool-call ids of the client's
// copy, sent: the ones its results name (ids convo made up for a protocol
// without them differ from the stored ones).
func withIDs(stored convo.Message, sent convo.History) convo.Message {
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
	return stored
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

// replies keeps, per conversation, the replies of its current turn (the
// assistant messages since its last user message, as stored) that its
// last recorded write ended with: the next request of a conversation
// translated through a tool loop restores them without reading the store
// back (a read of the last message cost 40 to 160 µs of CPU; keeping a
// tool loop's step and taking it back, encoded and decoded, about 4 µs).
// A request takes the entry it uses; a miss (another gateway
// recorded it, a retry, a write that ended with a failure) reads the
// store. Bounded in bytes, cleared when full, as the fingerprint cache is.
type replies struct {
	mu    sync.Mutex
	m     map[string]kept // by tenant \x00 conversation
	bytes int
}

// kept is a conversation's current turn and the conversation's
// fingerprint with it. The turn's messages are kept encoded (canonical
// JSON, as the store keeps them), decoded when a request takes them: a
// byte slice holds no pointers, so the garbage collector does not walk
// them at every cycle. Kept decoded, the messages of a busy translating
// gateway (up to maxReplyCache of them) were most of its live heap, and
// marking them at each collection a quarter of the CPU of
// BenchmarkGateway/translate.
type kept struct {
	turn [][]byte
	fp   string
	size int // bytes
}

// maxReplyCache bounds the bytes replies keeps; a turn larger than
// maxReplyEntry keeps only its last replies, as many as fit.
const (
	maxReplyCache = 32 << 20
	maxReplyEntry = 1 << 20
)

// put notes the messages a write stored in a conversation, whose
// fingerprint is now fp, after prior, the replies of the turn restored in
// the request the write recorded: the turn's replies when the write ends
// with one, or that there is none to restore.
func (r *replies) put(tenant, conv, fp string, prior, msgs []convo.Message) {
	key := tenant + "\x00" + conv
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.m[key]; ok {
		r.bytes -= old.size
		delete(r.m, key)
	}
	if fp == "" || len(msgs) == 0 || msgs[len(msgs)-1].Role != convo.RoleAssistant {
		return
	}
	msgs = turnOf(slices.Clone(prior), msgs)
	turn := make([][]byte, 0, len(msgs))
	n := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		// A reply too long to keep is not encoded to find that out: a
		// 40 MiB one would be copied whole once more, for nothing.
		est := msgs[i].EstimatedBytes() + len(msgs[i].ID) + 16
		if n+est > 2*maxReplyEntry {
			break // not kept: a request reads the store
		}
		b, err := convo.AppendMessage(make([]byte, 0, est), msgs[i])
		if err != nil || n+len(b) > maxReplyEntry {
			break
		}
		turn = append(turn, b)
		n += len(b)
	}
	if len(turn) == 0 {
		return
	}
	slices.Reverse(turn)
	if r.m == nil || r.bytes+n > maxReplyCache {
		r.m, r.bytes = map[string]kept{}, 0
	}
	r.m[key] = kept{turn, fp, n}
	r.bytes += n
}

// peek returns the last reply kept for a conversation, and the
// conversation's fingerprint with it, leaving it kept.
func (r *replies) peek(tenant, conv string) (convo.Message, string, bool) {
	r.mu.Lock()
	k, ok := r.m[tenant+"\x00"+conv]
	r.mu.Unlock()
	if !ok {
		return convo.Message{}, "", false
	}
	m, err := convo.UnmarshalMessage(k.turn[len(k.turn)-1])
	return m, k.fp, err == nil
}

// take returns and forgets the turn kept for a conversation, and the
// conversation's fingerprint with it.
func (r *replies) take(tenant, conv string) ([]convo.Message, string, bool) {
	key := tenant + "\x00" + conv
	r.mu.Lock()
	k, ok := r.m[key]
	if ok {
		r.bytes -= k.size
		delete(r.m, key)
	}
	r.mu.Unlock()
	if !ok {
		return nil, "", false
	}
	turn := make([]convo.Message, len(k.turn))
	for i, b := range k.turn {
		var err error
		if turn[i], err = convo.UnmarshalMessage(b); err != nil {
			return nil, "", false
		}
	}
	return turn, k.fp, true
}
