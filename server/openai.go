package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/store"
)

// The OpenAI Conversations API, the subset convo serves. Conversations are
// the store's; their metadata is the conversation's Meta. Items are the
// Responses input items of the stored messages (see items.go).

// oaConversation is OpenAI's Conversation object.
type oaConversation struct {
	ID        string          `json:"id"`
	Object    string          `json:"object"`
	CreatedAt int64           `json:"created_at"`
	Metadata  json.RawMessage `json:"metadata"`
}

func oaDescribe(c store.Conversation) oaConversation {
	meta := c.Meta
	if len(meta) == 0 {
		meta = json.RawMessage("{}")
	}
	return oaConversation{ID: c.ID, Object: "conversation", CreatedAt: c.Created.Unix(), Metadata: meta}
}

// oaItemList is OpenAI's list of conversation items.
type oaItemList struct {
	Object  string            `json:"object"`
	Data    []json.RawMessage `json:"data"`
	FirstID string            `json:"first_id"`
	LastID  string            `json:"last_id"`
	HasMore bool              `json:"has_more"`
}

func newItemList(items []item) oaItemList {
	l := oaItemList{Object: "list", Data: make([]json.RawMessage, len(items))}
	for i, it := range items {
		l.Data[i] = it.raw
	}
	if len(items) > 0 {
		l.FirstID, l.LastID = items[0].id, items[len(items)-1].id
	}
	return l
}

