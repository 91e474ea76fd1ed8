package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/store"
)

// item is one Responses input item of a stored message, as the
// OpenAI-compatible API shows it.
type item struct {
	id    string
	raw   json.RawMessage // the item object, with its id
	msg   int             // index of its message in the conversation
	msgID string          // and its id
	of    int             // how many items that message has
}

// itemOptions are the options items are encoded with: a listing never
// fails over media the Responses API cannot take (it shows a placeholder).
var itemOptions = provider.Options{Media: provider.MediaPlaceholder}

// itemsOf returns the items of one message. Each message is encoded on its
// own, so its items do not depend on its neighbours: a tool message is
// encoded after stand-in calls, an assistant message with tool calls before
// stand-in results, and the stand-ins' items are cut off again.
//
// An item keeps the id the provider gave it (rs_…, fc_…, msg_…). One without
// is known by its message's id, followed by ":k" when the message has
// several items. Error messages have no items: they are never sent to a
// model.
func (s *Server) itemsOf(m convo.Message) ([]item, error) {
	h := convo.History{m}
	skipFront, skipBack := 0, 0
	switch m.Role {
	case convo.RoleTool:
		var calls []convo.Part
		for _, p := range m.Parts {
			if p.Type == convo.TypeToolResult {
				calls = append(calls, convo.ToolCall(p.ID, p.Name, json.RawMessage("{}")))
			}
		}
		if len(calls) > 0 {
			h = convo.History{convo.Assistant("", calls...), m}
			skipFront = len(calls)
		}
	case convo.RoleAssistant:
		if p, ok := pending(h); ok {
			h = append(h, p)
			skipBack = len(p.Parts)
		}
	}
	raws, _, err := s.opts.Items.EncodeItems(h, itemOptions)
	if err != nil {
		return nil, fmt.Errorf("message %q as OpenAI items: %w", m.ID, err)
	}
	if len(raws) < skipFront+skipBack {
		return nil, fmt.Errorf("message %q as OpenAI items: %d items for %d stand-ins", m.ID, len(raws), skipFront+skipBack)
	}
	raws = raws[skipFront : len(raws)-skipBack]
	out := make([]item, 0, len(raws))
	for k, raw := range raws {
		fallback := m.ID
		if len(raws) > 1 {
			fallback += ":" + strconv.Itoa(k)
		}
		it, err := normalizeItem(raw, fallback)
		if err != nil {
			return nil, fmt.Errorf("message %q, item %d: %w", m.ID, k, err)
		}
		it.of, it.msgID = len(raws), m.ID
		out = append(out, it)
	}
	return out, nil
}

// findItem returns the conversation's item with id want, costing what its
// message is when the id names the message: an item without an id of its
// own is known by its message's id (with ":k" after it when the message
// has several), and a message written through this API keeps its first
// item's id. Only an id the provider gave an item inside a message (a
// function call's fc_… after a reasoning item, say) is looked for by
// walking the conversation from its newest items, a few messages at a
// time.
func (s *Server) findItem(r *http.Request, want string) (item, error) {
	ten, id := tenant(r), r.PathValue("id")
	candidates := []string{want}
	if i := strings.LastIndexByte(want, ':'); i > 0 && isDigits(want[i+1:]) {
		candidates = append(candidates, want[:i])
	}
	for _, mid := range candidates {
		m, err := s.st.Message(r.Context(), ten, id, mid)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return item{}, err
		}
		its, err := s.itemsOf(m)
		if err != nil {
			return item{}, err
		}
		for _, it := range its {
			if it.id == want {
				return it, nil
			}
		}
	}
	var found *item
	err := s.walkItems(r, true, 16, func(it item) bool {
		if it.id == want {
			found = &it
		}
		return found == nil
	})
	if err != nil {
		return item{}, err
	}
	if found == nil {
		return item{}, notFound("conversation or item")
	}
	return *found, nil
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// walkItems calls fn with the conversation's items in order (newest first
// when desc) until fn returns false, loading a few messages at a time from
// the end it starts at: a page costs what it holds and what lies between it
// and that end, never the whole conversation. The first load reads batch
// messages; later ones double. If the conversation changes while it is
// walked, the walk starts again, so fn sees one version of it.
func (s *Server) walkItems(r *http.Request, desc bool, batch int, fn func(it item) bool) error {
	ten, id := tenant(r), r.PathValue("id")
	for range 3 {
		changed, err := s.walkOnce(r, ten, id, desc, batch, fn)
		if err != nil || !changed {
			return err
		}
	}
	return &apiError{status: http.StatusServiceUnavailable, kind: "unavailable", retryAfter: 1,
		detail: "the conversation kept changing while it was listed: try again"}
}

