// Package backend holds what every store backend does the same way: checking
// and encoding messages, the pairing state of tool calls, conversation field
// checks, metadata filters and list cursors. Backends differ only in SQL.
package backend

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/lend"
	"github.com/convo-go/convo/store"
)

// Row is a message ready to be stored: its id, role and canonical JSON
// with its media taken out (StripMedia), the references and blobs that put
// them back, and the text search indexes (SearchText).
type Row struct {
	ID    string
	Role  convo.Role
	Body  []byte
	Media []MediaRef
	Blobs []Blob
	Text  string
	// Usage is what the message adds to the usage index; nil for none.
	Usage *Usage
	// Msg, set when Body is nil, is a long message that the store encodes
	// itself as it stores it, a piece at a time (convo.WriteMessage),
	// its bytes and their length checked then (WriteLong): its encoding is
	// never whole in memory.
	Msg *convo.Message
}

// Encode gives every message without an id a new one and encodes each to
// canonical JSON. Each encoding is decoded again, so a message is refused
// now rather than found unreadable when the conversation is loaded (JSON
// nested too deep inside a part, an extra member that repeats a defined
// one), unless the message is one that surely reads back as itself
// (readsBackAs). It returns the messages as they will be read back.
func Encode(msgs []convo.Message) (convo.History, []Row, error) {
	return encode(msgs, Now(), true, 0)
}

// encode is Encode at the time now, reading back every message unless
// fast is set (the tests compare the two). A message estimated longer than
// longFrom (0: none) that surely reads back as itself and holds no inline
// media is not encoded: its row's Msg is set instead (see Row).
func encode(msgs []convo.Message, now time.Time, fast bool, longFrom int) (convo.History, []Row, error) {
	return encodeIn(nil, msgs, now, fast, longFrom)
}

// An Arena holds the encodings of a batch's messages one after the other
// (PrepareWrite), so that a store done with them once the batch is stored
// can reuse its memory for the next batch: a recorded exchange's bodies,
// each allocated for itself, were a tenth of what the gateway allocated
// to record it. The zero Arena is empty: every encoding is allocated.
type Arena struct{ buf []byte }

// NewArena returns an Arena of size bytes.
func NewArena(size int) *Arena { return &Arena{buf: make([]byte, 0, size)} }

// Reset empties a: the encodings in it must no longer be used.
func (a *Arena) Reset() { a.buf = a.buf[:0] }

// dst is where an encoding of about est bytes goes: the rest of the arena
// when that is enough (or a is nil: a buffer of its own).
func (a *Arena) dst(est int) []byte {
	if a == nil || cap(a.buf)-len(a.buf) < est {
		return make([]byte, 0, est)
	}
	return a.buf[len(a.buf):len(a.buf)]
}

// keep takes body, made by appending to dst(…), out of the arena's free
// room when it is there, and returns it unable to grow into what follows.
func (a *Arena) keep(body []byte) []byte {
	if a != nil && len(body) > 0 && cap(body) == cap(a.buf)-len(a.buf) {
		a.buf = a.buf[:len(a.buf)+len(body)]
	}
	return body[:len(body):len(body)]
}

