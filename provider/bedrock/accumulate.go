package bedrock

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// NewAccumulator returns an accumulator for one ConverseStream reply. It
// takes the events as the stream readers deliver them (Type the event name,
// Data its JSON payload):
//
//   - messageStart, then for each content block contentBlockStart (tool
//     uses, server tool results and images only: text and reasoning blocks
//     start with their first delta), contentBlockDelta, contentBlockStop;
//     then messageStop (stop reason) and metadata (usage, metrics);
//   - blocks are addressed by contentBlockIndex and may interleave; parts
//     come out in index order, one per block: distinct reasoning blocks are
//     never merged, and a signature or redacted content stays on its own
//     block;
//   - tool-use input arrives as string pieces and is parsed when the message
//     is taken: malformed JSON is kept in ArgsRaw, with a warning;
//   - the toolUse and toolResult blocks of a tool Bedrock ran itself become
//     tool_call and tool_result parts with Server, as in DecodeReply;
//   - an exception event (throttlingException, modelStreamErrorException, …)
//     makes Add return a *provider.APIError with the provider's message; Message
//     then returns the partial message with that error.
//
// The final message equals DecodeReply of the same reply non-streamed.
func (converse) NewAccumulator(opts provider.Options) provider.Accumulator {
	return &accumulator{opts: opts}
}

type blockKind uint8

const (
	kindText blockKind = iota + 1
	kindReasoning
	kindToolUse
	kindToolResult
	kindImage
)

func (k blockKind) String() string {
	switch k {
	case kindText:
		return "text"
	case kindReasoning:
		return "reasoning"
	case kindToolUse:
		return "toolUse"
	case kindToolResult:
		return "toolResult"
	}
	return "image"
}

// block is one content block being accumulated.
type block struct {
	index    int
	kind     blockKind
	text     strings.Builder // text, reasoning text, or tool-use input
	sig      strings.Builder // reasoning signature
	redacted []byte          // reasoning redacted content, decoded
	hasRed   bool
	cites    [][]byte     // citation deltas, each a JSON object
	id, name string       // tool use or tool result
	typ      string       // tool use or tool result "type"
	status   string       // tool result
	items    []resultItem // tool result content
	textItem int          // index in items of a text item still growing, or -1
	format   string       // image
	data     []byte       // image bytes, decoded
	errRaw   []byte       // image error
	stopped  bool
	// out is the text a call of provider.OutputTool shows while it
	// streams, and added what its last input delta added to it: the call
	// is the reply's text (see reply.finish), and streams as text.
	out   *provider.OutputStream
	added string
}

// resultItem is one content block of a server tool result: text still
// being appended to, or a whole block.
type resultItem struct {
	text  bool
	bytes []byte // the text, or the block's JSON
}

type accumulator struct {
	opts    provider.Options
	r       jsonx.Reader
	started bool
	stopped bool
	meta    bool
	events  int      // events added, for the error of a cut stream
	blocks  []*block // by index
	last    *block   // the block of the previous delta
	reply   reply
	err     error
	warns   []provider.Warning
	unknown map[string]bool // event kinds already warned about

	// What the delta being read changed in the parts, for AddPiece: the
	// text it extended, its length before and the kind of delta it is;
	// whether it changed them otherwise.
	grown     *strings.Builder
	grownFrom int
	grownKind provider.DeltaKind
	changed   bool
}

// AddPiece folds one event into the reply and says what it changed in the
// parts: a delta that extends the text, reasoning text, signature or tool
// input of a block already begun is a piece of the block's part (parts
// are the blocks in index order).
func (a *accumulator) AddPiece(ev provider.Event) (provider.Piece, error) {
	a.grown, a.changed = nil, false
	if err := a.Add(ev); err != nil {
		return provider.Piece{}, err
	}
	switch ev.Type {
	case "messageStart", "messageStop", "metadata":
		return provider.Piece{}, nil
	case "contentBlockDelta":
	default:
		return provider.Piece{Other: true}, nil
	}
	t := a.grown
	switch {
	case a.changed || t != nil && a.grownFrom == 0:
		return provider.Piece{Other: true}, nil
	case t == nil || t.Len() == a.grownFrom:
		return provider.Piece{}, nil
	}
	i, _ := slices.BinarySearchFunc(a.blocks, a.last.index, func(b *block, i int) int { return b.index - i })
	if a.last.out != nil {
		return provider.Piece{Kind: provider.DeltaText, Index: i, Text: a.last.added}, nil
	}
	return provider.Piece{Kind: a.grownKind, Index: i, Text: t.String()[a.grownFrom:]}, nil
}

