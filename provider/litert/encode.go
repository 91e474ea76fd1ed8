package litert

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// Encode returns the bare LiteRT-LM messages array for h, after the shared
// conversion rules of provider.Prepare. The bytes depend only on h and
// opts.
func (conversation) Encode(h convo.History, opts provider.Options) ([]byte, []provider.Warning, error) {
	return wire.Encode(nil, h, target, opts, warnings(h, opts), encodePrepared)
}

// encodePrepared maps a history provider.PrepareIndexed has made ready for
// LiteRT-LM; from maps its messages to the caller's, for error paths.
func encodePrepared(dst []byte, ph convo.History, from []int) ([]byte, error) {
	n := 2
	for k := range ph {
		n += ph[k].EstimatedBytes()
	}
	e := encoder{buf: slices.Grow(dst, n)}
	e.buf = append(e.buf, '[')
	for k := range ph {
		if k > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.message(&ph[k]); err != nil {
			return nil, convo.ErrorAt(err, wire.PlaceOf(from, k))
		}
	}
	return append(e.buf, ']'), nil
}

type encoder struct {
	buf     []byte
	r       jsonx.Reader
	scratch []byte
	pieces  int
	// called are the last assistant message's calls: a result without a
	// name of its own takes its call's, and a result answering a call that
	// had no id on the wire sends no id either, so a decoded reply
	// goes back as LiteRT-LM wrote it.
	called wire.Calls
}

var errUTF8 = errors.New("invalid UTF-8")

func (e *encoder) str(s string) error {
	var ok bool
	if e.buf, ok = jsonx.AppendStringChecked(e.buf, s); !ok {
		return errUTF8
	}
	return nil
}

func (e *encoder) key(k string) {
	e.buf = jsonx.AppendKey(e.buf, k)
}

// extras writes the wire members of ms, skipping markers and the keys in
// skip.
func (e *encoder) extras(ms wire.Members, skip ...string) {
	for _, m := range ms {
		key, ok := wireKey(m.Key)
		if !ok || slices.Contains(skip, m.Key) {
			continue
		}
		if e.buf[len(e.buf)-1] != '{' {
			e.buf = append(e.buf, ',')
		}
		e.buf = jsonx.AppendString(e.buf, key)
		e.buf = append(e.buf, ':')
		e.buf = append(e.buf, m.Val...)
	}
}

// handled are the message members written from Native by their own code.
var handled = []string{"role", "channels"}

func (e *encoder) message(m *convo.Message) error {
	nat, err := wire.ReadNative(m.Native, ProviderID, &e.r)
	if err != nil {
		return err
	}
	role := string(m.Role)
	if m.Role != convo.RoleTool {
		e.called.Reset()
	}
	if m.Role == convo.RoleAssistant {
		if v, _ := nat.Get("role"); string(v) == `"model"` {
			role = "model"
		}
	}
	e.buf = append(e.buf, `{"role":`...)
	e.buf = jsonx.AppendString(e.buf, role)
	var wbuf [16]string
	written := wbuf[:0]
	if n, text := e.count(m); n > 0 {
		e.key("content")
		form := string(nat.Value(markContent))
		isString, isObject := form == `"string"`, form == `"object"`
		switch {
		case isString && n == 1 && text != nil:
			if err := e.str(text.Text); err != nil {
				return convo.ErrorAt(err, "content")
			}
		case isObject && n == 1:
			if err := e.content(m); err != nil {
				return err
			}
		default:
			e.buf = append(e.buf, '[')
			if err := e.content(m); err != nil {
				return err
			}
			e.buf = append(e.buf, ']')
		}
		written = append(written, "content")
	}
	if m.Role == convo.RoleAssistant {
		single := string(nat.Value(markSingle)) == "true"
		keys, err := e.calls(m.Parts, single)
		if err != nil {
			return err
		}
		written = append(written, keys...)
	}
	if err := e.channels(m, nat); err != nil {
		return err
	}
	e.extras(nat, append(written, handled...)...)
	e.buf = append(e.buf, '}')
	return nil
}

// inContent reports whether a tool call was a content part on the wire.
func (e *encoder) inContent(p *convo.Part) bool {
	if p.Type != convo.TypeToolCall || p.Native[ProviderID] == nil {
		return false
	}
	cn, err := wire.ReadNative(p.Native, ProviderID, &e.r)
	return err == nil && string(cn.Value(markInContent)) == "true"
}

