package litert

import (
	"errors"
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider/internal/wire"
)

// contentForm is the JSON form a message's "content" had.
type contentForm byte

const (
	formNone   contentForm = iota // absent or null
	formArray                     // an array of parts
	formString                    // a string: one text part
	formObject                    // a single part object
)

// wireCall is one tool call as read: an entry of "tool_calls", a content
// part of type "function", or a message that is itself a call.
type wireCall struct {
	id      string
	hasID   bool
	typ     []byte // the "type" member when it is not "function"; nil: "function"
	hasType bool
	name    string
	args    []byte // compact JSON; nil when absent or null
	argsStr string // the arguments when they are a JSON string
	isStr   bool
	fn      wire.Members // other members of "function"
	extra   wire.Members
}

// partKind says what a content part is.
type partKind byte

const (
	kindOpaque   partKind = iota // kept verbatim (a JsonPart to LiteRT-LM)
	kindText                     // {"type":"text","text":…}
	kindImage                    // {"type":"image","path"|"blob":…}
	kindAudio                    // {"type":"audio","path"|"blob":…}
	kindCall                     // {"type":"function","function":{…}}
	kindFuncResp                 // {"type":"function_response","name","response":string}
	kindToolResp                 // {"type":"tool_response","name","response":any}
	kindBareResp                 // {"name","response"} without a type
)

// wirePart is one content part as read.
type wirePart struct {
	kind     partKind
	raw      []byte // the whole part as read (compact for opaque parts)
	typ      string
	hasType  bool
	text     []byte // may alias the document
	hasText  bool
	path     string
	hasPath  bool
	blob     string
	hasBlob  bool
	name     string
	hasName  bool
	id       string
	hasID    bool
	response []byte // compact JSON; nil when absent, or a string (in respStr)
	respStr  string
	isStr    bool // the response is a string
	call     wireCall
	extra    wire.Members
}

// wireMsg is one message as read.
type wireMsg struct {
	role       string
	hasRole    bool
	form       contentForm
	parts      []wirePart
	calls      []wireCall
	hasCalls   bool
	callsRaw   []byte // the tool_calls value, for roles that cannot call
	single     bool   // the message is itself a call ({"type":"function",…})
	thought    []byte // may alias the document
	hasThought bool
	channels   wire.Members // the channels other than thought
	typ        []byte       // message-level "type" and "function", when not a call
	function   []byte
	extra      wire.Members
}

// reset empties w, keeping its slices for reuse.
func (w *wireMsg) reset() {
	*w = wireMsg{parts: w.parts[:0], calls: w.calls[:0], channels: w.channels[:0], extra: w.extra[:0]}
}

// readMessage reads one message object.
func readMessage(r *jsonx.Reader, w *wireMsg) error {
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "role":
			if r.ReadNull() {
				return nil
			}
			s, err := r.ReadStringBytes()
			w.role, w.hasRole = intern(s), err == nil
			return convo.ErrorAt(err, "role")
		case "content":
			return convo.ErrorAt(readContent(r, w), "content")
		case "tool_calls":
			if r.ReadNull() {
				return nil
			}
			start := r.Offset()
			w.hasCalls = true
			err := r.ReadArray(func(i int) error {
				var c wireCall
				if err := readCall(r, &c); err != nil {
					return convo.ErrorAt(err, index("", i))
				}
				w.calls = append(w.calls, c)
				return nil
			})
			w.callsRaw = r.Bytes()[start:r.Offset()]
			return convo.ErrorAt(err, "tool_calls")
		case "channels":
			return convo.ErrorAt(readChannels(r, w), "channels")
		case "type":
			v, err := r.ReadRaw()
			w.typ = v
			return convo.ErrorAt(err, "type")
		case "function":
			v, err := r.ReadRaw()
			w.function = v
			return convo.ErrorAt(err, "function")
		}
		v, err := r.ReadRaw()
		w.extra = append(w.extra, wire.Member{Key: extraKey(key), Val: v})
		return convo.ErrorAt(err, string(key))
	})
	if err != nil {
		return err
	}
	// A message that is itself a call, as io_types.cc accepts it.
	if !w.hasCalls && string(w.typ) == `"function"` && w.function != nil {
		var c wireCall
		sub := jsonx.NewReader(w.function, 0)
		if err := readFunction(sub, &c); err != nil {
			return convo.ErrorAt(err, "function")
		}
		c.hasType = true
		// The message's own "id" is the call's, as io_types.cc reads it.
		for k, m := range w.extra {
			if m.Key != "id" || len(m.Val) == 0 || m.Val[0] != '"' {
				continue
			}
			id, err := jsonx.NewReader(m.Val, 0).ReadString()
			if err != nil {
				return convo.ErrorAt(err, "id")
			}
			c.id, c.hasID = id, id != ""
			w.extra = append(w.extra[:k:k], w.extra[k+1:]...)
			break
		}
		w.single = true
		w.calls = []wireCall{c}
	}
	return nil
}

