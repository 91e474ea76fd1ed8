package anthropic

import (
	"bytes"

	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider/internal/wire"
)

// plain returns the length of the plain string at the start of b: the
// bytes before its closing quote, ASCII without a control character, a
// quote or a backslash (ids, names, model names and stop reasons as
// Anthropic writes them), which read reads as they are. It stops at the
// first other byte, which the caller checks is the quote.
func plain(b []byte) int { return jsonx.PlainPrefix(b) }

// flat reads the JSON of an event written as Anthropic writes the heads of
// its messages: no white space but before the event's closing brace, keys and strings plain (see plain), numbers
// integers, the only array an empty one. Anything else stops it (ok
// false), and the event is left to read. It reads values without copying;
// what it gives is what the general reader would give, the caller's to
// keep as read keeps it.
type flat struct {
	data    []byte
	pos     int
	depth   int // of the containers open at pos
	deepest int
}

// Kinds of the values flat reads.
const (
	flatNull = iota + 1
	flatString
	flatOther // a number, true, false, [] or an object
	flatObject
)

// maxFlatMembers bounds the members of an object flat reads: its check
// for a repeated key, which read refuses, compares each key with those
// before it.
const maxFlatMembers = 16

// object reads the object at pos, calling fn with each member's key at
// its value; fn reads the value and reports whether it could.
func (f *flat) object(fn func(key []byte) bool) bool {
	if f.pos >= len(f.data) || f.data[f.pos] != '{' {
		return false
	}
	f.pos++
	f.depth++
	f.deepest = max(f.deepest, f.depth)
	if f.pos < len(f.data) && f.data[f.pos] == '}' {
		f.pos++
		f.depth--
		return true
	}
	var keys [maxFlatMembers][]byte
	for n := 0; ; n++ {
		key, ok := f.str()
		if !ok || n == maxFlatMembers || f.pos >= len(f.data) || f.data[f.pos] != ':' {
			return false
		}
		for _, k := range keys[:n] {
			if bytes.Equal(k, key) {
				return false
			}
		}
		keys[n] = key
		f.pos++
		if !fn(key) {
			return false
		}
		if f.depth == 1 {
			f.pad()
		}
		if f.pos >= len(f.data) {
			return false
		}
		switch f.data[f.pos] {
		case ',':
			f.pos++
		case '}':
			f.pos++
			f.depth--
			return true
		default:
			return false
		}
	}
}

// pad skips the white space Anthropic pads an event with before its
// closing brace (see eventBody), when the brace follows it.
func (f *flat) pad() {
	i := f.pos
	for i < len(f.data) && isSpace(f.data[i]) {
		i++
	}
	if i < len(f.data) && f.data[i] == '}' {
		f.pos = i
	}
}

// str reads the plain string at pos and returns its bytes.
func (f *flat) str() ([]byte, bool) {
	if f.pos >= len(f.data) || f.data[f.pos] != '"' {
		return nil, false
	}
	rest := f.data[f.pos+1:]
	n := plain(rest)
	if n == len(rest) || rest[n] != '"' {
		return nil, false
	}
	f.pos += n + 2
	return rest[:n], true
}

// value reads any value flat reads and returns its bytes as written and
// its kind.
func (f *flat) value() ([]byte, int, bool) {
	start := f.pos
	if start >= len(f.data) {
		return nil, 0, false
	}
	kind := flatOther
	switch c := f.data[start]; {
	case c == '"':
		if _, ok := f.str(); !ok {
			return nil, 0, false
		}
		kind = flatString
	case c == '{':
		if !f.object(func([]byte) bool { _, _, ok := f.value(); return ok }) {
			return nil, 0, false
		}
		kind = flatObject
	case c == '-' || '0' <= c && c <= '9':
		if !f.integer() {
			return nil, 0, false
		}
	default:
		var lit string
		switch c {
		case 'n':
			lit, kind = "null", flatNull
		case 't':
			lit = "true"
		case 'f':
			lit = "false"
		case '[':
			lit = "[]"
			f.deepest = max(f.deepest, f.depth+1)
		}
		if lit == "" || !bytes.HasPrefix(f.data[start:], []byte(lit)) {
			return nil, 0, false
		}
		f.pos += len(lit)
	}
	return f.data[start:f.pos], kind, true
}

// null reads a null at pos, if there is one.
func (f *flat) null() bool {
	if !bytes.HasPrefix(f.data[f.pos:], []byte("null")) {
		return false
	}
	f.pos += len("null")
	return true
}

// name reads a string into dst as readName does.
func (f *flat) name(dst *string) bool {
	v, ok := f.str()
	if ok {
		*dst = nameOf(v)
	}
	return ok
}

