package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/convo-go/convo"
)

// A fingerprint identifies a conversation by what the provider sees of it,
// so that a client's next request — which carries the conversation so far
// in the client's own rendering — finds the stored conversation it
// continues, whatever protocol the client and the upstream speak.
//
// It is a rolling hash over the conversation's items: each message
// contributes its role and, per part, the visible text, tool calls (id,
// name, arguments as parsed JSON) and tool results (id and content text),
// media by source. Usage, origin, times, ids of messages, reasoning and
// provider-native fields are left out: they are what one protocol keeps
// and another drops. Adjacent text of one role is joined and consecutive
// messages of one role run together, since protocols split and merge them
// differently (Anthropic puts tool results in a user turn; Chat sends one
// tool message per result).
//
// A loose fingerprinter leaves tool-call ids out too: it serves clients of
// a protocol whose ids are optional (Ollama), many of which drop the ids
// they are sent, so their next request names none.
type fingerprinter struct {
	loose bool
	h     [sha256.Size]byte
	role  convo.Role
	// The pending text of the current role: text, with the long pieces
	// (a long reply's) in their places, held rather than copied.
	text  []byte
	long  []longText
	items int
	// pending is the chain's hash with the pending text folded in, as sum
	// made it, while the text is still what it was then (pendingFor: its
	// lengths plus one, zero for none): flush takes it rather than hash
	// the same text again. A recorded exchange's request is summed in the
	// handler and flushed when the writer adds the reply.
	pending    [sha256.Size]byte
	pendingFor [2]int
}

// longText is a long piece of pending text, after the first at bytes of
// the fingerprinter's text.
type longText struct {
	at int
	s  string
}

// copyBelow is the length of text the fingerprinter copies; a longer one
// it holds. A long string has its own allocation (as the decoders make
// them), which a record holds anyway: holding it costs nothing, where
// copying a 40 MB reply's text costs 40 MB.
const copyBelow = 4 << 10

// clone returns a copy of f that folds on independently of it: the
// fingerprints of several replies to one request.
func (f *fingerprinter) clone() *fingerprinter {
	c := *f
	c.text = slices.Clone(f.text)
	c.long = slices.Clone(f.long)
	return &c
}

