package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/archive"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/store"
)

// conversationJSON is a conversation's description in the native API.
type conversationJSON struct {
	ID         string          `json:"id"`
	Title      string          `json:"title,omitempty"`
	Meta       json.RawMessage `json:"meta,omitempty"`
	Version    int64           `json:"version"`
	Messages   int             `json:"messages"`
	ForkedFrom string          `json:"forked_from,omitempty"`
	ForkedAt   *int            `json:"forked_at,omitempty"`
	Created    time.Time       `json:"created"`
	Updated    time.Time       `json:"updated"`
}

func describe(c store.Conversation) conversationJSON {
	out := conversationJSON{
		ID: c.ID, Title: c.Title, Meta: c.Meta, Version: c.Version, Messages: c.Messages,
		ForkedFrom: c.ForkedFrom, Created: c.Created.UTC(), Updated: c.Updated.UTC(),
	}
	if c.ForkedFrom != "" {
		at := c.ForkedAt
		out.ForkedAt = &at
	}
	return out
}

func conversationPath(id string) string {
	return "/convo/v1/conversations/" + url.PathEscape(id)
}

// POST /convo/v1/conversations {"title","meta","messages"}
func (s *Server) createConversation(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r, true)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	c, msgs, err := s.parseCreate(body)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	c.Tenant = tenant(r)
	s.price(msgs)
	c, err = s.st.Create(r.Context(), c, msgs...)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Location", conversationPath(c.ID))
	writeJSON(w, http.StatusCreated, describe(c))
}

// parseCreate reads a create request: {"id","title","meta","messages"}.
// A canonical document ({"format":"convo/v1","messages":[…]}, what export
// and the viewer's download write) is one too: its "format" is checked and
// otherwise ignored.
func (s *Server) parseCreate(body []byte) (c store.Conversation, msgs convo.History, err error) {
	err = object(body, func(key string, rd *jsonx.Reader) error {
		var err error
		switch key {
		case "format":
			var f string
			if f, err = rd.ReadString(); err == nil && f != convo.FormatV1 {
				return badRequest("format: %q is not a canonical document (%s); convert it first: convo convert --from F --to convo", f, convo.FormatV1)
			}
		case "id":
			c.ID, err = rd.ReadString()
		case "title":
			c.Title, err = rd.ReadString()
		case "meta":
			c.Meta, err = readObjectRaw(rd, true)
		case "messages":
			msgs, err = s.readMessages(rd, "messages")
		default:
			return unknownMember(key)
		}
		return err
	})
	return c, msgs, err
}

// conversationList is a page of the native conversation listing.
type conversationList struct {
	Conversations []conversationJSON `json:"conversations"`
	Next          string             `json:"next,omitempty"`
}

// GET /convo/v1/conversations?limit=&after=&title=&meta=
func (s *Server) listConversations(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, err := queryInt(r, "limit", 0, 1, 1000)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	opts := store.ListOptions{Limit: int(limit), After: q.Get("after"), Title: q.Get("title")}
	if m := q.Get("meta"); m != "" {
		rd := jsonx.NewReader([]byte(m), convo.DefaultLimits.MaxDepth)
		raw, err := readObjectRaw(rd, false)
		if err == nil {
			err = rd.ExpectEnd()
		}
		if err != nil {
			s.problem(w, r, badRequest("query parameter meta: want a JSON object: %v", err))
			return
		}
		opts.Meta = raw
	}
	cs, next, err := s.st.List(r.Context(), tenant(r), opts)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	out := conversationList{Conversations: make([]conversationJSON, len(cs)), Next: next}
	for i, c := range cs {
		out.Conversations[i] = describe(c)
	}
	writeJSON(w, http.StatusOK, out)
}

// GET /convo/v1/conversations/{id}
func (s *Server) getConversation(w http.ResponseWriter, r *http.Request) {
	c, err := s.st.Get(r.Context(), tenant(r), r.PathValue("id"))
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, describe(c))
}

// PATCH /convo/v1/conversations/{id} {"title","meta"}
func (s *Server) updateConversation(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r, false)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	title, meta, err := parseUpdate(body)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	c, err := s.st.Update(r.Context(), tenant(r), r.PathValue("id"), title, meta)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, describe(c))
}

