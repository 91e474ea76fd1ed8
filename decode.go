package convo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/internal/lend"
)

// FormatV1 is the format identifier of canonical documents.
const FormatV1 = "convo/v1"

// Limits bound what a decoder accepts, so hostile input cannot exhaust
// memory or the stack. A zero field means the DefaultLimits value.
type Limits struct {
	MaxBytes int64 // largest document accepted
	MaxDepth int   // deepest JSON nesting accepted
}

// WithDefaults returns l with its zero fields set from DefaultLimits.
func (l Limits) WithDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultLimits.MaxDepth
	}
	return l
}

// DefaultLimits are the limits of Unmarshal, Read and Message.UnmarshalJSON:
// 256 MiB documents (room for inline media) nested at most 64 levels.
var DefaultLimits = Limits{MaxBytes: 256 << 20, MaxDepth: 64}

// DecodeError is a problem in a document, with its place in canonical terms
// (messages[3].parts[1].data).
type DecodeError struct {
	Path string
	Err  error
}

func (e *DecodeError) Error() string {
	if e.Path == "" {
		return e.Err.Error()
	}
	return e.Path + ": " + e.Err.Error()
}

func (e *DecodeError) Unwrap() error { return e.Err }

// ErrorAt returns err with seg put in front of its path ("messages[3]",
// "parts[1]", "data"), making it a *DecodeError if it is not one yet; nil
// stays nil. Decoders call it level by level as errors return, so the final
// error names the place in the decoded format's own terms. Provider codecs
// use it for their wire formats.
func ErrorAt(err error, seg string) error { return at(err, seg) }

// CheckBase64 reports whether s is standard, padded base64 without decoding
// it; the error names the offset of the first bad byte.
func CheckBase64(s string) error {
	if i := badBase64(s); i >= 0 {
		return fmt.Errorf("malformed base64 at offset %d", i)
	}
	return nil
}

// at prefixes err's path with seg ("messages[3]", "parts[1]", "data").
func at(err error, seg string) error {
	if err == nil {
		return nil
	}
	de, ok := err.(*DecodeError)
	if !ok {
		return &DecodeError{Path: seg, Err: err}
	}
	switch {
	case de.Path == "":
		de.Path = seg
	case de.Path[0] == '[':
		de.Path = seg + de.Path
	default:
		de.Path = seg + "." + de.Path
	}
	return de
}

// atKey is at for a member key, converted to a string only on error.
func atKey(err error, key []byte) error {
	if err == nil {
		return nil
	}
	return at(err, string(key))
}

func index(name string, i int) string { return name + "[" + strconv.Itoa(i) + "]" }

// Unmarshal decodes a canonical document with DefaultLimits. It accepts the
// envelope {"format":"convo/v1","messages":[…]}, a bare JSON array of
// messages, and JSON Lines (message objects separated by white space; an
// empty document is JSON Lines with no lines).
//
// The history keeps nothing of data. Its strings, JSON values, parts slices,
// origins and usages are cut from a few shared chunks (32 KiB of bytes, 64
// parts) instead of one allocation each, which makes a decoded history cheap
// for the garbage collector; a message kept after the rest is dropped keeps
// the chunks it was cut from alive, never more than a few.
func Unmarshal(data []byte) (History, error) { return DefaultLimits.Unmarshal(data) }

// Read reads a whole canonical document from r with DefaultLimits.
func Read(r io.Reader) (History, error) { return DefaultLimits.Read(r) }

