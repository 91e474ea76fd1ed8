package anthropic

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// head is a Message object apart from its content: what message_start
// announces and message_delta updates.
type head struct {
	id, model string
	top       wire.Members // other members (stop_reason, stop_sequence, …), nulls left out
	usage     wire.Members // usage members, nulls left out
	hasUsage  bool
	shaped    bool // a "type" or "content" member was read: a Message, not any object
}

// replyReader reads Message objects and stream events.
type replyReader struct {
	blockReader
	// vals holds the short member values read (usage counts, stop
	// reasons), one after the other (see raw).
	vals []byte
}

// Member values up to valsMax bytes are copied into chunks of valsChunk
// bytes shared by the values of a reply, rather than one allocation each;
// a chunk is never written again where a value lies.
const (
	valsChunk = 128
	valsMax   = valsChunk / 4
)

// raw reads any value as jsonx.Reader.ReadRaw does: compacted (a value
// already compact exactly as written), in memory of its own (the
// document may be reused once it is read).
func (d *replyReader) raw() ([]byte, error) {
	span, compact, err := d.r.RawSpan()
	switch {
	case err != nil:
		return nil, err
	case !compact:
		// Validated already, to the reader's depth.
		return jsonx.Compact(span, math.MaxInt32)
	}
	return d.keep(span), nil
}

// keep returns a copy of a compact value: a short one in the chunk of
// values, a longer one in memory of its own.
func (d *replyReader) keep(span []byte) []byte {
	if len(span) > valsMax {
		return append(make([]byte, 0, len(span)), span...)
	}
	if cap(d.vals)-len(d.vals) < len(span) {
		d.vals = make([]byte, 0, valsChunk)
	}
	i := len(d.vals)
	d.vals = append(d.vals, span...)
	// Capped: an append to the value copies it rather than writing over
	// the next.
	return d.vals[i:len(d.vals):len(d.vals)]
}

// memberKey returns key as a string, made once for the keys of the
// message's usage and head that replies repeat.
func memberKey(key []byte) string {
	switch string(key) {
	case "input_tokens":
		return "input_tokens"
	case "output_tokens":
		return "output_tokens"
	case "cache_creation_input_tokens":
		return "cache_creation_input_tokens"
	case "cache_read_input_tokens":
		return "cache_read_input_tokens"
	case "cache_creation":
		return "cache_creation"
	case "service_tier":
		return "service_tier"
	case "server_tool_use":
		return "server_tool_use"
	case "stop_reason":
		return "stop_reason"
	case "stop_sequence":
		return "stop_sequence"
	}
	return string(key)
}

// message reads a Message object into h; its content blocks are passed to
// onBlock in order.
func (d *replyReader) message(h *head, onBlock func(p convo.Part) error) error {
	r := d.r
	if r.Peek() != jsonx.Object {
		return r.Errorf("want a message object, got %s", r.Peek())
	}
	var typ string
	var apiErr *provider.APIError
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "type":
			var err error
			h.shaped = true
			typ, err = readName(r)
			return convo.ErrorAt(err, "type")
		case "id":
			return convo.ErrorAt(d.optString(&h.id), "id")
		case "model":
			return convo.ErrorAt(d.optString(&h.model), "model")
		case "role":
			return convo.ErrorAt(d.role(), "role")
		case "content":
			h.shaped = true
			return convo.ErrorAt(d.content(onBlock), "content")
		case "usage":
			if r.ReadNull() {
				return nil
			}
			h.hasUsage = true
			return convo.ErrorAt(d.members(&h.usage, 8), "usage")
		case "error":
			if r.Peek() != jsonx.Object {
				return r.Skip()
			}
			apiErr = &provider.APIError{Provider: ProviderID}
			return convo.ErrorAt(d.apiError(apiErr), "error")
		}
		if r.ReadNull() {
			return nil
		}
		v, err := d.raw()
		h.top = h.top.Set(memberKey(key), v)
		return atKey(err, key)
	})
	if err != nil {
		return err
	}
	switch {
	case typ == "error" || (typ == "" && apiErr != nil):
		if apiErr == nil {
			apiErr = &provider.APIError{Provider: ProviderID, Message: "error response without details"}
		}
		return apiErr
	case typ != "" && typ != "message":
		return convo.ErrorAt(fmt.Errorf("want message, got %q", typ), "type")
	}
	return nil
}

