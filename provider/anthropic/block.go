package anthropic

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
)

// Block members convo maps to Part fields. A block is read in one pass
// whatever the order of its members (the Go SDK writes "type" last), so
// every known member is read by name and interpreted once the type is known;
// a member the type does not use is kept as a native member.
const (
	kType = iota
	kText
	kThinking
	kSignature
	kData
	kID
	kName
	kToolUseID
	kTitle
	kInput
	kIsError
	kContent
	kSource
	kCacheControl
	nKeys
	kUnknown = -1
)

// strKeys are the members read as strings, in key-id order from kText.
var strKeys = [...]string{kText: "text", kThinking: "thinking", kSignature: "signature", kData: "data",
	kID: "id", kName: "name", kToolUseID: "tool_use_id", kTitle: "title"}

func keyID(k []byte) int {
	switch string(k) {
	case "type":
		return kType
	case "text":
		return kText
	case "thinking":
		return kThinking
	case "signature":
		return kSignature
	case "data":
		return kData
	case "id":
		return kID
	case "name":
		return kName
	case "tool_use_id":
		return kToolUseID
	case "title":
		return kTitle
	case "input":
		return kInput
	case "is_error":
		return kIsError
	case "content":
		return kContent
	case "source":
		return kSource
	case "cache_control":
		return kCacheControl
	}
	return kUnknown
}

// span is one member of the object being read: its key and where its value
// lies in the document.
type span struct {
	key        []byte
	id         int
	start, end int
}

// content kinds of a block's "content" member.
const (
	contentNone = iota
	contentString
	contentArray
	contentOther // null, or a value that is neither a string nor an array
)

// block is a content block as read, before its type is interpreted.
type block struct {
	start, end int // the object in the document
	spans      []span
	typ        string
	str        [kTitle + 1]string
	has        uint32 // bit per key id: present with the expected JSON kind
	input      []byte
	isError    bool
	cache      []byte // raw cache_control

	contentKind int
	contentStr  string
	content     []convo.Part
	contentErr  error // first problem in content, reported if the type uses it
	src         source
}

func (b *block) got(k int) bool { return b.has&(1<<k) != 0 }

// present reports whether member k appeared at all, whatever its kind.
func (b *block) present(k int) bool {
	for _, s := range b.spans {
		if s.id == k {
			return true
		}
	}
	return false
}

// source is an image or document source as read.
type source struct {
	kind      int // contentNone: absent; contentArray: an object; contentOther: not an object
	typ       string
	mediaType string
	data      string
	url       string
	fileID    string
	other     bool // a member convo has no field for, or a wrongly typed one
}

// blockReader reads blocks from one document. reply is set for responses,
// whose null members mean "absent" and are dropped; in requests every member
// is kept so that a round trip gives the same JSON.
type blockReader struct {
	r     *jsonx.Reader
	reply bool
	spans []span // scratch for the objects being read
	// blocks are reused by nesting depth, and parts collects the parts of
	// the arrays being read, so that reading allocates little more than
	// what it returns.
	blocks []*block
	depth  int
	parts  []convo.Part
}

// take returns a cleared block for the next nesting level; give returns it.
func (d *blockReader) take() *block {
	if d.depth == len(d.blocks) {
		d.blocks = append(d.blocks, new(block))
	}
	b := d.blocks[d.depth]
	d.depth++
	*b = block{}
	return b
}

func (d *blockReader) give() { d.depth-- }

// collected returns the parts gathered since mark as a new slice and
// drops them from the scratch.
func (d *blockReader) collected(mark int) []convo.Part {
	out := make([]convo.Part, len(d.parts)-mark)
	copy(out, d.parts[mark:])
	// The stale entries are not cleared: the scratch lives no longer than
	// the document being read, which they point into anyway.
	d.parts = d.parts[:mark]
	return out
}

// readName reads a string that is usually one of a few well-known names
// (block and source types, roles, media types), without allocating for
// those.
func readName(r *jsonx.Reader) (string, error) {
	b, err := r.ReadStringBytes()
	if err != nil {
		return "", err
	}
	return nameOf(b), nil
}