// readMetadata reads OpenAI metadata: at most 16 string values, keys of at
// most 64 characters, values of at most 512, as OpenAI allows.
func readMetadata(rd *jsonx.Reader) (json.RawMessage, error) {
	if rd.Peek() != jsonx.Object {
		return nil, badRequest("metadata: want an object of strings")
	}
	start := rd.Offset()
	n := 0
	err := rd.ReadObject(func(key []byte) error {
		n++
		if n > 16 {
			return badRequest("metadata: more than 16 keys")
		}
		if utf8.RuneCount(key) > 64 {
			return badRequest("metadata: key %.20q...: longer than 64 characters", key)
		}
		if rd.Peek() != jsonx.String {
			return badRequest("metadata.%s: want a string", key)
		}
		v, err := rd.ReadString()
		if err == nil && utf8.RuneCountInString(v) > 512 {
			return badRequest("metadata.%s: longer than 512 characters", key)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return jsonx.Compact(rd.Bytes()[start:rd.Offset()], 2)
}

// readItems reads an array of items, each a JSON object within the message
// size limit, and decodes them into messages. pending are the tool calls at
// the end of the conversation still waiting for results: outputs among the
// items answer them.
func (s *Server) readItems(rd *jsonx.Reader, pending []convo.Part) (convo.History, error) {
	if s.opts.Items == nil {
		return nil, notImplemented()
	}
	if rd.Peek() != jsonx.Array {
		return nil, badRequest("items: want an array of items")
	}
	var raws []json.RawMessage
	err := rd.ReadArray(func(i int) error {
		if rd.Peek() != jsonx.Object {
			return badRequest("items[%d]: want an object", i)
		}
		start := rd.Offset()
		if err := rd.Skip(); err != nil {
			return err
		}
		raw := rd.Bytes()[start:rd.Offset()]
		if int64(len(raw)) > s.opts.MaxMessageBytes {
			return tooLarge("items[%d]: larger than %d bytes", i, s.opts.MaxMessageBytes)
		}
		raws = append(raws, raw)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, nil
	}
	h, err := s.decodeItems(raws, pending)
	if err != nil {
		return nil, err
	}
	for i, m := range h {
		if int64(m.EstimatedBytes()) > s.opts.MaxMessageBytes {
			return nil, tooLarge("items: message %d made of them is larger than %d bytes", i, s.opts.MaxMessageBytes)
		}
	}
	return h, nil
}

// decodeItems decodes items strictly: an item convo cannot keep whole is
// refused rather than stored with something missing. Function call outputs
// answering pending calls are decoded after stand-ins of those calls, as the
// decoder pairs outputs with the calls it has seen.
func (s *Server) decodeItems(raws []json.RawMessage, pending []convo.Part) (convo.History, error) {
	if len(pending) > 0 {
		in := make([]json.RawMessage, 0, len(pending)+len(raws))
		for _, c := range pending {
			it, _ := json.Marshal(map[string]string{"type": "function_call", "call_id": c.ID, "name": c.Name, "arguments": "{}"})
			in = append(in, it)
		}
		h, _, err := s.opts.Items.DecodeItems(append(in, raws...), provider.Options{Strict: true})
		// The stand-ins must come back as one message of just those calls;
		// anything else (the items continue the calls' turn) is judged on
		// the items alone.
		if err == nil && len(h) > 0 && h[0].IsAssistant() && len(h[0].Parts) == len(pending) && len(h[0].ToolCalls()) == len(pending) {
			return h[1:], nil
		}
	}
	h, warns, err := s.opts.Items.DecodeItems(raws, provider.Options{Strict: true})
	if err != nil {
		var se *provider.StrictError
		if errors.As(err, &se) {
			e := invalid("items: convo cannot keep these items whole")
			for _, w := range se.Warnings {
				e.errs = append(e.errs, fieldError{Path: w.Path, Detail: w.Msg})
			}
			return nil, e
		}
		return nil, invalid("items: %v", err)
	}
	if len(warns) > 0 { // a codec that ignores Strict
		return nil, invalid("items: %s", warns[0])
	}
	return h, nil
}

// pendingCalls returns the tool calls at the end of a conversation that
// still wait for their results.
func (s *Server) pendingCalls(ctx context.Context, ten, id string) ([]convo.Part, error) {
	c, err := s.st.Get(ctx, ten, id)
	if err != nil {
		return nil, err
	}
	// Load enough of the end that it starts before the run of tool
	// messages there, if any.
	for window := 8; ; window *= 8 {
		from := max(0, c.Messages-window)
		h, _, err := s.st.Load(ctx, ten, id, from)
		if err != nil {
			return nil, err
		}
		if from > 0 && (len(h) == 0 || h[0].Role == convo.RoleTool) {
			continue
		}
		m, ok := pending(h)
		if !ok {
			return nil, nil
		}
		calls := make([]convo.Part, len(m.Parts))
		for i, r := range m.Parts {
			calls[i] = convo.ToolCall(r.ID, r.Name, nil)
		}
		return calls, nil
	}
}

func notImplemented() *apiError {
	return &apiError{status: http.StatusNotImplemented, kind: "not-implemented",
		detail: "this server has no OpenAI Responses item codec"}
}

// POST /v1/conversations {"items","metadata"}
func (s *Server) oaCreate(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r, true)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	var c store.Conversation
	var msgs convo.History
	err = object(body, func(key string, rd *jsonx.Reader) error {
		var err error
		switch key {
		case "items":
			msgs, err = s.readItems(rd, nil)
		case "metadata":
			if rd.ReadNull() {
				return nil
			}
			c.Meta, err = readMetadata(rd)
		default:
			return unknownMember(key)
		}
		return err
	})
	if err != nil {
		s.problem(w, r, err)
		return
	}
	c.Tenant = tenant(r)
	s.price(msgs)
	if c, err = s.st.Create(r.Context(), c, msgs...); err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, oaDescribe(c))
}

// GET /v1/conversations/{id}
func (s *Server) oaGet(w http.ResponseWriter, r *http.Request) {
	c, err := s.st.Get(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, oaDescribe(c))
}

// POST /v1/conversations/{id} {"metadata"}
func (s *Server) oaUpdate(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r, false)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	var meta json.RawMessage
	err = object(body, func(key string, rd *jsonx.Reader) error {
		if key != "metadata" {
			return unknownMember(key)
		}
		var err error
		meta, err = readMetadata(rd)
		return err
	})
	if err == nil && meta == nil {
		err = badRequest("metadata: required")
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	c, err := s.st.Update(r.Context(), tenant(r), r.PathValue("id"), nil, meta)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, oaDescribe(c))
}

// DELETE /v1/conversations/{id}
func (s *Server) oaDelete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := s.st.Delete(r.Context(), tenant(r), id); err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "object": "conversation.deleted", "deleted": true})
}