// count returns how many content parts m has on the wire, and its only
// part when that is a text the string form can carry.
func (e *encoder) count(m *convo.Message) (int, *convo.Part) {
	n := 0
	var text *convo.Part
	for j := range m.Parts {
		p := &m.Parts[j]
		switch {
		case m.Role == convo.RoleTool:
			if p.Type != convo.TypeToolResult {
				continue
			}
			pn, _ := wire.ReadNative(p.Native, ProviderID, &e.r)
			if string(pn.Value(markForm)) == `"plain"` {
				n += len(p.Parts)
				if len(p.Parts) == 1 && p.Parts[0].Type == convo.TypeText && p.Parts[0].Native == nil && !p.Error {
					text = &p.Parts[0]
				}
				continue
			}
			body, _ := split(p, pn)
			n += 1 + len(p.Parts) - body
		case p.Type == convo.TypeText:
			n++
			if p.Native == nil {
				text = p
			}
		case p.Type == convo.TypeToolCall:
			if e.inContent(p) {
				n++
			}
		case p.Type == convo.TypeReasoning, p.Type == convo.TypeToolResult:
		default:
			n++
		}
	}
	if n != 1 {
		text = nil
	}
	return n, text
}

// isBody reports whether a tool result part goes into the response value
// (text and json) rather than after it (media, opaque parts).
func isBody(p *convo.Part) bool {
	return p.Raw == nil && (p.Type == convo.TypeText || p.Type == convo.TypeJSON || p.Type == convo.TypeRefusal)
}

// split orders the parts of a typed tool result: the body parts that make
// its response value first, then the parts sent after the response part.
// It returns how many parts form the body, and the parts in that order
// (p.Parts itself when the order is unchanged). A result read from
// LiteRT-LM says how many parts followed its response; otherwise text and
// json are the body and media and opaque parts follow.
func split(p *convo.Part, pn wire.Members) (int, []convo.Part) {
	if v, ok := pn.Get(markAfter); ok {
		n, err := strconv.Atoi(string(v))
		if err == nil && n >= 0 && n <= len(p.Parts) {
			return len(p.Parts) - n, p.Parts
		}
	}
	body, ordered := 0, true
	for k := range p.Parts {
		if isBody(&p.Parts[k]) {
			if body != k {
				ordered = false
			}
			body++
		}
	}
	if ordered {
		return body, p.Parts
	}
	out := make([]convo.Part, 0, len(p.Parts))
	for k := range p.Parts {
		if isBody(&p.Parts[k]) {
			out = append(out, p.Parts[k])
		}
	}
	for k := range p.Parts {
		if !isBody(&p.Parts[k]) {
			out = append(out, p.Parts[k])
		}
	}
	return body, out
}

// content writes the content parts of m, comma-separated.
func (e *encoder) content(m *convo.Message) error {
	first := true
	sep := func() {
		if !first {
			e.buf = append(e.buf, ',')
		}
		first = false
	}
	for j := range m.Parts {
		p := &m.Parts[j]
		var err error
		switch {
		case m.Role == convo.RoleTool:
			if p.Type == convo.TypeToolResult {
				err = e.result(p, sep)
			}
		case p.Type == convo.TypeReasoning, p.Type == convo.TypeToolResult:
		case p.Type == convo.TypeToolCall:
			if e.inContent(p) {
				sep()
				err = e.call(p)
			}
		default:
			sep()
			err = e.part(p)
		}
		if err != nil {
			return convo.ErrorAt(err, index("parts", j))
		}
	}
	return nil
}

// part writes one content part: text, media or an opaque LiteRT-LM part.
func (e *encoder) part(p *convo.Part) error {
	if p.Raw != nil {
		block, ok := provider.OpaqueBlock(ProviderID, *p)
		if !ok {
			return errors.New("opaque part of another provider") // Prepare leaves these out
		}
		e.buf = append(e.buf, block...)
		return nil
	}
	pn, err := wire.ReadNative(p.Native, ProviderID, &e.r)
	if err != nil {
		return err
	}
	switch p.Type {
	case convo.TypeText, convo.TypeRefusal, convo.TypeJSON:
		text, err := e.text(p)
		if err != nil {
			return err
		}
		e.buf = append(e.buf, `{"type":"text","text":`...)
		if err := e.str(text); err != nil {
			return convo.ErrorAt(err, "text")
		}
		e.extras(pn, "type", "text")
	case convo.TypeImage, convo.TypeAudio:
		e.buf = append(e.buf, `{"type":`...)
		e.buf = jsonx.AppendString(e.buf, string(p.Type))
		src := "blob"
		if path, ok := pathOf(p.URL); ok {
			src = "path"
			e.key("path")
			if err := e.str(path); err != nil {
				return convo.ErrorAt(err, "url")
			}
		} else {
			// Data is standard base64 (convo checks it on read).
			e.key("blob")
			e.buf = append(e.buf, '"')
			e.buf = append(e.buf, p.Data...)
			e.buf = append(e.buf, '"')
		}
		e.extras(pn, "type", src)
	default:
		return errors.New("no LiteRT-LM content part for " + string(p.Type))
	}
	e.buf = append(e.buf, '}')
	return nil
}