// nameOf returns b as a string, made once for the well-known names.
func nameOf(b []byte) string {
	switch string(b) {
	case "text":
		return "text"
	case "image":
		return "image"
	case "document":
		return "document"
	case "thinking":
		return "thinking"
	case "redacted_thinking":
		return "redacted_thinking"
	case "tool_use":
		return "tool_use"
	case "tool_result":
		return "tool_result"
	case "base64":
		return "base64"
	case "url":
		return "url"
	case "file":
		return "file"
	case "user":
		return "user"
	case "assistant":
		return "assistant"
	case "image/png":
		return "image/png"
	case "image/jpeg":
		return "image/jpeg"
	case "application/pdf":
		return "application/pdf"
	case "content_block_delta":
		return "content_block_delta"
	case "content_block_start":
		return "content_block_start"
	case "content_block_stop":
		return "content_block_stop"
	case "text_delta":
		return "text_delta"
	case "input_json_delta":
		return "input_json_delta"
	case "thinking_delta":
		return "thinking_delta"
	case "signature_delta":
		return "signature_delta"
	case "message":
		return "message"
	case "message_start":
		return "message_start"
	case "message_delta":
		return "message_delta"
	case "message_stop":
		return "message_stop"
	case "ping":
		return "ping"
	case "error":
		return "error"
	}
	return string(b)
}

// errNotObject is returned for an array element that should be a block.
var errNotObject = errors.New("want a content block object")

// read reads one block object at the reader's position.
func (d *blockReader) read(b *block) error {
	r := d.r
	if r.Peek() != jsonx.Object {
		return errNotObject
	}
	b.start = r.Offset()
	mark := len(d.spans)
	err := r.ReadObject(func(key []byte) error {
		r.Peek()
		start := r.Offset()
		id := keyID(key)
		var err error
		switch id {
		case kType:
			if r.Peek() == jsonx.String {
				b.typ, err = readName(r)
				b.has |= 1 << kType
			} else {
				err = r.Skip()
			}
		case kText, kThinking, kSignature, kData, kID, kName, kToolUseID, kTitle:
			if r.Peek() == jsonx.String {
				b.str[id], err = r.ReadString()
				b.has |= 1 << id
			} else {
				err = r.Skip()
			}
		case kInput:
			b.input, err = r.ReadRaw()
			b.has |= 1 << kInput
		case kIsError:
			if r.Peek() == jsonx.Bool {
				b.isError, err = r.ReadBool()
				b.has |= 1 << kIsError
			} else {
				err = r.Skip()
			}
		case kContent:
			err = d.content(b)
		case kSource:
			err = d.source(&b.src)
		case kCacheControl:
			b.cache, err = r.ReadRaw()
		default:
			err = r.Skip()
		}
		if err != nil {
			return err
		}
		d.spans = append(d.spans, span{key: key, id: id, start: start, end: r.Offset()})
		return nil
	})
	b.end = r.Offset()
	b.spans = d.spans[mark:]
	return err
}

// release drops the spans of a block read since mark.
func (d *blockReader) release(mark int) { d.spans = d.spans[:mark] }

// eachBlock reads the array of content blocks at the reader, passing each
// block's part to fn; an error names the block's index.
func (d *blockReader) eachBlock(fn func(p convo.Part) error) error {
	return d.r.ReadArray(func(i int) error {
		mark := len(d.spans)
		b := d.take()
		defer d.give()
		if err := d.read(b); err != nil {
			return convo.ErrorAt(err, index("", i))
		}
		p, err := d.part(b)
		d.release(mark)
		if err == nil {
			err = fn(p)
		}
		return convo.ErrorAt(err, index("", i))
	})
}