// role reads a message's role, which must be the assistant's.
func (d *replyReader) role() error {
	var role string
	if err := d.optString(&role); err != nil {
		return err
	}
	if role != "" && role != "assistant" {
		return fmt.Errorf("want assistant, got %q", role)
	}
	return nil
}

// content reads a message's content blocks, passing each to onBlock.
func (d *replyReader) content(onBlock func(p convo.Part) error) error {
	r := d.r
	if r.ReadNull() {
		return nil
	}
	if r.Peek() != jsonx.Array {
		return r.Errorf("want an array of blocks, got %s", r.Peek())
	}
	return d.eachBlock(onBlock)
}

// optString reads a string or null.
func (d *replyReader) optString(dst *string) error {
	if d.r.ReadNull() {
		return nil
	}
	if d.r.Peek() != jsonx.String {
		return d.r.Errorf("want a string, got %s", d.r.Peek())
	}
	s, err := d.r.ReadString()
	*dst = s
	return err
}

// members reads an object's members into ms, overwriting earlier values;
// nulls are left out. An ms still nil is made with room for n members,
// what the object usually has, rather than grown member by member.
func (d *replyReader) members(ms *wire.Members, n int) error {
	r := d.r
	if r.Peek() != jsonx.Object {
		return r.Errorf("want an object, got %s", r.Peek())
	}
	return r.ReadObject(func(key []byte) error {
		if r.ReadNull() {
			return nil
		}
		v, err := d.raw()
		if *ms == nil {
			*ms = make(wire.Members, 0, n)
		}
		*ms = (*ms).Set(memberKey(key), v)
		return err
	})
}

func (d *replyReader) apiError(e *provider.APIError) error {
	r := d.r
	return r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "type":
			return convo.ErrorAt(d.optString(&e.Type), "type")
		case "message":
			return convo.ErrorAt(d.optString(&e.Message), "message")
		}
		return r.Skip()
	})
}

// finish builds the assistant message from a head and its parts.
func (h *head) finish(parts []convo.Part) (convo.Message, error) {
	m := convo.Message{
		Role:   convo.RoleAssistant,
		Parts:  parts,
		Origin: h.origin(),
	}
	for i := range m.Parts {
		h.settle(&m.Parts[i])
	}
	native := h.top
	if raw := h.top.Value("stop_reason"); raw != nil {
		var reason string
		r := jsonx.NewReader(raw, 0)
		if r.Peek() == jsonx.String {
			reason, _ = r.ReadString()
		}
		m.Finish = finishOf(reason)
	}
	// A structured answer from a model without structured output came as
	// a call of the output tool convo added to the request.
	provider.OutputCallsAsText(&m)
	if h.hasUsage {
		u, rest, err := usageOf(h.usage)
		if err != nil {
			return m, convo.ErrorAt(err, "usage")
		}
		m.Usage = u
		if len(rest) > 0 {
			native = append(native[:len(native):len(native)], wire.Member{Key: "usage", Val: rest.Object()})
		}
	}
	if len(native) > 0 {
		m.Native = convo.Native{ProviderID: native.Object()}
	}
	return m, nil
}

// origin returns the origin of the message a head begins.
func (h *head) origin() *convo.Origin {
	return &convo.Origin{Provider: ProviderID, Model: h.model, ResponseID: h.id}
}

// settle gives a part what the message's head says of it: a reasoning
// part is the message's model's.
func (h *head) settle(p *convo.Part) {
	if p.Type == convo.TypeReasoning && p.Provider == ProviderID && p.Model == "" {
		p.Model = h.model
	}
}

// finishOf normalises a stop_reason; the raw reason stays in the native
// "stop_reason" member.
func finishOf(reason string) convo.Finish {
	switch reason {
	case "":
		return ""
	case "end_turn", "stop_sequence":
		return convo.FinishStop
	case "max_tokens", "model_context_window_exceeded":
		return convo.FinishLength
	case "tool_use":
		return convo.FinishToolUse
	case "pause_turn":
		return convo.FinishPause
	case "refusal":
		return convo.FinishRefusal
	}
	return convo.FinishOther
}