// POST /v1/conversations/{id}/items {"items"}
func (s *Server) oaCreateItems(w http.ResponseWriter, r *http.Request) {
	if s.opts.Items == nil {
		s.problem(w, r, notImplemented())
		return
	}
	body, err := s.readBody(w, r, false)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	calls, err := s.pendingCalls(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	var msgs convo.History
	seen := false
	err = object(body, func(key string, rd *jsonx.Reader) error {
		if key != "items" {
			return unknownMember(key)
		}
		seen = true
		var err error
		msgs, err = s.readItems(rd, calls)
		return err
	})
	if err == nil && (!seen || len(msgs) == 0) {
		err = badRequest("items: nothing to add")
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	msgs, _ = withIDs(msgs)
	// OpenAI's API has no version to hold: the items go at the end of
	// whatever the conversation holds by then, atomically.
	s.price(msgs)
	if _, err := s.st.Append(r.Context(), tenant(r), r.PathValue("id"), store.AnyVersion, msgs...); err != nil {
		s.problem(w, r, err)
		return
	}
	var items []item
	for _, m := range msgs {
		its, err := s.itemsOf(m)
		if err != nil {
			s.problem(w, r, err)
			return
		}
		items = append(items, its...)
	}
	writeJSON(w, http.StatusOK, newItemList(items))
}

// GET /v1/conversations/{id}/items?after=&limit=&order=
func (s *Server) oaListItems(w http.ResponseWriter, r *http.Request) {
	if s.opts.Items == nil {
		s.problem(w, r, notImplemented())
		return
	}
	q := r.URL.Query()
	limit, err := queryInt(r, "limit", 20, 1, 100)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	order := q.Get("order")
	if order != "" && order != "asc" && order != "desc" {
		s.problem(w, r, badRequest("query parameter order: want asc or desc, got %q", order))
		return
	}
	// The page is the limit items after the cursor (or from the start);
	// one more tells whether there are more.
	after := q.Get("after")
	found := after == ""
	var page []item
	err = s.walkItems(r, order != "asc", int(limit)+1, func(it item) bool {
		if !found {
			found = it.id == after
			return true
		}
		page = append(page, it)
		return len(page) <= int(limit)
	})
	if err == nil && !found {
		err = badRequest("query parameter after: the conversation has no item %q", after)
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	l := newItemList(page[:min(len(page), int(limit))])
	l.HasMore = len(page) > int(limit)
	writeJSON(w, http.StatusOK, l)
}

// GET /v1/conversations/{id}/items/{item}
func (s *Server) oaGetItem(w http.ResponseWriter, r *http.Request) {
	if s.opts.Items == nil {
		s.problem(w, r, notImplemented())
		return
	}
	it, err := s.findItem(r, r.PathValue("item"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeRaw(w, http.StatusOK, "application/json", append(it.raw, '\n'))
}

// DELETE /v1/conversations/{id}/items/{item}
func (s *Server) oaDeleteItem(w http.ResponseWriter, r *http.Request) {
	if s.opts.Items == nil {
		s.problem(w, r, notImplemented())
		return
	}
	want := r.PathValue("item")
	it, err := s.findItem(r, want)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	if n := it.of; n > 1 {
		s.problem(w, r, &apiError{status: http.StatusBadRequest, kind: "item-not-alone",
			detail: fmt.Sprintf("item %q is one of %d items convo keeps as one message (%q): delete that message through the native API", want, n, it.msgID)})
		return
	}
	c, err := s.st.DeleteMessage(r.Context(), tenant(r), r.PathValue("id"), store.AnyVersion, it.msgID)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, oaDescribe(c))
}