// content reads a "content" member: a string or an array of blocks, which
// are converted as they are read. Problems that only matter if the block
// turns out to be a tool_result are kept in contentErr.
func (d *blockReader) content(b *block) error {
	r := d.r
	switch r.Peek() {
	case jsonx.String:
		s, err := r.ReadString()
		b.contentKind, b.contentStr = contentString, s
		return err
	case jsonx.Array:
		b.contentKind = contentArray
		pmark := len(d.parts)
		err := r.ReadArray(func(i int) error {
			if r.Peek() != jsonx.Object {
				if b.contentErr == nil {
					b.contentErr = convo.ErrorAt(errNotObject, index("content", i))
				}
				return r.Skip()
			}
			mark := len(d.spans)
			nb := d.take()
			defer d.give()
			if err := d.read(nb); err != nil {
				return convo.ErrorAt(err, index("content", i))
			}
			p, err := d.part(nb)
			d.release(mark)
			if err != nil && b.contentErr == nil {
				b.contentErr = convo.ErrorAt(err, index("content", i))
			}
			d.parts = append(d.parts, p)
			return nil
		})
		b.content = d.collected(pmark)
		return err
	}
	b.contentKind = contentOther
	return r.Skip()
}

// source reads an image or document source object.
func (d *blockReader) source(s *source) error {
	r := d.r
	if r.Peek() != jsonx.Object {
		s.kind = contentOther
		return r.Skip()
	}
	s.kind = contentArray
	return r.ReadObject(func(key []byte) error {
		var dst *string
		switch string(key) {
		case "type", "media_type":
			if r.Peek() != jsonx.String {
				s.other = true
				return r.Skip()
			}
			v, err := readName(r)
			if key[0] == 't' {
				s.typ = v
			} else {
				s.mediaType = v
			}
			return err
		case "data":
			dst = &s.data
		case "url":
			dst = &s.url
		case "file_id":
			dst = &s.fileID
		default:
			s.other = true
			return r.Skip()
		}
		if r.Peek() != jsonx.String {
			s.other = true
			return r.Skip()
		}
		var err error
		*dst, err = r.ReadString()
		return err
	})
}

// part interprets a block read by read, with its citations lifted out of
// its native members.
func (d *blockReader) part(b *block) (convo.Part, error) {
	p, err := d.interpret(b)
	if err == nil {
		liftCitations(&p)
	}
	return p, err
}

// interpret interprets a block read by read. Blocks of a type convo has no
// part for are kept whole as opaque parts.
func (d *blockReader) interpret(b *block) (convo.Part, error) {
	if !b.got(kType) {
		if b.present(kType) {
			return convo.Part{}, convo.ErrorAt(errors.New("want a string"), "type")
		}
		return convo.Part{}, errors.New("content block has no type")
	}
	var p convo.Part
	used := uint32(1 << kType)
	need := func(k int) error { return b.need(k, &used) }
	switch b.typ {
	case "text":
		if err := need(kText); err != nil {
			return p, err
		}
		p = convo.Part{Type: convo.TypeText, Text: b.str[kText]}
	case "image", "document":
		var opaque bool
		var err error
		p, opaque, err = d.media(b, &used)
		if err != nil {
			return p, err
		}
		if opaque {
			return d.opaque(b)
		}
	case "thinking":
		if err := need(kThinking); err != nil {
			return p, err
		}
		if err := d.opt(b, kSignature, &used); err != nil {
			return p, err
		}
		p = convo.Part{Type: convo.TypeReasoning, Text: b.str[kThinking], Signature: b.str[kSignature],
			Provider: ProviderID}
	case "redacted_thinking":
		if err := need(kData); err != nil {
			return p, err
		}
		p = convo.Part{Type: convo.TypeReasoning, Encrypted: b.str[kData], Provider: ProviderID}
	case "tool_use":
		var err error
		if p, err = toolUse(b, &used); err != nil {
			return p, err
		}
	case "tool_result":
		var err error
		if p, err = d.toolResult(b, &used); err != nil {
			return p, err
		}
	default:
		return d.opaque(b)
	}
	switch b.typ {
	case "text", "image", "document", "tool_use", "tool_result":
		if c, ok := readCache(b.cache); ok {
			p.Cache = c
			used |= 1 << kCacheControl
		}
	}
	native, err := d.extras(b, used)
	if err != nil {
		return p, err
	}
	if native != nil {
		if old := p.Native[ProviderID]; old != nil {
			// Only the tool_result string marker is set before this point.
			native = append(append(native[:len(native)-1:len(native)-1], ','), old[1:]...)
		}
		p.Native = convo.Native{ProviderID: native}
	}
	return p, nil
}

