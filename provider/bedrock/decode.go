package bedrock

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// Decode reads the conversation fields of a Converse request body ("system"
// and "messages"; every other member is ignored) into a history:
//
//   - the system blocks become one leading system message;
//   - an assistant message becomes one assistant message;
//   - a user message becomes a tool message holding its toolResult blocks
//     (each named after the call it answers) followed by a user message with
//     the rest, so the history passes convo's validation; a user message
//     whose other blocks came before its results gets a warning, as the
//     split puts them after;
//   - the calls and results of tools Bedrock ran itself (a toolUse of type
//     server_tool_use and the toolResult after it in an assistant message)
//     become tool_call and tool_result parts with Server (see server.go);
//   - blocks convo has no part for (guardContent, searchResult, block kinds
//     added after this package was written) are kept whole as opaque parts
//     and come back unchanged on Encode;
//   - a cachePoint block becomes the Cache of the part before it.
//
// Errors name the place in the request body (messages[2].content[0].image.source).
func (converse) Decode(body []byte, opts provider.Options) (convo.History, []provider.Warning, error) {
	lim, err := opts.CheckSize(body, "bedrock request")
	if err != nil {
		return nil, nil, err
	}
	if err := provider.CheckFormat(body, Name); err != nil {
		return nil, nil, err
	}
	d := decoder{r: jsonx.NewReader(body, lim.MaxDepth)}
	var sys *convo.Message
	found := false
	err = d.r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "system":
			found = true
			m, err := d.system()
			sys = m
			return convo.ErrorAt(err, "system")
		case "messages":
			found = true
			return convo.ErrorAt(d.messages(), "messages")
		}
		return d.r.Skip()
	})
	if err == nil {
		err = d.r.ExpectEnd()
	}
	if err != nil {
		return nil, d.warns, oneLine(err)
	}
	if !found {
		return nil, d.warns, errors.New(`request body has neither "system" nor "messages"`)
	}
	h := d.h
	if sys != nil {
		h = append(convo.History{*sys}, h...)
	}
	if h == nil {
		h = convo.History{}
	}
	return h, d.warns, nil
}

// oneLine makes sure an error reads as one line: the JSON reader quotes
// the offending byte of some syntax errors as it is, and that byte can be a
// line break.
func oneLine(err error) error {
	if !strings.ContainsAny(err.Error(), "\r\n") {
		return err
	}
	return lineError{err}
}

type lineError struct{ err error }

func (e lineError) Error() string {
	return strings.NewReplacer("\r", `\r`, "\n", `\n`).Replace(e.err.Error())
}

func (e lineError) Unwrap() error { return e.err }

func index(i int) string { return "[" + strconv.Itoa(i) + "]" }

type decoder struct {
	r      *jsonx.Reader
	h      convo.History
	warns  []provider.Warning
	native wire.Members // scratch for the members of the object being read
	opaque bool         // the block being read has a shape convo does not map
	blk    blockState
	calls  []callName // tool calls of the last assistant message
	spans  []span     // raw places of the tool results and server calls of the content being read
}

type callName struct{ id, name string }

// span is where a block is in the body, with the index of its part.
type span struct {
	part       int
	start, end int
}

func (d *decoder) warn(path, format string, args ...any) {
	d.warns = append(d.warns, provider.Warnf(path, format, args...))
}