// text returns the text a text-like part is sent as: json parts as
// compact JSON.
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

// calls writes the tool calls of an assistant message that were not
// content parts: "tool_calls", or the message's own "type", "function" and
// "id" when it was a single call. It returns the keys it wrote.
func (e *encoder) calls(ps []convo.Part, single bool) ([]string, error) {
	var calls []int
	for j := range ps {
		if ps[j].Type == convo.TypeToolCall && !e.inContent(&ps[j]) {
			calls = append(calls, j)
		}
	}
	if len(calls) == 0 {
		return nil, nil
	}
	if single && len(calls) == 1 {
		p := &ps[calls[0]]
		cn, err := wire.ReadNative(p.Native, ProviderID, &e.r)
		if err != nil {
			return nil, convo.ErrorAt(err, index("parts", calls[0]))
		}
		e.buf = append(e.buf, `,"type":"function"`...)
		if err := e.function(p, cn); err != nil {
			return nil, convo.ErrorAt(err, index("parts", calls[0]))
		}
		if err := e.callID(p, cn); err != nil {
			return nil, convo.ErrorAt(err, index("parts", calls[0]))
		}
		return singleKeys, nil
	}
	e.buf = append(e.buf, `,"tool_calls":[`...)
	for k, j := range calls {
		if k > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.call(&ps[j]); err != nil {
			return nil, convo.ErrorAt(err, index("parts", j))
		}
	}
	e.buf = append(e.buf, ']')
	return callsKeys, nil
}

var (
	singleKeys = []string{"type", "function", "id"}
	callsKeys  = []string{"tool_calls"}
)

// call writes one tool call object.
func (e *encoder) call(p *convo.Part) error {
	cn, err := wire.ReadNative(p.Native, ProviderID, &e.r)
	if err != nil {
		return err
	}
	e.buf = append(e.buf, '{')
	switch v, ok := cn.Get("type"); {
	case !ok:
		e.buf = append(e.buf, `"type":"function"`...)
	case string(v) != "null":
		e.buf = append(e.buf, `"type":`...)
		e.buf = append(e.buf, v...)
	}
	if err := e.function(p, cn); err != nil {
		return err
	}
	if err := e.callID(p, cn); err != nil {
		return err
	}
	e.extras(cn, "type", "function", "id")
	e.buf = append(e.buf, '}')
	return nil
}

// function writes "function":{"name","arguments"} of a call.
func (e *encoder) function(p *convo.Part, cn wire.Members) error {
	var fn wire.Members
	if v, ok := cn.Get("function"); ok && len(v) > 0 && v[0] == '{' {
		var err error
		if fn, err = wire.ReadMembers(v, ProviderID, &e.r); err != nil {
			return err
		}
	}
	e.key("function")
	e.buf = append(e.buf, `{"name":`...)
	if err := e.str(p.Name); err != nil {
		return convo.ErrorAt(err, "name")
	}
	switch {
	case p.ArgsRaw != "":
		// Malformed arguments travel as the string the model wrote:
		// LiteRT-LM takes any JSON value there.
		e.key("arguments")
		if err := e.str(p.ArgsRaw); err != nil {
			return convo.ErrorAt(err, "args_raw")
		}
	case p.Args != nil:
		e.key("arguments")
		var err error
		if e.buf, err = wire.AppendValue(&e.r, e.buf, p.Args); err != nil {
			return convo.ErrorAt(err, "args")
		}
	}
	e.extras(fn, "name", "arguments")
	e.buf = append(e.buf, '}')
	return nil
}

func (e *encoder) callID(p *convo.Part, cn wire.Members) error {
	e.called.Add(p.ID, p.Name, cn.Absent("id"))
	if cn.Absent("id") || p.ID == "" {
		return nil
	}
	e.key("id")
	return convo.ErrorAt(e.str(p.ID), "id")
}