// Read reads a whole canonical document from rd within the limits l.
func (l Limits) Read(rd io.Reader) (History, error) {
	l = l.WithDefaults()
	data, err := io.ReadAll(io.LimitReader(rd, l.MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading document: %w", err)
	}
	return l.Unmarshal(data)
}

// Unmarshal decodes a canonical document within the limits l.
func (l Limits) Unmarshal(data []byte) (History, error) {
	l = l.WithDefaults()
	if int64(len(data)) > l.MaxBytes {
		return nil, fmt.Errorf("document of more than %d bytes: %w", l.MaxBytes, jsonx.ErrTooLarge)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	d := decoder{r: jsonx.NewReader(data, l.MaxDepth)}
	switch d.r.Peek() {
	case jsonx.Array:
		h, err := d.messages()
		if err == nil {
			err = d.r.ExpectEnd()
		}
		return h, err
	case jsonx.Object:
		if isEnvelope(data[d.r.Offset():]) {
			return d.envelope()
		}
		return d.lines()
	case jsonx.End:
		return History{}, nil // JSON Lines with no lines
	}
	return nil, fmt.Errorf("not a convo document: %w", d.r.Errorf("want an object, an array or JSON Lines"))
}

// isEnvelope reports whether the object at the start of b begins with a
// member of the envelope rather than of a message.
func isEnvelope(b []byte) bool {
	r := jsonx.NewReader(b[1:], 1)
	key, err := r.ReadStringBytes()
	return err == nil && (string(key) == "format" || string(key) == "messages")
}

// UnmarshalMessage decodes one canonical message object with DefaultLimits.
func UnmarshalMessage(data []byte) (Message, error) {
	var m Message
	if int64(len(data)) > DefaultLimits.MaxBytes {
		return m, fmt.Errorf("message of more than %d bytes: %w", DefaultLimits.MaxBytes, jsonx.ErrTooLarge)
	}
	sp := partScratch.Get().(*[]Part)
	d := decoder{r: jsonx.NewReader(data, DefaultLimits.MaxDepth), single: true, scratch: *sp}
	err := d.message(&m)
	putPartScratch(sp, d.scratch)
	if err != nil {
		return Message{}, err
	}
	return m, d.r.ExpectEnd()
}

func init() { lend.UnmarshalMessage = unmarshalMessageLent }

// unmarshalMessageLent is UnmarshalMessage with the message's long strings
// and raw values (slabAlone bytes or more) aliasing data: for a caller that
// decodes what it has just encoded, to check it, and keeps data unchanged
// for as long as it uses the message (see internal/lend).
func unmarshalMessageLent(data []byte, into any) error {
	m := into.(*Message)
	if int64(len(data)) > DefaultLimits.MaxBytes {
		return fmt.Errorf("message of more than %d bytes: %w", DefaultLimits.MaxBytes, jsonx.ErrTooLarge)
	}
	d := decoder{r: jsonx.NewReader(data, DefaultLimits.MaxDepth), single: true, lend: true}
	if err := d.message(m); err != nil {
		*m = Message{}
		return err
	}
	return d.r.ExpectEnd()
}

// partScratch holds the parts stacks of single messages' decoders: a
// store decodes every message it writes, and a stack grown anew for each
// (a Part is hundreds of bytes, and the stack doubles from one) was a
// tenth of what recording an exchange allocated.
var partScratch = sync.Pool{New: func() any { return new([]Part) }}

// maxPooledScratch is the most parts a pooled stack keeps room for: a
// rare message with thousands is not kept alive by the pool.
const maxPooledScratch = 64

// putPartScratch gives s, the stack a decoder grew from *sp, back to the
// pool, cleared so that it holds on to none of the decoded strings.
func putPartScratch(sp *[]Part, s []Part) {
	if cap(s) > maxPooledScratch {
		return
	}
	clear(s[:cap(s)])
	*sp = s[:0]
	partScratch.Put(sp)
}

// UnmarshalJSON decodes one canonical message object.
func (m *Message) UnmarshalJSON(data []byte) error {
	v, err := UnmarshalMessage(data)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// UnmarshalJSON decodes one canonical part object.
func (p *Part) UnmarshalJSON(data []byte) error {
	d := decoder{r: jsonx.NewReader(data, DefaultLimits.MaxDepth)}
	var v Part
	if err := d.part(&v, 0); err != nil {
		return err
	}
	if err := d.r.ExpectEnd(); err != nil {
		return err
	}
	*p = v
	return nil
}

type decoder struct {
	r        *jsonx.Reader
	interned map[string]string
	scratch  []Part // a stack of parts being read, so each parts slice is allocated once at its exact size
	single   bool   // one message: too little repetition to pay for an interning table or part chunks
	lend     bool   // long strings and raw values alias the document (see internal/lend)

	// Chunks what is decoded is cut from (decode_slab.go).
	slab       []byte
	partSlab   []Part
	originSlab []Origin
	usageSlab  []Usage
	// How many parts, origins and usages have been cut so far, and how many
	// messages begun of how many the document's lines suggest, to size the
	// next chunk by how many the rest of the document likely needs.
	partsCut, originsCut, usagesCut int
	begun, expected                 int
}

func (d *decoder) envelope() (History, error) {
	var h History
	var format string
	seenMessages := false
	err := d.r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "format":
			f, err := d.r.ReadString()
			if err != nil {
				return at(err, "format")
			}
			if f != FormatV1 {
				return at(fmt.Errorf("unsupported format %q (this reader knows %s)", f, FormatV1), "format")
			}
			format = f
		case "messages":
			seenMessages = true
			var err error
			h, err = d.messages()
			return err
		default:
			return fmt.Errorf("unknown envelope member %q", key)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if format == "" {
		return nil, errors.New(`envelope has no "format"`)
	}
	if !seenMessages {
		return nil, errors.New(`envelope has no "messages"`)
	}
	if h == nil {
		h = History{}
	}
	return h, d.r.ExpectEnd()
}

func (d *decoder) messages() (History, error) {
	h := d.newHistory()
	err := d.r.ReadArray(func(i int) error {
		h = append(h, Message{})
		if err := d.message(&h[i]); err != nil {
			return at(err, index("messages", i))
		}
		return nil
	})
	return h, err
}

func (d *decoder) lines() (History, error) {
	h := d.newHistory()
	for i := 0; !d.r.AtEnd(); i++ {
		h = append(h, Message{})
		if err := d.message(&h[i]); err != nil {
			return nil, at(err, index("messages", i))
		}
	}
	return h, nil
}

// newHistory returns an empty history with room for the messages the
// document probably holds: writers put one message per line, so the line
// count is a good guess, bounded by the size so a document with many lines
// per message cannot make it allocate much more than the document itself.
func (d *decoder) newHistory() History {
	doc := d.r.Bytes()
	n := bytes.Count(doc, []byte{'\n'}) + 1
	d.expected = min(n, len(doc)/64+1)
	return make(History, 0, d.expected)
}

// optString reads a string; null counts as absent. name is the member's
// key, turned into a string only for an error.
func (d *decoder) optString(dst *string, name []byte) error {
	if d.r.ReadNull() {
		return nil
	}
	s, err := d.str()
	if err != nil {
		return at(err, string(name))
	}
	*dst = s
	return nil
}

// optInterned is optString for values that repeat across a document (part
// types, roles, media types, providers, models, tool names): each distinct
// value is allocated once per document.
func (d *decoder) optInterned(dst *string, name []byte) error {
	if d.r.ReadNull() {
		return nil
	}
	b, err := d.r.ReadStringScratch()
	if err != nil {
		return at(err, string(name))
	}
	if len(b) > 64 || d.single || len(d.interned) >= 4096 {
		// Long values seldom repeat; a full table stops growing, so a
		// Decoder reading a long stream holds a bounded table.
		*dst = d.keepString(b)
		return nil
	}
	if s, ok := d.interned[string(b)]; ok {
		*dst = s
		return nil
	}
	if d.interned == nil {
		d.interned = make(map[string]string, 32)
	}
	s := string(b)
	d.interned[s] = s
	*dst = s
	return nil
}

// msgTime reads a message's "time", an RFC 3339 time or empty.
func (d *decoder) msgTime(m *Message, key []byte) error {
	if d.r.ReadNull() {
		return nil
	}
	b, err := d.r.ReadStringScratch()
	if err != nil || len(b) == 0 {
		return atKey(err, key)
	}
	// Parsed from the bytes as read: the time keeps nothing of its text,
	// so there is nothing to copy.
	t, err := time.Parse(time.RFC3339Nano, unsafe.String(unsafe.SliceData(b), len(b)))
	if err != nil {
		return at(fmt.Errorf("not an RFC 3339 time: %q", b), "time")
	}
	m.Time = t.UTC()
	return nil
}

// compacted reads a message's "compacted" count.
func (d *decoder) compacted(m *Message) error {
	if d.r.ReadNull() {
		return nil
	}
	n, err := d.r.ReadInt()
	if err == nil && (n < 0 || n > 1<<31) {
		err = fmt.Errorf("compacted must be a positive count, got %d", n)
	}
	m.Compacted = int(n)
	return err
}

// msgMeta reads a message's "meta", a JSON object or null.
func (d *decoder) msgMeta(m *Message) error {
	if d.r.ReadNull() {
		return nil
	}
	if d.r.Peek() != jsonx.Object {
		return at(errors.New("meta must be a JSON object"), "meta")
	}
	raw, err := d.raw()
	m.Meta = raw
	return at(err, "meta")
}

func (d *decoder) message(m *Message) error {
	d.begun++
	var role string
	var roleSet bool
	err := d.r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "role":
			roleSet = true
			return d.optInterned(&role, key)
		case "id":
			return d.optString(&m.ID, key)
		case "name":
			return d.optString(&m.Name, key)
		case "time":
			return d.msgTime(m, key)
		case "parts":
			if d.r.ReadNull() {
				return nil
			}
			ps, err := d.parts(0)
			m.Parts = ps
			return err
		case "phase":
			return d.optInterned((*string)(&m.Phase), key)
		case "effort":
			return d.optString(&m.Effort, key)
		case "scope":
			return d.optString((*string)(&m.Scope), key)
		case "compacted":
			return at(d.compacted(m), "compacted")
		case "origin":
			return at(d.origin(m), "origin")
		case "usage":
			return at(d.usage(m), "usage")
		case "cost":
			return at(d.cost(m), "cost")
		case "finish":
			return d.optInterned((*string)(&m.Finish), key)
		case "meta":
			return d.msgMeta(m)
		case "native":
			n, err := d.native()
			m.Native = n
			return at(err, "native")
		default:
			raw, err := d.raw()
			m.Extra = append(m.Extra, Field{Key: string(key), Value: raw})
			return atKey(err, key)
		}
	})
	if err != nil {
		return err
	}
	if !roleSet || role == "" {
		return errors.New("missing role")
	}
	r, alias := normalizeRole(role)
	if r == "" {
		return at(fmt.Errorf("unknown role %q", role), "role")
	}
	m.Role = r
	if alias == "developer" {
		m.Native = rememberDeveloper(m.Native)
	}
	return nil
}