// system reads the system blocks into one system message.
func (d *decoder) system() (*convo.Message, error) {
	if d.r.ReadNull() {
		return nil, nil
	}
	var parts []convo.Part
	err := d.r.ReadArray(func(i int) error {
		var err error
		parts, err = d.block(parts, blockSystem)
		if err != nil {
			return convo.ErrorAt(err, index(i))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(parts) == 0 {
		return nil, nil
	}
	return &convo.Message{Role: convo.RoleSystem, Parts: parts}, nil
}

func (d *decoder) messages() error {
	if d.r.Peek() != jsonx.Array {
		return d.r.Errorf("want an array of messages, got %s", d.r.Peek())
	}
	d.h = make(convo.History, 0, 8)
	return d.r.ReadArray(func(i int) error {
		if err := d.message(i); err != nil {
			return convo.ErrorAt(err, index(i))
		}
		return nil
	})
}

func (d *decoder) message(i int) error {
	var role string
	roleSet, contentSet := false, false
	var parts []convo.Part
	d.spans = d.spans[:0]
	var extra wire.Members
	err := d.r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "role":
			roleSet = true
			s, err := d.r.ReadString()
			role = s
			return convo.ErrorAt(err, "role")
		case "content":
			contentSet = true
			var err error
			parts, err = d.content()
			return convo.ErrorAt(err, "content")
		}
		v, err := d.r.ReadRaw()
		extra = append(extra, wire.Member{Key: string(key), Val: v})
		return convo.ErrorAt(err, string(key))
	})
	if err != nil {
		return err
	}
	if !roleSet {
		return errors.New(`message has no "role"`)
	}
	if !contentSet {
		return errors.New(`message has no "content"`)
	}
	native := messageNative(extra)
	switch role {
	case "assistant":
		return d.assistant(parts, native)
	case "user":
		return d.user(i, parts, native)
	case "system":
		parts, err = d.keepServerCalls(parts)
		if err != nil {
			return err
		}
		for j, p := range parts {
			if p.Type == convo.TypeToolCall || p.Type == convo.TypeToolResult {
				return convo.ErrorAt(fmt.Errorf("%s in a system message", wireName(p.Type)), "content"+index(j))
			}
		}
		d.warn(msgPath(i), "role system inside messages is not documented by Bedrock: read as a system message")
		d.h = append(d.h, convo.Message{Role: convo.RoleSystem, Parts: parts, Native: native})
		return nil
	}
	return convo.ErrorAt(fmt.Errorf("unknown role %q (want user or assistant)", role), "role")
}

// messageNative keeps the members of a Bedrock message object convo has no
// field for, under "message" in the Bedrock native object: a reply's
// message also carries response members (stopReason, metrics, …) there,
// which never go into a request.
func messageNative(extra wire.Members) convo.Native {
	obj := extra.Object()
	if obj == nil {
		return nil
	}
	return withNative(nil, wire.Members{{Key: "message", Val: obj}}.Object())
}

func wireName(t convo.PartType) string {
	if t == convo.TypeToolCall {
		return "toolUse"
	}
	return "toolResult"
}

func (d *decoder) assistant(parts []convo.Part, native convo.Native) error {
	d.calls = d.calls[:0]
	// A toolResult in an assistant message is the result of a server-side
	// tool: it is read as such when a server call of its id comes before
	// it, else kept whole (convo's plain tool results answer the client's
	// calls).
	// Backwards, so a cache point put back after one result does not move
	// the results before it.
	for k := len(d.spans) - 1; k >= 0; k-- {
		s := d.spans[k]
		p := &parts[s.part]
		if p.Type == convo.TypeToolCall || serverResult(p, parts[:s.part]) {
			continue
		}
		var err error
		if parts, err = d.keepWhole(parts, s, "toolResult"); err != nil {
			return err
		}
	}
	for _, p := range parts {
		if p.Type == convo.TypeToolCall && p.Server == "" {
			d.calls = append(d.calls, callName{p.ID, p.Name})
		}
	}
	d.h = append(d.h, convo.Message{Role: convo.RoleAssistant, Parts: parts, Native: native})
	return nil
}

// keepWhole makes the part of span s an opaque part holding its block
// (whose member is kind) as it was read.
func (d *decoder) keepWhole(parts []convo.Part, s span, kind string) ([]convo.Part, error) {
	raw, err := jsonx.Compact(d.r.Bytes()[s.start:s.end], 0)
	if err != nil {
		return parts, err
	}
	p := &parts[s.part]
	cache := p.Cache
	*p = provider.OpaquePart(ProviderID, kind, raw)
	if cache != nil {
		parts = insertCachePoint(parts, s.part, cache)
	}
	return parts, nil
}

// keepServerCalls keeps whole the server tool calls of a message that is
// not the assistant's: only an assistant message runs tools.
func (d *decoder) keepServerCalls(parts []convo.Part) ([]convo.Part, error) {
	for k := len(d.spans) - 1; k >= 0; k-- {
		s := d.spans[k]
		if parts[s.part].Type != convo.TypeToolCall {
			continue
		}
		var err error
		if parts, err = d.keepWhole(parts, s, "toolUse"); err != nil {
			return parts, err
		}
	}
	return parts, nil
}

