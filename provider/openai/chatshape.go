package openai

import (
	"slices"

	"github.com/convo-go/convo/internal/jsonx"
)

// chunkShape is the fast path of the chunks of a streamed Chat reply that
// repeat the one before but for a few strings: most chunks of a text reply
// are the same bytes ({"id":…,"choices":[{"index":0,"delta":{"content":)
// but for the text delta and an "obfuscation" value.
//
// When the full parse of a chunk (chatAcc.chunk) has no effect but
// appending string values to the first choice's texts, and effects that a
// second run leaves as they are (the id, model and created it keeps only
// when they are the first; a role kept only when there is none; warnings
// given once), the chunk is kept as a template: its bytes and the string
// values ("holes") whose handling is either appending to a text or being
// skipped. A later chunk that has the template's bytes but for its holes,
// each hole a valid JSON string, is the same sequence of tokens (a JSON
// string is self-delimiting and every key, number and punctuation byte is
// the template's): its full parse would make the same calls on the same
// state, but for the text each hole appends. So fast appends the holes'
// texts and is done, exactly as the full parse. Anything else, including
// any hole that is not a valid string, falls back to the full parse, which
// also makes the same error.
type chunkShape struct {
	ok    bool        // the chunk the full parse is reading is a template so far
	holes []chunkHole // the chunk's holes so far (in parse order)

	valid bool        // buf and tmpl are a template
	buf   []byte      // the template chunk
	tmpl  []chunkHole // its holes, by offset
	off   bool        // no fast path (tests compare the two)
	at    []int       // where the text holes of the chunk being matched begin
	vals  [][]byte    // their values when they alias the chunk, else nil
	hits  int         // chunks folded by the template (for tests)
	quick int         // of them, those matchVarying matched (for tests)
}

// chunkHole is a string value of a template chunk: start and end bound
// the token, quotes included; dst is the text its value is appended to,
// nil for a value the full parse only validates.
type chunkHole struct {
	start, end int
	dst        *textBuf
	// vary is set once a chunk matched had other bytes in this hole
	// (OpenAI's "obfuscation" value): matchVarying reads it as a string
	// rather than comparing it.
	vary bool
}

// begin starts the record of a chunk's full parse.
func (s *chunkShape) begin() { s.ok, s.holes = !s.off, s.holes[:0] }

// spoil notes that the chunk being read does something a repeat would do
// again (or may): it is no template.
func (s *chunkShape) spoil() { s.ok = false }

// hole notes a string value of the chunk being read at [start, end).
func (s *chunkShape) hole(start, end int, dst *textBuf) {
	if s.ok {
		s.holes = append(s.holes, chunkHole{start: start, end: end, dst: dst})
	}
}

// keep makes the chunk whose full parse just succeeded the template, when
// it is one; else the template stays (its argument does not depend on the
// chunks in between: the effects it leaves out are ones no later chunk
// undoes).
func (s *chunkShape) keep(data []byte) {
	if !s.ok {
		return
	}
	s.buf = append(s.buf[:0], data...)
	s.tmpl = append(s.tmpl[:0], s.holes...)
	// The delta is read after the rest of its choice: sort by offset.
	slices.SortFunc(s.tmpl, func(a, b chunkHole) int { return a.start - b.start })
	s.valid = true
}

// skip skips the value at r, noting it as a hole when it is a string; base
// is r's offset in the chunk.
func (a *chatAcc) skip(r *jsonx.Reader, base int) error {
	if !a.shape.ok || r.Peek() != jsonx.String {
		return r.Skip()
	}
	start := r.Offset()
	err := r.Skip()
	a.shape.hole(base+start, base+r.Offset(), nil)
	return err
}

