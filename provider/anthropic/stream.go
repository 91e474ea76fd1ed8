package anthropic

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/internal/textbuf"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// NewAccumulator returns an accumulator for one streamed Messages reply. It
// takes the events as the SSE reader yields them (message_start,
// content_block_start/delta/stop addressed by index, message_delta,
// message_stop, ping, error) and gives the same message DecodeReply gives for
// the equivalent non-streamed response:
//
//   - text, thinking and signature deltas are appended to the block their
//     index names, so interleaved blocks stay apart and a signature_delta
//     lands on its own thinking block; distinct blocks are never merged;
//   - input_json_delta pieces are joined and parsed when the block stops
//     (no pieces: the input of content_block_start, normally {});
//   - redacted_thinking and server-tool blocks arrive whole and are kept;
//   - message_delta usage is cumulative: each value overwrites the last;
//   - an error event fails the stream with a *provider.APIError; the partial message
//     is still available from Message.
func (messages) NewAccumulator(opts provider.Options) provider.Accumulator {
	lim := opts.DecodeLimits()
	a := &accumulator{lim: lim, opts: opts}
	a.d.reply = true
	a.d.r = &a.r
	return a
}

type accumulator struct {
	lim     convo.Limits
	opts    provider.Options
	r       jsonx.Reader
	d       replyReader
	h       head
	blocks  []*sblock
	started bool
	stopped bool
	err     error // the error event, once one arrived
	warns   []provider.Warning
	size    int64 // bytes accumulated, bounded by lim.MaxBytes
	events  int
	origin  convo.Origin // of the DeltaStart piece
}

// sblock is a content block being streamed.
type sblock struct {
	typ        string
	part       convo.Part   // as content_block_start gave it (known types); the final part once done
	members    wire.Members // the whole block, for types convo keeps opaque
	opaque     bool
	text       textbuf.Text // text_delta / thinking_delta
	sig        []byte       // signature_delta
	input      []byte       // input_json_delta
	hasInput   bool
	cites      [][]byte     // citations_delta
	compaction wire.Members // compaction_delta members
	stopped    bool
	done       bool   // part is the final part: the block stopped
	warn       string // a problem found when it stopped
	// out is the text a call of provider.OutputTool shows while it
	// streams, and added what its last input_json_delta added to it: the
	// call is the reply's text (see head.finish), and streams as text.
	out   *provider.OutputStream
	added string
}

// event is one stream event as read; strings alias the event's data.
type event struct {
	typ      string
	index    int64
	hasIndex bool
	block    *sblock
	delta    delta
	message  bool
	head     head
	parts    []convo.Part
	usage    wire.Members
	extra    wire.Members // members of no other field
	hasUsage bool
	apiErr   *provider.APIError
}

type delta struct {
	typ                                    string
	text, partial, thinking, signature     []byte
	hasText, hasPartial, hasThink, hasSign bool
	citation                               []byte
	members                                wire.Members // message_delta: stop_reason, …
}

// CopiesData says the accumulator keeps nothing of an event's data: it
// copies what it keeps (provider.DataCopier; TestSharedData checks it on
// every recorded stream, FuzzAccumulate on what it finds).
func (a *accumulator) CopiesData() {}

// Complete reports whether message_stop was folded (provider.Completer):
// the accumulator ignores every event after it but pings.
func (a *accumulator) Complete() bool { return a.stopped && a.err == nil }

func (a *accumulator) warn(format string, args ...any) {
	a.warns = append(a.warns, provider.Warnf("event "+strconv.Itoa(a.events), format, args...))
}

// Add folds one event into the message.
func (a *accumulator) Add(ev provider.Event) error {
	var e event
	_, err := a.add(ev, &e)
	return err
}