// insertCachePoint puts a cachePoint block back after parts[i], which became
// opaque and so cannot carry a Cache.
func insertCachePoint(parts []convo.Part, i int, c *convo.Cache) []convo.Part {
	block := []byte(`{"cachePoint":{"type":"default"`)
	if c.TTL != "" {
		block = append(block, `,"ttl":`...)
		block = jsonx.AppendString(block, c.TTL)
	}
	block = append(block, "}}"...)
	parts = append(parts, convo.Part{})
	copy(parts[i+2:], parts[i+1:])
	parts[i+1] = provider.OpaquePart(ProviderID, "cachePoint", block)
	return parts
}

func (d *decoder) user(i int, parts []convo.Part, native convo.Native) error {
	parts, err := d.keepServerCalls(parts)
	if err != nil {
		return err
	}
	results, other := 0, 0
	reordered := false
	for j := range parts {
		p := &parts[j]
		switch p.Type {
		case convo.TypeToolCall:
			return convo.ErrorAt(errors.New("toolUse in a user message"), "content"+index(j))
		case convo.TypeToolResult:
			results++
			reordered = reordered || other > 0
			if p.Name == "" {
				for _, c := range d.calls {
					if c.id == p.ID {
						p.Name = c.name
						break
					}
				}
			}
		default:
			other++
		}
	}
	d.calls = d.calls[:0]
	switch {
	case results == 0:
		d.h = append(d.h, convo.Message{Role: convo.RoleUser, Parts: parts, Native: native})
		return nil
	case other == 0:
		d.h = append(d.h, convo.Message{Role: convo.RoleTool, Parts: parts, Native: native})
		return nil
	}
	if reordered {
		d.warn(msgPath(i), "blocks before the tool results moved after them: convo keeps tool results in a tool message of their own")
	}
	res := make([]convo.Part, 0, results)
	rest := make([]convo.Part, 0, other)
	for _, p := range parts {
		if p.Type == convo.TypeToolResult {
			res = append(res, p)
		} else {
			rest = append(rest, p)
		}
	}
	// Native goes with the first message: Encode writes a merged request
	// message's members from its first history message.
	d.h = append(d.h, convo.Message{Role: convo.RoleTool, Parts: res, Native: native},
		convo.Message{Role: convo.RoleUser, Parts: rest})
	return nil
}

// content reads a message's content array.
func (d *decoder) content() ([]convo.Part, error) {
	if d.r.Peek() != jsonx.Array {
		return nil, d.r.Errorf("want an array of content blocks, got %s", d.r.Peek())
	}
	parts := make([]convo.Part, 0, 2)
	err := d.r.ReadArray(func(j int) error {
		var err error
		parts, err = d.block(parts, blockMessage)
		if err != nil {
			return convo.ErrorAt(err, index(j))
		}
		return nil
	})
	return parts, err
}

// Where a block is read: the union of block kinds differs.
type blockPlace int

const (
	blockMessage blockPlace = iota // ContentBlock
	blockSystem                    // SystemContentBlock
	blockResult                    // ToolResultContentBlock
)

// blockState is what block knows of the block it is reading. It lives in
// the decoder, not in block's frame, so the member callback does not make
// it escape to the heap for every block.
type blockState struct {
	place    blockPlace
	part     *convo.Part
	first    string // the block's member: its kind
	n        int    // members seen
	isCache  bool
	isResult bool
	isServer bool // a server tool call
}