// toolUse interprets a tool_use block.
func toolUse(b *block, used *uint32) (convo.Part, error) {
	if err := b.need(kID, used); err != nil {
		return convo.Part{}, err
	}
	if err := b.need(kName, used); err != nil {
		return convo.Part{}, err
	}
	p := convo.Part{Type: convo.TypeToolCall, ID: b.str[kID], Name: b.str[kName], Args: b.input}
	if p.Args == nil {
		p.Args = []byte("{}")
	}
	*used |= 1 << kInput
	return p, nil
}

// toolResult interprets a tool_result block: its content a string (marked,
// so it is written back as one) or an array of blocks, and is_error.
func (d *blockReader) toolResult(b *block, used *uint32) (convo.Part, error) {
	if err := b.need(kToolUseID, used); err != nil {
		return convo.Part{}, err
	}
	p := convo.Part{Type: convo.TypeToolResult, ID: b.str[kToolUseID]}
	switch b.contentKind {
	case contentString:
		p.Parts = []convo.Part{convo.Text(b.contentStr)}
		p.Native = convo.Native{ProviderID: []byte(`{"` + markString + `":true}`)}
		*used |= 1 << kContent
	case contentArray:
		if b.contentErr != nil {
			return p, b.contentErr
		}
		if len(b.content) > 0 {
			p.Parts = b.content
		}
		*used |= 1 << kContent
	case contentOther:
		if !d.nullAt(b, kContent) {
			return p, convo.ErrorAt(errors.New("want a string or an array of blocks"), "content")
		}
	}
	if b.got(kIsError) && b.isError {
		p.Error = true
		*used |= 1 << kIsError
	} else if b.present(kIsError) && !b.got(kIsError) && !d.nullAt(b, kIsError) {
		return p, convo.ErrorAt(errors.New("want a boolean"), "is_error")
	}
	return p, nil
}

// media interprets an image or document block; opaque is set when its
// source is of a kind convo has no field for (a document made of content
// blocks, a future source type).
func (d *blockReader) media(b *block, used *uint32) (convo.Part, bool, error) {
	s := &b.src
	switch s.kind {
	case contentNone:
		return convo.Part{}, false, fmt.Errorf("%s block has no source", b.typ)
	case contentOther:
		return convo.Part{}, false, convo.ErrorAt(errors.New("want an object"), "source")
	}
	if s.other {
		return convo.Part{}, true, nil
	}
	p := convo.Part{Type: convo.TypeImage}
	if b.typ == "document" {
		p.Type = convo.TypeFile
	}
	switch s.typ {
	case "base64":
		if s.data == "" {
			return p, false, convo.ErrorAt(errors.New(`base64 source has no "data"`), "source")
		}
		if err := convo.CheckBase64(s.data); err != nil {
			return p, false, convo.ErrorAt(err, "source.data")
		}
		if s.mediaType == "" {
			return p, false, convo.ErrorAt(errors.New(`base64 source has no "media_type"`), "source")
		}
		if s.url != "" || s.fileID != "" {
			return p, true, nil
		}
		p.Data, p.MediaType = s.data, s.mediaType
	case "url":
		if s.url == "" {
			return p, false, convo.ErrorAt(errors.New(`url source has no "url"`), "source")
		}
		if s.data != "" || s.fileID != "" || s.mediaType != "" {
			return p, true, nil
		}
		p.URL = s.url
	case "file":
		if s.fileID == "" {
			return p, false, convo.ErrorAt(errors.New(`file source has no "file_id"`), "source")
		}
		if s.data != "" || s.url != "" || s.mediaType != "" {
			return p, true, nil
		}
		p.FileID = s.fileID
	case "text":
		if b.typ != "document" || s.url != "" || s.fileID != "" {
			return p, true, nil
		}
		p.Text, p.MediaType = s.data, s.mediaType
	case "":
		return p, false, convo.ErrorAt(errors.New("source has no type"), "source")
	default:
		return p, true, nil
	}
	*used |= 1 << kSource
	if b.typ == "document" && b.got(kTitle) {
		p.Name = b.str[kTitle]
		*used |= 1 << kTitle
	}
	return p, false, nil
}