// encodeIn is encode with the encodings in a (nil: each its own).
func encodeIn(a *Arena, msgs []convo.Message, now time.Time, fast bool, longFrom int) (convo.History, []Row, error) {
	h := make(convo.History, len(msgs))
	rows := make([]Row, len(msgs))
	for i, m := range msgs {
		if m.ID == "" {
			m.ID = store.NewID("msg")
		} else if err := checkString(m.ID, "id", 1, store.MaxMessageIDBytes); err != nil {
			return nil, nil, invalidf("messages[%d].%v", i, err)
		}
		est := m.EstimatedBytes() + len(m.ID) + 16
		if longFrom > 0 && fast && est > longFrom && !inlineData(m.Parts) && readsBackAs(&m, min(est, store.MaxMessageBytes)) {
			back := m
			if !back.Time.IsZero() {
				back.Time = back.Time.UTC() // as read: no monotonic reading
			}
			h[i] = back
			rows[i] = Row{ID: m.ID, Role: back.Role, Msg: &back, Text: SearchText(back), Usage: UsageOf(&back, now)}
			continue
		}
		body, err := convo.AppendMessage(a.dst(est), m)
		if err != nil {
			return nil, nil, invalidf("messages[%d]: %v", i, err)
		}
		body = a.keep(body)
		if len(body) > store.MaxMessageBytes {
			return nil, nil, invalidf("messages[%d]: %d bytes encoded, more than the %d a store accepts", i, len(body), store.MaxMessageBytes)
		}
		var back convo.Message
		if fast && readsBackAs(&m, len(body)) {
			back = m
			if !back.Time.IsZero() {
				back.Time = back.Time.UTC() // as read: no monotonic reading
			}
		} else if back, err = readBack(body); err != nil {
			return nil, nil, invalidf("messages[%d]: would not read back: %v", i, err)
		}
		h[i] = back
		stripped, refs, blobs := StripMedia(body)
		rows[i] = Row{ID: m.ID, Role: back.Role, Body: stripped, Media: refs, Blobs: blobs, Text: SearchText(back), Usage: UsageOf(&back, now)}
	}
	return h, rows, nil
}

// inlineData reports whether a part of ps, or of their parts, has inline
// data: media StripMedia would take out of the encoding.
func inlineData(ps []convo.Part) bool {
	for i := range ps {
		if ps[i].Data != "" || inlineData(ps[i].Parts) {
			return true
		}
	}
	return false
}

// WriteLong writes the encoding of a row's long message (Row.Msg) to w,
// the bytes Encode would have made its Body; i is the message's index in
// the write, for errors. w's writes add up to at most
// store.MaxMessageBytes: past them the write fails, as Encode would have.
func WriteLong(w io.Writer, i int, m *convo.Message) error {
	return writeLong(w, i, m, store.MaxMessageBytes)
}

// writeLong is WriteLong with at most max bytes.
func writeLong(w io.Writer, i int, m *convo.Message, max int) error {
	lw := &limitWriter{w: w, max: max}
	if err := convo.WriteMessage(lw, *m); err != nil {
		switch {
		case lw.over:
			return invalidf("messages[%d]: more than the %d bytes a store accepts, encoded", i, max)
		case lw.err != nil:
			return lw.err
		}
		return invalidf("messages[%d]: %v", i, err)
	}
	return nil
}

// limitWriter passes writes to w until they add up to more than max, and
// keeps w's own error apart.
type limitWriter struct {
	w      io.Writer
	n, max int
	over   bool
	err    error
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n += len(p); l.n > l.max {
		l.over = true
		return 0, errors.New("too long")
	}
	n, err := l.w.Write(p)
	l.err = err
	return n, err
}

// lendFrom is the length of body from which Encode reads it back lending
// its long strings (internal/lend) rather than copying them: for a long
// reply, that copy was a third whole one live beside the message and its
// JSON, at the peak of the gateway's memory (SQLite's two copies of the
// JSON). Shorter bodies are read back as UnmarshalMessage reads them: the
// lending decoder scans each string twice.
const lendFrom = 1 << 20

// readBack decodes body, which Encode has just encoded. The message's long
// strings may alias body, which is never changed afterwards: it is the
// row's Body, or freed once the message (h, used to check the
// conversation, never returned to a caller) is.
func readBack(body []byte) (convo.Message, error) {
	if len(body) < lendFrom {
		return convo.UnmarshalMessage(body)
	}
	var m convo.Message
	err := lend.UnmarshalMessage(body, &m)
	return m, err
}

// Decode reads a stored message body; a body that does not decode means the
// database was changed behind the store's back.
func Decode(body []byte, conv string, pos int64) (convo.Message, error) {
	m, err := convo.UnmarshalMessage(body)
	if err != nil {
		return m, corrupt(conv, pos, err)
	}
	return m, nil
}

func corrupt(conv string, pos int64, err error) error {
	return fmt.Errorf("stored message %d of conversation %q is corrupt: %w", pos, conv, err)
}

// loaderChunk is how many bytes of bodies a Loader decodes at once.
const loaderChunk = 1 << 20

