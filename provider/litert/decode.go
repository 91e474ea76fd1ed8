package litert

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// Decode reads a LiteRT-LM messages array — bare, or as the "messages" of
// an object such as a JSON preface ({"messages","tools","extra_context"},
// whose other members are ignored). Tool calls without an id get a
// synthesised one; tool results are paired with the calls of the
// assistant message before them by id, else by name and order.
func (conversation) Decode(body []byte, opts provider.Options) (convo.History, []provider.Warning, error) {
	lim, err := opts.CheckSize(body, "litert messages")
	if err != nil {
		return nil, nil, err
	}
	if err := provider.CheckFormat(body, Name); err != nil {
		return nil, nil, err
	}
	d := decoder{r: jsonx.NewReader(body, lim.MaxDepth)}
	switch d.r.Peek() {
	case jsonx.Array:
		err = d.messages()
	case jsonx.Object:
		seen := false
		err = d.r.ReadObject(func(key []byte) error {
			if string(key) == "messages" {
				seen = true
				return d.messages()
			}
			return convo.ErrorAt(d.r.Skip(), string(key))
		})
		if err == nil && !seen {
			err = errors.New(`litert: want a messages array, or an object with "messages"`)
		}
	case jsonx.End:
		err = errors.New("empty litert messages")
	default:
		err = fmt.Errorf("not litert messages: %w", d.r.Errorf("want a messages array"))
	}
	if err == nil {
		err = d.r.ExpectEnd()
	}
	if err != nil {
		return nil, d.warns, err
	}
	return d.h, d.warns, opts.Check(d.warns)
}

type decoder struct {
	r     *jsonx.Reader
	h     convo.History
	warns []provider.Warning
	calls wire.Calls // of the last assistant message
	w     wireMsg    // reused for every message: nothing built keeps it
	sub   jsonx.Reader
}

func (d *decoder) messages() error {
	d.h = convo.History{}
	w := &d.w
	err := d.r.ReadArray(func(i int) error {
		w.reset()
		if err := readMessage(d.r, w); err != nil {
			return convo.ErrorAt(err, index("", i))
		}
		m, err := d.message(i, w)
		if err != nil {
			return convo.ErrorAt(err, index("", i))
		}
		d.h = append(d.h, m)
		return nil
	})
	return convo.ErrorAt(err, "messages")
}

// roleOf maps a LiteRT-LM role to its convo role.
func roleOf(s string) convo.Role {
	switch s {
	case "system":
		return convo.RoleSystem
	case "user":
		return convo.RoleUser
	case "assistant", "model":
		return convo.RoleAssistant
	case "tool":
		return convo.RoleTool
	}
	return ""
}

func (d *decoder) message(i int, w *wireMsg) (convo.Message, error) {
	if !w.hasRole {
		return convo.Message{}, errors.New("missing role")
	}
	role := roleOf(w.role)
	if role == "" {
		return convo.Message{}, convo.ErrorAt(fmt.Errorf("unknown role %q (want system, user, assistant, model or tool)", w.role), "role")
	}
	if role != convo.RoleTool {
		d.calls.Reset()
	}
	m, err := messageOf(i, w, role, d.result)
	if err != nil {
		return m, err
	}
	for _, p := range m.Parts {
		if p.Type == convo.TypeToolCall {
			d.calls.Add(p.ID, p.Name, false)
		}
	}
	return m, nil
}

// resultFunc builds the tool results of a tool message's content.
type resultFunc func(i int, w *wireMsg) ([]convo.Part, error)

// messageOf builds the convo message of w, message i of its conversation;
// results pairs tool results (nil: a tool message is an error).
func messageOf(i int, w *wireMsg, role convo.Role, results resultFunc) (convo.Message, error) {
	m := convo.Message{Role: role}
	var n wire.Members
	if w.role == "model" {
		n = append(n, wire.Member{Key: "role", Val: []byte(`"model"`)})
	}
	switch w.form {
	case formString:
		n = append(n, wire.Member{Key: markContent, Val: []byte(`"string"`)})
	case formObject:
		n = append(n, wire.Member{Key: markContent, Val: []byte(`"object"`)})
	}
	if w.single {
		n = append(n, wire.Member{Key: markSingle, Val: []byte("true")})
	}
	var channels wire.Members
	switch role {
	case convo.RoleAssistant:
		var err error
		if m.Parts, channels, err = assistantParts(i, w); err != nil {
			return m, err
		}
	case convo.RoleTool:
		if results == nil {
			return m, errors.New("a tool message is not a reply")
		}
		parts, err := results(i, w)
		if err != nil {
			return m, err
		}
		m.Parts = parts
		channels = w.allChannels()
	default:
		m.Parts = make([]convo.Part, 0, len(w.parts))
		for k := range w.parts {
			part, err := contentPart(&w.parts[k])
			if err != nil {
				return m, convo.ErrorAt(err, index("content", k))
			}
			m.Parts = append(m.Parts, part)
		}
		channels = w.allChannels()
	}
	if len(channels) > 0 {
		n = append(n, wire.Member{Key: "channels", Val: channels.Object()})
	}
	if role != convo.RoleAssistant && w.hasCalls {
		raw, err := jsonx.Compact(w.callsRaw, 0)
		if err != nil {
			return m, convo.ErrorAt(err, "tool_calls")
		}
		n = append(n, wire.Member{Key: "tool_calls", Val: raw})
	}
	if !w.single || role != convo.RoleAssistant {
		// Kept as they were: members of a message that is not a call, or
		// a call in a message that cannot make one.
		if w.typ != nil {
			n = append(n, wire.Member{Key: "type", Val: w.typ})
		}
		if w.function != nil {
			n = append(n, wire.Member{Key: "function", Val: w.function})
		}
		if w.single && w.calls[0].hasID {
			n = append(n, wire.Member{Key: "id", Val: jsonx.AppendString(nil, w.calls[0].id)})
		}
	}
	m.Native = append(n, w.extra...).Native(ProviderID)
	return m, nil
}