// grow notes that the delta being read extends t, a delta of kind.
func (a *accumulator) grow(t *strings.Builder, kind provider.DeltaKind) {
	if a.grown != nil && a.grown != t {
		a.changed = true
	}
	a.grown, a.grownFrom, a.grownKind = t, t.Len(), kind
}

// maxBlockIndex bounds contentBlockIndex: no reply has anywhere near as
// many blocks, and a hostile one cannot make the accumulator allocate for
// a huge index.
const maxBlockIndex = 1 << 20

func (a *accumulator) warnOnce(kind, format string, args ...any) {
	if a.unknown == nil {
		a.unknown = map[string]bool{}
	}
	if a.unknown[kind] {
		return
	}
	a.unknown[kind] = true
	a.warns = append(a.warns, provider.Warnf("", format, args...))
}

// Add feeds one event.
func (a *accumulator) Add(ev provider.Event) error {
	if a.err != nil {
		return a.err
	}
	a.events++
	err := a.add(ev)
	if err != nil {
		var se *provider.APIError
		if !errors.As(err, &se) {
			err = fmt.Errorf("%s event: %w", ev.Type, oneLine(err))
		}
		a.err = err
	}
	return err
}

func (a *accumulator) add(ev provider.Event) error {
	a.r.Reset(ev.Data, convo.DefaultLimits.MaxDepth)
	switch ev.Type {
	case "contentBlockDelta":
		return a.delta()
	case "contentBlockStart":
		return a.start()
	case "contentBlockStop":
		return a.stop()
	case "messageStart":
		a.started = true
		return a.r.ReadObject(func(k []byte) error {
			if string(k) != "role" {
				return a.r.Skip()
			}
			role, err := a.r.ReadStringBytes()
			if err == nil && string(role) != "assistant" {
				err = fmt.Errorf("role %q, want assistant", role)
			}
			return err
		})
	case "messageStop":
		a.stopped = true
		return a.r.ReadObject(func(k []byte) error {
			if string(k) == "stopReason" {
				return convo.ErrorAt(a.reply.stopReason(&a.r), "stopReason")
			}
			return convo.ErrorAt(a.reply.keep(&a.r, k), string(k))
		})
	case "metadata":
		a.meta = true
		return a.r.ReadObject(func(k []byte) error {
			if string(k) == "usage" {
				return convo.ErrorAt(a.reply.usage(&a.r), "usage")
			}
			return convo.ErrorAt(a.reply.keep(&a.r, k), string(k))
		})
	}
	if strings.HasSuffix(ev.Type, "Exception") {
		return a.exception(ev)
	}
	a.warnOnce(ev.Type, "event %q skipped: unknown to this version of convo", ev.Type)
	return nil
}

func (a *accumulator) exception(ev provider.Event) error {
	se := &provider.APIError{Provider: ProviderID, Type: ev.Type, Raw: append([]byte(nil), ev.Data...)}
	if len(ev.Data) > 0 {
		// A payload that is not the usual {"message":…} still ends the
		// stream with this exception; its text is then shown as is.
		err := a.r.ReadObject(func(k []byte) error {
			if string(k) != "message" && string(k) != "Message" {
				return a.r.Skip()
			}
			s, err := a.r.ReadString()
			se.Message = s
			return err
		})
		if err != nil {
			se.Message = strings.TrimSpace(string(ev.Data))
		}
	}
	return se
}

// appendString reads a JSON string and appends its value to sb: a string
// without escapes is copied once, straight from the event.
func (a *accumulator) appendString(sb *strings.Builder) error {
	s, err := a.r.ReadStringBytes()
	sb.Write(s)
	return err
}