func (s *Server) walkOnce(r *http.Request, ten, id string, desc bool, batch int, fn func(it item) bool) (changed bool, err error) {
	_, c, err := s.st.LoadRange(r.Context(), ten, id, 0, 0)
	if err != nil {
		return false, err
	}
	lo, hi := 0, c.Messages // messages [lo, hi) are still to read
	for n := max(batch, 1); lo < hi; n *= 2 {
		from := lo
		if desc {
			from = max(lo, hi-n)
		}
		h, c2, err := s.st.LoadRange(r.Context(), ten, id, from, min(n, hi-from))
		if err != nil {
			return false, err
		}
		if c2.Version != c.Version {
			return true, nil
		}
		msgs := make([][]item, len(h))
		for i, m := range h {
			if msgs[i], err = s.itemsOf(m); err != nil {
				return false, err
			}
			for j := range msgs[i] {
				msgs[i][j].msg = from + i
			}
		}
		if desc {
			hi = from
			for i := len(msgs) - 1; i >= 0; i-- {
				for j := len(msgs[i]) - 1; j >= 0; j-- {
					if !fn(msgs[i][j]) {
						return false, nil
					}
				}
			}
			continue
		}
		lo = from + len(h)
		for _, its := range msgs {
			for _, it := range its {
				if !fn(it) {
					return false, nil
				}
			}
		}
		if len(h) == 0 {
			break
		}
	}
	return false, nil
}

type member struct {
	key string
	raw json.RawMessage
}

// normalizeItem gives an encoded input item the shape of an item the
// Conversations API returns: an id (its own, or fallback), a type, a status
// on the item types that have one, and message content as a list of parts
// (input items may carry it as a bare string).
func normalizeItem(raw json.RawMessage, fallback string) (item, error) {
	rd := jsonx.NewReader(raw, convo.DefaultLimits.MaxDepth)
	var ms []member
	var id, typ, role string
	err := rd.ReadObject(func(key []byte) error {
		v, err := rd.ReadRaw()
		if err != nil {
			return err
		}
		k := string(key)
		switch k {
		case "id":
			err = json.Unmarshal(v, &id)
		case "type":
			err = json.Unmarshal(v, &typ)
		case "role":
			err = json.Unmarshal(v, &role)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		ms = append(ms, member{k, v})
		return nil
	})
	if err != nil {
		return item{}, err
	}
	if id == "" {
		id = fallback
	}
	// Ids come from the store, which keeps them valid UTF-8; should one not
	// be, the id the API matches must be the one it shows.
	id = strings.ToValidUTF8(id, "\uFFFD")
	if typ == "" {
		typ = "message"
	}
	idJSON, _ := json.Marshal(id)
	typJSON, _ := json.Marshal(typ)
	out := []member{{"id", idJSON}, {"type", typJSON}}
	hasStatus := false
	for _, m := range ms {
		switch m.key {
		case "id", "type":
			continue
		case "status":
			hasStatus = true
		case "content":
			if typ == "message" && len(m.raw) > 0 && m.raw[0] == '"' {
				m.raw = contentParts(m.raw, role)
			}
		}
		out = append(out, m)
	}
	if !hasStatus {
		switch typ {
		case "message", "function_call", "function_call_output", "reasoning":
			out = append(out, member{"status", json.RawMessage(`"completed"`)})
		}
	}
	b := []byte{'{'}
	for i, m := range out {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonx.AppendString(b, m.key)
		b = append(b, ':')
		b = append(b, m.raw...)
	}
	return item{id: id, raw: append(b, '}')}, nil
}

// contentParts turns the string content of an input message into the
// single part a stored item has: output_text for the assistant, input_text
// for everyone else.
func contentParts(text json.RawMessage, role string) json.RawMessage {
	if role == "assistant" {
		return json.RawMessage(`[{"type":"output_text","text":` + string(text) + `,"annotations":[]}]`)
	}
	return json.RawMessage(`[{"type":"input_text","text":` + string(text) + `}]`)
}

// pending returns a tool message answering the calls at the end of h that
// have no result yet, or false when there are none.
func pending(h convo.History) (convo.Message, bool) {
	i := len(h) - 1
	answered := map[string]bool{}
	for ; i >= 0 && h[i].Role == convo.RoleTool; i-- {
		for _, p := range h[i].Parts {
			if p.Type == convo.TypeToolResult {
				answered[p.ID] = true
			}
		}
	}
	if i < 0 || h[i].Role != convo.RoleAssistant {
		return convo.Message{}, false
	}
	var results []convo.Part
	for _, p := range h[i].Parts {
		if p.Type == convo.TypeToolCall && !answered[p.ID] {
			answered[p.ID] = true
			results = append(results, convo.ToolError(p.ID, p.Name, "pending"))
		}
	}
	if len(results) == 0 {
		return convo.Message{}, false
	}
	return convo.ToolResults(results...), true
}

// withIDs returns h with a new id on every message that has none (so the
// response can name them), and the ids of all its messages.
func withIDs(h convo.History) (convo.History, []string) {
	ids := make([]string, len(h))
	out := h
	for i, m := range h {
		if m.ID == "" {
			if &out[0] == &h[0] {
				out = append(convo.History(nil), h...)
			}
			out[i].ID = store.NewID("msg")
		}
		ids[i] = out[i].ID
	}
	return out, ids
}