// assistantParts builds the parts of assistant message w, message i of
// its conversation: its thought, its content with the calls in it, then
// its tool calls; channels are the channels kept native.
func assistantParts(i int, w *wireMsg) (parts []convo.Part, channels wire.Members, err error) {
	parts = make([]convo.Part, 0, len(w.parts)+len(w.calls)+1)
	channels = w.channels
	if len(w.thought) > 0 {
		parts = append(parts, reasoningPart(string(w.thought), ""))
	} else if w.hasThought {
		channels = append(wire.Members{{Key: thought, Val: []byte(`""`)}}, channels...)
	}
	calls := 0
	for k := range w.parts {
		p := &w.parts[k]
		if p.kind == kindCall {
			part := callPart(&p.call, i, calls)
			part.Native = part.Native.With(ProviderID, markInContent, []byte("true"))
			parts = append(parts, part)
			calls++
			continue
		}
		part, err := contentPart(p)
		if err != nil {
			return parts, channels, convo.ErrorAt(err, index("content", k))
		}
		parts = append(parts, part)
	}
	for j := range w.calls {
		parts = append(parts, callPart(&w.calls[j], i, calls))
		calls++
	}
	return parts, channels, nil
}

// allChannels returns every channel of w, the thought channel first.
func (w *wireMsg) allChannels() wire.Members {
	if !w.hasThought {
		return w.channels
	}
	return append(wire.Members{{Key: thought, Val: jsonx.AppendString(nil, string(w.thought))}}, w.channels...)
}

// unquote reads the JSON string raw with r, or a new reader when r is nil.
func unquote(raw []byte, r *jsonx.Reader) (string, error) {
	if r == nil {
		r = jsonx.NewReader(raw, 0)
	} else {
		r.Reset(raw, 0)
	}
	return r.ReadString()
}

// reasoningPart returns the plain reasoning part of a "thought" channel.
func reasoningPart(text, model string) convo.Part {
	return convo.Part{Type: convo.TypeReasoning, Text: text, Provider: ProviderID, Model: model}
}

// callPart returns the tool_call part of c, call j of message i.
func callPart(c *wireCall, i, j int) convo.Part {
	p := convo.Part{Type: convo.TypeToolCall, ID: c.id, Name: c.name, Args: c.args}
	if c.isStr {
		p.ArgsRaw = c.argsStr
	}
	var n wire.Members
	if !c.hasID {
		p.ID = provider.SynthID(i, j, c.name)
		n = append(n, wire.Member{Key: "id", Val: wire.Null})
	}
	switch {
	case !c.hasType:
		n = append(n, wire.Member{Key: "type", Val: wire.Null})
	case c.typ != nil:
		n = append(n, wire.Member{Key: "type", Val: c.typ})
	}
	if len(c.fn) > 0 {
		n = append(n, wire.Member{Key: "function", Val: c.fn.Object()})
	}
	p.Native = append(n, c.extra...).Native(ProviderID)
	return p
}

// contentPart returns the convo part of a content part outside a tool
// result: text, image, audio, or an opaque part for the rest.
func contentPart(p *wirePart) (convo.Part, error) {
	var out convo.Part
	switch p.kind {
	case kindText:
		out = convo.Text(string(p.text))
	case kindImage, kindAudio:
		out.Type = convo.TypeImage
		if p.kind == kindAudio {
			out.Type = convo.TypeAudio
		}
		if p.hasPath {
			out.URL = fileURL(p.path)
			out.MediaType = typeByExt(p.path)
		} else {
			out.Data = p.blob
			out.MediaType = sniff(p.blob)
		}
	default:
		return opaquePart(p)
	}
	out.Native = p.extra.Native(ProviderID)
	return out, nil
}

// opaquePart keeps a part convo has no type for (or no place for, like a
// tool response outside a tool message), for LiteRT-LM only.
func opaquePart(p *wirePart) (convo.Part, error) {
	raw, err := jsonx.Compact(p.raw, 0)
	if err != nil {
		return convo.Part{}, err
	}
	t := p.typ
	if !p.hasType {
		t = "untyped"
	}
	return provider.OpaquePart(ProviderID, t, raw), nil
}