// readChannels reads "channels": the thought channel's text, and the
// other channels as they are.
func readChannels(r *jsonx.Reader, w *wireMsg) error {
	if r.ReadNull() {
		return nil
	}
	return r.ReadObject(func(key []byte) error {
		if string(key) == thought {
			s, err := r.ReadStringBytes()
			w.thought, w.hasThought = s, err == nil
			return convo.ErrorAt(err, thought)
		}
		start := r.Offset()
		if _, err := r.ReadStringBytes(); err != nil {
			return convo.ErrorAt(err, string(key))
		}
		v, err := jsonx.Compact(r.Bytes()[start:r.Offset()], 0)
		w.channels = append(w.channels, wire.Member{Key: string(key), Val: v})
		return convo.ErrorAt(err, string(key))
	})
}

// intern returns the string of b, without allocating for the names the
// format uses all the time.
func intern(b []byte) string {
	switch string(b) {
	case "system":
		return "system"
	case "user":
		return "user"
	case "assistant":
		return "assistant"
	case "model":
		return "model"
	case "tool":
		return "tool"
	case "text":
		return "text"
	case "image":
		return "image"
	case "audio":
		return "audio"
	case "function":
		return "function"
	case "function_response":
		return "function_response"
	case "tool_response":
		return "tool_response"
	}
	return string(b)
}

func readContent(r *jsonx.Reader, w *wireMsg) error {
	switch r.Peek() {
	case jsonx.Null:
		r.ReadNull()
		return nil
	case jsonx.String:
		s, err := r.ReadStringBytes()
		w.form = formString
		w.parts = append(w.parts[:0], wirePart{kind: kindText, typ: "text", hasType: true, text: s, hasText: true})
		return err
	case jsonx.Object:
		w.form = formObject
		w.parts = append(w.parts[:0], wirePart{})
		return readPart(r, &w.parts[0])
	case jsonx.Array:
		w.form = formArray
		return r.ReadArray(func(i int) error {
			w.parts = append(w.parts, wirePart{})
			if err := readPart(r, &w.parts[i]); err != nil {
				return convo.ErrorAt(err, index("", i))
			}
			return nil
		})
	}
	return r.Errorf("want a string, an array of parts or a part object")
}