// AddPiece folds one event into the message and says what it changed in
// the parts: a delta to a text, thinking or tool_use block is a piece of
// the part at the block's index (blocks and parts correspond one to one);
// a block that starts is a new part; a block that stops changes nothing
// in the parts (Snapshot shows every block as it would end).
func (a *accumulator) AddPiece(ev provider.Event) (provider.Piece, error) {
	var e event
	applied, err := a.add(ev, &e)
	if err != nil || !applied {
		return provider.Piece{}, err
	}
	switch e.typ {
	case "ping", "message_delta", "message_stop", "content_block_stop":
		return provider.Piece{}, nil
	case "message_start":
		if len(a.blocks) > 0 {
			return provider.Piece{Other: true}, nil // it came with content
		}
		// The reply begins, as Snapshot's message would show it; its
		// origin kept in the accumulator, which has only one.
		a.origin = convo.Origin{Provider: ProviderID, Model: a.h.model, ResponseID: a.h.id}
		return provider.Piece{Kind: provider.DeltaStart, Origin: &a.origin}, nil
	case "content_block_start":
		if e.block.opaque {
			return provider.Piece{Other: true}, nil
		}
		p := e.block.snapshot()
		a.h.settle(&p)
		return provider.Piece{Kind: provider.DeltaPartStart, Index: int(e.index), Part: &p}, nil
	case "content_block_delta":
	default:
		return provider.Piece{Other: true}, nil
	}
	b := a.blocks[e.index]
	p := provider.Piece{Index: int(e.index)}
	switch dl := &e.delta; {
	case b.opaque:
		p.Other = true
	// A piece's text is the block's copy of it, the bytes the delta
	// just appended to the block (which are never written again), rather
	// than a copy of its own.
	case dl.typ == "text_delta" && b.typ == "text":
		p.Kind, p.Text = provider.DeltaText, b.text.Tail(len(dl.text))
	case dl.typ == "thinking_delta" && b.typ == "thinking":
		p.Kind, p.Text = provider.DeltaText, b.text.Tail(len(dl.thinking))
	case dl.typ == "signature_delta" && b.typ == "thinking":
		p.Kind, p.Text = provider.DeltaSignature, textbuf.Tail(b.sig, len(dl.signature))
	case dl.typ == "input_json_delta" && b.out != nil:
		p.Kind, p.Text = provider.DeltaText, b.added
	case dl.typ == "input_json_delta" && b.typ == "tool_use":
		// The first piece replaces the block's input of
		// content_block_start (see final).
		p.Kind, p.Text, p.First = provider.DeltaArgs, textbuf.Tail(b.input, len(dl.partial)), len(b.input) == len(dl.partial)
	default:
		p.Other = true
	}
	return p, nil
}

// add folds one event into the message, read into e, and reports whether
// it was applied (not ignored after message_stop).
func (a *accumulator) add(ev provider.Event, e *event) (bool, error) {
	if a.err != nil {
		return false, a.err
	}
	a.events++
	if !a.readFast(ev.Data, e) {
		a.r.Reset(ev.Data, a.lim.MaxDepth)
		if err := a.read(e); err != nil {
			return false, fmt.Errorf("anthropic stream: %w", err)
		}
	}
	if e.typ == "" {
		e.typ = ev.Type
	}
	if a.stopped && e.typ != "ping" {
		a.warn("%s event after message_stop ignored", e.typ)
		return false, nil
	}
	if err := a.apply(e); err != nil {
		if _, ok := err.(*provider.APIError); ok {
			return false, err
		}
		return false, fmt.Errorf("anthropic stream: %s: %w", e.typ, err)
	}
	return true, nil
}

// readFast reads data into e when one of the fast paths takes it, each
// leaving what it does not take to the next, and reports whether one did;
// what none takes is read's. A content_block_delta not written member for
// member as Anthropic writes it is left by readTextDelta at its first
// bytes, and any other event by readDeltaAnyOrder at its first key or
// two.
func (a *accumulator) readFast(data []byte, e *event) bool {
	return a.readTextDelta(data, e) || a.readDeltaAnyOrder(data, e) || a.readFixed(data, e) || a.readHead(data, e)
}

