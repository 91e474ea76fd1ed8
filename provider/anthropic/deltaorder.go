package anthropic

import "github.com/convo-go/convo/internal/jsonx"

// readDeltaAnyOrder reads data into e when it is a content_block_delta
// event of a piece of text, thinking, a signature or tool input whose
// members come in any order, and reports whether it was. readTextDelta
// takes the events written member for member as Anthropic writes them;
// a stream another program derived or wrote again (the gateway bench's,
// or any written from a map, as encoding/json writes one: sorted,
// {"delta":{"text":"..","type":"text_delta"},"index":0,"type":"content_block_delta"})
// misses it, and read's general work for every key was a third of the
// folding of such a stream.
//
// It reads what read would read from the same data: the event's type,
// index and delta, the delta's type one of deltaTypes' and one piece a
// string, keys and names written without escapes, white space anywhere
// read allows it.
// Anything else (a repeated key, which read refuses; another member; a
// piece that is not a valid string; an index read would read otherwise)
// is left to read, e as it was, and so are its errors.
func (a *accumulator) readDeltaAnyOrder(data []byte, e *event) bool {
	if hasPrefix(data, typeFirst) && !hasPrefix(data[len(typeFirst):], deltaTypeValue) {
		// An event in Anthropic's order, of another type: left at once
		// (it would be left at its type's value), as it is most events
		// readTextDelta leaves, before they reach the fast path meant
		// for them.
		return false
	}
	if a.lim.MaxDepth > 0 && a.lim.MaxDepth < 2 {
		return false // read says the delta nests too deep
	}
	s := orderScan{data: data}
	if !s.open() {
		return false
	}
	var (
		index int64
		dl    delta
		seen  uint8 // typeSeen, indexSeen, deltaSeen
	)
	for more := true; more; {
		var bit uint8
		switch s.key() {
		case keyType:
			// Any other event is left here, at its first member or its
			// second (sorted, a message_delta's delta has other keys).
			bit = typeSeen
			if s.space(); !s.lit(`"content_block_delta"`) {
				return false
			}
		case keyIndex:
			bit = indexSeen
			var ok bool
			if index, ok = s.index(); !ok {
				return false
			}
		case keyDelta:
			bit = deltaSeen
			if !a.readPiece(&s, &dl) {
				return false
			}
		default:
			return false
		}
		if seen&bit != 0 {
			return false // a repeated key: read refuses it
		}
		seen |= bit
		var ok bool
		if more, ok = s.next(); !ok {
			return false
		}
	}
	s.space()
	if s.pos != len(data) || seen != typeSeen|indexSeen|deltaSeen {
		return false
	}
	e.typ, e.index, e.hasIndex = "content_block_delta", index, true
	e.delta = dl
	return true
}

// An event whose first member is its type, as Anthropic writes them, and
// the type's value (its closing quote included) of a content_block_delta.
const (
	typeFirst      = `{"type":"`
	deltaTypeValue = `content_block_delta"`
)

// hasPrefix reports whether b begins with s: for constant strings, which
// the compiler compares without a call.
func hasPrefix(b []byte, s string) bool { return len(b) >= len(s) && string(b[:len(s)]) == s }

// The members of a content_block_delta event readDeltaAnyOrder has read.
const (
	typeSeen = 1 << iota
	indexSeen
	deltaSeen
)

// readPiece reads a delta object of one of deltaTypes' types and one
// piece, in either order, into dl as readDelta does; anything else is
// left to read (false). The piece is read by the jsonx reader into its
// scratch buffer when it has escapes, as readTextDelta reads it: the
// only string read so, which delta copies into its block before the
// reader reads again.
func (a *accumulator) readPiece(s *orderScan, dl *delta) bool {
	if !s.open() {
		return false
	}
	typed, pieced := false, false
	for more := true; more; {
		switch k := s.key(); k {
		case keyType:
			if typed {
				return false // a repeated key: read refuses it
			}
			typed = true
			if dl.typ = s.deltaType(); dl.typ == "" {
				return false
			}
		case keyText, keyPartial, keyThinking, keySignature:
			if pieced {
				return false // a second piece (or a repeated key)
			}
			pieced = true
			if !a.readPieceString(s, k, dl) {
				return false
			}
		default:
			return false
		}
		var ok bool
		if more, ok = s.next(); !ok {
			return false
		}
	}
	return typed && pieced
}