// result writes the content parts of one tool result: its response part
// and then its media, or its plain parts.
func (e *encoder) result(p *convo.Part, sep func()) error {
	pn, err := wire.ReadNative(p.Native, ProviderID, &e.r)
	if err != nil {
		return err
	}
	if string(pn.Value(markForm)) == `"plain"` {
		for k := range p.Parts {
			q := p.Parts[k]
			if k == 0 && p.Error && q.Type == convo.TypeText {
				q.Text = errorPrefix + q.Text
			}
			sep()
			if err := e.part(&q); err != nil {
				return convo.ErrorAt(err, index("parts", k))
			}
		}
		return nil
	}
	sep()
	typ, _ := pn.Get("type")
	funcResp := string(typ) == `"function_response"`
	e.buf = append(e.buf, '{')
	switch {
	case typ == nil:
		e.buf = append(e.buf, `"type":"tool_response"`...)
	case string(typ) != "null":
		e.buf = append(e.buf, `"type":`...)
		e.buf = append(e.buf, typ...)
	}
	// A result from a format without names (OpenAI's) takes its call's.
	if name := cmp.Or(p.Name, e.called.Name(p.ID)); !pn.Absent("name") && name != "" {
		e.key("name")
		if err := e.str(name); err != nil {
			return convo.ErrorAt(err, "name")
		}
	}
	body, parts := split(p, pn)
	e.key("response")
	if err := e.response(parts[:body], p.Error, funcResp); err != nil {
		return err
	}
	if p.ID != "" && !pn.Absent("id") && !e.called.Synthetic(p.ID) {
		e.key("id")
		if err := e.str(p.ID); err != nil {
			return convo.ErrorAt(err, "id")
		}
	}
	e.extras(pn, "type", "name", "response", "id")
	e.buf = append(e.buf, '}')
	for k := body; k < len(parts); k++ {
		sep()
		if err := e.part(&parts[k]); err != nil {
			return convo.ErrorAt(err, index("parts", k))
		}
	}
	return nil
}

// response writes a result's response value from its body parts: a string
// for function_response, else the only json part's value or the text; a
// failure is {"error": value}, or for a string response the "Error: "
// prefix.
func (e *encoder) response(body []convo.Part, failed, funcResp bool) error {
	json := -1
	for k := range body {
		if body[k].Type == convo.TypeJSON {
			json = k
		}
	}
	wrap := failed && !funcResp
	if wrap {
		e.buf = append(e.buf, `{"error":`...)
	}
	if !funcResp && len(body) == 1 && json == 0 {
		var err error
		if e.buf, err = wire.AppendValue(&e.r, e.buf, body[0].Value); err != nil {
			return convo.ErrorAt(err, index("parts", json)+".value")
		}
	} else {
		prefix := ""
		if failed && funcResp {
			prefix = errorPrefix
		}
		if err := e.joined(body, prefix); err != nil {
			return err
		}
	}
	if wrap {
		e.buf = append(e.buf, '}')
	}
	return nil
}

// joined writes one JSON string: prefix, then the text of the text-like
// parts of ps joined by newlines.
func (e *encoder) joined(ps []convo.Part, prefix string) error {
	e.buf = append(e.buf, '"')
	e.pieces = 0
	if prefix != "" {
		e.piece(prefix)
		e.pieces = 0 // the first text follows the prefix directly
	}
	for k := range ps {
		if !isBody(&ps[k]) {
			continue
		}
		s, err := e.text(&ps[k])
		if err != nil {
			return convo.ErrorAt(err, index("parts", k))
		}
		if !e.piece(s) {
			return convo.ErrorAt(errUTF8, index("parts", k))
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

// channels writes "channels": the reasoning of an assistant message as the
// thought channel, and the channels kept in Native.
func (e *encoder) channels(m *convo.Message, nat wire.Members) error {
	var kept wire.Members
	if v, ok := nat.Get("channels"); ok && len(v) > 0 && v[0] == '{' {
		var err error
		if kept, err = wire.ReadMembers(v, ProviderID, &e.r); err != nil {
			return err
		}
	}
	first := true
	open := func() {
		if first {
			e.buf = append(e.buf, `,"channels":{`...)
			first = false
		} else {
			e.buf = append(e.buf, ',')
		}
	}
	wroteThought := false
	if m.Role == convo.RoleAssistant {
		for j := range m.Parts {
			p := &m.Parts[j]
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
			if !wroteThought {
				open()
				e.buf = append(e.buf, `"thought":"`...)
				e.pieces = 0
				wroteThought = true
			}
			if !e.piece(text) {
				return convo.ErrorAt(errUTF8, index("parts", j))
			}
		}
		if wroteThought {
			e.buf = append(e.buf, '"')
		}
	}
	for _, c := range kept {
		if c.Key == thought && wroteThought {
			continue
		}
		open()
		e.buf = jsonx.AppendString(e.buf, c.Key)
		e.buf = append(e.buf, ':')
		e.buf = append(e.buf, c.Val...)
	}
	if !first {
		e.buf = append(e.buf, '}')
	}
	return nil
}