// read reads one event object.
func (a *accumulator) read(e *event) error {
	r := &a.r
	if r.Peek() != jsonx.Object {
		return r.Errorf("want an event object, got %s", r.Peek())
	}
	err := r.ReadObject(func(key []byte) error {
		var err error
		switch string(key) {
		case "type":
			e.typ, err = readName(r)
		case "index":
			e.index, err = r.ReadInt()
			e.hasIndex = true
		case "delta":
			err = a.readDelta(&e.delta)
		case "content_block":
			e.block, err = a.startBlock()
		case "message":
			e.message = true
			err = a.d.message(&e.head, func(p convo.Part) error {
				e.parts = append(e.parts, p)
				return nil
			})
		case "usage":
			if r.ReadNull() {
				return nil
			}
			e.hasUsage = true
			err = a.d.members(&e.usage, 4)
		case "error":
			if r.Peek() != jsonx.Object {
				return r.Skip()
			}
			e.apiErr = &provider.APIError{Provider: ProviderID}
			err = a.d.apiError(e.apiErr)
		default:
			// Kept for message_delta, whose other members (such as
			// context_management) belong to the message as in a body.
			if r.ReadNull() {
				return nil
			}
			v, err := a.d.raw()
			e.extra = e.extra.Set(memberKey(key), v)
			return atKey(err, key)
		}
		return atKey(err, key)
	})
	if err == nil {
		err = r.ExpectEnd()
	}
	return err
}

// The content_block_delta events of a piece of text, thinking, signature
// or tool input, as Anthropic writes them, member for member: most of a
// stream's events. readTextDelta reads them without the general reader's
// work for every key.
var (
	deltaStart = []byte(`{"type":"content_block_delta","index":`)
	deltaTypes = [...]struct {
		typ    string
		prefix []byte // from the delta's type's value to its piece's string
	}{
		{"text_delta", []byte(`,"delta":{"type":"text_delta","text":`)},
		{"thinking_delta", []byte(`,"delta":{"type":"thinking_delta","thinking":`)},
		{"input_json_delta", []byte(`,"delta":{"type":"input_json_delta","partial_json":`)},
		{"signature_delta", []byte(`,"delta":{"type":"signature_delta","signature":`)},
	}
)

// readTextDelta reads data into e when it is a content_block_delta event
// written exactly as deltaStart and deltaTypes show it, its index a
// non-negative integer of up to nine digits and its piece a string, and
// reports whether it was (white space before and after its closing brace
// aside, see eventBody). It reads what read would read from the same
// data, its piece's string read by the same reader; any other event,
// however slightly different (members in another order, other white
// space, other members, a piece that is not a valid string), is left to
// read, and so are its errors.
func (a *accumulator) readTextDelta(data []byte, e *event) bool {
	if a.lim.MaxDepth > 0 && a.lim.MaxDepth < 2 {
		return false // read says the event nests too deep
	}
	data, ok := eventBody(data)
	if !ok {
		return false
	}
	rest, ok := bytes.CutPrefix(data, deltaStart)
	if !ok {
		return false
	}
	index, rest, ok := readIndex(rest)
	if !ok {
		return false
	}
	k := -1
	for i := range deltaTypes {
		if bytes.HasPrefix(rest, deltaTypes[i].prefix) {
			k = i
			break
		}
	}
	if k < 0 {
		return false
	}
	at := len(data) - len(rest) + len(deltaTypes[k].prefix)
	r := &a.r
	r.Reset(data[at:], a.lim.MaxDepth)
	if r.Peek() != jsonx.String {
		return false
	}
	// A piece with escapes is unescaped into the reader's scratch buffer:
	// it is the only string read, and delta copies it into its block
	// before the reader reads again.
	v, err := r.ReadStringScratch()
	if err != nil || string(data[at+r.Offset():]) != "}" {
		return false
	}
	e.typ, e.index, e.hasIndex = "content_block_delta", index, true
	e.delta.typ = deltaTypes[k].typ
	switch k {
	case 0:
		e.delta.text, e.delta.hasText = v, true
	case 1:
		e.delta.thinking, e.delta.hasThink = v, true
	case 2:
		e.delta.partial, e.delta.hasPartial = v, true
	case 3:
		e.delta.signature, e.delta.hasSign = v, true
	}
	return true
}