// usageOf maps Anthropic usage to convo's: input counts every input token
// (uncached, written to the cache and read from it), as Anthropic bills
// them; output includes thinking; there is no reported total. Members convo
// has no field for are returned.
func usageOf(ms wire.Members) (*convo.Usage, wire.Members, error) {
	u := &convo.Usage{}
	var rest wire.Members
	for _, m := range ms {
		var dst *int64
		switch m.Key {
		case "input_tokens":
			dst = &u.Input
		case "output_tokens":
			dst = &u.Output
		case "cache_creation_input_tokens":
			dst = &u.CacheWrite
		case "cache_read_input_tokens":
			dst = &u.CacheRead
		case "output_tokens_details":
			rest = append(rest, m)
			r := jsonx.NewReader(m.Val, 0)
			if r.Peek() != jsonx.Object {
				continue
			}
			err := r.ReadObject(func(key []byte) error {
				if string(key) != "thinking_tokens" || r.Peek() != jsonx.Number {
					return r.Skip()
				}
				n, err := r.ReadInt()
				u.Reasoning = max(n, 0)
				return err
			})
			if err != nil {
				return nil, nil, convo.ErrorAt(err, m.Key)
			}
			continue
		default:
			rest = append(rest, m)
			continue
		}
		r := jsonx.NewReader(m.Val, 0)
		n, err := r.ReadInt()
		if err == nil && n < 0 {
			err = fmt.Errorf("negative token count %d", n)
		}
		if err != nil {
			return nil, nil, convo.ErrorAt(err, m.Key)
		}
		*dst = n
	}
	u.Input += u.CacheWrite + u.CacheRead
	return u, rest, nil
}

// DecodeReply decodes a Messages response body into one assistant message:
// parts in the order of the content blocks (as Decode maps them; thinking
// and redacted thinking become reasoning parts of provider "anthropic" with
// the response's model), Usage, Finish (with the raw stop_reason and the
// other response members in Native "anthropic") and Origin. An error body
// ({"type":"error",…}) is returned as a *provider.APIError.
func (messages) DecodeReply(body []byte, opts provider.Options) (convo.Message, []provider.Warning, error) {
	if err := provider.CheckReply(body, Name); err != nil {
		return convo.Message{}, nil, err
	}
	lim, err := opts.CheckSize(body, "anthropic reply")
	if err != nil {
		return convo.Message{}, nil, err
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	d := replyReader{blockReader: blockReader{r: jsonx.NewReader(body, lim.MaxDepth), reply: true}}
	var h head
	var parts []convo.Part
	err = d.message(&h, func(p convo.Part) error {
		parts = append(parts, p)
		return nil
	})
	if err == nil {
		err = d.r.ExpectEnd()
	}
	if err == nil && !h.shaped {
		// An object of no format DetectReply knows (an error of another
		// API, {}): reading it would give an empty message.
		err = errors.New(`not a Messages response: no "type" and no "content"`)
	}
	var m convo.Message
	if err == nil {
		m, err = h.finish(parts)
	}
	if err != nil {
		var apiErr *provider.APIError
		if errors.As(err, &apiErr) {
			return convo.Message{}, nil, err
		}
		return convo.Message{}, nil, fmt.Errorf("anthropic reply: %w", err)
	}
	return m, nil, nil
}

// ReadStream reads a whole streamed reply (Server-Sent Events, as the API
// sends them) from r and accumulates it. When the stream fails part-way, the
// partial message is returned with the error.
func (messages) ReadStream(r io.Reader, opts provider.Options) (convo.Message, []provider.Warning, error) {
	r, err := provider.CheckStream(r, Name)
	if err != nil {
		return convo.Message{}, nil, err
	}
	// The accumulator copies what it keeps: each event is read in the
	// SSE reader's own buffer.
	return stream.FeedSSE(r, messages{}.NewAccumulator(opts), true)
}
