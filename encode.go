package convo

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/convo-go/convo/internal/jsonx"
)

// Marshal encodes h as a canonical envelope, one message per line:
//
//	{"format":"convo/v1","messages":[
//	{"role":"user",…},
//	{"role":"assistant",…}
//	]}
//
// The bytes depend only on h: members come in a fixed order, empty fields
// are left out, Native members are sorted. A string that is not valid UTF-8,
// or a JSON field (Args, Value, Meta, Native, Extra, Raw) that is not valid
// JSON, is an error naming its place: nothing is silently replaced.
func Marshal(h History) ([]byte, error) {
	b, err := AppendHistory(make([]byte, 0, initialSize(h)), h)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// AppendHistory appends the canonical document of h, the bytes Marshal
// returns, to dst and returns the extended buffer; on an error it returns
// dst as it was. A program that encodes again and again can hand the same
// buffer back (buf[:0]): once it is large enough nothing is allocated per
// message, and the memory written is memory already in use rather than a
// new buffer the size of the document, which for a long history the system
// must first provide and the runtime clear.
func AppendHistory(dst []byte, h History) ([]byte, error) {
	e := encoder{buf: dst}
	e.buf = append(e.buf, `{"format":"convo/v1","messages":[`...)
	for i := range h {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = append(e.buf, '\n')
		if err := e.message(&h[i]); err != nil {
			return dst, at(err, index("messages", i))
		}
	}
	if len(h) > 0 {
		e.buf = append(e.buf, '\n')
	}
	return append(e.buf, "]}\n"...), nil
}

// MarshalLines encodes h as JSON Lines: one message object per line.
func MarshalLines(h History) ([]byte, error) {
	e := encoder{buf: make([]byte, 0, initialSize(h))}
	for i := range h {
		if err := e.message(&h[i]); err != nil {
			return nil, at(err, index("messages", i))
		}
		e.buf = append(e.buf, '\n')
	}
	return e.buf, nil
}

// AppendMessage appends the canonical encoding of m (one line, no newline)
// to dst.
func AppendMessage(dst []byte, m Message) ([]byte, error) {
	e := encoder{buf: dst}
	if err := e.message(&m); err != nil {
		return dst, err
	}
	return e.buf, nil
}

// MarshalJSON encodes m as one canonical message object.
func (m Message) MarshalJSON() ([]byte, error) {
	return AppendMessage(make([]byte, 0, m.EstimatedBytes()), m)
}

// MarshalJSON encodes p as one canonical part object.
func (p Part) MarshalJSON() ([]byte, error) {
	e := encoder{}
	if err := e.part(&p); err != nil {
		return nil, err
	}
	return e.buf, nil
}

// initialSize is the estimated size of h's encoding: one cheap pass that
// saves growing and copying the output buffer.
func initialSize(h History) int {
	n := 64
	for i := range h {
		n += h[i].EstimatedBytes()
	}
	return n + n/16 // escaping, which the estimate leaves out
}

type encoder struct {
	buf []byte
	raw jsonx.Reader // reused to validate and compact JSON fields
	// flush, when set, takes buf's bytes once they are piece or more,
	// within a long string or after a part (WriteMessage): the encoding
	// is never whole.
	flush func([]byte) error
	piece int
}

// WriteMessage writes the canonical encoding of m, the bytes
// AppendMessage appends, to w, in writes of about 64 KiB or less once m's
// encoding is longer (past its long strings and its parts): a long
// message's encoding is never whole in memory, only m is. Its errors are AppendMessage's; w may have had part of the
// encoding by then.
func WriteMessage(w io.Writer, m Message) error {
	return writeMessage(w, m, 64<<10)
}

// writeMessage is WriteMessage writing once piece bytes are held.
func writeMessage(w io.Writer, m Message, piece int) error {
	e := encoder{piece: piece}
	e.flush = func(b []byte) error {
		_, err := w.Write(b)
		return err
	}
	if err := e.message(&m); err != nil {
		return err
	}
	if len(e.buf) == 0 {
		return nil
	}
	return e.flush(e.buf)
}

// str writes a member with a string value unless s is empty. Most of a
// part's fields are empty, so the test is kept small enough to be inlined
// and the call is paid only for a member written.
func (e *encoder) str(key, s string) error {
	if s == "" {
		return nil
	}
	return e.member(key, s)
}

// member writes a member with a string value.
func (e *encoder) member(key, s string) error {
	e.buf = jsonx.AppendKey(e.buf, key)
	var ok bool
	if e.flush != nil && len(s) > e.piece {
		var err error
		if ok, err = e.long(s); err != nil {
			return err
		}
	} else {
		e.buf, ok = jsonx.AppendStringChecked(e.buf, s)
	}
	if !ok {
		return at(fmt.Errorf("invalid UTF-8 in string"), key)
	}
	return nil
}

// long writes the long string s a piece at a time, each cut at a rune's
// first byte (the pieces then write what the whole does), flushing what is
// held after each; it reports whether s was valid UTF-8.
func (e *encoder) long(s string) (bool, error) {
	e.buf = append(e.buf, '"')
	valid := true
	for len(s) > 0 {
		n := min(len(s), max(e.piece/8, utf8.UTFMax)) // escaped, a piece may grow sixfold
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n--
		}
		if n == 0 { // not UTF-8 (an error): any cut does
			n = min(len(s), utf8.UTFMax)
		}
		var ok bool
		e.buf, ok = jsonx.AppendStringContentChecked(e.buf, s[:n])
		valid = valid && ok
		s = s[n:]
		if err := e.flushFull(); err != nil {
			return valid, err
		}
	}
	e.buf = append(e.buf, '"')
	return valid, nil
}