// readPieceString reads the string at s's position, a delta's piece
// named key, into dl.
func (a *accumulator) readPieceString(s *orderScan, key int, dl *delta) bool {
	r := &a.r
	r.Reset(s.data[s.pos:], a.lim.MaxDepth)
	if r.Peek() != jsonx.String {
		return false
	}
	v, err := r.ReadStringScratch()
	if err != nil {
		return false
	}
	s.pos += r.Offset()
	switch key {
	case keyText:
		dl.text, dl.hasText = v, true
	case keyPartial:
		dl.partial, dl.hasPartial = v, true
	case keyThinking:
		dl.thinking, dl.hasThink = v, true
	default:
		dl.signature, dl.hasSign = v, true
	}
	return true
}

// orderScan reads the tokens of an event for readDeltaAnyOrder: white
// space as read skips it, the keys and names it knows by their JSON
// (without escapes), integers as readIndex reads them.
type orderScan struct {
	data []byte
	pos  int
}

// space skips white space. Events mostly have none where it looks (but
// before their closing brace): a byte above ' ' ends it at one compare.
func (s *orderScan) space() {
	for s.pos < len(s.data) && s.data[s.pos] <= ' ' && isSpace(s.data[s.pos]) {
		s.pos++
	}
}

// open reads the opening brace of an object that has members.
func (s *orderScan) open() bool {
	s.space()
	if s.pos >= len(s.data) || s.data[s.pos] != '{' {
		return false
	}
	s.pos++
	return true
}

// The keys readDeltaAnyOrder reads, as key returns them.
const (
	keyOther = iota
	keyType
	keyIndex
	keyDelta
	keyText
	keyPartial
	keyThinking
	keySignature
)

// key reads a member's key and the colon after it, and returns which of
// the keys readDeltaAnyOrder reads it is (keyOther for any other). Those
// keys are plain: one written otherwise (with an escape) is another key
// here, which leaves the event to read. It compares the key's JSON with
// theirs instead of scanning it, as a third of the work is reading keys.
func (s *orderScan) key() int {
	s.space()
	if s.pos+1 >= len(s.data) || s.data[s.pos] != '"' {
		return keyOther
	}
	k := keyOther
	switch s.data[s.pos+1] {
	case 't':
		switch {
		case s.lit(`"type"`):
			k = keyType
		case s.lit(`"text"`):
			k = keyText
		case s.lit(`"thinking"`):
			k = keyThinking
		}
	case 'i':
		if s.lit(`"index"`) {
			k = keyIndex
		}
	case 'd':
		if s.lit(`"delta"`) {
			k = keyDelta
		}
	case 'p':
		if s.lit(`"partial_json"`) {
			k = keyPartial
		}
	case 's':
		if s.lit(`"signature"`) {
			k = keySignature
		}
	}
	s.space()
	if k == keyOther || s.pos >= len(s.data) || s.data[s.pos] != ':' {
		return keyOther
	}
	s.pos++
	return k
}

// lit reads lit when the data at s's position begins with it, and
// reports whether it did.
func (s *orderScan) lit(lit string) bool {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		return false
	}
	s.pos += len(lit)
	return true
}

// deltaType reads a delta's type, one of deltaTypes', and returns it as a
// string made once, or "" for any other value.
func (s *orderScan) deltaType() string {
	s.space()
	for i := range deltaTypes {
		if s.lit(deltaTypeLits[i]) {
			return deltaTypes[i].typ
		}
	}
	return ""
}

// deltaTypeLits are deltaTypes' types as JSON strings.
var deltaTypeLits = [len(deltaTypes)]string{`"text_delta"`, `"thinking_delta"`, `"input_json_delta"`, `"signature_delta"`}

// index reads an index as readIndex reads it.
func (s *orderScan) index() (int64, bool) {
	s.space()
	rest := s.data[s.pos:]
	index, after, ok := readIndex(rest)
	s.pos += len(rest) - len(after)
	return index, ok
}

// next reads the comma or the closing brace after a member; more says
// which.
func (s *orderScan) next() (more, ok bool) {
	s.space()
	if s.pos >= len(s.data) {
		return false, false
	}
	switch s.data[s.pos] {
	case ',':
		s.pos++
		return true, true
	case '}':
		s.pos++
		return false, true
	}
	return false, false
}