// parseUpdate reads an update request: {"title","meta"}, either optional;
// "meta": null removes the metadata.
func parseUpdate(body []byte) (title *string, meta json.RawMessage, err error) {
	err = object(body, func(key string, rd *jsonx.Reader) error {
		switch key {
		case "title":
			t, err := rd.ReadString()
			title = &t
			return err
		case "meta":
			if rd.ReadNull() {
				meta = json.RawMessage("null")
				return nil
			}
			var err error
			meta, err = readObjectRaw(rd, false)
			return err
		}
		return unknownMember(key)
	})
	return title, meta, err
}

// DELETE /convo/v1/conversations/{id}
func (s *Server) deleteConversation(w http.ResponseWriter, r *http.Request) {
	if err := s.st.Delete(r.Context(), tenant(r), r.PathValue("id")); err != nil {
		s.problem(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// appended answers an append: the conversation after it and the ids of the
// messages added, in order.
type appended struct {
	Conversation conversationJSON `json:"conversation"`
	IDs          []string         `json:"ids"`
}

// POST /convo/v1/conversations/{id}/messages {"version","messages"}
func (s *Server) appendMessages(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r, false)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	version, msgs, err := s.parseAppend(body)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	ten, id := tenant(r), r.PathValue("id")
	msgs, ids := withIDs(msgs)
	s.price(msgs)
	c, err := s.st.Append(r.Context(), ten, id, version, msgs...)
	if err != nil {
		s.problem(w, r, s.conflictVersion(r, err, version))
		return
	}
	writeJSON(w, http.StatusOK, appended{Conversation: describe(c), IDs: ids})
}

// parseAppend reads an append request: {"version","messages"}, both
// required.
func (s *Server) parseAppend(body []byte) (version int64, msgs convo.History, err error) {
	version = -1
	err = object(body, func(key string, rd *jsonx.Reader) error {
		var err error
		switch key {
		case "version":
			version, err = rd.ReadInt()
			if err == nil && version < 0 {
				err = errors.New("want a version of at least 0")
			}
		case "messages":
			msgs, err = s.readMessages(rd, "messages")
		default:
			return unknownMember(key)
		}
		return err
	})
	switch {
	case err != nil:
	case version < 0:
		err = badRequest("version: the version you read is required (GET the conversation for it)")
	case len(msgs) == 0:
		err = badRequest("messages: nothing to append")
	}
	return version, msgs, err
}

// GET /convo/v1/conversations/{id}/messages?from=&limit=
func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) {
	from, err := queryInt(r, "from", 0, 0, 1<<31-1)
	if err == nil {
		var limit int64
		limit, err = queryInt(r, "limit", 100, 1, 1000)
		if err == nil {
			s.pageMessages(w, r, int(from), int(limit))
			return
		}
	}
	s.problem(w, r, err)
}

func (s *Server) pageMessages(w http.ResponseWriter, r *http.Request, from, limit int) {
	ten, id := tenant(r), r.PathValue("id")
	h, c, err := s.st.LoadRange(r.Context(), ten, id, from, limit)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	b := make([]byte, 0, 256+estimate(h))
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, c.Version, 10)
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(c.Messages), 10)
	b = append(b, `,"from":`...)
	b = strconv.AppendInt(b, int64(from), 10)
	b = append(b, `,"messages":[`...)
	for i, m := range h {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '\n')
		if b, err = convo.AppendMessage(b, m); err != nil {
			s.problem(w, r, err)
			return
		}
	}
	b = append(b, ']')
	if next := from + len(h); len(h) > 0 && next < c.Messages {
		b = append(b, `,"next":`...)
		b = strconv.AppendInt(b, int64(next), 10)
	}
	b = append(b, "}\n"...)
	writeRaw(w, http.StatusOK, "application/json", b)
}

func estimate(h convo.History) int {
	n := 0
	for _, m := range h {
		n += m.EstimatedBytes() + 2
	}
	return n
}

// GET /convo/v1/conversations/{id}/messages/{message}
func (s *Server) getMessage(w http.ResponseWriter, r *http.Request) {
	m, err := s.st.Message(r.Context(), tenant(r), r.PathValue("id"), r.PathValue("message"))
	var b []byte
	if err == nil {
		b, err = convo.AppendMessage(nil, m)
	}
	if err != nil {
		s.problem(w, r, err)
		return
	}
	writeRaw(w, http.StatusOK, "application/json", append(b, '\n'))
}