// optString reads a string or null into dst as replyReader.optString
// does.
func (f *flat) optString(dst *string) bool {
	if f.null() {
		return true
	}
	v, ok := f.str()
	if ok {
		*dst = string(v)
	}
	return ok
}

// integer reads an integer of up to 18 digits, without a leading zero.
func (f *flat) integer() bool {
	if f.data[f.pos] == '-' {
		f.pos++
	}
	n := 0
	for f.pos+n < len(f.data) && n < 19 && '0' <= f.data[f.pos+n] && f.data[f.pos+n] <= '9' {
		n++
	}
	if n == 0 || n > 18 || f.data[f.pos] == '0' && n > 1 {
		return false
	}
	f.pos += n
	return true
}

// The message_start and message_delta events as Anthropic begins them.
var (
	messageStart = []byte(`{"type":"message_start",`)
	messageDelta = []byte(`{"type":"message_delta",`)
)

// readHead reads data into e when it is a message_start without content
// blocks or a message_delta written as flat reads (white space after it
// aside), and reports whether it was: it reads what read would read, its
// members in any order; anything else, and any member read would read
// otherwise than a member of the message's head (an error, a block, a
// delta's piece of text), is left to read.
func (a *accumulator) readHead(data []byte, e *event) bool {
	data = trimSpace(data)
	if !bytes.HasPrefix(data, messageStart) && !bytes.HasPrefix(data, messageDelta) {
		return false
	}
	f := flat{data: data}
	var got event // e is left as it was when the event is left to read
	ok := f.object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return f.name(&got.typ)
		case "message":
			got.message = true
			return a.readMessage(&f, &got.head)
		case "delta":
			return a.readDeltaMembers(&f, &got.delta)
		case "usage":
			if f.null() {
				return true
			}
			got.hasUsage = true
			return a.readMembers(&f, &got.usage, 4)
		case "index", "content_block", "error":
			return false
		}
		return a.readMember(&f, &got.extra, key)
	})
	maxDepth := a.lim.MaxDepth
	if maxDepth <= 0 {
		maxDepth = jsonx.DefaultMaxDepth
	}
	if !ok || f.pos != len(data) || f.deepest > maxDepth {
		return false
	}
	*e = got
	return true
}

// readMessage reads a message object as replyReader.message does, when it
// has no content blocks and no error.
func (a *accumulator) readMessage(f *flat, h *head) bool {
	var typ string
	ok := f.object(func(key []byte) bool {
		switch string(key) {
		case "type":
			h.shaped = true
			return f.name(&typ)
		case "id":
			return f.optString(&h.id)
		case "model":
			return f.optString(&h.model)
		case "role":
			var role string
			return f.optString(&role) && (role == "" || role == "assistant")
		case "content":
			h.shaped = true
			v, kind, ok := f.value()
			return ok && (kind == flatNull || string(v) == "[]")
		case "usage":
			if f.null() {
				return true
			}
			h.hasUsage = true
			return a.readMembers(f, &h.usage, 8)
		case "error":
			return false
		}
		return a.readMember(f, &h.top, key)
	})
	return ok && (typ == "" || typ == "message")
}

// readDeltaMembers reads a message_delta's delta as readDelta does, when
// it has no piece of a block (text, tool input, a citation).
func (a *accumulator) readDeltaMembers(f *flat, dl *delta) bool {
	return f.object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return f.name(&dl.typ)
		case "text", "partial_json", "thinking", "signature", "citation":
			return false
		}
		v, kind, ok := f.value()
		if ok && kind != flatNull {
			if dl.members == nil {
				dl.members = make(wire.Members, 0, 2) // as readDelta makes them
			}
			dl.members = dl.members.Set(memberKey(key), a.d.keep(v))
		}
		return ok
	})
}

// readMember reads a member of an object whose members read keeps as
// they are (raw), nulls left out.
func (a *accumulator) readMember(f *flat, ms *wire.Members, key []byte) bool {
	v, kind, ok := f.value()
	if ok && kind != flatNull {
		*ms = ms.Set(memberKey(key), a.d.keep(v))
	}
	return ok
}

// readMembers reads an object as replyReader.members does, into ms made
// with room for n members.
func (a *accumulator) readMembers(f *flat, ms *wire.Members, n int) bool {
	return f.object(func(key []byte) bool {
		v, kind, ok := f.value()
		if ok && kind != flatNull {
			if *ms == nil {
				*ms = make(wire.Members, 0, n)
			}
			*ms = ms.Set(memberKey(key), a.d.keep(v))
		}
		return ok
	})
}