// A Loader decodes the stored bodies of a conversation's messages. It
// gathers them into JSON Lines documents of about a megabyte and decodes
// each with one convo.Unmarshal: the decoder's per-document work (such as
// interning the roles, types and names that repeat) is then shared by
// thousands of messages instead of repeated for each.
type Loader struct {
	conv string
	buf  []byte
	pos  []int64
	h    convo.History
}

// NewLoader returns a Loader for about n messages of conversation conv.
func NewLoader(conv string, n int) *Loader {
	return &Loader{conv: conv, h: make(convo.History, 0, n)}
}

// Add adds the body of the message at pos; body may be reused afterwards.
func (l *Loader) Add(body []byte, pos int64) error {
	if len(body) == 0 || body[0] != '{' {
		return corrupt(l.conv, pos, errors.New("not a JSON object"))
	}
	if l.buf == nil {
		// Room for the chunk, or for the conversation if it is smaller
		// (guessing half a kilobyte a message), so the buffer seldom grows.
		l.buf = make([]byte, 0, max(len(body)+1, min(loaderChunk+loaderChunk/8, (cap(l.h)-len(l.h))*512)))
	}
	l.buf = append(l.buf, body...)
	l.buf = append(l.buf, '\n')
	l.pos = append(l.pos, pos)
	if len(l.buf) >= loaderChunk {
		return l.flush()
	}
	return nil
}

// History returns the messages added, in order.
func (l *Loader) History() (convo.History, error) {
	if err := l.flush(); err != nil {
		return nil, err
	}
	return l.h, nil
}

func (l *Loader) flush() error {
	if len(l.pos) == 0 {
		return nil
	}
	h, err := convo.Unmarshal(l.buf)
	if err != nil {
		// Name the row: the path starts with messages[i], i counting
		// from the first message of this chunk.
		pos := l.pos[0]
		var de *convo.DecodeError
		if errors.As(err, &de) {
			if rest, ok := strings.CutPrefix(de.Path, "messages["); ok {
				if end := strings.IndexByte(rest, ']'); end > 0 {
					if i, e := strconv.Atoi(rest[:end]); e == nil && i < len(l.pos) {
						pos = l.pos[i]
					}
				}
			}
		}
		return corrupt(l.conv, pos, err)
	}
	if len(h) != len(l.pos) {
		return corrupt(l.conv, l.pos[0], fmt.Errorf("%d rows held %d messages", len(l.pos), len(h)))
	}
	l.h = append(l.h, h...)
	// A new buffer, not a reused one: decoded messages may share its bytes.
	l.buf, l.pos = nil, l.pos[:0]
	return nil
}

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", store.ErrInvalid, fmt.Sprintf(format, args...))
}

// Call is a tool call whose result has not been stored yet.
type Call struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// OpenCalls returns the tool calls left unanswered at the end of h, the way
// convo.History.Validate pairs them: the calls of the last message that is
// not a tool message, if it is an assistant message, minus those the tool
// messages after it answer. The tail of a conversation from its last
// non-tool message on is enough to know them. They are h.Pending(), as the
// store keeps them (read here without Pending's copies of whole parts:
// the store asks for every message it writes).
func OpenCalls(h convo.History) []Call {
	k := len(h) - 1
	for k >= 0 && h[k].Role == convo.RoleTool {
		k--
	}
	if k < 0 || h[k].Role != convo.RoleAssistant {
		return nil
	}
	var open []Call
	for _, p := range h[k].Parts {
		if p.Type == convo.TypeToolCall && p.Server == "" {
			open = append(open, Call{ID: p.ID, Name: p.Name})
		}
	}
	for _, m := range h[k+1:] {
		for _, p := range m.Parts {
			if p.Type != convo.TypeToolResult {
				continue
			}
			for j, c := range open {
				if c.ID == p.ID {
					open = append(open[:j], open[j+1:]...)
					break
				}
			}
		}
	}
	if len(open) == 0 {
		return nil
	}
	return open
}