// normalizeRole maps a role or one of its aliases to its Role; alias is the
// spelling that must be remembered for a faithful round trip.
func normalizeRole(s string) (r Role, alias string) {
	switch s {
	case "system", "user", "assistant", "tool", "summary", "error":
		return Role(s), ""
	case "model", "ai":
		return RoleAssistant, ""
	case "human":
		return RoleUser, ""
	case "developer":
		return RoleSystem, "developer"
	}
	return "", ""
}

// rememberDeveloper records that a system message was an OpenAI developer
// message, where the OpenAI codecs look for it.
func rememberDeveloper(n Native) Native {
	const member = `"role":"developer"`
	old := n["openai"]
	if bytes.Contains(old, []byte(`"role":`)) {
		return n
	}
	out := make(Native, len(n)+1)
	for k, v := range n {
		out[k] = v
	}
	if len(old) <= 2 {
		out["openai"] = []byte("{" + member + "}")
	} else {
		out["openai"] = append([]byte("{"+member+","), old[1:]...)
	}
	return out
}

func (d *decoder) origin(m *Message) error {
	if d.r.ReadNull() {
		return nil
	}
	o := d.newOrigin()
	m.Origin = o
	return d.r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "provider":
			return d.optInterned(&o.Provider, key)
		case "model":
			return d.optInterned(&o.Model, key)
		case "response_id":
			return d.optString(&o.ResponseID, key)
		}
		return fmt.Errorf("unknown member %q", key)
	})
}