// readPart reads a content part in one pass: members are read by their
// name first and sorted out by the part's type afterwards.
func readPart(r *jsonx.Reader, p *wirePart) error {
	start := r.Offset()
	var fn []byte
	str := func(dst *string, has *bool, key string) error {
		if r.Peek() != jsonx.String || dst == nil {
			v, err := r.ReadRaw()
			p.extra = append(p.extra, wire.Member{Key: key, Val: v})
			return convo.ErrorAt(err, key)
		}
		var s string
		var err error
		if key == "type" {
			var b []byte
			b, err = r.ReadStringBytes()
			s = intern(b)
		} else {
			s, err = r.ReadString()
		}
		*dst, *has = s, err == nil
		return convo.ErrorAt(err, key)
	}
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "type":
			return str(&p.typ, &p.hasType, "type")
		case "text":
			if r.Peek() != jsonx.String {
				return str(nil, nil, "text")
			}
			b, err := r.ReadStringBytes()
			p.text, p.hasText = b, err == nil
			return convo.ErrorAt(err, "text")
		case "path":
			return str(&p.path, &p.hasPath, "path")
		case "blob":
			return str(&p.blob, &p.hasBlob, "blob")
		case "name":
			return str(&p.name, &p.hasName, "name")
		case "id":
			return str(&p.id, &p.hasID, "id")
		case "response":
			if r.Peek() == jsonx.String {
				s, err := r.ReadString()
				p.respStr, p.isStr = s, err == nil
				return convo.ErrorAt(err, "response")
			}
			v, err := r.ReadRaw()
			p.response = v
			return convo.ErrorAt(err, "response")
		case "function":
			v, err := r.ReadRaw()
			fn = v
			return convo.ErrorAt(err, "function")
		}
		v, err := r.ReadRaw()
		p.extra = append(p.extra, wire.Member{Key: extraKey(key), Val: v})
		return convo.ErrorAt(err, string(key))
	})
	if err != nil {
		return err
	}
	return classify(r.Bytes()[start:r.Offset()], p, fn)
}

// classify sorts a part out by its type, as io_types.cc does, and moves the
// members its kind has no use for to extra. raw is the part as read; calls
// and responses keep it, for the messages where they become opaque parts.
func classify(raw []byte, p *wirePart, fn []byte) error {
	p.raw = raw
	named := p.hasName && p.name != ""
	hasResp := p.response != nil || p.isStr
	switch {
	case p.hasType && p.typ == "text":
		if !p.hasText {
			return errors.New(`text part has no "text" string`)
		}
		p.kind = kindText
		p.raw = nil
		p.keepResp()
		p.keep("path", p.path, p.hasPath)
		p.keep("blob", p.blob, p.hasBlob)
		p.keep("name", p.name, p.hasName)
		p.keep("id", p.id, p.hasID)
	case p.hasType && (p.typ == "image" || p.typ == "audio"):
		if err := p.media(); err != nil {
			return err
		}
	case p.hasType && p.typ == "function":
		if fn == nil {
			return p.opaque(raw)
		}
		if err := p.function(fn); err != nil {
			return err
		}
	case p.hasType && p.typ == "function_response":
		if !named || !p.isStr {
			return p.opaque(raw) // not what io_types.cc reads as a response
		}
		p.kind = kindFuncResp
		p.keepText()
	case p.hasType && p.typ == "tool_response" && hasResp:
		p.kind = kindToolResp
		p.hasName = named // an empty name is no name
		p.keepText()
	case !p.hasType && named && hasResp:
		p.kind = kindBareResp
		p.keepText()
	default:
		return p.opaque(raw)
	}
	if p.kind != kindCall && fn != nil {
		p.extra = append(p.extra, wire.Member{Key: "function", Val: fn})
	}
	return nil
}

// media classifies an image or audio part: a path, or else a blob of
// base64.
func (p *wirePart) media() error {
	p.kind = kindImage
	p.raw = nil
	p.keepResp()
	if p.typ == "audio" {
		p.kind = kindAudio
	}
	switch {
	case p.hasPath:
		if p.path == "" {
			return fmt.Errorf("%s part has an empty path", p.typ)
		}
		// The path wins, as in io_types.cc; the blob is kept.
		p.keep("blob", p.blob, p.hasBlob)
		p.hasBlob = false
	case p.hasBlob:
		if p.blob == "" {
			return fmt.Errorf("%s part has an empty blob", p.typ)
		}
		if err := convo.CheckBase64(p.blob); err != nil {
			return convo.ErrorAt(err, "blob")
		}
	default:
		return fmt.Errorf(`%s part has neither "path" nor "blob"`, p.typ)
	}
	p.keepText()
	p.keep("name", p.name, p.hasName)
	p.keep("id", p.id, p.hasID)
	return nil
}