// DELETE /convo/v1/conversations/{id}/messages/{message}?version=
func (s *Server) deleteMessage(w http.ResponseWriter, r *http.Request) {
	if !r.URL.Query().Has("version") {
		s.problem(w, r, badRequest("query parameter version: the version you read is required"))
		return
	}
	version, err := queryInt(r, "version", 0, 0, 1<<62)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	c, err := s.st.DeleteMessage(r.Context(), tenant(r), r.PathValue("id"), version, r.PathValue("message"))
	if err != nil {
		s.problem(w, r, s.conflictVersion(r, err, version))
		return
	}
	writeJSON(w, http.StatusOK, describe(c))
}

// POST /convo/v1/conversations/{id}/fork {"at" | "before", "title", "meta"}
func (s *Server) fork(w http.ResponseWriter, r *http.Request) {
	body, err := s.readBody(w, r, false)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	at, before, c, err := parseFork(body)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	ten, id := tenant(r), r.PathValue("id")
	if before != "" {
		h, _, err := s.st.Load(r.Context(), ten, id, 0)
		if err != nil {
			s.problem(w, r, err)
			return
		}
		at = -1
		for i, m := range h {
			if m.ID == before {
				at = int64(i)
				break
			}
		}
		if at < 0 {
			s.problem(w, r, notFound("conversation or message"))
			return
		}
	}
	c.Tenant = ten
	c, err = s.st.Fork(r.Context(), ten, id, int(at), c)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Location", conversationPath(c.ID))
	writeJSON(w, http.StatusCreated, describe(c))
}

// parseFork reads a fork request: {"at" | "before", "title", "meta"}. at
// is -1 when before is given.
func parseFork(body []byte) (at int64, before string, c store.Conversation, err error) {
	at = -1
	err = object(body, func(key string, rd *jsonx.Reader) error {
		var err error
		switch key {
		case "at":
			at, err = rd.ReadInt()
			if err == nil && at < 0 {
				err = errors.New("want a message count of at least 0")
			}
		case "before":
			before, err = rd.ReadString()
			if err == nil && before == "" {
				err = errors.New("want a message id")
			}
		case "title":
			c.Title, err = rd.ReadString()
		case "meta":
			c.Meta, err = readObjectRaw(rd, true)
		default:
			return unknownMember(key)
		}
		return err
	})
	if err == nil && (at < 0) == (before == "") {
		err = badRequest("give either at (how many messages the fork keeps) or before (the id of the first message it leaves out)")
	}
	return at, before, c, err
}

// exported is an export in a provider's format.
type exported struct {
	Format   string          `json:"format"`
	Version  int64           `json:"version"`
	Request  json.RawMessage `json:"request"`
	Warnings []warningJSON   `json:"warnings"`
}

