package anthropic

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
)

// Decode reads the conversation fields of a Messages request body
// ("system" and "messages"; every other member is ignored) into a history.
//
// The top-level system prompt becomes one system message. Each wire message
// becomes one convo message, except that a user message holding tool_result
// blocks becomes a tool message with those results followed by a user
// message with the rest, as convo keeps results in tool messages. Thinking
// and redacted_thinking blocks become reasoning parts of provider
// "anthropic" (signature and redacted data kept byte for byte); tool results
// get the name of the call they answer. What convo has no field for is kept
// under Native "anthropic" so Encode writes the same request back.
//
// A malformed body is an error naming the place in the request's terms,
// such as messages[2].content[0].source.
func (messages) Decode(body []byte, opts provider.Options) (convo.History, []provider.Warning, error) {
	lim, err := opts.CheckSize(body, "anthropic request")
	if err != nil {
		return nil, nil, err
	}
	if err := provider.CheckFormat(body, Name); err != nil {
		return nil, nil, err
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	d := reqDecoder{blockReader: blockReader{r: jsonx.NewReader(body, lim.MaxDepth)}}
	if d.r.Peek() != jsonx.Object {
		return nil, nil, fmt.Errorf("anthropic request: %w", d.r.Errorf("want a JSON object"))
	}
	var system *convo.Message
	seen := false
	err = d.r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "system":
			m, err := d.system()
			system = m
			return convo.ErrorAt(err, "system")
		case "messages":
			seen = true
			return convo.ErrorAt(d.messages(), "messages")
		}
		return d.r.Skip()
	})
	if err == nil {
		err = d.r.ExpectEnd()
	}
	if err == nil && !seen {
		err = errors.New(`request has no "messages"`)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("anthropic request: %w", err)
	}
	if system != nil {
		d.h = append(convo.History{*system}, d.h...)
	}
	if d.h == nil {
		d.h = convo.History{}
	}
	return d.h, nil, nil
}

type reqDecoder struct {
	blockReader
	h     convo.History
	calls map[string]string // tool_use id → tool name, to name results
	// prev describes the last wire message, to record where the request
	// kept apart turns the encoder would merge.
	prev wireTurn
}

// system reads the top-level system prompt: a string or text blocks.
func (d *reqDecoder) system() (*convo.Message, error) {
	switch d.r.Peek() {
	case jsonx.Null:
		d.r.ReadNull()
		return nil, nil
	case jsonx.String:
		s, err := d.r.ReadString()
		if err != nil {
			return nil, err
		}
		return &convo.Message{Role: convo.RoleSystem, Parts: []convo.Part{convo.Text(s)},
			Native: markedNative(markString)}, nil
	case jsonx.Array:
		parts, err := d.blocks()
		if err != nil || len(parts) == 0 {
			return nil, err
		}
		return &convo.Message{Role: convo.RoleSystem, Parts: parts}, nil
	}
	return nil, d.r.Errorf("want a string or an array of text blocks, got %s", d.r.Peek())
}

// blocks reads an array of content blocks.
func (d *reqDecoder) blocks() ([]convo.Part, error) {
	pmark := len(d.parts)
	err := d.eachBlock(func(p convo.Part) error {
		switch p.Type {
		case convo.TypeToolCall:
			if d.calls == nil {
				d.calls = make(map[string]string)
			}
			d.calls[p.ID] = p.Name
		case convo.TypeToolResult:
			if p.Server == "" { // a server tool's result is read as a reply gives it
				p.Name = d.calls[p.ID]
			}
		}
		d.parts = append(d.parts, p)
		return nil
	})
	return d.collected(pmark), err
}

func (d *reqDecoder) messages() error {
	if d.r.Peek() != jsonx.Array {
		return d.r.Errorf("want an array of messages, got %s", d.r.Peek())
	}
	return d.r.ReadArray(func(i int) error {
		if err := d.message(); err != nil {
			return convo.ErrorAt(err, index("", i))
		}
		return nil
	})
}

// reqMsg holds the members of one wire message while it is read.
type reqMsg struct {
	role                string
	parts               []convo.Part
	hasRole, hasContent bool
	str                 bool // content was a string
	extra               []byte
}

// message reads one wire message and appends what it becomes to d.h.
func (d *reqDecoder) message() error {
	var w reqMsg
	if d.r.Peek() != jsonx.Object {
		return d.r.Errorf("want a message object, got %s", d.r.Peek())
	}
	err := d.r.ReadObject(func(key []byte) error { return d.messageMember(&w, key) })
	if err != nil {
		return err
	}
	switch {
	case !w.hasRole:
		return errors.New(`message has no "role"`)
	case !w.hasContent:
		return errors.New(`message has no "content"`)
	}
	var turn wireTurn
	switch w.role {
	case "user":
		turn = wireUser
	case "assistant":
		turn = wireAssistant
	case "system":
		turn = wireSystem
	default:
		return convo.ErrorAt(fmt.Errorf("unknown role %q (want user or assistant)", w.role), "role")
	}
	first := len(d.h)
	d.appendTurn(turn, w.parts)
	d.markNative(&d.h[first], turn, &w)
	d.prev = wireTurn{role: turn.role, other: hasOther(w.parts)}
	return nil
}