// readIndex reads a contentBlockIndex value.
func (a *accumulator) readIndex() (int, error) {
	n, err := a.r.ReadInt()
	if err != nil {
		return 0, convo.ErrorAt(err, "contentBlockIndex")
	}
	if n < 0 || n >= maxBlockIndex {
		return 0, convo.ErrorAt(fmt.Errorf("%d is out of range", n), "contentBlockIndex")
	}
	return int(n), nil
}

// find returns the block with index i, or nil.
func (a *accumulator) find(i int) *block {
	if a.last != nil && a.last.index == i {
		return a.last
	}
	j, ok := slices.BinarySearchFunc(a.blocks, i, func(b *block, i int) int { return b.index - i })
	if !ok {
		return nil
	}
	return a.blocks[j]
}

// open adds a block of kind k at index i.
func (a *accumulator) open(i int, k blockKind) *block {
	b := &block{index: i, kind: k, textItem: -1}
	j, _ := slices.BinarySearchFunc(a.blocks, i, func(b *block, i int) int { return b.index - i })
	a.blocks = slices.Insert(a.blocks, j, b)
	return b
}

// member reads an event of the form {"contentBlockIndex":i,"<name>":{…}}
// in either member order, calling fn with the index when the reader is at
// the named member's value.
func (a *accumulator) member(name string, fn func(idx int) error) error {
	idx := -1
	pending, pendStart, pendEnd := false, 0, 0
	seen := false
	err := a.r.ReadObject(func(k []byte) error {
		switch string(k) {
		case "contentBlockIndex":
			var err error
			idx, err = a.readIndex()
			return err
		case name:
			seen = true
			if idx >= 0 {
				return convo.ErrorAt(fn(idx), name)
			}
			// Bedrock sends the index first; a value before it is read
			// again once the index is known.
			pending, pendStart = true, a.r.Offset()
			err := a.r.Skip()
			pendEnd = a.r.Offset()
			return err
		}
		return a.r.Skip()
	})
	if err != nil {
		return err
	}
	switch {
	case idx < 0:
		return errors.New("no contentBlockIndex")
	case !seen:
		return fmt.Errorf("no %q", name)
	case pending:
		data := a.r.Bytes()
		saved := a.r
		a.r.Reset(data[pendStart:pendEnd], convo.DefaultLimits.MaxDepth)
		err := fn(idx)
		a.r = saved
		return convo.ErrorAt(err, name)
	}
	return nil
}

func (a *accumulator) start() error {
	return a.member("start", func(idx int) error {
		if a.find(idx) != nil {
			return fmt.Errorf("block %d started twice", idx)
		}
		var b *block
		err := a.readStart(idx, &b)
		if b != nil {
			a.last = b
		}
		return err
	})
}

func (a *accumulator) readStart(idx int, out **block) error {
	n := 0
	return a.r.ReadObject(func(k []byte) error {
		n++
		if n > 1 {
			return fmt.Errorf("start has more than one member (%q)", k)
		}
		switch string(k) {
		case "toolUse":
			b := a.open(idx, kindToolUse)
			*out = b
			err := a.r.ReadObject(func(k []byte) error {
				switch string(k) {
				case "toolUseId":
					return a.str(&b.id, "toolUseId")
				case "name":
					return a.str(&b.name, "name")
				case "type":
					return a.str(&b.typ, "type")
				}
				return a.r.Skip()
			})
			if b.name == provider.OutputTool && b.typ != "server_tool_use" {
				b.out = &provider.OutputStream{}
			}
			return convo.ErrorAt(err, "toolUse")

		case "toolResult":
			b := a.open(idx, kindToolResult)
			*out = b
			return convo.ErrorAt(a.r.ReadObject(func(k []byte) error {
				switch string(k) {
				case "toolUseId":
					return a.str(&b.id, "toolUseId")
				case "type":
					return a.str(&b.typ, "type")
				case "status":
					return a.str(&b.status, "status")
				}
				return a.r.Skip()
			}), "toolResult")

		case "image":
			b := a.open(idx, kindImage)
			*out = b
			return convo.ErrorAt(a.r.ReadObject(func(k []byte) error {
				if string(k) == "format" {
					return a.str(&b.format, "format")
				}
				return a.r.Skip()
			}), "image")

		}
		a.warnOnce("start:"+string(k), "contentBlockStart %q skipped: unknown to this version of convo", k)
		return a.r.Skip()
	})
}