// fast folds chunk data by the template when data repeats it, and reports
// whether it did; when it did not, nothing changed.
func (a *chatAcc) fast(data []byte) bool {
	s := &a.shape
	if !s.valid {
		return false
	}
	r := &a.rd
	r.Reset(data, a.opts.DecodeLimits().MaxDepth)
	// First match and validate all of it, then append: a chunk that does
	// not match must leave everything as it was.
	switch {
	case a.matchVarying(data):
		s.quick++
	case !a.matchHoles(data):
		return false
	}
	k := 0
	for _, h := range s.tmpl {
		if h.dst != nil {
			v := s.vals[k]
			if v == nil {
				r.Seek(s.at[k])
				v, _ = r.ReadStringScratch()
			}
			a.add(h.dst, v, -1)
			k++
		}
	}
	a.cur = &a.first
	s.hits++
	return true
}

// matchVarying reports whether data is the template but for its text
// holes and those that varied before, each a valid string there, all the
// rest the template's bytes: each stretch between two such holes compared
// whole, at once. The holes that vary are learnt by matchHoles.
func (a *chatAcc) matchVarying(data []byte) bool {
	s := &a.shape
	s.at, s.vals = s.at[:0], s.vals[:0]
	pos, prev := 0, 0
	for _, h := range s.tmpl {
		if h.dst == nil && !h.vary {
			continue
		}
		end, ok := a.holeFrom(data, pos, prev, h)
		if !ok {
			return false
		}
		pos, prev = end, h.end
	}
	return string(data[pos:]) == string(s.buf[prev:])
}

// matchHoles reports whether data is the template but for its holes,
// each a valid string there, hole by hole: a hole with the template's
// bytes needs no reading. A hole that had other bytes is marked to vary.
func (a *chatAcc) matchHoles(data []byte) bool {
	s := &a.shape
	s.at, s.vals = s.at[:0], s.vals[:0]
	pos, prev := 0, 0
	for i, h := range s.tmpl {
		if h.dst == nil && hasPrefixAt(data, pos, s.buf[prev:h.end]) {
			// The template's own string: valid, and nothing to append.
			pos, prev = pos+h.end-prev, h.end
			continue
		}
		end, ok := a.holeFrom(data, pos, prev, h)
		if !ok {
			return false
		}
		if h.dst == nil {
			s.tmpl[i].vary = true
		}
		pos, prev = end, h.end
	}
	return string(data[pos:]) == string(s.buf[prev:])
}

// holeFrom matches data from pos on against the template's bytes from
// prev to hole h, then reads the hole's string (holeAt); it returns where
// the string ends.
func (a *chatAcc) holeFrom(data []byte, pos, prev int, h chunkHole) (int, bool) {
	lit := a.shape.buf[prev:h.start]
	if !hasPrefixAt(data, pos, lit) || len(data) == pos+len(lit) || data[pos+len(lit)] != '"' {
		return 0, false
	}
	return a.holeAt(pos+len(lit), h.dst != nil)
}

// holeAt reads the string at data[pos] (a quote) of the chunk being
// matched and returns where it ends; a text hole's place and value are
// noted (the value nil when it had escapes: unescaped in r's scratch,
// which the next read overwrites, it is read again once all matched).
func (a *chatAcc) holeAt(pos int, text bool) (int, bool) {
	s := &a.shape
	data := a.rd.Bytes()
	if n := jsonx.PlainPrefix(data[pos+1:]); pos+1+n < len(data) && data[pos+1+n] == '"' {
		// Printable ASCII up to its quote, the usual delta: a valid
		// string, its value its JSON, found without the reader.
		if text {
			s.at, s.vals = append(s.at, pos), append(s.vals, data[pos+1:pos+1+n])
		}
		return pos + n + 2, true
	}
	r := &a.rd
	r.Seek(pos)
	if !text {
		err := r.Skip()
		return r.Offset(), err == nil
	}
	v, err := r.ReadStringScratch()
	if err != nil {
		return 0, false
	}
	end := r.Offset()
	if len(v) != end-pos-2 {
		v = nil // escaped: only a string with no escape is as long as its JSON
	}
	s.at, s.vals = append(s.at, pos), append(s.vals, v)
	return end, true
}

// hasPrefixAt reports whether b[at:] begins with p.
func hasPrefixAt(b []byte, at int, p []byte) bool {
	return len(b)-at >= len(p) && string(b[at:at+len(p)]) == string(p)
}