type warningJSON struct {
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

// GET /convo/v1/conversations/{id}/export?format=&strict=&repair=&reasoning=&media=&model=&system_role=&gemini_bypass=
func (s *Server) export(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	format := q.Get("format")
	if format == "" {
		format = "convo"
	}
	if f, ok := archiveFormat(format); ok {
		s.exportArchive(w, r, f)
		return
	}
	var codec provider.Codec
	var opts provider.Options
	if format != "convo" && format != "lines" {
		var err error
		if codec, err = provider.Lookup(s.opts.Formats, format); err != nil {
			s.problem(w, r, badRequest("query parameter format: unknown format %q (known: %s)", format, strings.Join(s.formatNames(), ", ")))
			return
		}
		if opts, err = exportOptions(r); err != nil {
			s.problem(w, r, err)
			return
		}
	}
	h, c, err := s.st.Load(r.Context(), tenant(r), r.PathValue("id"), 0)
	if err != nil {
		s.problem(w, r, err)
		return
	}
	w.Header().Set("Convo-Version", strconv.FormatInt(c.Version, 10))
	switch format {
	case "convo":
		b, err := convo.Marshal(h)
		if err != nil {
			s.problem(w, r, err)
			return
		}
		writeRaw(w, http.StatusOK, "application/json", b)
		return
	case "lines":
		b, err := convo.MarshalLines(h)
		if err != nil {
			s.problem(w, r, err)
			return
		}
		writeRaw(w, http.StatusOK, "application/jsonl", b)
		return
	}
	body, warns, err := codec.Encode(h, opts)
	if err != nil {
		var se *provider.StrictError
		e := invalid("encoding for %s: %v", codec.Name(), err)
		if errors.As(err, &se) {
			e.detail = "strict: the conversion had warnings"
			for _, w := range se.Warnings {
				e.errs = append(e.errs, fieldError{Path: w.Path, Detail: w.Msg})
			}
		}
		s.problem(w, r, e)
		return
	}
	if bareExport(r) {
		// A file to save: the request itself, as the provider and convo
		// convert --from take it; the warnings in headers, as for the
		// outside formats.
		for _, wn := range warns {
			w.Header().Add("Convo-Warning", wn.String())
		}
		writeRaw(w, http.StatusOK, "application/json", append(body, '\n'))
		return
	}
	out := exported{Format: codec.Name(), Version: c.Version, Request: body, Warnings: make([]warningJSON, len(warns))}
	for i, wn := range warns {
		out.Warnings[i] = warningJSON{Path: wn.Path, Message: wn.Msg}
	}
	writeJSON(w, http.StatusOK, out)
}

// exportOptions reads the conversion options of an export request.
func exportOptions(r *http.Request) (provider.Options, error) {
	q := r.URL.Query()
	var opts provider.Options
	var err error
	if opts.Strict, err = queryBool(r, "strict"); err != nil {
		return opts, err
	}
	if opts.Repair, err = queryBool(r, "repair"); err != nil {
		return opts, err
	}
	switch v := q.Get("reasoning"); v {
	case "", "drop", "text":
		opts.Reasoning = provider.ReasoningMode(v)
	default:
		return opts, badRequest("query parameter reasoning: want drop or text, got %q", v)
	}
	switch v := q.Get("server_tools"); v {
	case "", "drop", "text":
		opts.ServerTools = provider.ServerToolMode(v)
	default:
		return opts, badRequest("query parameter server_tools: want drop or text, got %q", v)
	}
	switch v := q.Get("media"); v {
	case "", "error", "placeholder":
		opts.Media = provider.MediaMode(v)
	default:
		return opts, badRequest("query parameter media: want error or placeholder, got %q", v)
	}
	switch v := q.Get("system_role"); v {
	case "", "system", "developer":
		opts.SystemRole = v
	default:
		return opts, badRequest("query parameter system_role: want system or developer, got %q", v)
	}
	if opts.GeminiBypass, err = queryBool(r, "gemini_bypass"); err != nil {
		return opts, err
	}
	opts.Model = q.Get("model")
	return opts, nil
}

// formatsJSON lists the export formats.
type formatsJSON struct {
	Formats []string `json:"formats"`
}

// GET /convo/v1/formats
func (s *Server) formats(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, formatsJSON{Formats: s.formatNames()})
}

// exportFor answers an export of conversation id for tenant, as the export
// route does: the viewer's downloads go through it.
//
// The viewer's download is a file, so a provider format is written as the
// bare request body (what the provider, convo convert --from F and --from
// auto read), not in the API's {"format","version","request","warnings"}
// envelope, whose members are for a program reading the answer.
func (s *Server) exportFor(w http.ResponseWriter, r *http.Request, tenant, id string) {
	r = r.WithContext(context.WithValue(context.WithValue(r.Context(), tenantKey{}, tenant), bareExportKey{}, true))
	r.SetPathValue("id", id)
	s.export(w, r)
}

// bareExportKey marks an export for the viewer's download (exportFor).
type bareExportKey struct{}

func bareExport(r *http.Request) bool { b, _ := r.Context().Value(bareExportKey{}).(bool); return b }

// formatNames lists the export formats: convo's own, the outside formats
// of package archive, then the codecs'.
func (s *Server) formatNames() []string {
	names := []string{"convo", "lines"}
	for _, f := range archive.Writable() {
		names = append(names, string(f))
	}
	for _, c := range s.opts.Formats {
		names = append(names, c.Name())
	}
	return names
}

// conflictVersion adds the conversation's current version to a version
// conflict, so the client knows what it is up against.
func (s *Server) conflictVersion(r *http.Request, err error, version int64) error {
	if !errors.Is(err, store.ErrConflict) {
		return err
	}
	c, gerr := s.st.Get(r.Context(), tenant(r), r.PathValue("id"))
	if gerr != nil {
		return err
	}
	return conflict(c.Version, "the conversation is at version %d, not %d: read it again", c.Version, version)
}