func (d *decoder) usage(m *Message) error {
	if d.r.ReadNull() {
		return nil
	}
	u := d.newUsage()
	m.Usage = u
	return d.r.ReadObject(func(key []byte) error {
		var dst *int64
		switch string(key) {
		case "input":
			dst = &u.Input
		case "output":
			dst = &u.Output
		case "cache_read":
			dst = &u.CacheRead
		case "cache_write":
			dst = &u.CacheWrite
		case "reasoning":
			dst = &u.Reasoning
		case "total":
			dst = &u.Total
		default:
			return fmt.Errorf("unknown member %q", key)
		}
		n, err := d.r.ReadInt()
		if err == nil && n < 0 {
			err = fmt.Errorf("negative token count %d", n)
		}
		*dst = n
		return atKey(err, key)
	})
}

// cost reads a message's "cost": {"usd": "decimal string"}.
func (d *decoder) cost(m *Message) error {
	if d.r.ReadNull() {
		return nil
	}
	c := &Cost{}
	var seen bool
	err := d.r.ReadObject(func(key []byte) error {
		if string(key) != "usd" {
			return fmt.Errorf("unknown member %q", key)
		}
		s, err := d.str()
		if err != nil {
			return atKey(err, key)
		}
		c.USD, err = ParseMoney(s)
		if err == nil && c.USD < 0 {
			err = errNegativeCost
		}
		seen = true
		return atKey(err, key)
	})
	if err != nil {
		return err
	}
	if !seen {
		return errors.New("missing usd")
	}
	m.Cost = c
	return nil
}