// block reads one content block (a union: an object with exactly one
// member) and appends what it maps to to parts: a part, or for a cachePoint
// the Cache of the part before it.
func (d *decoder) block(parts []convo.Part, place blockPlace) ([]convo.Part, error) {
	start := d.r.Offset()
	if d.r.Peek() != jsonx.Object {
		return parts, d.r.Errorf("want a content block object, got %s", d.r.Peek())
	}
	parts = append(parts, convo.Part{})
	last := len(parts) - 1
	outer, outerOpaque := d.blk, d.opaque
	defer func() { d.blk, d.opaque = outer, outerOpaque }()
	d.blk = blockState{place: place, part: &parts[last]}
	d.opaque = false
	if err := d.r.ReadObject(d.blockMember); err != nil {
		return parts[:last], err
	}
	b := &d.blk
	if b.n == 0 {
		return parts[:last], errors.New("empty content block: each block holds exactly one member")
	}
	if d.opaque && !b.isCache {
		raw, err := jsonx.Compact(d.r.Bytes()[start:d.r.Offset()], 0)
		if err != nil {
			return parts[:last], err
		}
		parts[last] = provider.OpaquePart(ProviderID, b.first, raw)
		return parts, nil
	}
	if b.isCache {
		// A cache point closes the part before it; one that has nothing to
		// close (or one convo cannot express) is kept as a block of its own.
		if prev := last - 1; !d.opaque && prev >= 0 && parts[prev].Cache == nil && parts[prev].Raw == nil {
			parts[prev].Cache = parts[last].Cache
			return parts[:last], nil
		}
		raw, err := jsonx.Compact(d.r.Bytes()[start:d.r.Offset()], 0)
		if err != nil {
			return parts[:last], err
		}
		parts[last] = provider.OpaquePart(ProviderID, b.first, raw)
		return parts, nil
	}
	if b.isResult || b.isServer {
		d.spans = append(d.spans, span{part: last, start: start, end: d.r.Offset()})
	}
	return parts, nil
}

// blockMember reads the member of a content block.
func (d *decoder) blockMember(k []byte) error {
	b := &d.blk
	b.n++
	if b.n > 1 {
		return fmt.Errorf("content block has more than one member (%q and %q): each block holds exactly one", b.first, k)
	}
	p := b.part
	var err error
	switch place := b.place; string(k) {
	case "text":
		b.first = "text"
		p.Type = convo.TypeText
		p.Text, err = d.r.ReadString()
	case "image":
		b.first = "image"
		err = d.media(p, convo.TypeImage)
	case "document":
		b.first = "document"
		err = d.media(p, convo.TypeFile)
	case "video":
		b.first = "video"
		err = d.media(p, convo.TypeVideo)
	case "audio":
		b.first = "audio"
		if place == blockResult {
			return d.skipOpaque()
		}
		err = d.media(p, convo.TypeAudio)
	case "cachePoint":
		b.first = "cachePoint"
		if place == blockResult {
			return d.skipOpaque()
		}
		b.isCache = true
		err = d.cachePoint(p)
	case "json":
		b.first = "json"
		if place != blockResult {
			return d.skipOpaque()
		}
		p.Type = convo.TypeJSON
		p.Value, err = d.r.ReadRaw()
	case "toolUse":
		b.first = "toolUse"
		if place != blockMessage {
			return d.skipOpaque()
		}
		err = d.toolUse(p)
	case "toolResult":
		b.first = "toolResult"
		if place != blockMessage {
			return d.skipOpaque()
		}
		b.isResult = true
		err = d.toolResult(p)
	case "reasoningContent":
		b.first = "reasoningContent"
		if place != blockMessage {
			return d.skipOpaque()
		}
		err = d.reasoning(p)
	case "citationsContent":
		b.first = "citationsContent"
		if place != blockMessage {
			return d.skipOpaque()
		}
		err = d.citations(p)
	default:
		// guardContent, searchResult, toolAddition, kinds added later.
		b.first = string(k)
		return d.skipOpaque()
	}
	if err != nil {
		return convo.ErrorAt(err, b.first)
	}
	return nil
}

// skipOpaque passes over the value of a block member convo keeps whole.
func (d *decoder) skipOpaque() error {
	d.opaque = true
	return d.r.Skip()
}

func (d *decoder) readString(dst *string, name string) error {
	s, err := d.r.ReadString()
	*dst = s
	return convo.ErrorAt(err, name)
}

// keep reads the value of a member convo has no field for into the native
// scratch list.
func (d *decoder) keep(key []byte) error {
	v, err := d.r.ReadRaw()
	d.native = append(d.native, wire.Member{Key: string(key), Val: v})
	return convo.ErrorAt(err, string(key))
}

// takeNative returns the native scratch list as a Native value and empties
// the list.
func (d *decoder) takeNative(mark int) convo.Native {
	obj := d.native[mark:].Object()
	d.native = d.native[:mark]
	return withNative(nil, obj)
}