func (a *accumulator) str(dst *string, name string) error {
	s, err := a.r.ReadString()
	*dst = s
	return convo.ErrorAt(err, name)
}

func (a *accumulator) stop() error {
	return a.r.ReadObject(func(k []byte) error {
		if string(k) != "contentBlockIndex" {
			return a.r.Skip()
		}
		idx, err := a.readIndex()
		if err != nil {
			return err
		}
		if b := a.find(idx); b != nil {
			b.stopped = true
		}
		return nil
	})
}

func (a *accumulator) delta() error { return a.member("delta", a.readDelta) }

// block returns the block at idx for a delta of kind k, opening it when it
// is the first delta of a text or reasoning block.
func (a *accumulator) block(idx int, k blockKind) (*block, error) {
	b := a.find(idx)
	switch {
	case b == nil && (k == kindText || k == kindReasoning || k == kindImage):
		b = a.open(idx, k)
		a.changed = true
	case b == nil:
		return nil, fmt.Errorf("%s delta for block %d, which has no contentBlockStart", k, idx)
	case b.kind != k:
		return nil, fmt.Errorf("%s delta for block %d, a %s block", k, idx, b.kind)
	}
	a.last = b
	return b, nil
}

func (a *accumulator) readDelta(idx int) error {
	n := 0
	return a.r.ReadObject(func(k []byte) error {
		n++
		if n > 1 {
			return fmt.Errorf("delta has more than one member (%q)", k)
		}
		switch string(k) {
		case "text":
			b, err := a.block(idx, kindText)
			if err != nil {
				return err
			}
			a.grow(&b.text, provider.DeltaText)
			return convo.ErrorAt(a.appendString(&b.text), "text")
		case "toolUse":
			b, err := a.block(idx, kindToolUse)
			if err != nil {
				return err
			}
			// A server call's input is not a piece: the part is the
			// provider's, never streamed to a client as its own call.
			a.changed = a.changed || b.typ == "server_tool_use"
			return convo.ErrorAt(a.r.ReadObject(func(k []byte) error {
				if string(k) != "input" {
					return a.r.Skip()
				}
				a.grow(&b.text, provider.DeltaArgs)
				from := b.text.Len()
				err := a.appendString(&b.text)
				if b.out != nil {
					b.added = b.out.Add(b.text.String()[from:])
				}
				return convo.ErrorAt(err, "input")
			}), "toolUse")

		case "reasoningContent":
			b, err := a.block(idx, kindReasoning)
			if err != nil {
				return err
			}
			return convo.ErrorAt(a.reasoningDelta(b), "reasoningContent")
		case "citation":
			b, err := a.block(idx, kindText)
			if err != nil {
				return err
			}
			raw, err := a.r.ReadRaw()
			b.cites, a.changed = append(b.cites, raw), true
			return convo.ErrorAt(err, "citation")
		case "toolResult":
			b, err := a.block(idx, kindToolResult)
			if err != nil {
				return err
			}
			a.changed = true
			return convo.ErrorAt(a.resultDelta(b), "toolResult")
		case "image":
			b, err := a.block(idx, kindImage)
			if err != nil {
				return err
			}
			a.changed = true
			return convo.ErrorAt(a.imageDelta(b), "image")
		}
		a.warnOnce("delta:"+string(k), "%q deltas skipped: unknown to this version of convo", k)
		return a.r.Skip()
	})
}

