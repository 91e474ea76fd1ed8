package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// The OpenAI Responses API's endpoints for a stored response, besides
// creating one (POST /v1/responses): what responseResource serves.
var responseRoutes = []string{
	"GET /v1/responses/{id}",
	"DELETE /v1/responses/{id}",
	"GET /v1/responses/{id}/input_items",
	"POST /v1/responses/{id}/cancel",
}

// responseResource serves the endpoints of a stored response. A response
// the gateway gave a Responses client on a translated route (responseID)
// is the gateway's: it answers from the record (ownResponse). Any other
// is the provider's: the request goes to the upstream that serves the
// Responses API (forwardResponse). Nothing of these exchanges is recorded.
func (g *Gateway) responseResource(w http.ResponseWriter, r *http.Request, x *exchange) {
	x.client = protocols["openai-responses"]
	tenant, key, ok := g.authenticate(r)
	if !ok {
		writeError(w, x.client, http.StatusUnauthorized, g.refusedToken(r))
		return
	}
	x.tenant, x.key = tenant, key
	// None of these requests needs a body, but a client may send one:
	// openai-go's GetStreaming asks for the stream with {"stream":true}.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.opts.MaxBodyBytes))
	if err != nil {
		writeError(w, x.client, http.StatusBadRequest, "reading the request body: "+err.Error())
		return
	}
	x.body = body
	id := r.PathValue("id")
	if conv, replyID, ours := parseResponseID(id); ours {
		g.ownResponse(w, r, x, id, conv, replyID)
		return
	}
	g.forwardResponse(w, r, x, id)
}

// subresource returns what of a stored response r asks for after its id
// ("/input_items", "/cancel"), or "" for the response itself.
func subresource(r *http.Request) string {
	_, rest, _ := strings.Cut(r.Pattern, "{id}")
	return rest
}

// streamAsked reports whether a request for a response asks for it
// streamed: stream=true in its query, as OpenAI documents it, or in its
// body, as openai-go sends it.
func streamAsked(r *http.Request, body []byte) bool {
	if r.URL.Query().Get("stream") == "true" {
		return true
	}
	if len(body) == 0 {
		return false
	}
	_, stream, _, err := peek(body)
	return err == nil && stream != nil && *stream
}