func (d *decoder) media(p *convo.Part, t convo.PartType) error {
	p.Type = t
	mark := len(d.native)
	var format string
	sourced := false
	err := d.r.ReadObject(func(k []byte) error {
		switch string(k) {
		case "format":
			return d.readString(&format, "format")
		case "name":
			if t == convo.TypeFile {
				return d.readString(&p.Name, "name")
			}
		case "source":
			sourced = true
			return convo.ErrorAt(d.source(p, t), "source")
		}
		return d.keep(k)
	})
	if err != nil {
		return err
	}
	if !sourced {
		return errors.New(`no "source"`)
	}
	mime, keepFormat := mimeOf(t, format)
	p.MediaType = mime
	if keepFormat {
		d.native = append(d.native, wire.Member{Key: "format", Val: jsonx.AppendString(nil, format)})
	}
	p.Native = d.takeNative(mark)
	return nil
}

// source reads a media source: bytes, an S3 location, or (documents) text
// or text content blocks.
func (d *decoder) source(p *convo.Part, t convo.PartType) error {
	n := 0
	var first string
	err := d.r.ReadObject(func(k []byte) error {
		n++
		if n > 1 {
			return fmt.Errorf("source has more than one member (%q and %q): want exactly one", first, k)
		}
		first = string(k)
		switch first {
		case "bytes":
			if err := d.readString(&p.Data, "bytes"); err != nil {
				return err
			}
			if err := convo.CheckBase64(p.Data); err != nil {
				return convo.ErrorAt(err, "bytes")
			}
			return nil
		case "s3Location":
			return convo.ErrorAt(d.s3(p), "s3Location")
		case "text":
			if t == convo.TypeFile {
				return d.readString(&p.Text, "text")
			}
		case "content":
			if t == convo.TypeFile {
				raw, err := d.r.ReadRaw()
				if err != nil {
					return convo.ErrorAt(err, "content")
				}
				text := joinTexts(raw)
				if text == "\x00invalid" {
					d.opaque = true
					return nil
				}
				p.Text = text
				src := append(append([]byte(`{"content":`), raw...), '}')
				d.native = append(d.native, wire.Member{Key: "source", Val: src})
				return nil
			}
		}
		d.opaque = true // a kind of source Bedrock added later
		return d.r.Skip()
	})
	if err == nil && n == 0 {
		err = errors.New("empty source: want bytes or s3Location")
	}
	return err
}

func (d *decoder) s3(p *convo.Part) error {
	var extra wire.Members
	err := d.r.ReadObject(func(k []byte) error {
		if string(k) == "uri" {
			return d.readString(&p.URL, "uri")
		}
		v, err := d.r.ReadRaw()
		extra = append(extra, wire.Member{Key: string(k), Val: v})
		return convo.ErrorAt(err, string(k))
	})
	if err == nil && p.URL == "" {
		err = errors.New(`no "uri"`)
	}
	if obj := extra.Object(); obj != nil {
		d.native = append(d.native, wire.Member{Key: "s3Location", Val: obj})
	}
	return err
}

func (d *decoder) cachePoint(p *convo.Part) error {
	c := &convo.Cache{}
	p.Cache = c
	typed := false
	err := d.r.ReadObject(func(k []byte) error {
		switch string(k) {
		case "type":
			var s string
			if err := d.readString(&s, "type"); err != nil {
				return err
			}
			typed = true
			d.opaque = d.opaque || s != "default"
			return nil
		case "ttl":
			if d.r.Peek() == jsonx.String {
				return d.readString(&c.TTL, "ttl")
			}
		}
		d.opaque = true
		return d.r.Skip()
	})
	d.opaque = d.opaque || !typed
	return err
}

func (d *decoder) toolUse(p *convo.Part) error {
	p.Type = convo.TypeToolCall
	mark := len(d.native)
	idSet, nameSet := false, false
	err := d.r.ReadObject(func(k []byte) error {
		switch string(k) {
		case "toolUseId":
			idSet = true
			return d.readString(&p.ID, "toolUseId")
		case "name":
			nameSet = true
			return d.readString(&p.Name, "name")
		case "input":
			v, err := d.r.ReadRaw()
			p.Args = v
			return convo.ErrorAt(err, "input")
		case "type":
			if d.r.Peek() == jsonx.String {
				var s string
				if err := d.readString(&s, "type"); err != nil {
					return err
				}
				// A server tool runs on Bedrock's side: no client result
				// answers it.
				d.blk.isServer = d.blk.isServer || s == "server_tool_use"
				d.native = append(d.native, wire.Member{Key: "type", Val: jsonx.AppendString(nil, s)})
				return nil
			}
		}
		return d.keep(k)
	})
	if err != nil {
		return err
	}
	if !idSet {
		return errors.New(`no "toolUseId"`)
	}
	if !nameSet {
		return errors.New(`no "name"`)
	}
	p.Native = d.takeNative(mark)
	if d.blk.isServer {
		p.Server, p.Provider = serverKind(p.Name), ProviderID
	}
	return nil
}