// eventBody returns an event's data without its closing brace and the
// white space around it: Anthropic pads most events with spaces before
// their closing brace (a stream's length says less about its text), and
// read skips them as any white space, so the fast paths read the data
// before them.
func eventBody(data []byte) ([]byte, bool) {
	data = trimSpace(data)
	if len(data) == 0 || data[len(data)-1] != '}' {
		return nil, false
	}
	return trimSpace(data[:len(data)-1]), true
}

// trimSpace returns data without the JSON white space at its end (as
// bytes.TrimRight would, without making its set of bytes every event).
func trimSpace(data []byte) []byte {
	for len(data) > 0 && isSpace(data[len(data)-1]) {
		data = data[:len(data)-1]
	}
	return data
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// readIndex reads the index at the start of rest as read reads it: up
// to nine digits, no leading zero (so that it fits and is valid JSON).
func readIndex(rest []byte) (int64, []byte, bool) {
	n := 0
	var index int64
	for n < len(rest) && n < 10 && '0' <= rest[n] && rest[n] <= '9' {
		index = index*10 + int64(rest[n]-'0')
		n++
	}
	if n == 0 || n > 9 || (rest[0] == '0' && n > 1) {
		return 0, rest, false
	}
	return index, rest[n:], true
}

// The events with nothing to read but their type and index, and the
// starts of an empty text or thinking block and of a tool call (toolStart),
// as Anthropic writes them, member for member: a third of a short stream's
// events (a tool call's stream: its pings, its blocks' starts and stops).
var (
	blockStart    = []byte(`{"type":"content_block_start","index":`)
	blockStop     = []byte(`{"type":"content_block_stop","index":`)
	emptyText     = []byte(`,"content_block":{"type":"text","text":""}`)
	emptyThinking = []byte(`,"content_block":{"type":"thinking","thinking":"","signature":""}`)
)

// The start of a tool_use block, around its id and name, and the caller
// Anthropic's API adds to a call the model made itself.
var (
	toolID       = []byte(`,"content_block":{"type":"tool_use","id":"`)
	toolName     = []byte(`","name":"`)
	toolEnd      = []byte(`","input":{}}`)
	toolDirect   = []byte(`","input":{},"caller":{"type":"direct"}}`)
	directNative = `{"caller":{"type":"direct"}}` // as blockReader.extras keeps it
)

// toolStart returns the part a tool_use block's start begins, rest what
// follows its index up to the event's closing brace, when it is written
// exactly as toolID, toolName and toolEnd or toolDirect show it, its id
// and name plain strings (see plain): a part as startBlock makes it.
func toolStart(rest []byte) (convo.Part, bool) {
	rest, ok := bytes.CutPrefix(rest, toolID)
	if !ok {
		return convo.Part{}, false
	}
	n := plain(rest)
	if !bytes.HasPrefix(rest[n:], toolName) {
		return convo.Part{}, false
	}
	id, rest := string(rest[:n]), rest[n+len(toolName):]
	n = plain(rest)
	p := convo.Part{Type: convo.TypeToolCall, ID: id, Args: []byte("{}")}
	switch {
	case bytes.Equal(rest[n:], toolEnd):
	case bytes.Equal(rest[n:], toolDirect):
		p.Native = convo.Native{ProviderID: []byte(directNative)}
	default:
		return convo.Part{}, false
	}
	p.Name = string(rest[:n])
	return p, true
}

// readFixed reads data into e when it is one of the events above,
// written exactly so (white space before and after its closing brace
// aside, see eventBody; a ping also as {"type": "ping"}), and reports
// whether it was: it reads what read would read, a block as startBlock
// makes it; anything else is left to read.
func (a *accumulator) readFixed(data []byte, e *event) bool {
	data, ok := eventBody(data)
	if !ok {
		return false
	}
	switch string(data) {
	case `{"type":"ping"`, `{"type": "ping"`:
		e.typ = "ping"
		return true
	case `{"type":"message_stop"`:
		e.typ = "message_stop"
		return true
	}
	if rest, ok := bytes.CutPrefix(data, blockStop); ok {
		index, rest, ok := readIndex(rest)
		if !ok || len(rest) > 0 {
			return false
		}
		e.typ, e.index, e.hasIndex = "content_block_stop", index, true
		return true
	}
	rest, ok := bytes.CutPrefix(data, blockStart)
	if !ok || a.lim.MaxDepth > 0 && a.lim.MaxDepth < 2 {
		return false // read says a block nests too deep
	}
	index, rest, ok := readIndex(rest)
	if !ok {
		return false
	}
	switch {
	case bytes.Equal(rest, emptyText):
		e.block = &sblock{typ: "text", part: convo.Part{Type: convo.TypeText}}
	case bytes.Equal(rest, emptyThinking):
		e.block = &sblock{typ: "thinking", part: convo.Part{Type: convo.TypeReasoning, Provider: ProviderID}}
	default:
		p, ok := toolStart(rest)
		if !ok || a.lim.MaxDepth > 0 && a.lim.MaxDepth < 3 {
			return false // read says its input nests too deep
		}
		e.block = newBlock("tool_use", p)
	}
	e.typ, e.index, e.hasIndex = "content_block_start", index, true
	return true
}

// readDelta reads a delta object; text pieces alias the event data.
func (a *accumulator) readDelta(dl *delta) error {
	r := &a.r
	if r.Peek() != jsonx.Object {
		return r.Errorf("want an object, got %s", r.Peek())
	}
	return r.ReadObject(func(key []byte) error {
		var dst *[]byte
		var has *bool
		switch string(key) {
		case "type":
			var err error
			dl.typ, err = readName(r)
			return convo.ErrorAt(err, "type")
		case "text":
			dst, has = &dl.text, &dl.hasText
		case "partial_json":
			dst, has = &dl.partial, &dl.hasPartial
		case "thinking":
			dst, has = &dl.thinking, &dl.hasThink
		case "signature":
			dst, has = &dl.signature, &dl.hasSign
		case "citation":
			v, err := r.ReadRaw()
			dl.citation = v
			return convo.ErrorAt(err, "citation")
		default:
			if r.ReadNull() {
				return nil
			}
			v, err := a.d.raw()
			if dl.members == nil {
				dl.members = make(wire.Members, 0, 2) // stop_reason, stop_sequence
			}
			dl.members = dl.members.Set(memberKey(key), v)
			return atKey(err, key)
		}
		if r.Peek() != jsonx.String {
			return convo.ErrorAt(r.Errorf("want a string, got %s", r.Peek()), string(key))
		}
		v, err := r.ReadStringBytes()
		*dst, *has = v, true
		return atKey(err, key)
	})
}

// startBlock reads the content_block of a content_block_start event.
func (a *accumulator) startBlock() (*sblock, error) {
	d := &a.d
	if d.spans == nil {
		d.spans = make([]span, 0, 4) // a block's members, grown once at most
	}
	mark := len(d.spans)
	defer d.release(mark)
	b := d.take()
	defer d.give()
	if err := d.read(b); err != nil {
		return nil, err
	}
	p, err := d.part(b)
	if err != nil {
		return nil, err
	}
	if p.Raw != nil || p.IsServerTool() {
		// Kept opaque (a server tool's block until it stops): its members
		// are updated by the deltas, as the SDK updates its raw JSON.
		sb := &sblock{typ: b.typ, part: p, opaque: true}
		for _, s := range b.spans {
			v, err := jsonx.Compact(a.r.Bytes()[s.start:s.end], 0)
			if err != nil {
				return nil, err
			}
			sb.members = append(sb.members, wire.Member{Key: string(s.key), Val: v})
		}
		return sb, nil
	}
	return newBlock(b.typ, p), nil
}

// newBlock returns the block a content_block_start of a type convo keeps
// as a part (not opaque) begins, p what it gave.
func newBlock(typ string, p convo.Part) *sblock {
	sb := &sblock{typ: typ, part: p}
	switch p.Type {
	case convo.TypeText:
		sb.text.AppendString(p.Text)
	case convo.TypeReasoning:
		sb.text.AppendString(p.Text)
		sb.sig = append(sb.sig, p.Signature...)
	case convo.TypeToolCall:
		if provider.IsOutputCall(&p) {
			sb.out = &provider.OutputStream{}
		}
	}
	return sb
}

func (a *accumulator) apply(e *event) error {
	switch e.typ {
	case "ping":
		return nil
	case "error":
		if e.apiErr == nil {
			e.apiErr = &provider.APIError{Provider: ProviderID, Message: "error event without details"}
		}
		a.err = e.apiErr
		return a.err
	case "message_start":
		if a.started {
			return errors.New("a second message_start")
		}
		if !e.message {
			return errors.New(`no "message"`)
		}
		a.started = true
		a.h = e.head
		a.blocks = make([]*sblock, 0, 4) // thinking, text, a call or two
		for _, p := range e.parts {
			a.blocks = append(a.blocks, &sblock{typ: string(p.Type), part: p, stopped: true, done: true})
		}
		return nil
	}
	if !a.started {
		if e.typ == "message_delta" || e.typ == "message_stop" || isBlockEvent(e.typ) {
			return errors.New("event before message_start")
		}
	}
	switch e.typ {
	case "content_block_start":
		if !e.hasIndex || e.block == nil {
			return errors.New(`want "index" and "content_block"`)
		}
		if e.index != int64(len(a.blocks)) {
			return fmt.Errorf("block index %d, want %d (blocks start in order)", e.index, len(a.blocks))
		}
		a.blocks = append(a.blocks, e.block)
	case "content_block_delta":
		b, err := a.block(e)
		if err != nil {
			return err
		}
		return a.delta(b, &e.delta)
	case "content_block_stop":
		b, err := a.block(e)
		if err != nil {
			return err
		}
		if !b.stopped {
			b.stopped = true
			p, warn := b.final()
			b.part, b.done, b.warn = p, true, warn
			if warn != "" {
				a.warn("content block %d: %s", e.index, warn)
			}
		}
	case "message_delta":
		for _, m := range e.delta.members {
			a.h.top = a.h.top.Set(m.Key, m.Val)
		}
		for _, m := range e.extra {
			a.h.top = a.h.top.Set(m.Key, m.Val)
		}
		if e.hasUsage {
			a.h.hasUsage = true
			for _, m := range e.usage {
				a.h.usage = a.h.usage.Set(m.Key, m.Val)
			}
		}
	case "message_stop":
		a.stopped = true
	default:
		a.warn("unknown event %q ignored", e.typ)
	}
	return nil
}

func isBlockEvent(t string) bool {
	return t == "content_block_start" || t == "content_block_delta" || t == "content_block_stop"
}

// block returns the started block an event's index names.
func (a *accumulator) block(e *event) (*sblock, error) {
	if !e.hasIndex {
		return nil, errors.New(`no "index"`)
	}
	if e.index < 0 || e.index >= int64(len(a.blocks)) {
		return nil, fmt.Errorf("block index %d, but %d blocks started", e.index, len(a.blocks))
	}
	return a.blocks[e.index], nil
}

// delta appends a delta to the block it is addressed to.
func (a *accumulator) delta(b *sblock, dl *delta) error {
	if b.stopped {
		return fmt.Errorf("%s for a block already stopped", dl.typ)
	}
	var piece []byte
	var ok bool
	switch dl.typ {
	case "text_delta":
		piece, ok = dl.text, dl.hasText && (b.opaque || b.typ == "text")
		b.text.Append(piece)
	case "thinking_delta":
		piece, ok = dl.thinking, dl.hasThink && (b.opaque || b.typ == "thinking")
		b.text.Append(piece)
	case "signature_delta":
		piece, ok = dl.signature, dl.hasSign && (b.opaque || b.typ == "thinking")
		b.sig = append(b.sig, piece...)
	case "input_json_delta":
		piece, ok = dl.partial, dl.hasPartial && (b.opaque || b.typ == "tool_use")
		b.input = textbuf.AppendPiece(b.input, piece)
		b.hasInput = b.hasInput || len(piece) > 0
		if ok && b.out != nil {
			b.added = b.out.Add(string(piece))
		}
	case "citations_delta":
		piece, ok = dl.citation, dl.citation != nil && (b.opaque || b.typ == "text")
		if ok {
			// A delta without its citation fails the stream; kept, its
			// nil would make the block's citations invalid JSON in the
			// partial message.
			b.cites = append(b.cites, piece)
		}
	case "compaction_delta":
		// A compaction block's summary ("content", and "encrypted_content"
		// when there is one) arrives whole in a delta, which replaces the
		// block's members as the SDK's accumulator does; ignoring it loses
		// the summary.
		ok = b.opaque
		for _, m := range dl.members {
			b.compaction = b.compaction.Set(m.Key, m.Val)
			piece = append(piece, m.Val...)
		}
	default:
		a.warn("unknown delta %q ignored", dl.typ)
		return nil
	}
	if !ok {
		return fmt.Errorf("%s does not fit a %s block", dl.typ, b.typ)
	}
	a.size += int64(len(piece))
	if a.size > a.lim.MaxBytes {
		return fmt.Errorf("reply of more than %d bytes: %w", a.lim.MaxBytes, jsonx.ErrTooLarge)
	}
	return nil
}

// final returns the part a block became, and a problem when it has one.
func (b *sblock) final() (convo.Part, string) {
	if b.done {
		return b.part, b.warn
	}
	if b.opaque {
		return b.finalOpaque()
	}
	p := b.part
	switch b.typ {
	case "text":
		p.Text = b.text.String()
		if len(b.cites) > 0 {
			p = citedPart(p, b.cites)
		}
	case "thinking":
		p.Text, p.Signature = b.text.String(), string(b.sig)
	case "tool_use":
		if !b.hasInput {
			break
		}
		args, err := jsonx.Compact(b.input, 0)
		if err != nil {
			p.Args, p.ArgsRaw = nil, string(b.input)
			return p, "tool input is not valid JSON: kept as args_raw"
		}
		p.Args = args
	}
	return p, ""
}

// finalOpaque applies the deltas to the members of a block kept opaque,
// as the SDK applies them to its raw JSON.
func (b *sblock) finalOpaque() (convo.Part, string) {
	ms := append(wire.Members(nil), b.members...)
	warn := ""
	if b.text.Len() > 0 {
		key := "text"
		if ms.Value("thinking") != nil && ms.Value("text") == nil {
			key = "thinking"
		}
		ms = ms.Set(key, b.text.AppendJSON(nil))
	}
	if len(b.sig) > 0 {
		ms = ms.Set("signature", jsonx.AppendString(nil, string(b.sig)))
	}
	if b.hasInput {
		if v, err := jsonx.Compact(b.input, 0); err == nil {
			ms = ms.Set("input", v)
		} else {
			warn = "input is not valid JSON: the block keeps its first input"
		}
	}
	if len(b.cites) > 0 {
		ms = ms.Set("citations", appendCitations(ms.Value("citations"), b.cites))
	}
	for _, m := range b.compaction {
		ms = ms.Set(m.Key, m.Val)
	}
	if p, ok := serverPart(b.typ, ms.Object()); ok {
		return p, warn
	}
	return provider.OpaquePart(ProviderID, b.typ, ms.Object()), warn
}

// withCitations returns n with the citations array of its "anthropic"
// object extended by cites.
func withCitations(n convo.Native, cites [][]byte) convo.Native {
	var ms wire.Members
	if obj := n[ProviderID]; obj != nil {
		r := jsonx.NewReader(obj, 0)
		_ = r.ReadObject(func(key []byte) error {
			v, err := r.ReadRaw()
			ms = append(ms, wire.Member{Key: string(key), Val: v})
			return err
		})
	}
	ms = ms.Set("citations", appendCitations(ms.Value("citations"), cites))
	out := convo.Native{}
	for k, v := range n {
		out[k] = v
	}
	out[ProviderID] = ms.Object()
	return out
}

// appendCitations returns the JSON array old (or an empty one) with cites
// appended.
func appendCitations(old []byte, cites [][]byte) []byte {
	var out []byte
	if len(old) >= 2 && old[0] == '[' {
		out = append(out, old[:len(old)-1]...)
	} else {
		out = append(out, '[')
	}
	for _, c := range cites {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(out, c...)
	}
	return append(out, ']')
}

// parts returns the parts of the blocks so far; open blocks as they stand.
func (a *accumulator) parts() ([]convo.Part, []string) {
	if len(a.blocks) == 0 {
		return nil, nil
	}
	parts := make([]convo.Part, len(a.blocks))
	var open []string
	for i, b := range a.blocks {
		if !b.stopped {
			open = append(open, strconv.Itoa(i))
		}
		parts[i] = b.snapshot()
	}
	return parts, open
}

// snapshot returns the part a block is so far: as it would end, with the
// arguments of a tool call still streaming shown as they are, and a call
// of provider.OutputTool still streaming as the text it is becoming.
func (b *sblock) snapshot() convo.Part {
	if b.out != nil && !b.stopped {
		return convo.Text(b.out.Text())
	}
	p, _ := b.final()
	if !b.stopped && b.typ == "tool_use" && b.hasInput && p.Args == nil {
		// Partial arguments are not JSON yet: show them as they are.
		p.ArgsRaw = string(b.input)
	}
	return p
}

// Snapshot returns the message as it stands, for showing partial text.
func (a *accumulator) Snapshot() convo.Message {
	parts, _ := a.parts()
	m, _ := a.h.finish(parts)
	return m
}

// Message returns the final message. An error event, a stream that ended
// before message_stop, or one that never started is an error; the partial
// message is returned beside it.
func (a *accumulator) Message() (convo.Message, []provider.Warning, error) {
	parts, open := a.parts()
	warns := append([]provider.Warning(nil), a.warns...)
	m, err := a.h.finish(parts)
	switch {
	case a.err != nil:
		m.Finish = convo.FinishError
		return m, warns, a.err
	case err != nil:
		return m, warns, fmt.Errorf("anthropic stream: %w", err)
	case !a.started:
		return m, warns, fmt.Errorf("anthropic stream: ended before message_start: %w", provider.ErrIncomplete)
	case !a.stopped:
		return m, warns, fmt.Errorf("anthropic stream: ended before message_stop after %d events: %w", a.events, provider.ErrIncomplete)
	}
	for _, i := range open {
		warns = append(warns, provider.Warnf("content block "+i, "never stopped: kept as it stood at message_stop"))
	}
	return m, warns, a.opts.Check(warns)
}