// ownResponse answers for a response the gateway gave, from the record:
// the response object (GET, streamed again with ?stream=true), or its
// input items, the recorded conversation before it. The record is not the
// client's to delete or cancel through the Responses API: those are
// refused, naming what deletes a recorded conversation.
func (g *Gateway) ownResponse(w http.ResponseWriter, r *http.Request, x *exchange, id, conv, replyID string) {
	h, _ := g.recorded(r.Context(), x.tenant, conv, replyID)
	i := slices.IndexFunc(h, func(m convo.Message) bool { return m.ID == replyID })
	enc, err := all.Encoder(x.client.name)
	if i < 0 || h[i].Role != convo.RoleAssistant || err != nil {
		writeError(w, x.client, http.StatusNotFound, fmt.Sprintf("response %q is not recorded by this gateway for this key", id))
		return
	}
	switch {
	case r.Method == http.MethodDelete:
		writeError(w, x.client, http.StatusBadRequest, fmt.Sprintf("response %q was given by the gateway from a translated exchange, recorded in conversation %q: the gateway does not delete its recordings through the Responses API (convo store rm deletes the conversation)", id, conv))
	case r.Method == http.MethodPost:
		writeError(w, x.client, http.StatusBadRequest, fmt.Sprintf("response %q was given by the gateway from a translated exchange, which is never in the background: there is nothing to cancel", id))
	case subresource(r) == "/input_items":
		g.inputItems(w, r, x, h[:i])
	default:
		opts := provider.StreamOptions{ResponseID: id}
		if o := h[i].Origin; o != nil {
			opts.Model = o.Model
		}
		if streamAsked(r, x.body) {
			// The stream a client asking for it again gets of a
			// background response: the whole reply, in its events.
			w.Header().Set("Content-Type", x.client.contentType())
			se := enc.NewStreamEncoder(w, opts)
			for _, d := range provider.MessageDeltas(h[i]) {
				if se.Write(d) != nil {
					return
				}
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(enc.EncodeReply(h[i], opts))
	}
}

// inputItems answers GET /v1/responses/{id}/input_items for a response the
// gateway gave: the recorded conversation before it (all the model was
// given, what earlier responses it went on from included, as OpenAI
// counts them), as the Responses input items a client would send for it, in
// OpenAI's list shape with its order (desc by default), limit (20 by
// default, 1 to 100) and after cursor. An item without an id of its own
// is given its place in the input ("item_3").
func (g *Gateway) inputItems(w http.ResponseWriter, r *http.Request, x *exchange, before convo.History) {
	q := r.URL.Query()
	limit := 20
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			writeError(w, x.client, http.StatusBadRequest, "limit: want an integer from 1 to 100")
			return
		}
		limit = n
	}
	order := q.Get("order")
	if order != "" && order != "asc" && order != "desc" {
		writeError(w, x.client, http.StatusBadRequest, `order: want "asc" or "desc"`)
		return
	}
	items, err := responseItems(before)
	if err != nil {
		g.log.Warn("gateway: input items not encodable", "err", err)
		writeError(w, x.client, http.StatusInternalServerError, "the recorded conversation cannot be given as Responses input items")
		return
	}
	if order != "asc" {
		slices.Reverse(items)
	}
	if after := q.Get("after"); after != "" {
		k := slices.IndexFunc(items, func(it responseItem) bool { return it.id == after })
		if k < 0 {
			writeError(w, x.client, http.StatusBadRequest, fmt.Sprintf("after: no input item %q", after))
			return
		}
		items = items[k+1:]
	}
	more := len(items) > limit
	items = items[:min(limit, len(items))]
	page := struct {
		Object  string            `json:"object"`
		Data    []json.RawMessage `json:"data"`
		FirstID *string           `json:"first_id"`
		LastID  *string           `json:"last_id"`
		HasMore bool              `json:"has_more"`
	}{Object: "list", Data: make([]json.RawMessage, len(items)), HasMore: more}
	for k, it := range items {
		page.Data[k] = it.raw
	}
	if len(items) > 0 {
		page.FirstID, page.LastID = &items[0].id, &items[len(items)-1].id
	}
	body, err := json.Marshal(page)
	if err != nil {
		writeError(w, x.client, http.StatusInternalServerError, "encoding the input items: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// responseItem is one Responses input item and its id.
type responseItem struct {
	id  string
	raw json.RawMessage
}

// responseItems returns h as the input items of a Responses request, each
// with an id.
func responseItems(h convo.History) ([]responseItem, error) {
	codec, err := all.LookupRequest("openai-responses")
	if err != nil {
		return nil, err
	}
	body, _, err := codec.EncodeRequest(&provider.Request{History: h}, provider.Options{Repair: true})
	if err != nil {
		return nil, err
	}
	var req struct {
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	var input []map[string]json.RawMessage
	var text string
	if len(req.Input) == 0 {
		return nil, nil // no input
	}
	if json.Unmarshal(req.Input, &text) == nil {
		// One user message, which a request may send as a string.
		input = []map[string]json.RawMessage{{"role": json.RawMessage(`"user"`), "content": req.Input}}
	} else if err := json.Unmarshal(req.Input, &input); err != nil {
		return nil, err
	}
	items := make([]responseItem, len(input))
	for k, it := range input {
		if err := listedMessage(it); err != nil {
			return nil, err
		}
		var id string
		if json.Unmarshal(it["id"], &id) != nil || id == "" {
			id = "item_" + strconv.Itoa(k)
			it["id"], _ = json.Marshal(id)
		}
		raw, err := json.Marshal(it)
		if err != nil {
			return nil, err
		}
		items[k] = responseItem{id: id, raw: raw}
	}
	return items, nil
}

// listedMessage gives a message item the shape OpenAI lists it in: a
// type, and its content as a list of parts (a request may send a string).
func listedMessage(it map[string]json.RawMessage) error {
	var role, text string
	if json.Unmarshal(it["role"], &role) != nil {
		return nil // not a message
	}
	if it["type"] == nil {
		it["type"] = json.RawMessage(`"message"`)
	}
	if json.Unmarshal(it["content"], &text) != nil {
		return nil // a list already
	}
	typ := "input_text"
	if role == "assistant" {
		typ = "output_text"
	}
	content, err := json.Marshal([]map[string]string{{"type": typ, "text": text}})
	it["content"] = content
	return err
}

// forwardResponse passes a request for a response the gateway did not
// give to the first upstream, in the configuration's order, that serves
// the Responses API, as it came (its body, its query without a key, the
// headers the protocol forwards), with the upstream's key or else the client's own as
// for any request; and the answer back as it comes, a stream included.
func (g *Gateway) forwardResponse(w http.ResponseWriter, r *http.Request, x *exchange, id string) {
	if x.up = g.responsesUpstream(); x.up == nil {
		writeError(w, x.client, http.StatusNotFound, fmt.Sprintf("response %q: the gateway did not give it, and no upstream serves the OpenAI Responses API", id))
		return
	}
	if msg := x.keyless(); msg != "" {
		writeError(w, x.client, http.StatusUnauthorized, msg)
		return
	}
	u := strings.TrimRight(x.up.URL, "/") + "/responses/" + url.PathEscape(id) + subresource(r)
	if q := r.URL.Query(); len(q) > 0 {
		q.Del("key") // a key in the query is the gateway's or the client's, never the upstream's to see
		if s := q.Encode(); s != "" {
			u += "?" + s
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), g.opts.Timeout)
	defer cancel()
	var body io.Reader
	if len(x.body) > 0 {
		body = bytes.NewReader(x.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, u, body)
	if err != nil {
		writeError(w, x.client, http.StatusBadRequest, "response id: "+err.Error())
		return
	}
	for _, k := range append([]string{"Accept", "Content-Type"}, x.client.forward...) {
		if v := r.Header.Values(k); len(v) > 0 {
			req.Header[http.CanonicalHeaderKey(k)] = v
		}
	}
	x.setAuth(req.Header)
	x.upStart = time.Now()
	resp, err := g.client.Do(req)
	if err != nil {
		status, msg := g.upstreamFailed(x, err)
		writeError(w, x.client, status, msg)
		return
	}
	defer resp.Body.Close()
	for _, k := range []string{"Content-Type", "Request-Id", "X-Request-Id", "Openai-Processing-Ms", "Retry-After"} {
		if v := resp.Header.Get(k); v != "" {
			w.Header().Set(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	// Flushed as it comes: a stream (?stream=true) or not, nothing is kept.
	if _, _, _, err := g.copyReply(w, resp.Body, true, false, nil); err != nil {
		g.log.Warn("gateway: a stored response's reply was cut short", "upstream", x.up.Name, "err", err)
	}
}

// responsesUpstream returns the first upstream, in the configuration's
// order, that serves the OpenAI Responses API ("openai-responses", or the
// "openai" family's variant), or nil.
func (g *Gateway) responsesUpstream() *upstream {
	p := protocols["openai-responses"]
	for _, u := range g.opts.Config.Upstreams {
		up := g.ups[u.Name]
		if v := up.variants[p]; v != nil {
			return v
		}
		if up.proto == p {
			return up
		}
	}
	return nil
}