func (a *accumulator) reasoningDelta(b *block) error {
	return a.r.ReadObject(func(k []byte) error {
		switch string(k) {
		case "text":
			a.grow(&b.text, provider.DeltaText)
			return convo.ErrorAt(a.appendString(&b.text), "text")
		case "signature":
			// Appended, not replaced: a signature may come in pieces.
			a.grow(&b.sig, provider.DeltaSignature)
			return convo.ErrorAt(a.appendString(&b.sig), "signature")
		case "redactedContent":
			a.changed = true
			s, err := a.r.ReadStringBytes()
			if err != nil {
				return convo.ErrorAt(err, "redactedContent")
			}
			raw, err := base64.StdEncoding.AppendDecode(b.redacted, s)
			if err != nil {
				return convo.ErrorAt(fmt.Errorf("malformed base64: %w", err), "redactedContent")
			}
			b.redacted, b.hasRed = raw, true
			return nil
		}
		return a.r.Skip()
	})
}

// resultDelta appends the content of a server tool result: consecutive
// text pieces grow one text item, JSON pieces are items of their own.
func (a *accumulator) resultDelta(b *block) error {
	return a.r.ReadArray(func(int) error {
		return a.r.ReadObject(func(k []byte) error {
			switch string(k) {
			case "text":
				s, err := a.r.ReadStringBytes()
				if err != nil {
					return convo.ErrorAt(err, "text")
				}
				if b.textItem < 0 {
					b.items = append(b.items, resultItem{text: true})
					b.textItem = len(b.items) - 1
				}
				b.items[b.textItem].bytes = append(b.items[b.textItem].bytes, s...)
				return nil
			}
			raw, err := a.r.ReadRaw()
			if err != nil {
				return convo.ErrorAt(err, string(k))
			}
			b.items = append(b.items, resultItem{bytes: jsonObject(string(k), raw)})
			b.textItem = -1
			return nil
		})
	})
}

func jsonObject(key string, val []byte) []byte {
	out := jsonx.AppendString([]byte{'{'}, key)
	out = append(out, ':')
	out = append(out, val...)
	return append(out, '}')
}

func (a *accumulator) imageDelta(b *block) error {
	return a.r.ReadObject(func(k []byte) error {
		switch string(k) {
		case "source":
			return convo.ErrorAt(a.r.ReadObject(func(k []byte) error {
				if string(k) != "bytes" {
					return a.r.Skip()
				}
				s, err := a.r.ReadStringBytes()
				if err != nil {
					return convo.ErrorAt(err, "bytes")
				}
				raw, err := base64.StdEncoding.AppendDecode(b.data, s)
				if err != nil {
					return convo.ErrorAt(fmt.Errorf("malformed base64: %w", err), "bytes")
				}
				b.data = raw
				return nil
			}), "source")

		case "error":
			raw, err := a.r.ReadRaw()
			b.errRaw = raw
			return convo.ErrorAt(err, "error")
		}
		return a.r.Skip()
	})
}

// Snapshot returns the message as accumulated so far: the text of every
// block, tool input as it stands (in ArgsRaw until it parses).
func (a *accumulator) Snapshot() convo.Message {
	m, _ := a.build(false)
	return m
}

// Message returns the final message. A stream that ended before
// messageStop, or that reported an exception, returns the partial message
// with an error.
func (a *accumulator) Message() (convo.Message, []provider.Warning, error) {
	m, warns := a.build(true)
	warns = append(slices.Clip(a.warns), warns...)
	switch {
	case a.err != nil:
		return m, warns, a.err
	case !a.stopped:
		return m, warns, fmt.Errorf("bedrock: the stream ended after %d events, before messageStop: %w", a.events, provider.ErrIncomplete)
	case !a.meta:
		warns = append(warns, provider.Warnf("", "the stream has no metadata event: usage unknown"))
	}
	return m, warns, a.opts.Check(warns)
}

func (a *accumulator) build(final bool) (convo.Message, []provider.Warning) {
	var warns []provider.Warning
	m := convo.Message{Role: convo.RoleAssistant, Parts: make([]convo.Part, 0, len(a.blocks))}
	for _, b := range a.blocks {
		p, w := b.part(final, m.Parts)
		if w != "" {
			warns = append(warns, provider.Warnf("content["+strconv.Itoa(b.index)+"]", "%s", w))
		}
		m.Parts = append(m.Parts, p)
	}
	a.reply.finish(&m, a.opts)
	return m, warns
}