// Check judges msgs, about to be appended to a conversation whose open
// calls are open, by the rules of convo.History.Validate (see the package
// documentation of store), and returns the calls open after them.
//
// A convo.Validator sees msgs between two synthetic messages: an
// assistant message making the stored calls the leading tool messages
// answer, and a tool message answering the calls msgs leave open. So the
// pairing across the boundaries is judged without loading the stored
// history, and calls still open at the end are allowed. (The messages are
// given to the Validator one by one, as Validate does, rather than copied
// into a history of their own.)
func Check(open []Call, msgs convo.History) ([]Call, error) {
	lead := 0
	for lead < len(msgs) && msgs[lead].Role == convo.RoleTool {
		lead++
	}
	opener, remaining := openedBy(open, msgs[:lead])
	var problems []convo.Problem
	if lead < len(msgs) {
		for _, c := range remaining {
			problems = append(problems, convo.Problem{
				Path: "messages[" + strconv.Itoa(lead) + "]",
				Msg:  fmt.Sprintf("tool call %q (%s) of the conversation has no result before this message", c.ID, c.Name),
			})
		}
	}
	var v convo.Validator
	var found []convo.Problem
	offset := 0
	if opener != nil {
		found = append(found, v.Add(convo.Message{Role: convo.RoleAssistant, Parts: opener})...)
		offset = 1
	}
	for _, m := range msgs {
		found = append(found, v.Add(m)...)
	}
	after := remaining
	if lead < len(msgs) {
		after = OpenCalls(msgs)
	}
	if lead < len(msgs) && len(after) > 0 {
		closer := make([]convo.Part, len(after))
		for i, c := range after {
			closer[i] = convo.ToolResult(c.ID, c.Name, "")
		}
		found = append(found, v.Add(convo.ToolResults(closer...))...)
	}
	for _, p := range found {
		p.Path = shift(p.Path, offset)
		p.Unpaired = false // an append is not a conversion: there is nothing to repair it with
		problems = append(problems, p)
	}
	if problems != nil {
		return nil, fmt.Errorf("%w: %w", store.ErrInvalid, &convo.ValidationError{Problems: problems})
	}
	return after, nil
}

// openedBy returns the tool calls of open that the leading tool messages
// lead answer, as the parts of the assistant message that Check puts
// before them, and those they leave open.
func openedBy(open []Call, lead convo.History) (opener []convo.Part, remaining []Call) {
	var answered map[string]int
	for _, m := range lead {
		for _, p := range m.Parts {
			if p.Type == convo.TypeToolResult {
				if answered == nil {
					answered = map[string]int{}
				}
				answered[p.ID]++
			}
		}
	}
	for _, c := range open {
		if answered[c.ID] > 0 {
			answered[c.ID]--
			name := c.Name
			if name == "" {
				name = "unknown" // only a database edited by hand has such a call
			}
			opener = append(opener, convo.ToolCall(c.ID, name, nil))
		} else {
			remaining = append(remaining, c)
		}
	}
	return opener, remaining
}

// shift renumbers a path "messages[i]…" of the validated history to the
// appended messages. The synthetic messages are well formed, so paths never
// point into them; if one did it is kept as it is rather than dropped.
func shift(path string, offset int) string {
	if offset == 0 {
		return path
	}
	rest, ok := strings.CutPrefix(path, "messages[")
	if !ok {
		return path
	}
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return path
	}
	i, err := strconv.Atoi(rest[:end])
	if err != nil || i < offset {
		return path
	}
	return "messages[" + strconv.Itoa(i-offset) + "]" + rest[end+1:]
}

// MarshalCalls encodes open calls for the conversation row: NULL when none.
func MarshalCalls(calls []Call) []byte {
	if len(calls) == 0 {
		return nil
	}
	b, err := json.Marshal(calls)
	if err != nil {
		panic(err) // two strings always encode
	}
	return b
}

// UnmarshalCalls decodes what MarshalCalls made.
func UnmarshalCalls(b []byte) ([]Call, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var calls []Call
	if err := json.Unmarshal(b, &calls); err != nil {
		return nil, fmt.Errorf("stored open tool calls are corrupt: %w", err)
	}
	return calls, nil
}
