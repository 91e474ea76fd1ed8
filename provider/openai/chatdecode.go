package openai

import (
	"errors"
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// Decode reads the "messages" of a Chat Completions request body into a
// history. Other members of the body (model, tools, sampling settings) are
// validated as JSON and otherwise ignored.
func (chat) Decode(body []byte, opts provider.Options) (convo.History, []provider.Warning, error) {
	l, err := opts.CheckSize(body, "request body")
	if err != nil {
		return nil, nil, err
	}
	if err := provider.CheckFormat(body, "openai-chat"); err != nil {
		return nil, nil, err
	}
	d := chatDec{r: jsonx.NewReader(body, l.MaxDepth), maxDepth: l.MaxDepth}
	var h convo.History
	seen := false
	err = d.r.ReadObject(func(key []byte) error {
		if string(key) != "messages" {
			return d.r.Skip()
		}
		seen = true
		var err error
		h, err = d.messages()
		return err
	})
	if err == nil {
		err = d.r.ExpectEnd()
	}
	if err != nil {
		return nil, d.warns, err
	}
	if !seen {
		return nil, d.warns, errors.New(`request has no "messages"`)
	}
	return h, d.warns, nil
}

type chatDec struct {
	r        *jsonx.Reader
	maxDepth int
	args     argsParser
	warns    []provider.Warning
	// calls are the tool calls of the latest assistant message, for naming
	// the results that answer them.
	calls wire.Calls
}

func (d *chatDec) messages() (convo.History, error) {
	if d.r.Peek() != jsonx.Array {
		return nil, at(d.r.Errorf("want an array of messages"), "messages")
	}
	// About two messages per kilobyte of request, within reason: a guess
	// that saves most of the copying as the history grows, and a short
	// request (a question, 150 bytes) does not get room for 16 messages
	// of some 250 bytes each.
	h := make(convo.History, 0, min(1+len(d.r.Bytes())/512, 4096))
	err := d.r.ReadArray(func(i int) error {
		m, err := d.message(i)
		if err != nil {
			return at(at(err, index("", i)), "messages")
		}
		h = append(h, m)
		return nil
	})
	return h, err
}

// content kinds, for what a message's "content" member held.
const (
	contentAbsent = iota
	contentString
	contentArray
)

// chatMsg is one wire message while it is read; it becomes a convo message
// once its role is known (the role may come last).
type chatMsg struct {
	role, name, toolCallID    string
	hasRole, hasName, hasCall bool
	kind                      int
	text                      string // string content
	parts                     []convo.Part
	refusal                   *convo.Part
	reasoning                 *convo.Part
	calls                     []convo.Part
	funcCall                  *convo.Part
	nb                        natBuilder
}

func (d *chatDec) message(i int) (convo.Message, error) {
	var w chatMsg
	if d.r.Peek() != jsonx.Object {
		return convo.Message{}, d.r.Errorf("want a message object, got %s", d.r.Peek())
	}
	err := d.r.ReadObject(func(key []byte) error {
		k := key
		switch string(k) {
		case "role":
			s, err := d.r.ReadString()
			w.role, w.hasRole = s, true
			return atKey(err, k)
		case "content":
			return atKey(d.content(&w), k)
		case "name", "tool_call_id", "refusal", "reasoning_content":
			if d.r.Peek() != jsonx.String {
				if d.r.ReadNull() {
					w.nb.addKey(k, []byte("null"))
					return nil
				}
				return atKey(d.r.Errorf("want a string, got %s", d.r.Peek()), k)
			}
			s, err := d.r.ReadString()
			if err != nil {
				return atKey(err, k)
			}
			switch string(k) {
			case "name":
				w.name, w.hasName = s, true
			case "tool_call_id":
				w.toolCallID, w.hasCall = s, true
			case "refusal":
				if s == "" {
					w.nb.addKey(k, []byte(`""`))
					return nil
				}
				w.refusal = &convo.Part{Type: convo.TypeRefusal, Text: s}
			case "reasoning_content":
				if s == "" {
					w.nb.addKey(k, []byte(`""`))
					return nil
				}
				w.reasoning = &convo.Part{Type: convo.TypeReasoning, Text: s, Provider: ProviderID}
			}
			return nil
		case "tool_calls":
			if d.r.ReadNull() {
				w.nb.addKey(k, []byte("null"))
				return nil
			}
			calls, err := d.toolCalls(i)
			if err == nil && len(calls) == 0 {
				w.nb.addKey(k, []byte("[]"))
			}
			w.calls = calls
			return atKey(err, k)
		case "function_call":
			if d.r.ReadNull() {
				w.nb.addKey(k, []byte("null"))
				return nil
			}
			p, err := d.functionCall(i)
			w.funcCall = &p
			return atKey(err, k)
		}
		raw, err := d.r.ReadRaw()
		w.nb.addKey(k, raw)
		return atKey(err, k)
	})
	if err != nil {
		return convo.Message{}, err
	}
	if !w.hasRole {
		return convo.Message{}, errors.New(`message has no "role"`)
	}
	return d.build(&w, i)
}

// build turns a read wire message into a convo message.
func (d *chatDec) build(w *chatMsg, i int) (convo.Message, error) {
	m := convo.Message{}
	role, err := w.roleOf()
	if err != nil {
		return m, err
	}
	m.Role = role
	if m.Role != convo.RoleAssistant {
		if err := w.keepAssistantOnly(); err != nil {
			return m, err
		}
	}
	switch m.Role {
	case convo.RoleAssistant:
		m.Name = w.msgName()
		m.Parts = d.assistantParts(w)
	case convo.RoleTool:
		r, err := d.toolResult(w, i)
		if err != nil {
			return m, err
		}
		m.Parts = []convo.Part{r}
	default:
		m.Name = w.msgName()
		m.Parts = w.contentParts()
		d.calls.Reset()
	}
	m.Native = w.nb.native(true)
	return m, nil
}

// roleOf maps the wire role to a convo role, keeping what the mapping
// cannot say (a developer role, a tool_call_id off a tool message).
func (w *chatMsg) roleOf() (convo.Role, error) {
	switch w.role {
	case "system", "developer", "user", "assistant":
		if w.role == "developer" {
			w.nb.add("role", []byte(`"developer"`))
		}
		if w.hasName && w.name == "" {
			w.nb.add("name", []byte(`""`))
		}
		if w.hasCall {
			w.nb.add("tool_call_id", jsonx.AppendString(nil, w.toolCallID))
		}
		switch w.role {
		case "assistant":
			return convo.RoleAssistant, nil
		case "user":
			return convo.RoleUser, nil
		}
		return convo.RoleSystem, nil
	case "tool", "function":
		return convo.RoleTool, nil
	}
	return "", at(fmt.Errorf("unknown role %q", w.role), "role")
}

// msgName returns the name of a system, user or assistant message.
func (w *chatMsg) msgName() string {
	if w.hasName {
		return w.name
	}
	return ""
}

// keepAssistantOnly keeps, as they came, the members only assistant
// messages carry, and refuses tool calls elsewhere.
func (w *chatMsg) keepAssistantOnly() error {
	if w.refusal != nil {
		w.nb.add("refusal", jsonx.AppendString(nil, w.refusal.Text))
	}
	if w.reasoning != nil {
		w.nb.add("reasoning_content", jsonx.AppendString(nil, w.reasoning.Text))
	}
	if w.calls != nil {
		return at(errors.New("tool calls outside an assistant message"), "tool_calls")
	}
	if w.funcCall != nil {
		return at(errors.New("function call outside an assistant message"), "function_call")
	}
	return nil
}

// assistantParts returns an assistant message's parts in order (reasoning,
// content, refusal, calls) and remembers its calls for the tool results
// that follow.
func (d *chatDec) assistantParts(w *chatMsg) []convo.Part {
	n := len(w.parts) + len(w.calls)
	if w.reasoning != nil {
		n++
	}
	if w.refusal != nil {
		n++
	}
	if w.funcCall != nil {
		n++
	}
	parts := make([]convo.Part, 0, n)
	if w.reasoning != nil {
		parts = append(parts, *w.reasoning)
	}
	if w.kind == contentString {
		if w.text == "" {
			w.nb.add("content", []byte(`""`))
		} else {
			parts = append(parts, convo.Text(w.text))
		}
	}
	parts = append(parts, w.parts...)
	if w.refusal != nil {
		parts = append(parts, *w.refusal)
	}
	parts = append(parts, w.calls...)
	if w.funcCall != nil {
		parts = append(parts, *w.funcCall)
	}
	d.calls.Reset()
	for k := range parts {
		if p := &parts[k]; p.Type == convo.TypeToolCall {
			// The deprecated function_call comes last; it had no id.
			d.calls.Add(p.ID, p.Name, w.funcCall != nil && k == len(parts)-1)
		}
	}
	return parts
}

// toolResult returns the result a tool or function message carries.
func (d *chatDec) toolResult(w *chatMsg, i int) (convo.Part, error) {
	r := convo.Part{Type: convo.TypeToolResult, Parts: w.contentParts()}
	if w.role == "function" {
		// The deprecated function-calling protocol: results answer by
		// name, and the call got a synthesised id.
		w.nb.add("role", []byte(`"function"`))
		if w.hasName {
			r.Name = w.name
		}
		if r.Name != "" {
			r.ID, _, _ = d.calls.Answer("", r.Name)
		}
		if r.ID == "" {
			r.ID = provider.SynthID(i, 0, r.Name)
		}
		if w.hasCall {
			w.nb.add("tool_call_id", jsonx.AppendString(nil, w.toolCallID))
		}
		return r, nil
	}
	if !w.hasCall {
		return r, errors.New(`tool message has no "tool_call_id"`)
	}
	r.ID = w.toolCallID
	if w.hasName {
		// Not in the API's schema, but widely sent: the function
		// name. Kept as it came, and names the result.
		w.nb.add("name", jsonx.AppendString(nil, w.name))
		r.Name = w.name
	}
	_, name, ok := d.calls.Answer(r.ID, "")
	if !ok {
		// A second result for the same call.
		name = d.calls.Name(r.ID)
	}
	if r.Name == "" {
		r.Name = name
	}
	return r, nil
}

// contentParts returns the content of a non-assistant message as parts: a
// string is one text part (an empty one included, so nothing is lost).
func (w *chatMsg) contentParts() []convo.Part {
	switch w.kind {
	case contentString:
		return []convo.Part{convo.Text(w.text)}
	case contentArray:
		return w.parts
	}
	return nil
}

// content reads a message's "content": a string, an array of parts, or null.
func (d *chatDec) content(w *chatMsg) error {
	switch d.r.Peek() {
	case jsonx.Null:
		d.r.ReadNull()
		w.nb.add("content", []byte("null"))
		return nil
	case jsonx.String:
		s, err := d.r.ReadString()
		w.kind, w.text = contentString, s
		return err
	case jsonx.Array:
		w.kind = contentArray
		w.parts = []convo.Part{}
		err := d.r.ReadArray(func(j int) error {
			p, err := d.part()
			if err != nil {
				return atIndex(err, j)
			}
			w.parts = append(w.parts, p)
			return nil
		})
		if err != nil {
			return err
		}
		switch {
		case len(w.parts) == 0:
			w.kind = contentAbsent
			w.parts = nil
			w.nb.add("content", []byte("[]"))
		case len(w.parts) == 1 && w.parts[0].Type == convo.TypeText && w.parts[0].Native == nil && w.parts[0].Cache == nil:
			// An array holding one text part: remember the array form.
			w.parts[0].Native = convo.Native{ProviderID: []byte(`{"api":"chat","type":"text"}`)}
		}
		return nil
	}
	return d.r.Errorf("want a string, an array of parts or null, got %s", d.r.Peek())
}

// chatPart holds the members of one content part while it is read: the
// members come in any order, so each is read by name and interpreted once
// the type is known.
type chatPart struct {
	typ, text, refusal  string
	hasText, hasRefusal bool
	media               convo.Part
	mediaKey            string
	mediaAt, mediaEnd   int
	cache               *convo.Cache
	cacheRaw            []byte
	nb                  natBuilder
}

// part reads one content part.
func (d *chatDec) part() (convo.Part, error) {
	if d.r.Peek() != jsonx.Object {
		return convo.Part{}, d.r.Errorf("want a content part object, got %s", d.r.Peek())
	}
	start := d.r.Offset()
	var w chatPart
	err := d.r.ReadObject(func(key []byte) error { return d.partMember(&w, key) })
	if err != nil {
		return convo.Part{}, err
	}
	var p convo.Part
	switch w.typ {
	case "text":
		p, err = w.textPart()
	case "refusal":
		p, err = w.refusalPart()
	case "image_url", "input_audio", "file":
		p, err = w.mediaPart()
	case "":
		return p, errors.New(`content part has no "type"`)
	default:
		raw, err := jsonx.Compact(d.r.Bytes()[start:d.r.Offset()], 0)
		if err != nil {
			return p, err
		}
		return provider.OpaquePart(ProviderID, "chat."+w.typ, raw), nil
	}
	if err != nil {
		return convo.Part{}, err
	}
	return d.finishPart(&w, p)
}

// partMember reads one member of a content part into w.
func (d *chatDec) partMember(w *chatPart, k []byte) error {
	switch string(k) {
	case "type":
		s, err := d.r.ReadString()
		w.typ = s
		return atKey(err, k)
	case "text", "refusal":
		if d.r.Peek() != jsonx.String {
			break
		}
		s, err := d.r.ReadString()
		if string(k) == "text" {
			w.text, w.hasText = s, true
		} else {
			w.refusal, w.hasRefusal = s, true
		}
		return atKey(err, k)
	case "image_url", "input_audio", "file":
		if d.r.Peek() != jsonx.Object || w.mediaKey != "" {
			break
		}
		w.mediaKey, w.mediaAt = string(k), d.r.Offset()
		var err error
		w.media, err = d.media(w.mediaKey)
		w.mediaEnd = d.r.Offset()
		return atKey(err, k)
	case "prompt_cache_breakpoint":
		c, raw, exact, err := readBreakpoint(d.r)
		if err != nil {
			return atKey(err, k)
		}
		if !exact {
			w.nb.addKey(k, raw)
		}
		w.cache, w.cacheRaw = c, raw
		return nil
	}
	raw, err := d.r.ReadRaw()
	w.nb.addKey(k, raw)
	return atKey(err, k)
}

func (w *chatPart) textPart() (convo.Part, error) {
	if !w.hasText {
		return convo.Part{}, errors.New(`text part has no "text"`)
	}
	return convo.Text(w.text), nil
}

func (w *chatPart) refusalPart() (convo.Part, error) {
	if !w.hasRefusal {
		return convo.Part{}, errors.New(`refusal part has no "refusal"`)
	}
	// A refusal part in the content array, not the message's refusal
	// field.
	w.nb.add("type", []byte(`"refusal"`))
	return convo.Refusal(w.refusal), nil
}

func (w *chatPart) mediaPart() (convo.Part, error) {
	if w.mediaKey != w.typ {
		return convo.Part{}, fmt.Errorf("%s part has no %q object", w.typ, w.typ)
	}
	p := w.media
	w.mediaKey = ""
	if p.Native != nil {
		// media() collected the nested object's own extra members.
		w.nb.add(w.typ, p.Native[ProviderID])
		p.Native = nil
	}
	if p.Extra != nil {
		for _, f := range p.Extra {
			w.nb.add(f.Key, f.Value)
		}
		p.Extra = nil
	}
	return p, nil
}

// finishPart keeps the members read for another part type as they came and
// sets the part's cache breakpoint and native members.
func (d *chatDec) finishPart(w *chatPart, p convo.Part) (convo.Part, error) {
	if w.hasText && w.typ != "text" {
		w.nb.add("text", jsonx.AppendString(nil, w.text))
	}
	if w.hasRefusal && w.typ != "refusal" {
		w.nb.add("refusal", jsonx.AppendString(nil, w.refusal))
	}
	if w.mediaKey != "" {
		// A media object on a part of another type: kept as it came.
		raw, err := jsonx.Compact(d.r.Bytes()[w.mediaAt:w.mediaEnd], 0)
		if err != nil {
			return p, err
		}
		w.nb.add(w.mediaKey, raw)
	}
	cache := w.cache
	if cache != nil && w.typ == "refusal" {
		// Refusal parts take no breakpoint: keep it as it came.
		if string(w.cacheRaw) == `{"mode":"explicit"}` {
			w.nb.add("prompt_cache_breakpoint", w.cacheRaw)
		}
		cache = nil
	}
	p.Cache = cache
	p.Native = w.nb.native(true)
	return p, nil
}

// media reads the nested object of an image_url, input_audio or file part.
// Members convo has no field for come back in the part's Native (as the
// nested object's members) and Extra (as members of the part itself).
func (d *chatDec) media(kind string) (convo.Part, error) {
	var w mediaMembers
	err := d.r.ReadObject(func(key []byte) error { return d.mediaMember(&w, kind, key) })
	if err != nil {
		return convo.Part{}, err
	}
	var p convo.Part
	var top []convo.Field // members of the part itself (markers)
	switch kind {
	case "image_url":
		p, err = w.image()
	case "input_audio":
		p, err = w.audio()
	case "file":
		p, top, err = w.file()
	}
	if err != nil {
		return p, err
	}
	if len(w.nb.buf) > 0 {
		p.Native = convo.Native{ProviderID: append(append([]byte{'{'}, w.nb.buf...), '}')}
	}
	p.Extra = top
	return p, nil
}

// mediaMembers holds the members of a media part's nested object.
type mediaMembers struct {
	url, detail, data, format, fileData, fileID, filename string
	hasURL, hasData, hasFileData, hasFileID               bool
	nb                                                    natBuilder
}

// mediaMember reads member k of the nested object of a kind part into w.
func (d *chatDec) mediaMember(w *mediaMembers, kind string, k []byte) error {
	var dst *string
	var has *bool
	switch kind + "." + string(k) {
	case "image_url.url":
		dst, has = &w.url, &w.hasURL
	case "image_url.detail":
		dst = &w.detail
	case "input_audio.data":
		dst, has = &w.data, &w.hasData
	case "input_audio.format":
		dst = &w.format
	case "file.file_data":
		dst, has = &w.fileData, &w.hasFileData
	case "file.file_id":
		dst, has = &w.fileID, &w.hasFileID
	case "file.filename":
		dst = &w.filename
	}
	if dst == nil || d.r.Peek() != jsonx.String {
		raw, err := d.r.ReadRaw()
		w.nb.addKey(k, raw)
		return atKey(err, k)
	}
	s, err := d.r.ReadString()
	*dst = s
	if has != nil {
		*has = true
	}
	return atKey(err, k)
}

func (w *mediaMembers) image() (convo.Part, error) {
	var p convo.Part
	if !w.hasURL {
		return p, errors.New(`image_url has no "url"`)
	}
	p.Type = convo.TypeImage
	if mt, b64, ok := parseDataURL(w.url); ok {
		p.MediaType, p.Data = mt, b64
	} else {
		p.URL = w.url
	}
	p.Detail = w.detail
	return p, nil
}

func (w *mediaMembers) audio() (convo.Part, error) {
	var p convo.Part
	if !w.hasData {
		return p, errors.New(`input_audio has no "data"`)
	}
	if err := convo.CheckBase64(w.data); err != nil {
		return p, at(err, "data")
	}
	p.Type = convo.TypeAudio
	p.Data = w.data
	p.MediaType = audioMediaType(w.format)
	if audioFormat(p.MediaType) != w.format {
		// A format convo's media type does not map back to by itself.
		w.nb.add("format", jsonx.AppendString(nil, w.format))
	}
	return p, nil
}

// file returns a file part and the markers it needs on the part itself.
func (w *mediaMembers) file() (convo.Part, []convo.Field, error) {
	p := convo.Part{Type: convo.TypeFile, Name: w.filename}
	var top []convo.Field
	switch {
	case w.hasFileID:
		p.FileID = w.fileID
		if w.hasFileData {
			w.nb.add("file_data", jsonx.AppendString(nil, w.fileData))
		}
	case w.hasFileData:
		if mt, b64, ok := parseDataURL(w.fileData); ok {
			p.MediaType, p.Data = mt, b64
		} else if convo.CheckBase64(w.fileData) == nil && w.fileData != "" {
			p.MediaType, p.Data = guessFileType(w.filename), w.fileData
			top = append(top, convo.Field{Key: "data_url", Value: []byte("false")})
		} else {
			return p, nil, at(errors.New("neither a base64 data URL nor base64"), "file_data")
		}
	default:
		return p, nil, errors.New(`file has neither "file_id" nor "file_data"`)
	}
	return p, top, nil
}

// toolCalls reads an assistant message's "tool_calls".
func (d *chatDec) toolCalls(msg int) ([]convo.Part, error) {
	if d.r.Peek() != jsonx.Array {
		return nil, d.r.Errorf("want an array of tool calls, got %s", d.r.Peek())
	}
	calls := []convo.Part{}
	err := d.r.ReadArray(func(j int) error {
		p, err := d.toolCall()
		if err != nil {
			return atIndex(err, j)
		}
		calls = append(calls, p)
		return nil
	})
	return calls, err
}

func (d *chatDec) toolCall() (convo.Part, error) {
	if d.r.Peek() != jsonx.Object {
		return convo.Part{}, d.r.Errorf("want a tool call object, got %s", d.r.Peek())
	}
	start := d.r.Offset()
	p := convo.Part{Type: convo.TypeToolCall}
	var typ, inner string
	var hasID bool
	var fn fnCall
	var nb natBuilder
	err := d.r.ReadObject(func(key []byte) error {
		k := key
		switch string(k) {
		case "id":
			if d.r.Peek() == jsonx.String {
				s, err := d.r.ReadString()
				p.ID, hasID = s, true
				return atKey(err, k)
			}
		case "type":
			if d.r.Peek() == jsonx.String {
				s, err := d.r.ReadString()
				typ = s
				return atKey(err, k)
			}
		case "function", "custom":
			if d.r.Peek() == jsonx.Object && inner == "" {
				inner = string(k)
				return atKey(d.fnObject(&fn, inner), k)
			}
		}
		raw, err := d.r.ReadRaw()
		nb.addKey(k, raw)
		return atKey(err, k)
	})
	if err != nil {
		return p, err
	}
	switch {
	case typ == "" && inner == "function", typ == "function" && inner == "function":
	case typ == "custom" && inner == "custom":
		nb.add("type", []byte(`"custom"`))
	case typ == "":
		return p, errors.New(`tool call has no "type"`)
	default:
		if typ == "function" || typ == "custom" {
			return p, fmt.Errorf("%s tool call has no %q object", typ, typ)
		}
		raw, err := jsonx.Compact(d.r.Bytes()[start:d.r.Offset()], 0)
		if err != nil {
			return p, err
		}
		return provider.OpaquePart(ProviderID, "chat.tool_call."+typ, raw), nil
	}
	if !hasID {
		return p, errors.New(`tool call has no "id"`)
	}
	if !fn.hasName {
		return p, fmt.Errorf("%s has no \"name\"", inner)
	}
	p.Name = fn.name
	if inner == "custom" {
		if !fn.hasArgs {
			return p, errors.New(`custom has no "input"`)
		}
		p.ArgsRaw = decodeStr(fn.args)
	} else {
		if !fn.hasArgs {
			return p, errors.New(`function has no "arguments"`)
		}
		if d.args.parse(&p, fn.args, d.maxDepth) {
			fn.nb.add("arguments", fn.args)
		}
	}
	if len(fn.nb.buf) > 0 {
		nb.add(inner, append(append([]byte{'{'}, fn.nb.buf...), '}'))
	}
	p.Native = nb.native(true)
	return p, nil
}

// fnCall is the inner object of a tool call: function{name, arguments} or
// custom{name, input}, or a deprecated function_call.
type fnCall struct {
	name             string
	args             []byte // the raw JSON string
	hasName, hasArgs bool
	nb               natBuilder
}

func (d *chatDec) fnObject(fn *fnCall, kind string) error {
	argsKey := "arguments"
	if kind == "custom" {
		argsKey = "input"
	}
	return d.r.ReadObject(func(key []byte) error {
		k := key
		if string(k) == "name" && d.r.Peek() == jsonx.String {
			s, err := d.r.ReadString()
			fn.name, fn.hasName = s, true
			return atKey(err, k)
		}
		if string(k) == argsKey && d.r.Peek() == jsonx.String {
			start := d.r.Offset()
			_, err := d.r.ReadStringBytes()
			fn.args, fn.hasArgs = d.r.Bytes()[start:d.r.Offset()], true
			return atKey(err, k)
		}
		raw, err := d.r.ReadRaw()
		fn.nb.addKey(k, raw)
		return atKey(err, k)
	})
}

// functionCall reads the deprecated assistant "function_call". It becomes a
// tool call with a synthesised id, marked so that it is written back as a
// function_call.
func (d *chatDec) functionCall(msg int) (convo.Part, error) {
	if d.r.Peek() != jsonx.Object {
		return convo.Part{}, d.r.Errorf("want an object, got %s", d.r.Peek())
	}
	var fn fnCall
	if err := d.fnObject(&fn, "function"); err != nil {
		return convo.Part{}, err
	}
	if !fn.hasName {
		return convo.Part{}, errors.New(`function_call has no "name"`)
	}
	p := convo.Part{Type: convo.TypeToolCall, Name: fn.name, ID: provider.SynthID(msg, 0, fn.name)}
	if !fn.hasArgs {
		return convo.Part{}, errors.New(`function_call has no "arguments"`)
	}
	if d.args.parse(&p, fn.args, d.maxDepth) {
		fn.nb.add("arguments", fn.args)
	}
	var nb natBuilder
	nb.add("type", []byte(`"function_call"`))
	if len(fn.nb.buf) > 0 {
		nb.add("function_call", append(append([]byte{'{'}, fn.nb.buf...), '}'))
	}
	p.Native = nb.native(true)
	return p, nil
}
