package ollama

import (
	"cmp"
	"errors"
	"slices"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// Encode returns {"messages":[…]} for an Ollama /api/chat request, after the
// shared conversion rules of provider.Prepare. The bytes depend only on h
// and opts.
func (chat) Encode(h convo.History, opts provider.Options) ([]byte, []provider.Warning, error) {
	return appendConv(nil, h, opts)
}

// appendConv is Encode appending to dst (see wire.Begin).
func appendConv(dst []byte, h convo.History, opts provider.Options) ([]byte, []provider.Warning, error) {
	return wire.Encode(dst, h, target, opts, warnings(h, opts), encodePrepared)
}

// encodePrepared maps a history provider.PrepareIndexed has made ready for
// Ollama; from maps its messages to the caller's, for error paths.
func encodePrepared(dst []byte, ph convo.History, from []int) ([]byte, error) {
	e := encoder{buf: wire.Begin(dst, estimate(ph))}
	e.buf = append(jsonx.AppendKey(e.buf, "messages"), '[')
	for k := range ph {
		if err := e.message(&ph[k]); err != nil {
			return nil, convo.ErrorAt(err, wire.PlaceOf(from, k))
		}
	}
	return append(e.buf, "]}"...), nil
}

func estimate(h convo.History) int {
	n := 16
	for i := range h {
		n += h[i].EstimatedBytes()
	}
	return n
}

// replyKeys are the reply members a decoded reply keeps in Native; they are
// not message members, so they are not sent back in a request. Only
// messages that came from an Ollama reply (Origin says so) have them: a
// request message's own member of the same name is sent back.
var replyKeys = map[string]bool{
	"model": true, "created_at": true, "done": true, "done_reason": true,
	"total_duration": true, "load_duration": true, "prompt_eval_count": true,
	"prompt_eval_duration": true, "eval_count": true, "eval_duration": true,
	"logprobs": true, "remote_model": true, "remote_host": true, "_debug_info": true,
}

type encoder struct {
	buf     []byte
	r       jsonx.Reader
	scratch []byte
	n       int // messages written
	pieces  int // pieces written into the current joined string
	// called are the last assistant message's calls: a result without a
	// name of its own takes its call's, and a result answering a call that
	// had no id on the wire sends no tool_call_id either, so a decoded reply
	// goes back as Ollama wrote it.
	called wire.Calls
}

// open starts a wire message object with its role.
func (e *encoder) open(role string, nat wire.Members) {
	if e.n > 0 {
		e.buf = append(e.buf, ',')
	}
	e.n++
	e.buf = append(e.buf, `{"role":`...)
	if v, ok := nat.Get("role"); ok && len(v) > 2 && strings.EqualFold(string(v[1:len(v)-1]), role) {
		e.buf = append(e.buf, v...) // the spelling the request had
	} else {
		e.buf = jsonx.AppendString(e.buf, role)
	}
}

// extras writes the members of nat convo has no field for, skipping the
// markers, the reply members of a reply message and the members this
// object already has.
func (e *encoder) extras(nat wire.Members, reply bool, skip ...string) {
	for _, m := range nat {
		if m.Key == "role" || (reply && replyKeys[m.Key]) || (m.Key == "content" && string(m.Val) == "null") {
			continue
		}
		if slices.Contains(skip, m.Key) {
			continue
		}
		if e.buf[len(e.buf)-1] != '{' {
			e.buf = append(e.buf, ',')
		}
		e.buf = jsonx.AppendString(e.buf, m.Key)
		e.buf = append(e.buf, ':')
		e.buf = append(e.buf, m.Val...)
	}
}

func (e *encoder) message(m *convo.Message) error {
	nat, err := wire.ReadNative(m.Native, ProviderID, &e.r)
	if err != nil {
		return err
	}
	if m.Role == convo.RoleTool {
		return e.results(m, nat)
	}
	e.called.Reset()
	e.open(string(m.Role), nat)
	var wbuf [4]string
	written := wbuf[:0]
	if n := countText(m.Parts); n > 0 || !nat.Absent("content") {
		e.buf = append(e.buf, `,"content":`...)
		if err := e.joined(m.Parts, n, ""); err != nil {
			return err
		}
		written = append(written, "content")
	}
	if m.Role == convo.RoleAssistant {
		ok, err := e.thinking(m.Parts)
		if err != nil {
			return err
		}
		if ok {
			written = append(written, "thinking")
		}
	}
	if e.images(m.Parts) {
		written = append(written, "images")
	}
	if m.Role == convo.RoleAssistant {
		ok, err := e.calls(m.Parts)
		if err != nil {
			return err
		}
		if ok {
			written = append(written, "tool_calls")
		}
	}
	e.extras(nat, fromReply(m), written...)
	e.buf = append(e.buf, '}')
	return nil
}

// fromReply reports whether m was decoded from an Ollama reply.
func fromReply(m *convo.Message) bool {
	return m.Origin != nil && m.Origin.Provider == ProviderID
}

// isText reports whether p goes into "content": text, and what Ollama has
// no part for but can read as text.
func isText(p *convo.Part) bool {
	switch p.Type {
	case convo.TypeText, convo.TypeRefusal, convo.TypeJSON:
		return true
	}
	return false
}

func countText(ps []convo.Part) int {
	n := 0
	for i := range ps {
		if isText(&ps[i]) {
			n++
		}
	}
	return n
}

// joined writes one JSON string: prefix, then the text of the n text parts
// of ps joined by newlines.
func (e *encoder) joined(ps []convo.Part, n int, prefix string) error {
	if n == 1 && prefix == "" {
		for i := range ps {
			if isText(&ps[i]) {
				s, err := e.text(&ps[i])
				if err != nil {
					return convo.ErrorAt(err, index("parts", i))
				}
				var ok bool
				if e.buf, ok = jsonx.AppendStringChecked(e.buf, s); !ok {
					return convo.ErrorAt(errors.New("invalid UTF-8 in text"), index("parts", i))
				}
				return nil
			}
		}
	}
	e.buf = append(e.buf, '"')
	e.pieces = 0
	if prefix != "" {
		e.piece(prefix)
		e.pieces = 0 // the first text follows the prefix directly
	}
	for i := range ps {
		if !isText(&ps[i]) {
			continue
		}
		s, err := e.text(&ps[i])
		if err != nil {
			return convo.ErrorAt(err, index("parts", i))
		}
		if !e.piece(s) {
			return convo.ErrorAt(errors.New("invalid UTF-8 in text"), index("parts", i))
		}
	}
	e.buf = append(e.buf, '"')
	return nil
}

// piece appends s escaped, without quotes, after a newline unless it is the
// first piece of the string.
func (e *encoder) piece(s string) bool {
	if e.pieces > 0 {
		e.buf = append(e.buf, '\\', 'n')
	}
	e.pieces++
	var ok bool
	e.buf, ok = wire.AppendEscaped(e.buf, s)
	return ok
}

// text returns the text a text-like part is sent as.
func (e *encoder) text(p *convo.Part) (string, error) {
	if p.Type != convo.TypeJSON {
		return p.Text, nil
	}
	out, err := wire.AppendValue(&e.r, e.scratch[:0], p.Value)
	if err != nil {
		return "", convo.ErrorAt(err, "value")
	}
	e.scratch = out
	return string(out), nil
}

// thinking writes the reasoning parts of an assistant message as one
// "thinking" string and reports whether there was any.
func (e *encoder) thinking(ps []convo.Part) (bool, error) {
	first := true
	for i := range ps {
		p := &ps[i]
		if p.Type != convo.TypeReasoning {
			continue
		}
		text := p.Text
		if text == "" && len(p.Summary) > 0 {
			text = strings.Join(p.Summary, "\n")
		}
		if text == "" {
			continue
		}
		if first {
			e.buf = append(e.buf, `,"thinking":"`...)
			e.pieces = 0
			first = false
		}
		if !e.piece(text) {
			return false, convo.ErrorAt(errors.New("invalid UTF-8 in reasoning"), index("parts", i))
		}
	}
	if !first {
		e.buf = append(e.buf, '"')
	}
	return !first, nil
}

// images writes "images" for the inline images among ps and reports whether
// there were any.
func (e *encoder) images(ps []convo.Part) bool {
	first := true
	for i := range ps {
		p := &ps[i]
		if p.Type != convo.TypeImage || p.Data == "" {
			continue
		}
		if first {
			e.buf = append(e.buf, `,"images":[`...)
			first = false
		} else {
			e.buf = append(e.buf, ',')
		}
		// Data is standard base64 (convo checks it on read): nothing to escape.
		e.buf = append(e.buf, '"')
		e.buf = append(e.buf, p.Data...)
		e.buf = append(e.buf, '"')
	}
	if !first {
		e.buf = append(e.buf, ']')
	}
	return !first
}

// calls writes "tool_calls" and reports whether there were any.
func (e *encoder) calls(ps []convo.Part) (bool, error) {
	first := true
	for i := range ps {
		p := &ps[i]
		if p.Type != convo.TypeToolCall {
			continue
		}
		if first {
			e.buf = append(e.buf, `,"tool_calls":[`...)
			first = false
		} else {
			e.buf = append(e.buf, ',')
		}
		if err := e.call(p); err != nil {
			return false, convo.ErrorAt(err, index("parts", i))
		}
	}
	if !first {
		e.buf = append(e.buf, ']')
	}
	return !first, nil
}

func (e *encoder) call(p *convo.Part) error {
	cn, err := wire.ReadNative(p.Native, ProviderID, &e.r)
	if err != nil {
		return err
	}
	var fn wire.Members
	if v, ok := cn.Get("function"); ok && len(v) > 0 && v[0] == '{' {
		if fn, err = wire.ReadMembers(v, ProviderID, &e.r); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '{')
	e.called.Add(p.ID, p.Name, cn.Absent("id"))
	if p.ID != "" && !cn.Absent("id") {
		var ok bool
		e.buf = jsonx.AppendKey(e.buf, "id")
		if e.buf, ok = jsonx.AppendStringChecked(e.buf, p.ID); !ok {
			return convo.ErrorAt(errors.New("invalid UTF-8"), "id")
		}
	}
	e.buf = jsonx.AppendKey(e.buf, "function")
	e.buf = append(e.buf, '{')
	if v, ok := fn.Get("index"); ok {
		e.buf = jsonx.AppendKey(e.buf, "index")
		e.buf = append(e.buf, v...)
	}
	e.buf = jsonx.AppendKey(e.buf, "name")
	var ok bool
	if e.buf, ok = jsonx.AppendStringChecked(e.buf, p.Name); !ok {
		return convo.ErrorAt(errors.New("invalid UTF-8"), "name")
	}
	if err := e.args(p); err != nil {
		return convo.ErrorAt(err, "args")
	}
	e.extras(fn, false, "index", "name", "arguments")
	e.buf = append(e.buf, '}')
	e.extras(cn, false, "id", "function")
	e.buf = append(e.buf, '}')
	return nil
}

// args writes "arguments": the JSON object of the call; anything that is
// not an object (malformed arguments kept as a raw string, say) is sent as
// {} — warnings has said so.
func (e *encoder) args(p *convo.Part) error {
	if p.Args == nil && p.ArgsRaw == "" {
		return nil
	}
	e.buf = jsonx.AppendKey(e.buf, "arguments")
	if p.ArgsRaw != "" || !isObject(p.Args) {
		e.buf = append(e.buf, "{}"...)
		return nil
	}
	var err error
	e.buf, err = wire.AppendValue(&e.r, e.buf, p.Args)
	return err
}

func isObject(v []byte) bool {
	for _, c := range v {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c == '{'
	}
	return false
}

// results writes one Ollama tool message per tool_result part.
func (e *encoder) results(m *convo.Message, nat wire.Members) error {
	first := true
	for j := range m.Parts {
		p := &m.Parts[j]
		if p.Type != convo.TypeToolResult {
			continue // warnings has said so
		}
		pn, err := wire.ReadNative(p.Native, ProviderID, &e.r)
		if err != nil {
			return convo.ErrorAt(err, index("parts", j))
		}
		e.open("tool", nat)
		prefix := ""
		if p.Error {
			prefix = errorPrefix
		}
		if n := countText(p.Parts); n > 0 || prefix != "" || !nat.Absent("content") {
			e.buf = append(e.buf, `,"content":`...)
			if err := e.joined(p.Parts, n, prefix); err != nil {
				return convo.ErrorAt(err, index("parts", j))
			}
		}
		e.images(p.Parts)
		// A result from a format without names (OpenAI's) takes its call's.
		if name := cmp.Or(p.Name, e.called.Name(p.ID)); name != "" && !pn.Absent("tool_name") {
			var ok bool
			e.buf = jsonx.AppendKey(e.buf, "tool_name")
			if e.buf, ok = jsonx.AppendStringChecked(e.buf, name); !ok {
				return convo.ErrorAt(errors.New("invalid UTF-8"), index("parts", j)+".name")
			}
		}
		if p.ID != "" && !pn.Absent("tool_call_id") && !e.called.Synthetic(p.ID) {
			var ok bool
			e.buf = jsonx.AppendKey(e.buf, "tool_call_id")
			if e.buf, ok = jsonx.AppendStringChecked(e.buf, p.ID); !ok {
				return convo.ErrorAt(errors.New("invalid UTF-8"), index("parts", j)+".id")
			}
		}
		written := []string{"content", "images", "tool_name", "tool_call_id"}
		e.extras(pn, false, written...)
		if first {
			e.extras(nat, fromReply(m), written...)
			first = false
		}
		e.buf = append(e.buf, '}')
	}
	return nil
}