func (d *decoder) native() (Native, error) {
	if d.r.ReadNull() {
		return nil, nil
	}
	n := Native{}
	err := d.r.ReadObject(func(key []byte) error {
		if d.r.Peek() != jsonx.Object {
			return at(errors.New("must be a JSON object"), string(key))
		}
		raw, err := d.raw()
		n[string(key)] = raw
		return atKey(err, key)
	})
	return n, err
}

// maxPartNesting bounds tool_result parts inside tool_result parts.
const maxPartNesting = 4

func (d *decoder) parts(depth int) ([]Part, error) {
	if depth > maxPartNesting {
		return nil, errors.New("parts nested too deeply")
	}
	mark := len(d.scratch)
	defer func() { d.scratch = d.scratch[:mark] }()
	err := d.r.ReadArray(func(i int) error {
		var p Part
		if err := d.part(&p, depth); err != nil {
			return at(err, index("parts", i))
		}
		// Nested parts were read onto the stack and taken off again,
		// so p lands right after its siblings.
		d.scratch = append(d.scratch, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	ps := d.newParts(len(d.scratch) - mark)
	copy(ps, d.scratch[mark:])
	return ps, nil
}

func (d *decoder) part(p *Part, depth int) error {
	start := d.r.Offset()
	err := d.r.ReadObject(func(key []byte) error { return d.partMember(p, key, depth) })
	if err != nil {
		return err
	}
	switch {
	case p.Type == "":
		return errors.New("part has no type" + partHint(p))
	case p.Type == TypeApprovalRequest || p.Type == TypeApproval || p.Type == TypeToolCall || p.Type == TypeToolResult:
		if p.Extra == nil {
			return nil
		}
		return typedMembers(p)
	case p.Type == TypeText && p.Extra != nil:
		return citationsMember(p)
	case !p.Type.Known():
		// Kept whole, so a newer writer's part survives a round trip here.
		raw, err := jsonx.Compact(d.rawFrom(start), 0)
		if err != nil {
			return err
		}
		*p = Part{Type: p.Type, Raw: raw}
	}
	return nil
}

// partString returns the string field of p that member key fills, or nil.
func partString(p *Part, key []byte) *string {
	switch string(key) {
	case "text":
		return &p.Text
	case "url":
		return &p.URL
	case "file_id":
		return &p.FileID
	case "detail":
		return &p.Detail
	case "id":
		return &p.ID
	case "args_raw":
		return &p.ArgsRaw
	case "signature":
		return &p.Signature
	case "encrypted":
		return &p.Encrypted
	}
	return nil
}

// partMember reads member key of a part into p.
func (d *decoder) partMember(p *Part, key []byte, depth int) error {
	switch string(key) {
	case "type":
		return d.optInterned((*string)(&p.Type), key)
	case "media_type":
		return d.optInterned(&p.MediaType, key)
	case "data":
		if err := d.optString(&p.Data, key); err != nil {
			return err
		}
		if i := badBase64(p.Data); i >= 0 {
			return at(fmt.Errorf("malformed base64 at offset %d", i), "data")
		}
		return nil
	case "name":
		return d.optInterned(&p.Name, key)
	case "provider":
		return d.optInterned(&p.Provider, key)
	case "model":
		return d.optInterned(&p.Model, key)
	case "cache":
		return at(d.cache(p), "cache")
	case "value":
		raw, err := d.raw()
		p.Value = raw
		return at(err, "value")
	case "args":
		if d.r.ReadNull() {
			return nil
		}
		raw, err := d.raw()
		p.Args = raw
		return at(err, "args")
	case "parts":
		if d.r.ReadNull() {
			return nil
		}
		ps, err := d.parts(depth + 1)
		p.Parts = ps
		return err
	case "error":
		if d.r.ReadNull() {
			return nil
		}
		b, err := d.r.ReadBool()
		p.Error = b
		return at(err, "error")
	case "summary":
		if d.r.ReadNull() {
			return nil
		}
		p.Summary = []string{}
		return at(d.r.ReadArray(func(i int) error {
			s, err := d.str()
			p.Summary = append(p.Summary, s)
			return at(err, index("", i))
		}), "summary")
	case "native":
		n, err := d.native()
		p.Native = n
		return at(err, "native")
	}
	if dst := partString(p, key); dst != nil {
		return d.optString(dst, key)
	}
	raw, err := d.raw()
	p.Extra = append(p.Extra, Field{Key: string(key), Value: raw})
	return atKey(err, key)
}

// typedMembers moves the members only some part types define (call_id,
// approved and reason on approvals, server on tool calls and results) out
// of Extra, where the part reader put them (it reads members before it may
// know the type): on any other part they stay extra members, as before
// they existed.
func typedMembers(p *Part) error {
	kept := p.Extra[:0]
	for _, f := range p.Extra {
		var err error
		switch {
		case f.Key == "server" && (p.Type == TypeToolCall || p.Type == TypeToolResult):
			err = unquote(f.Value, &p.Server)
		case f.Key == "call_id" && p.Type == TypeApprovalRequest:
			err = unquote(f.Value, &p.CallID)
		case f.Key == "reason" && p.Type == TypeApproval:
			err = unquote(f.Value, &p.Reason)
		case f.Key == "approved" && p.Type == TypeApproval:
			switch string(f.Value) {
			case "true":
				p.Approved = true
			case "false", "null":
			default:
				err = errors.New("want true or false")
			}
		default:
			kept = append(kept, f)
			continue
		}
		if err != nil {
			return at(err, f.Key)
		}
	}
	if len(kept) == 0 {
		kept = nil
	}
	p.Extra = kept
	return nil
}

// unquote reads a JSON string (or null) member value already checked for
// syntax by the reader.
func unquote(v []byte, dst *string) error {
	if string(v) == "null" {
		return nil
	}
	r := jsonx.NewReader(v, 1)
	if r.Peek() != jsonx.String {
		return errors.New("want a string")
	}
	s, err := r.ReadString()
	*dst = s
	return err
}

func (d *decoder) rawFrom(start int) []byte { return d.r.Bytes()[start:d.r.Offset()] }

func (d *decoder) cache(p *Part) error {
	if d.r.ReadNull() {
		return nil
	}
	c := &Cache{}
	p.Cache = c
	return d.r.ReadObject(func(key []byte) error {
		if string(key) != "ttl" {
			return fmt.Errorf("unknown member %q", key)
		}
		return d.optString(&c.TTL, key)
	})
}

// base64Char marks the bytes of the standard base64 alphabet.
var base64Char = func() (t [256]bool) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/" {
		t[c] = true
	}
	return t
}()

// badBase64 returns the offset of the first byte that makes s not standard,
// padded base64, or -1 when s is well formed. It does not decode: inline
// media is validated once, on the way in, and kept as the text it is.
func badBase64(s string) int {
	n := len(s)
	body := n
	switch {
	case n >= 2 && s[n-2] == '=' && s[n-1] == '=':
		body = n - 2
	case n >= 1 && s[n-1] == '=':
		body = n - 1
	}
	i := 0
	// Eight table lookups per branch: this runs over every inline image.
	for ; i+8 <= body; i += 8 {
		if !(base64Char[s[i]] && base64Char[s[i+1]] && base64Char[s[i+2]] && base64Char[s[i+3]] &&
			base64Char[s[i+4]] && base64Char[s[i+5]] && base64Char[s[i+6]] && base64Char[s[i+7]]) {
			break
		}
	}
	for ; i < body; i++ {
		if !base64Char[s[i]] {
			return i
		}
	}
	if n%4 != 0 {
		return n - n%4 // truncated: the last group is short
	}
	return -1
}