// result builds the tool results of a tool message's content and pairs
// them with the calls of the assistant message before it.
func (d *decoder) result(i int, w *wireMsg) ([]convo.Part, error) {
	var out []convo.Part
	after := make([]int, len(w.parts)) // parts that followed each response part
	for k := range w.parts {
		p := &w.parts[k]
		switch p.kind {
		case kindFuncResp, kindToolResp, kindBareResp:
			r, err := responsePart(p, &d.sub)
			if err != nil {
				return nil, convo.ErrorAt(err, index("content", k))
			}
			d.pair(i, &r)
			out = append(out, r)
			continue
		}
		var part convo.Part
		var err error
		if p.kind == kindCall {
			part, err = opaquePart(p)
		} else {
			part, err = contentPart(p)
		}
		if err != nil {
			return nil, convo.ErrorAt(err, index("content", k))
		}
		if len(out) == 0 {
			// Plain parts before any response make one result of their own.
			r := convo.Part{Type: convo.TypeToolResult, Native: wire.Members{{Key: markForm, Val: []byte(`"plain"`)}}.Native(ProviderID)}
			if part.Type == convo.TypeText && strings.HasPrefix(part.Text, errorPrefix) {
				r.Error = true
				part.Text = part.Text[len(errorPrefix):]
			}
			r.Parts = []convo.Part{part}
			d.pair(i, &r)
			out = append(out, r)
			continue
		}
		if isPlain(&out[len(out)-1]) {
			out[len(out)-1].Parts = append(out[len(out)-1].Parts, part)
			continue
		}
		out[len(out)-1].Parts = append(out[len(out)-1].Parts, part)
		after[len(out)-1]++
	}
	for k, n := range after[:len(out)] {
		if n > 0 && !isPlain(&out[k]) {
			out[k].Native = out[k].Native.With(ProviderID, markAfter, strconv.AppendInt(nil, int64(n), 10))
		}
	}
	return out, nil
}

func isPlain(r *convo.Part) bool {
	return r.Native != nil && strings.Contains(string(r.Native[ProviderID]), `"`+markForm+`":"plain"`)
}

// responsePart returns the tool_result of a response part, before pairing;
// rd is a reader it may use.
func responsePart(p *wirePart, rd *jsonx.Reader) (convo.Part, error) {
	r := convo.Part{Type: convo.TypeToolResult, ID: p.id, Name: p.name}
	var n wire.Members
	switch p.kind {
	case kindFuncResp:
		n = append(n, wire.Member{Key: "type", Val: []byte(`"function_response"`)})
		s := p.respStr
		if strings.HasPrefix(s, errorPrefix) {
			r.Error = true
			s = s[len(errorPrefix):]
		}
		if s != "" {
			r.Parts = []convo.Part{convo.Text(s)}
		}
	case kindToolResp, kindBareResp:
		if p.kind == kindBareResp {
			n = append(n, wire.Member{Key: "type", Val: wire.Null})
		}
		s, v, isStr := p.respStr, p.response, p.isStr
		if inner, ok := errorValue(v, rd); ok {
			r.Error = true
			v = inner
			if isStr = v[0] == '"'; isStr {
				var err error
				if s, err = unquote(v, rd); err != nil {
					return r, convo.ErrorAt(err, "response.error")
				}
			}
		}
		switch {
		case !isStr:
			r.Parts = []convo.Part{convo.JSON(v)}
		case s != "":
			r.Parts = []convo.Part{convo.Text(s)}
		}
	}
	if !p.hasID || p.id == "" {
		n = append(n, wire.Member{Key: "id", Val: wire.Null})
	}
	if !p.hasName {
		n = append(n, wire.Member{Key: "name", Val: wire.Null})
	}
	r.Native = append(n, p.extra...).Native(ProviderID)
	return r, nil
}

// errorValue returns the value of v when v is an object whose only member
// is "error": the convention for a failed result. r is a reader it may
// use, or nil.
func errorValue(v []byte, r *jsonx.Reader) ([]byte, bool) {
	if len(v) == 0 || v[0] != '{' {
		return nil, false
	}
	var inner []byte
	n := 0
	if r == nil {
		r = jsonx.NewReader(v, 0)
	} else {
		r.Reset(v, 0)
	}
	err := r.ReadObject(func(key []byte) error {
		n++
		if string(key) != "error" {
			return r.Skip()
		}
		var err error
		inner, err = r.ReadRaw()
		return err
	})
	return inner, err == nil && n == 1 && inner != nil
}

// pair gives result r, of message i, the id and name it lacks from the
// call it answers: the call with its id, else the first unanswered call of
// its name, else the first unanswered call.
func (d *decoder) pair(i int, r *convo.Part) {
	if id, name, ok := d.calls.Answer(r.ID, r.Name); ok {
		r.ID, r.Name = cmp.Or(r.ID, id), cmp.Or(r.Name, name)
		return
	}
	if r.ID == "" {
		d.warns = append(d.warns, provider.Warnf(msgPath(i), "tool result (%s) answers no call of the assistant message before it", orNone(r.Name)))
	}
}

func orNone(s string) string {
	if s == "" {
		return "no name"
	}
	return s
}