// item folds one item into the chain.
func (f *fingerprinter) item(kind string, fields ...string) {
	b := f.itemHead(make([]byte, 0, 64), kind)
	for _, s := range fields {
		b = append(b, 0)
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	f.h = sha256.Sum256(b)
	f.items++
}

// itemHead appends what an item's hash begins with: the chain's hash, the
// role and the item's kind.
func (f *fingerprinter) itemHead(b []byte, kind string) []byte {
	b = append(b, f.h[:]...)
	b = append(b, f.role...)
	b = append(b, 0)
	return append(b, kind...)
}

// flush folds the pending text in as one item.
func (f *fingerprinter) flush() {
	if len(f.text) == 0 && len(f.long) == 0 {
		return
	}
	f.h = f.pendingSum()
	f.items++
	// The chain moves on (and every other item follows a flush).
	f.text, f.long, f.pendingFor = f.text[:0], f.long[:0], [2]int{}
}

// pendingSum is the chain's hash with the pending text folded in as one
// item (there is some), as item makes it.
func (f *fingerprinter) pendingSum() [sha256.Size]byte {
	at := [2]int{len(f.text) + 1, len(f.long) + 1}
	if f.pendingFor == at {
		return f.pending
	}
	if len(f.long) == 0 {
		g := *f
		g.item("text", string(f.text))
		f.pending = g.h
	} else {
		f.pending = f.textSum()
	}
	f.pendingFor = at
	return f.pending
}

// textSum is the chain's hash with the pending text folded in, as item
// makes it, hashed piece by piece rather than joined first.
func (f *fingerprinter) textSum() (sum [sha256.Size]byte) {
	n := len(f.text)
	for _, l := range f.long {
		n += len(l.s)
	}
	h := sha256.New()
	b := append(f.itemHead(make([]byte, 0, 128), "text"), 0)
	b = strconv.AppendInt(b, int64(n), 10)
	h.Write(append(b, ':'))
	at := 0
	for _, l := range f.long {
		h.Write(f.text[at:l.at])
		h.Write(unsafe.Slice(unsafe.StringData(l.s), len(l.s))) // not copied, as io.WriteString would
		at = l.at
	}
	h.Write(f.text[at:])
	h.Sum(sum[:0])
	return sum
}

// addText adds s to the pending text: copied when short, else held.
func (f *fingerprinter) addText(s string) {
	if len(s) < copyBelow {
		f.text = append(f.text, s...)
		return
	}
	f.long = append(f.long, longText{at: len(f.text), s: s})
}

// add folds one message in.
func (f *fingerprinter) add(m *convo.Message) {
	role := m.Role
	switch role {
	case convo.RoleError:
		return // never sent to a provider
	case convo.RoleTool:
		role = convo.RoleUser // results travel in the user's turn somewhere
	}
	if role != f.role {
		f.flush()
		f.role = role
	}
	for i := range m.Parts {
		p := &m.Parts[i]
		switch {
		case p.Type == convo.TypeText || p.Type == convo.TypeRefusal:
			f.addText(p.Text)
		case p.Type == convo.TypeToolCall:
			f.flush()
			f.item("call", f.id(p.ID), p.Name, canonicalJSON(p.Args, p.ArgsRaw))
		case p.Type == convo.TypeToolResult:
			f.flush()
			var out []byte
			for _, q := range p.Parts {
				if q.Type == convo.TypeText {
					out = append(out, q.Text...)
				} else {
					out = append(out, mediaKey(&q)...)
				}
			}
			f.item("result", f.id(p.ID), string(out))
		case p.Type.IsMedia():
			f.flush()
			f.item("media", mediaKey(p))
		}
	}
}

// sum is the fingerprint of what was added so far.
func (f *fingerprinter) sum() string {
	h := f.h // f goes on: its pending text stays pending
	if len(f.text) > 0 || len(f.long) > 0 {
		h = f.pendingSum()
	}
	return hex.EncodeToString(h[:16])
}

// id is what a tool-call id adds to the fingerprint.
func (f *fingerprinter) id(id string) string {
	if f.loose {
		return ""
	}
	return realID(id)
}

// realID is a tool-call id as the provider gave it, or "" for one convo
// made up (provider.SynthID) for a call the provider left unnamed: a
// protocol without ids (Ollama) makes up another each time the call is
// read, so it cannot take part in the fingerprint.
func realID(id string) string {
	if len(id) == len("call_")+16 && strings.HasPrefix(id, "call_") {
		if _, err := hex.DecodeString(id[5:]); err == nil {
			return ""
		}
	}
	return id
}

func mediaKey(p *convo.Part) string {
	src := p.URL
	switch {
	case p.Data != "":
		h := sha256.Sum256([]byte(p.Data))
		src = hex.EncodeToString(h[:8])
	case p.FileID != "":
		src = p.FileID
	}
	return string(p.Type) + ":" + src
}

// canonicalJSON renders arguments with sorted keys and no spaces, so the
// same arguments compare equal however a protocol wrote them.
func canonicalJSON(args json.RawMessage, raw string) string {
	if args == nil {
		return raw
	}
	if canonical(args) {
		return string(args) // as the round trip below would write them
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return string(args)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Fingerprint returns the fingerprint of a history, as the gateway stores
// it beside each recorded conversation.
func Fingerprint(h convo.History) string { return fingerprint(h, false) }

// fingerprint returns the fingerprint of a history, loose or not.
func fingerprint(h convo.History, loose bool) string {
	f := fingerprinter{loose: loose}
	for i := range h {
		f.add(&h[i])
	}
	return f.sum()
}

// trail is what a request's history gives the lookups, from one pass over
// it: sums, the fingerprints of its prefixes that end with an assistant
// message — the places where a stored conversation can end — longest
// first, with their lengths; asked, the fingerprints of the prefixes that
// those assistant messages answered (each run's messages before it), the
// requests of the exchanges the history continues; and whole, the
// fingerprinter with all of it folded in, which the recording goes on
// from.
type trail struct {
	sums  []string
	lens  []int
	asked []string
	whole *fingerprinter
}

// prefixes returns the trail of h.
func prefixes(h convo.History, loose bool) trail {
	t := trail{whole: &fingerprinter{loose: loose}}
	f := t.whole
	for i := range h {
		if i > 0 && h[i].Role == convo.RoleAssistant && h[i-1].Role != convo.RoleAssistant {
			t.asked = append(t.asked, f.sum())
		}
		f.add(&h[i])
		if h[i].Role == convo.RoleAssistant && (i+1 == len(h) || h[i+1].Role != convo.RoleAssistant) {
			t.sums = append(t.sums, f.sum())
			t.lens = append(t.lens, i+1)
		}
	}
	slices.Reverse(t.sums)
	slices.Reverse(t.lens)
	return t
}

// canonical reports whether b is a JSON value exactly as canonicalJSON's
// round trip (json.Unmarshal into an any, json.Marshal) writes it, so it
// can be kept as it is: no white space, object keys in increasing order,
// strings without escapes or what Marshal escapes (<, >, &, U+2028,
// U+2029, invalid UTF-8), numbers that are integers of at most 15 digits
// (a float64 holds them exactly and Marshal writes them back the same).
// Most tool call arguments are; the round trip costs some twenty
// allocations.
func canonical(b []byte) bool {
	c := canonChecker{b: b}
	return c.value(0) && c.pos == len(b)
}

// canonChecker reads a JSON value for canonical.
type canonChecker struct {
	b   []byte
	pos int
}

func (c *canonChecker) value(depth int) bool {
	if depth > 32 {
		return false
	}
	switch ch := c.at(); {
	case ch == '{':
		return c.object(depth)
	case ch == '[':
		c.pos++
		if c.at() == ']' {
			c.pos++
			return true
		}
		for {
			if !c.value(depth + 1) {
				return false
			}
			if done, ok := c.next(']'); done || !ok {
				return ok
			}
		}
	case ch == '"':
		_, ok := c.str()
		return ok
	case ch == '-' || ch >= '0' && ch <= '9':
		return c.number()
	}
	for _, lit := range []string{"true", "false", "null"} {
		// A comparison of the literal's length: no string is made of the
		// rest of the value.
		if end := c.pos + len(lit); end <= len(c.b) && string(c.b[c.pos:end]) == lit {
			c.pos = end
			return true
		}
	}
	return false
}

// at returns the byte at the position, 0 at the end.
func (c *canonChecker) at() byte {
	if c.pos < len(c.b) {
		return c.b[c.pos]
	}
	return 0
}

// next reads what follows an element: a ',' (another element follows),
// or the closing byte (done); ok is false for anything else.
func (c *canonChecker) next(closing byte) (done, ok bool) {
	switch c.at() {
	case ',':
		c.pos++
		return false, true
	case closing:
		c.pos++
		return true, true
	}
	return false, false
}

func (c *canonChecker) object(depth int) bool {
	c.pos++
	if c.at() == '}' {
		c.pos++
		return true
	}
	var prev []byte
	for n := 0; ; n++ {
		key, ok := c.str()
		if !ok || n > 0 && string(key) <= string(prev) || c.at() != ':' {
			return false
		}
		prev = key
		c.pos++
		if !c.value(depth + 1) {
			return false
		}
		if done, ok := c.next('}'); done || !ok {
			return ok
		}
	}
}

// str reads a string without escapes and returns its content.
func (c *canonChecker) str() ([]byte, bool) {
	if c.pos >= len(c.b) || c.b[c.pos] != '"' {
		return nil, false
	}
	start := c.pos + 1
	for i := start; i < len(c.b); {
		switch ch := c.b[i]; {
		case ch == '"':
			c.pos = i + 1
			return c.b[start:i], true
		case ch < 0x20 || ch == '\\' || ch == '<' || ch == '>' || ch == '&':
			return nil, false
		case ch < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(c.b[i:])
			if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
				return nil, false
			}
			i += size
		}
	}
	return nil, false
}

// number reads an integer of at most 15 digits, not -0.
func (c *canonChecker) number() bool {
	i := c.pos
	if c.at() == '-' {
		i++
	}
	digits := i
	for i < len(c.b) && c.b[i] >= '0' && c.b[i] <= '9' {
		i++
	}
	n := i - digits
	if n == 0 || n > 15 || c.b[digits] == '0' && (n > 1 || digits > c.pos) { // 012, -0
		return false
	}
	if i < len(c.b) && (c.b[i] == '.' || c.b[i] == 'e' || c.b[i] == 'E') {
		return false
	}
	c.pos = i
	return true
}
