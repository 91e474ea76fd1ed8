package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// responseID is the id a translated reply is given for an OpenAI Responses
// client: it names the conversation the exchange is recorded in and the
// reply's message id, so that the client's previous_response_id leads
// back to them (Gateway.previous) on any gateway sharing the store.
func responseID(conv, replyID string) string {
	return "resp_" + base64.RawURLEncoding.EncodeToString([]byte(conv)) + "." + replyID
}

// parseResponseID returns the conversation and message a responseID
// names; ok is false for any other id (OpenAI's own, for one).
func parseResponseID(id string) (conv, replyID string, ok bool) {
	rest, ok := strings.CutPrefix(id, "resp_")
	if !ok {
		return "", "", false
	}
	enc, replyID, ok := strings.Cut(rest, ".")
	if !ok || !strings.HasPrefix(replyID, "msg_") {
		return "", "", false
	}
	b, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || len(b) == 0 {
		return "", "", false
	}
	return string(b), replyID, true
}

// A refusal is the answer a request gets instead of going upstream.
type refusal struct {
	status int
	msg    string
}

// previous resolves a Responses request's previous_response_id where the
// gateway recorded the response it names, or, passed through, the OpenAI
// conversation it names: the recorded conversation up to that response
// (or all of it) goes in front of the request's history (its
// function_call_output items read as the results of the last reply's
// calls), so the recording continues that conversation.
//
// Translated (x.req set), the id must be one the gateway gave
// (responseID); the upstream then gets the whole conversation, and the
// member is set to null. An id the gateway did not give is left as it is
// (translate refuses it); one it gave but has not recorded, or recorded
// other than whole (redacted, or as metadata), is refused here. Passed
// through, OpenAI resolves the id itself and the body goes as it came; the
// gateway looks the id up among the replies it recorded (Origin.ResponseID)
// and, not finding it, records the exchange as a conversation of its own,
// as before.
func (g *Gateway) previous(ctx context.Context, x *exchange) *refusal {
	translated, id := x.req != nil, x.previousID
	var conv, replyID string
	var match func(convo.Message) bool
	switch c, r, ours := parseResponseID(id); {
	case ours && translated:
		conv, replyID = c, r
		match = func(m convo.Message) bool { return m.ID == r }
	case !translated && id != "":
		conv = g.rec.byResponse(ctx, x.tenant, id)
		match = func(m convo.Message) bool { return m.Origin != nil && m.Origin.ResponseID == id }
	case !translated:
		// An OpenAI conversation: what its exchanges recorded, whole.
		conv, match = openaiConvID(x.openaiConv), func(convo.Message) bool { return true }
	}
	if conv == "" {
		return nil
	}
	h, err := g.recorded(ctx, x.tenant, conv, replyID)
	i := len(h) - 1 // the latest reply matching, should an id repeat
	for i >= 0 && !match(h[i]) {
		i--
	}
	if err != nil || i < 0 {
		if !translated {
			return nil
		}
		return &refusal{http.StatusNotFound, fmt.Sprintf("previous_response_id: response %q is not recorded for this key", id)}
	}
	h = h[:i+1]
	if len(h[i].Parts) == 0 || slices.ContainsFunc(h, func(m convo.Message) bool { return redacted(m.Native, m.Parts) }) {
		if !translated {
			return nil
		}
		return &refusal{http.StatusBadRequest, fmt.Sprintf("previous_response_id: response %q was recorded without all of its conversation (redacted, or as metadata): send the conversation as input", id)}
	}
	input := x.history
	if calls := h[i].ToolCalls(); len(calls) > 0 {
		// The input's function_call_output items answer calls that are
		// not in it: read it again after those calls, so that they read
		// as their results rather than as items no upstream pairs.
		if req, warns, ok := withCalls(x, calls); ok {
			input = req.History[1:]
			if translated {
				x.req, x.reqWarns = req, warns
			}
		}
	}
	x.history, x.rebuilt = slices.Concat(h, input), true
	if translated {
		x.req.History = x.history
		for p, raw := range x.req.Native {
			if member(raw, "previous_response_id") != nil {
				x.req.Native = x.req.Native.With(p, "previous_response_id", json.RawMessage("null"))
			}
		}
	}
	return nil
}

