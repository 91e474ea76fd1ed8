package anthropic

import (
	"github.com/convo-go/convo/provider"
)

// deltaShape is the fast path of a stream's runs of text (or thinking)
// deltas: {"type":"content_block_delta","index":0,"delta":{"type":
// "text_delta","text":"…"}} over and over, the same bytes but for the text.
//
// An event whose full parse (accumulator.read and apply) only appended its
// text to a block, and gave no warning, is kept as the template: its
// bytes, its SSE event name, and where its text's string is. The event
// right after it, when it has the template's bytes but for that string and
// the string is valid, is the same tokens but for the text (a JSON string
// is self-delimiting, every key and punctuation byte is the template's): the
// full parse would check the same things of the same state, since only
// events of the template's shape came in between, and they only append
// text, and append its text. So fast appends it, counting it against the
// size limit as delta does. Any other event ends the template; one that
// does not match, or whose text would pass the limit, takes the full parse
// (which makes the same error).
type deltaShape struct {
	valid      bool
	off        bool   // no fast path (tests compare the two)
	buf        []byte // the template event's data
	evType     string // its SSE event name
	start, end int    // its text's string token in buf
	index      int64  // the block its text goes to
	think      bool   // a thinking_delta, not a text_delta
	hits       int    // events folded by the template (for tests)

	at, to int // the text string of the event being read, or -1
}

// fast folds ev by the template when it repeats it, into e as read would
// have it, and reports whether it did; when it did not, nothing changed.
func (a *accumulator) fast(ev provider.Event, e *event) bool {
	s := &a.shape
	data := ev.Data
	if !s.valid || ev.Type != s.evType || len(data) <= s.start || string(data[:s.start]) != string(s.buf[:s.start]) || data[s.start] != '"' {
		return false
	}
	r := &a.r
	r.Reset(data, a.lim.MaxDepth)
	r.Seek(s.start)
	v, err := r.ReadStringScratch()
	if err != nil || string(data[r.Offset():]) != string(s.buf[s.end:]) || a.size+int64(len(v)) > a.lim.MaxBytes {
		return false
	}
	a.events++
	a.blocks[s.index].text.Append(v)
	a.size += int64(len(v))
	*e = event{typ: "content_block_delta", index: s.index, hasIndex: true}
	if s.think {
		e.delta = delta{typ: "thinking_delta", thinking: v, hasThink: true}
	} else {
		e.delta = delta{typ: "text_delta", text: v, hasText: true}
	}
	s.hits++
	return true
}

// keep makes the event the full parse just read and applied, without a
// warning, the template when it is a text or thinking delta and nothing
// else.
func (a *accumulator) keep(ev provider.Event, e *event, typed bool) {
	s := &a.shape
	dl := &e.delta
	switch {
	case s.off || !typed || s.at < 0 || e.typ != "content_block_delta" || !e.hasIndex:
		return
	case e.block != nil || e.message || e.hasUsage || e.apiErr != nil || len(e.extra) > 0 || len(e.parts) > 0:
		return
	case dl.hasPartial || dl.hasSign || dl.citation != nil || len(dl.members) > 0 || dl.hasText == dl.hasThink:
		return
	case dl.typ != "text_delta" && dl.typ != "thinking_delta", (dl.typ == "thinking_delta") != dl.hasThink:
		return
	}
	s.buf = append(s.buf[:0], ev.Data...)
	s.evType, s.start, s.end, s.index, s.think = ev.Type, s.at, s.to, e.index, dl.hasThink
	s.valid = true
}