// need marks string member k used and reports it missing or mistyped.
func (b *block) need(k int, used *uint32) error {
	*used |= 1 << k
	if b.got(k) {
		return nil
	}
	if b.present(k) {
		return convo.ErrorAt(errors.New("want a string"), strKeys[k])
	}
	return fmt.Errorf("%s block has no %q", b.typ, strKeys[k])
}

// opt marks optional string member k used when it is a string. A null is
// left as it is (kept in a request, dropped in a reply); any other kind is
// an error.
func (d *blockReader) opt(b *block, k int, used *uint32) error {
	switch {
	case b.got(k):
		*used |= 1 << k
	case b.present(k) && !d.nullAt(b, k):
		return convo.ErrorAt(errors.New("want a string"), strKeys[k])
	}
	return nil
}

// nullAt reports whether member k is null.
func (d *blockReader) nullAt(b *block, k int) bool {
	for _, s := range b.spans {
		if s.id == k {
			return string(d.r.Bytes()[s.start:s.end]) == "null"
		}
	}
	return false
}

// opaque keeps a block convo has no part type for, whole; a server tool's
// block becomes its tool_call or tool_result part.
func (d *blockReader) opaque(b *block) (convo.Part, error) {
	raw, err := jsonx.Compact(d.r.Bytes()[b.start:b.end], 0)
	if err != nil {
		return convo.Part{}, err
	}
	if p, ok := serverPart(b.typ, raw); ok {
		return p, nil
	}
	return provider.OpaquePart(ProviderID, b.typ, raw), nil
}

// extras returns the members of b that used does not cover as a native
// object, or nil when there are none.
func (d *blockReader) extras(b *block, used uint32) ([]byte, error) {
	var out []byte
	for _, s := range b.spans {
		if s.id != kUnknown && used&(1<<s.id) != 0 {
			continue
		}
		val := d.r.Bytes()[s.start:s.end]
		if d.reply && string(val) == "null" {
			continue
		}
		if out == nil {
			out = append(out, '{')
		} else {
			out = append(out, ',')
		}
		out = jsonx.AppendString(out, string(s.key))
		out = append(out, ':')
		var err error
		out, err = jsonx.NewReader(val, 0).AppendRaw(out)
		if err != nil {
			return nil, err
		}
	}
	if out == nil {
		return nil, nil
	}
	return append(out, '}'), nil
}

// readCache interprets a cache_control value convo can represent:
// {"type":"ephemeral"} with an optional string "ttl".
func readCache(raw []byte) (*convo.Cache, bool) {
	if raw == nil {
		return nil, false
	}
	c := &convo.Cache{}
	ephemeral := false
	r := jsonx.NewReader(raw, 0)
	err := r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "type":
			t, err := r.ReadString()
			ephemeral = t == "ephemeral"
			return err
		case "ttl":
			var err error
			c.TTL, err = r.ReadString()
			return err
		}
		return errors.New("other member")
	})
	if err != nil || !ephemeral {
		return nil, false
	}
	return c, true
}

// atKey is convo.ErrorAt for an object member; the key becomes a string
// only when there is an error.
func atKey(err error, key []byte) error {
	if err == nil {
		return nil
	}
	return convo.ErrorAt(err, string(key))
}

func index(name string, i int) string { return name + "[" + strconv.Itoa(i) + "]" }