// messageMember reads one member of a wire message into w.
func (d *reqDecoder) messageMember(w *reqMsg, key []byte) error {
	switch string(key) {
	case "role":
		w.hasRole = true
		if d.r.Peek() != jsonx.String {
			return convo.ErrorAt(d.r.Errorf("want a string, got %s", d.r.Peek()), "role")
		}
		var err error
		w.role, err = readName(d.r)
		return convo.ErrorAt(err, "role")
	case "content":
		w.hasContent = true
		switch d.r.Peek() {
		case jsonx.String:
			s, err := d.r.ReadString()
			w.parts, w.str = []convo.Part{convo.Text(s)}, true
			return convo.ErrorAt(err, "content")
		case jsonx.Array:
			var err error
			w.parts, err = d.blocks()
			return convo.ErrorAt(err, "content")
		}
		return convo.ErrorAt(d.r.Errorf("want a string or an array of blocks, got %s", d.r.Peek()), "content")
	}
	var err error
	w.extra, err = appendMember(w.extra, key, d.r)
	return atKey(err, key)
}

// appendTurn appends the messages one wire message of the given turn
// becomes: a user turn splits into tool and user messages, in order.
func (d *reqDecoder) appendTurn(turn wireTurn, parts []convo.Part) {
	switch turn {
	case wireUser:
		start := 0
		for j := 1; j <= len(parts); j++ {
			if j < len(parts) && isResult(parts[j]) == isResult(parts[start]) {
				continue
			}
			r := convo.RoleUser
			if isResult(parts[start]) {
				r = convo.RoleTool
			}
			d.h = append(d.h, convo.Message{Role: r, Parts: parts[start:j:j]})
			start = j
		}
		if len(parts) == 0 {
			d.h = append(d.h, convo.Message{Role: convo.RoleUser, Parts: parts})
		}
	case wireAssistant:
		d.h = append(d.h, convo.Message{Role: convo.RoleAssistant, Parts: parts})
	case wireSystem:
		d.h = append(d.h, convo.Message{Role: convo.RoleSystem, Parts: parts})
	}
}

// markNative sets the native members of m, the first message a wire
// message became: its extra members and the markers that let it be written
// back as it came.
func (d *reqDecoder) markNative(m *convo.Message, turn wireTurn, w *reqMsg) {
	var marks []string
	if w.str {
		marks = append(marks, markString)
	}
	var native []byte
	if w.extra != nil {
		// Members of the wire message convo has no field for are kept
		// apart from the markers, under "message": only they are written
		// back into a request (a reply's native members describe the
		// response and are never sent).
		native = prependMember(nil, "message", append(w.extra, '}'))
	}
	if turn == wireSystem {
		native = prependMember(native, "role", []byte(`"system"`))
	}
	if joins(d.prev, turn, m.Role == convo.RoleTool) {
		marks = append(marks, markSeparate)
	}
	for _, k := range marks {
		native = prependMember(native, k, []byte("true"))
	}
	if native != nil {
		m.Native = convo.Native{ProviderID: append(native, '}')}
	}
}

func isResult(p convo.Part) bool { return p.Type == convo.TypeToolResult }

// hasOther reports whether parts hold anything but tool results.
func hasOther(parts []convo.Part) bool {
	for _, p := range parts {
		if !isResult(p) {
			return true
		}
	}
	return false
}

// appendMember appends key and the value at r to an unterminated native
// object.
func appendMember(obj, key []byte, r *jsonx.Reader) ([]byte, error) {
	if obj == nil {
		obj = append(obj, '{')
	} else {
		obj = append(obj, ',')
	}
	obj = jsonx.AppendString(obj, string(key))
	obj = append(obj, ':')
	return r.AppendRaw(obj)
}

// prependMember puts key:val first in an unterminated native object.
func prependMember(obj []byte, key string, val []byte) []byte {
	out := make([]byte, 0, len(obj)+len(key)+len(val)+4)
	out = append(out, '{')
	out = jsonx.AppendString(out, key)
	out = append(out, ':')
	out = append(out, val...)
	if len(obj) > 1 {
		out = append(out, ',')
		out = append(out, obj[1:]...)
	}
	return out
}

// markedNative returns a native object holding the given markers.
func markedNative(keys ...string) convo.Native {
	var obj []byte
	for _, k := range keys {
		obj = prependMember(obj, k, []byte("true"))
	}
	return convo.Native{ProviderID: append(obj, '}')}
}