// function classifies a function part: a call, read from its function
// member fn.
func (p *wirePart) function(fn []byte) error {
	p.kind = kindCall
	sub := jsonx.NewReader(fn, 0)
	if err := readFunction(sub, &p.call); err != nil {
		return convo.ErrorAt(err, "function")
	}
	p.call.id, p.call.hasID = p.id, p.hasID && p.id != ""
	p.call.hasType = true
	p.keepResp()
	p.keepText()
	p.keep("path", p.path, p.hasPath)
	p.keep("blob", p.blob, p.hasBlob)
	p.keep("name", p.name, p.hasName)
	p.call.extra = p.extra
	return nil
}

// keep moves a string member the part's kind has no use for to extra.
func (p *wirePart) keep(key, s string, has bool) {
	if has {
		p.extra = append(p.extra, wire.Member{Key: key, Val: jsonx.AppendString(nil, s)})
	}
}

// keepResp moves the response member to extra.
func (p *wirePart) keepResp() {
	switch {
	case p.isStr:
		p.extra = append(p.extra, wire.Member{Key: "response", Val: jsonx.AppendString(nil, p.respStr)})
	case p.response != nil:
		p.extra = append(p.extra, wire.Member{Key: "response", Val: p.response})
	}
}

// keepText moves the text member to extra.
func (p *wirePart) keepText() {
	if p.hasText {
		p.extra = append(p.extra, wire.Member{Key: "text", Val: jsonx.AppendString(nil, string(p.text))})
	}
}

// opaque makes the part an opaque one, kept whole as raw (compacted).
func (p *wirePart) opaque(raw []byte) error {
	v, err := jsonx.Compact(raw, 0)
	*p = wirePart{kind: kindOpaque, raw: v, typ: p.typ, hasType: p.hasType}
	return err
}

func readCall(r *jsonx.Reader, c *wireCall) error {
	seenFn := false
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "type":
			c.hasType = true
			if r.Peek() == jsonx.String {
				s, err := r.ReadStringBytes()
				if err == nil && string(s) == "function" {
					return nil
				}
				c.typ = jsonx.AppendString(nil, string(s))
				return convo.ErrorAt(err, "type")
			}
			v, err := r.ReadRaw()
			c.typ = v
			return convo.ErrorAt(err, "type")
		case "id":
			if r.ReadNull() {
				return nil
			}
			id, err := r.ReadString()
			// An empty id is no id: io_types.cc does not write one.
			c.id, c.hasID = id, id != ""
			return convo.ErrorAt(err, "id")
		case "function":
			seenFn = true
			return convo.ErrorAt(readFunction(r, c), "function")
		}
		v, err := r.ReadRaw()
		c.extra = append(c.extra, wire.Member{Key: extraKey(key), Val: v})
		return convo.ErrorAt(err, string(key))
	})
	if err != nil {
		return err
	}
	if !seenFn {
		return errors.New(`tool call has no "function"`)
	}
	return nil
}

func readFunction(r *jsonx.Reader, c *wireCall) error {
	hasName := false
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "name":
			s, err := r.ReadString()
			c.name, hasName = s, err == nil
			return convo.ErrorAt(err, "name")
		case "arguments":
			if r.ReadNull() {
				return nil
			}
			if r.Peek() == jsonx.String {
				s, err := r.ReadString()
				c.argsStr, c.isStr = s, true
				return convo.ErrorAt(err, "arguments")
			}
			v, err := r.ReadRaw()
			c.args = v
			return convo.ErrorAt(err, "arguments")
		}
		v, err := r.ReadRaw()
		c.fn = append(c.fn, wire.Member{Key: extraKey(key), Val: v})
		return convo.ErrorAt(err, string(key))
	})
	if err != nil {
		return err
	}
	if !hasName {
		return convo.ErrorAt(errors.New("missing function name"), "name")
	}
	return nil
}