// recorded returns what conversation conv of tenant holds once the
// records queued for it are written and, when replyID is not "", once the
// exchange that gave that reply (handed out, perhaps still under way) is
// queued: a client may name a reply the moment it was answered.
func (g *Gateway) recorded(ctx context.Context, tenant, conv, replyID string) (convo.History, error) {
	if replyID != "" {
		g.handed.wait(ctx, tenant, []string{replyID})
	}
	if _, err := g.rec.waitWritten(ctx, g.rec.queuedBefore(tenant+"\x00"+conv)); err != nil {
		return nil, err
	}
	// Written to the spool, it is read from the store once replayed.
	g.rec.waitReplayed(ctx, tenant, conv)
	h, _, err := g.rec.st.Load(ctx, tenant, conv, 0)
	return h, err
}

// withCalls reads x's Responses request again with function_call items
// for calls in front of its input; ok when its history then starts with
// one assistant message holding exactly those calls.
func withCalls(x *exchange, calls []convo.Part) (*provider.Request, []provider.Warning, bool) {
	var top map[string]json.RawMessage
	var input []json.RawMessage
	if json.Unmarshal(x.body, &top) != nil || json.Unmarshal(top["input"], &input) != nil {
		return nil, nil, false // a string input answers no call
	}
	items := make([]json.RawMessage, 0, len(calls)+len(input))
	for _, c := range calls {
		args := c.ArgsRaw
		if c.Args != nil {
			args = string(c.Args)
		}
		item, err := json.Marshal(map[string]string{"type": "function_call", "call_id": c.ID, "name": c.Name, "arguments": args})
		if err != nil {
			return nil, nil, false
		}
		items = append(items, item)
	}
	var err error
	if top["input"], err = json.Marshal(append(items, input...)); err != nil {
		return nil, nil, false
	}
	body, err := json.Marshal(top)
	from, err2 := all.LookupRequest(x.client.name)
	if err != nil || err2 != nil {
		return nil, nil, false
	}
	req, warns, err := from.DecodeRequest(body, provider.Options{Repair: true})
	if err != nil || len(req.History) == 0 || req.History[0].Role != convo.RoleAssistant || len(req.History[0].ToolCalls()) != len(calls) {
		return nil, nil, false
	}
	return req, warns, true
}

// nativeMember returns the member key of the first of n's objects that has
// it, or nil.
func nativeMember(n convo.Native, key string) json.RawMessage {
	for _, raw := range n {
		if v := member(raw, key); v != nil {
			return v
		}
	}
	return nil
}

// nativeString returns the string member key of n's objects, or "" when
// it is absent, null or not a string.
func nativeString(n convo.Native, key string) string {
	raw := nativeMember(n, key)
	if raw == nil {
		return "" // most requests: no Unmarshal to fail, and its error to allocate
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// openaiConvID is the id of the conversation the exchanges of a passed-
// through OpenAI conversation are recorded in, as if the client had named
// it (Convo-Conversation): found by its id, without a search.
func openaiConvID(id string) string { return "openai:" + id }

// openaiConversation returns the id of the OpenAI conversation a Responses
// request names ("conversation": an id, or an object with one), or "" for
// none or one that is not a plain id.
func openaiConversation(n convo.Native) string {
	raw := nativeMember(n, "conversation")
	if raw == nil {
		return ""
	}
	var id string
	if json.Unmarshal(raw, &id) != nil {
		var o struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(raw, &o)
		id = o.ID
	}
	if len(id) > 200 || strings.ContainsFunc(id, func(r rune) bool { return !plainID(r) }) {
		return ""
	}
	return id
}

// plainID reports whether r may be in an OpenAI id as the gateway takes it.
func plainID(r rune) bool {
	return r == '_' || r == '-' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}

// member returns the member key of the JSON object obj, or nil.
func member(obj json.RawMessage, key string) json.RawMessage {
	var members map[string]json.RawMessage
	if json.Unmarshal(obj, &members) != nil {
		return nil
	}
	return members[key]
}

// statefulMember returns the first of the client protocol's stateful
// members the request sets (kept in its Native members), or "".
func statefulMember(p *protocol, req *provider.Request) string {
	for _, k := range p.stateful {
		if v := nativeMember(req.Native, k); v != nil && string(v) != "null" {
			return k
		}
	}
	return ""
}