func (e *encoder) int(key string, n int64) {
	if n != 0 {
		e.buf = jsonx.AppendKey(e.buf, key)
		e.buf = jsonx.AppendInt(e.buf, n)
	}
}

// rawValue writes a member holding a JSON value, validated and compacted so
// that an invalid value built by hand cannot corrupt the document.
func (e *encoder) rawValue(key string, v json.RawMessage) error {
	if v == nil {
		return nil
	}
	e.buf = jsonx.AppendKey(e.buf, key)
	out, err := e.raw.AppendCompact(e.buf, v, DefaultLimits.MaxDepth)
	if err != nil {
		return at(fmt.Errorf("invalid JSON: %w", err), key)
	}
	e.buf = out
	return nil
}

func (e *encoder) native(n Native) error {
	if len(n) == 0 {
		return nil
	}
	e.buf = jsonx.AppendKey(e.buf, "native")
	e.buf = append(e.buf, '{')
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := e.rawValue(k, n[k]); err != nil {
			return at(err, "native")
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

func (e *encoder) extra(f Fields) error {
	for _, x := range f {
		if err := e.rawValue(x.Key, x.Value); err != nil {
			return err
		}
	}
	return nil
}

func (e *encoder) message(m *Message) error {
	if !m.Role.Known() {
		return fmt.Errorf("unknown role %q", m.Role)
	}
	e.buf = append(e.buf, `{"role":"`...)
	e.buf = append(e.buf, m.Role...)
	e.buf = append(e.buf, '"')
	if err := e.str("id", m.ID); err != nil {
		return err
	}
	if err := e.str("name", m.Name); err != nil {
		return err
	}
	if !m.Time.IsZero() {
		e.buf = jsonx.AppendKey(e.buf, "time")
		e.buf = append(e.buf, '"')
		e.buf = m.Time.UTC().AppendFormat(e.buf, time.RFC3339Nano)
		e.buf = append(e.buf, '"')
	}
	if err := e.str("phase", string(m.Phase)); err != nil {
		return err
	}
	if err := e.str("effort", m.Effort); err != nil {
		return err
	}
	if err := e.str("scope", string(m.Scope)); err != nil {
		return err
	}
	e.int("compacted", int64(m.Compacted))
	if o := m.Origin; o != nil {
		e.buf = jsonx.AppendKey(e.buf, "origin")
		e.buf = append(e.buf, '{')
		if err := e.str("provider", o.Provider); err != nil {
			return at(err, "origin")
		}
		if err := e.str("model", o.Model); err != nil {
			return at(err, "origin")
		}
		if err := e.str("response_id", o.ResponseID); err != nil {
			return at(err, "origin")
		}
		e.buf = append(e.buf, '}')
	}
	if err := e.accounting(m); err != nil {
		return err
	}
	if err := e.str("finish", string(m.Finish)); err != nil {
		return err
	}
	if err := e.parts(m.Parts); err != nil {
		return err
	}
	if m.Meta != nil && !isObject(m.Meta) {
		// Unmarshal refuses any other meta: writing it would make a
		// document convo cannot read back.
		return at(errors.New("meta must be a JSON object"), "meta")
	}
	if err := e.rawValue("meta", m.Meta); err != nil {
		return err
	}
	if err := e.native(m.Native); err != nil {
		return err
	}
	if err := e.extra(m.Extra); err != nil {
		return err
	}
	e.buf = append(e.buf, '}')
	return nil
}

// accounting writes a message's usage and cost.
func (e *encoder) accounting(m *Message) error {
	if u := m.Usage; u != nil {
		e.buf = jsonx.AppendKey(e.buf, "usage")
		e.buf = append(e.buf, '{')
		e.int("input", u.Input)
		e.int("output", u.Output)
		e.int("cache_read", u.CacheRead)
		e.int("cache_write", u.CacheWrite)
		e.int("reasoning", u.Reasoning)
		e.int("total", u.Total)
		e.buf = append(e.buf, '}')
	}
	if c := m.Cost; c != nil {
		if c.USD < 0 {
			return at(errNegativeCost, "cost.usd")
		}
		// Written even when zero: a priced free message is not one whose
		// cost is unknown.
		e.buf = jsonx.AppendKey(e.buf, "cost")
		e.buf = append(e.buf, `{"usd":"`...)
		e.buf = c.USD.Append(e.buf)
		e.buf = append(e.buf, `"}`...)
	}
	return nil
}

func (e *encoder) parts(ps []Part) error {
	if len(ps) == 0 {
		return nil
	}
	e.buf = jsonx.AppendKey(e.buf, "parts")
	e.buf = append(e.buf, '[')
	for i := range ps {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.part(&ps[i]); err != nil {
			return at(err, index("parts", i))
		}
		if err := e.flushFull(); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

// flushFull hands what is held to flush, when there is one and it holds a
// piece: a message of many short parts is not whole either.
func (e *encoder) flushFull() error {
	if e.flush == nil || len(e.buf) < e.piece {
		return nil
	}
	err := e.flush(e.buf)
	e.buf = e.buf[:0]
	return err
}

// summary writes a reasoning part's summary, if it has one.
func (e *encoder) summary(summary []string) error {
	if len(summary) == 0 {
		return nil
	}
	e.buf = jsonx.AppendKey(e.buf, "summary")
	e.buf = append(e.buf, '[')
	for i, s := range summary {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		var ok bool
		if e.buf, ok = jsonx.AppendStringChecked(e.buf, s); !ok {
			return at(fmt.Errorf("invalid UTF-8 in string"), index("summary", i))
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

// cache writes a part's cache breakpoint, if it has one.
func (e *encoder) cache(c *Cache) error {
	if c == nil {
		return nil
	}
	e.buf = jsonx.AppendKey(e.buf, "cache")
	e.buf = append(e.buf, '{')
	if err := e.str("ttl", c.TTL); err != nil {
		return at(err, "cache")
	}
	e.buf = append(e.buf, '}')
	return nil
}

// rawPart writes a part kept whole (one of a type this version does not
// know), compacted.
func (e *encoder) rawPart(raw []byte) error {
	out, err := e.raw.AppendCompact(e.buf, raw, DefaultLimits.MaxDepth)
	if err != nil {
		return fmt.Errorf("invalid raw part: %w", err)
	}
	e.buf = out
	return nil
}

func (e *encoder) part(p *Part) error {
	if p.Raw != nil {
		return e.rawPart(p.Raw)
	}
	if p.Type == "" {
		return fmt.Errorf("part has no type")
	}
	e.buf = append(e.buf, '{')
	for _, f := range [...]struct {
		key string
		val string
	}{
		{"type", string(p.Type)},
		{"server", p.Server},
		{"id", p.ID},
		{"call_id", p.CallID},
		{"name", p.Name},
		{"text", p.Text},
		{"media_type", p.MediaType},
		{"data", p.Data},
		{"url", p.URL},
		{"file_id", p.FileID},
		{"detail", p.Detail},
	} {
		if err := e.str(f.key, f.val); err != nil {
			return err
		}
	}
	if err := e.citations(p.Citations); err != nil {
		return err
	}
	if err := e.rawValue("value", p.Value); err != nil {
		return err
	}
	if err := e.rawValue("args", p.Args); err != nil {
		return err
	}
	if err := e.str("args_raw", p.ArgsRaw); err != nil {
		return err
	}
	if err := e.parts(p.Parts); err != nil {
		return err
	}
	if p.Error {
		e.buf = append(e.buf, `,"error":true`...)
	}
	if p.Type == TypeApproval {
		// Always written: a denial is as much an answer as an approval.
		e.buf = strconv.AppendBool(append(e.buf, `,"approved":`...), p.Approved)
	}
	if err := e.str("reason", p.Reason); err != nil {
		return err
	}
	return e.partEnd(p)
}

// partEnd writes the members of a part that follow its content (reasoning
// fields, origin, cache, native, extra) and closes it.
func (e *encoder) partEnd(p *Part) error {
	if err := e.summary(p.Summary); err != nil {
		return err
	}
	for _, f := range [...]struct {
		key string
		val string
	}{
		{"signature", p.Signature},
		{"encrypted", p.Encrypted},
		{"provider", p.Provider},
		{"model", p.Model},
	} {
		if err := e.str(f.key, f.val); err != nil {
			return err
		}
	}
	if err := e.cache(p.Cache); err != nil {
		return err
	}
	if err := e.native(p.Native); err != nil {
		return err
	}
	if err := e.extra(p.Extra); err != nil {
		return err
	}
	e.buf = append(e.buf, '}')
	return nil
}