// part turns a block into the part DecodeReply gives for the block's
// non-streamed form, and a warning; before are the parts of the blocks
// before it.
func (b *block) part(final bool, before []convo.Part) (convo.Part, string) {
	switch b.kind {
	case kindText:
		p := convo.Text(b.text.String())
		if len(b.cites) > 0 {
			cc := wire.Members{{Key: "citations", Val: wire.JoinArray(b.cites)}}.Object()
			p.Native = withNative(nil, wire.Members{{Key: "citationsContent", Val: cc}}.Object())
			liftCites(&p)
		}
		return p, ""
	case kindReasoning:
		p := convo.Part{Type: convo.TypeReasoning, Provider: ProviderID, Text: b.text.String(), Signature: b.sig.String()}
		if b.hasRed {
			p.Encrypted = base64.StdEncoding.EncodeToString(b.redacted)
		}
		return p, ""
	case kindToolUse:
		if b.out != nil && !b.stopped && !final {
			// A call of the output tool still streaming: the text it
			// is becoming.
			return convo.Text(b.out.Text()), ""
		}
		return b.toolUse(final)
	case kindToolResult:
		return b.toolResult(before), ""
	}
	return b.image(), ""
}

func (b *block) toolUse(final bool) (convo.Part, string) {
	input := b.text.String()
	var args []byte
	warn := ""
	if strings.TrimSpace(input) == "" {
		args = []byte("{}")
	} else if c, err := jsonx.Compact([]byte(input), convo.DefaultLimits.MaxDepth); err == nil {
		args = c
	} else if final {
		warn = fmt.Sprintf("tool-use input of %q is not valid JSON (%v): kept in args_raw", b.name, err)
	}
	p := convo.Part{Type: convo.TypeToolCall, ID: b.id, Name: b.name}
	if b.typ == "server_tool_use" {
		p.Server, p.Provider = serverKind(b.name), ProviderID
	}
	if args != nil {
		p.Args = args
	} else {
		p.ArgsRaw = input
	}
	if b.typ != "" {
		p.Native = withNative(nil, wire.Members{{Key: "type", Val: jsonx.AppendString(nil, b.typ)}}.Object())
	}
	return p, warn
}

// toolResult builds a server tool result as DecodeReply reads its block in
// an assistant message: the result of the server call of its id among
// before, or else kept whole.
func (b *block) toolResult(before []convo.Part) convo.Part {
	items := make([][]byte, len(b.items))
	for i, it := range b.items {
		if it.text {
			items[i] = jsonObject("text", jsonx.AppendString(nil, string(it.bytes)))
		} else {
			items[i] = it.bytes
		}
	}
	ms := wire.Members{
		{Key: "toolUseId", Val: jsonx.AppendString(nil, b.id)},
		{Key: "content", Val: wire.JoinArray(items)},
	}
	if b.status != "" {
		ms = append(ms, wire.Member{Key: "status", Val: jsonx.AppendString(nil, b.status)})
	}
	if b.typ != "" {
		ms = append(ms, wire.Member{Key: "type", Val: jsonx.AppendString(nil, b.typ)})
	}
	raw := jsonObject("toolResult", ms.Object())
	d := decoder{r: jsonx.NewReader(raw, convo.DefaultLimits.MaxDepth)}
	if ps, err := d.block(nil, blockMessage); err == nil && len(ps) == 1 &&
		ps[0].Type == convo.TypeToolResult && serverResult(&ps[0], before) {
		return ps[0]
	}
	return provider.OpaquePart(ProviderID, "toolResult", raw)
}

func (b *block) image() convo.Part {
	p := convo.Part{Type: convo.TypeImage, Data: base64.StdEncoding.EncodeToString(b.data)}
	var ms wire.Members
	if b.errRaw != nil {
		ms = append(ms, wire.Member{Key: "error", Val: b.errRaw})
	}
	mime, keep := mimeOf(convo.TypeImage, b.format)
	p.MediaType = mime
	if keep {
		ms = append(ms, wire.Member{Key: "format", Val: jsonx.AppendString(nil, b.format)})
	}
	p.Native = withNative(nil, ms.Object())
	return p
}