func (d *decoder) toolResult(p *convo.Part) error {
	p.Type = convo.TypeToolResult
	mark := len(d.native)
	idSet := false
	err := d.r.ReadObject(func(k []byte) error {
		switch string(k) {
		case "toolUseId":
			idSet = true
			return d.readString(&p.ID, "toolUseId")
		case "content":
			if d.r.Peek() != jsonx.Array {
				return convo.ErrorAt(d.r.Errorf("want an array, got %s", d.r.Peek()), "content")
			}
			p.Parts = []convo.Part{}
			return convo.ErrorAt(d.r.ReadArray(func(j int) error {
				var err error
				p.Parts, err = d.block(p.Parts, blockResult)
				if err != nil {
					return convo.ErrorAt(err, index(j))
				}
				return nil
			}), "content")

		case "status":
			if d.r.Peek() == jsonx.String {
				var s string
				if err := d.readString(&s, "status"); err != nil {
					return err
				}
				if s == "error" {
					p.Error = true
				} else {
					d.native = append(d.native, wire.Member{Key: "status", Val: jsonx.AppendString(nil, s)})
				}
				return nil
			}
		}
		return d.keep(k)
	})
	if err != nil {
		return err
	}
	if !idSet {
		return errors.New(`no "toolUseId"`)
	}
	p.Native = d.takeNative(mark)
	return nil
}

func (d *decoder) reasoning(p *convo.Part) error {
	p.Type = convo.TypeReasoning
	p.Provider = ProviderID
	n := 0
	var first string
	mark := len(d.native)
	err := d.r.ReadObject(func(k []byte) error {
		n++
		if n > 1 {
			return fmt.Errorf("reasoningContent has more than one member (%q and %q): want exactly one", first, k)
		}
		first = string(k)
		switch first {
		case "reasoningText":
			return convo.ErrorAt(d.r.ReadObject(func(k []byte) error {
				switch string(k) {
				case "text":
					return d.readString(&p.Text, "text")
				case "signature":
					return d.readString(&p.Signature, "signature")
				}
				return d.keep(k)
			}), "reasoningText")

		case "redactedContent":
			if err := d.readString(&p.Encrypted, "redactedContent"); err != nil {
				return err
			}
			if err := convo.CheckBase64(p.Encrypted); err != nil {
				return convo.ErrorAt(err, "redactedContent")
			}
			return nil
		}
		d.opaque = true
		return d.r.Skip()
	})
	if err == nil && n == 0 {
		err = errors.New("empty reasoningContent: want reasoningText or redactedContent")
	}
	p.Native = d.takeNative(mark)
	return err
}

// citations reads a citationsContent block into a text part with the
// generated text; Native keeps the rest of the block under
// "citationsContent" (the citations, and the generated content itself when
// it is not exactly one text).
func (d *decoder) citations(p *convo.Part) error {
	p.Type = convo.TypeText
	var kept wire.Members
	err := d.r.ReadObject(func(k []byte) error {
		raw, err := d.r.ReadRaw()
		if err != nil {
			return convo.ErrorAt(err, string(k))
		}
		if string(k) == "content" {
			text := joinTexts(raw)
			if text == "\x00invalid" {
				d.opaque = true
				return nil
			}
			p.Text = text
			if string(raw) == `[{"text":`+string(jsonx.AppendString(nil, text))+`}]` {
				return nil
			}
		}
		kept = append(kept, wire.Member{Key: string(k), Val: raw})
		return nil
	})
	obj := kept.Object()
	if obj == nil {
		obj = []byte("{}")
	}
	p.Native = withNative(nil, wire.Members{{Key: "citationsContent", Val: obj}}.Object())
	liftCites(p)
	return err
}
