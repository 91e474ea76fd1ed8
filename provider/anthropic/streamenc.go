package anthropic

import (
	"io"
	"strconv"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// NewStreamEncoder returns an encoder that writes a Messages event stream
// (message_start, content blocks, message_delta, message_stop) to w from
// the deltas of one reply, as the API streams it: text, thinking with its
// signature, redacted thinking, tool_use with input_json_delta pieces, and
// Anthropic's own server tool blocks whole when they end. Parts
// a Messages stream has no block for (media, other providers' items) are
// left out; a refusal becomes text (the stop reason says refusal). Each
// Write writes whole events.
func NewStreamEncoder(w io.Writer, opts provider.StreamOptions) provider.StreamEncoder {
	return &streamEncoder{w: w, opts: opts, blocks: map[int]*encBlock{}}
}

type streamEncoder struct {
	w      io.Writer
	opts   provider.StreamOptions
	buf    []byte
	blocks map[int]*encBlock // by part index
	order  []*encBlock       // in the order they started
	next   int               // the next block index
	usage  *convo.Usage
	done   bool
}

type encBlock struct {
	index                  int
	typ                    convo.PartType
	text, sig, args, stops bool // what was streamed
	redacted               bool
	whole                  bool // a server tool's block, sent whole when it ends
}

func (e *streamEncoder) event(name string, data []byte) {
	e.buf = wire.AppendSSE(e.buf, name, data)
}

func (e *streamEncoder) Write(d provider.Delta) error {
	if e.done || d.Candidate != 0 {
		return nil // one reply per response: candidates after the first are left out
	}
	e.buf = e.buf[:0]
	switch d.Kind {
	case provider.DeltaStart:
		id, model := wire.NewID("msg_"), e.opts.Model
		if d.Origin != nil {
			if d.Origin.ResponseID != "" {
				id = d.Origin.ResponseID
			}
			if model == "" {
				model = d.Origin.Model
			}
		}
		b := append([]byte(nil), `{"type":"message_start","message":{"id":`...)
		b = jsonx.AppendString(b, id)
		b = append(b, `,"type":"message","role":"assistant","model":`...)
		b = jsonx.AppendString(b, model)
		b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}}`...)
		e.event("message_start", b)
	case provider.DeltaPartStart:
		e.start(d.Index, d.Part)
	case provider.DeltaText, provider.DeltaSignature, provider.DeltaArgs:
		b := e.blocks[d.Index]
		if b == nil || d.Text == "" || b.whole {
			break // a whole block is sent when it ends
		}
		switch {
		case d.Kind == provider.DeltaText && b.typ == convo.TypeReasoning && !b.redacted:
			b.text = true
			e.delta(b, "thinking_delta", "thinking", d.Text)
		case d.Kind == provider.DeltaText && b.typ != convo.TypeReasoning:
			b.text = true
			e.delta(b, "text_delta", "text", d.Text)
		case d.Kind == provider.DeltaSignature && b.typ == convo.TypeReasoning && !b.redacted:
			b.sig = true
			e.delta(b, "signature_delta", "signature", d.Text)
		case d.Kind == provider.DeltaArgs:
			b.args = true
			e.delta(b, "input_json_delta", "partial_json", d.Text)
		}
	case provider.DeltaPartEnd:
		e.end(d.Index, d.Part)
	case provider.DeltaUsage:
		e.usage = d.Usage
	case provider.DeltaFinish:
		e.finish(d.Finish)
	case provider.DeltaError:
		e.done = true
		b := append([]byte(nil), `{"type":"error","error":{"type":"api_error","message":`...)
		b = jsonx.AppendString(b, errorText(d.Err))
		e.event("error", append(b, "}}"...))
	}
	if len(e.buf) == 0 {
		return nil
	}
	_, err := e.w.Write(e.buf)
	return err
}

// start opens the block for a part, when a Messages stream has one for it.
func (e *streamEncoder) start(i int, p *convo.Part) {
	b := &encBlock{index: e.next, typ: p.Type}
	out := append([]byte(nil), `{"type":"content_block_start","index":`...)
	out = strconv.AppendInt(out, int64(b.index), 10)
	out = append(out, `,"content_block":`...)
	if p.IsServerTool() {
		// Anthropic's own server tool blocks arrive whole, at their end;
		// another provider's have no block here.
		if _, ok := serverBlock(p); ok {
			b.whole = true
			e.blocks[i] = b
		}
		return
	}
	switch p.Type {
	case convo.TypeText, convo.TypeRefusal:
		out = append(out, `{"type":"text","text":""}`...)
	case convo.TypeReasoning:
		if p.Provider == ProviderID && p.Encrypted != "" && p.Text == "" {
			// Redacted thinking arrives whole, at its end.
			b.redacted = true
			e.blocks[i] = b
			return
		}
		out = append(out, `{"type":"thinking","thinking":"","signature":""}`...)
	case convo.TypeToolCall:
		out = append(out, `{"type":"tool_use","id":`...)
		out = jsonx.AppendString(out, p.ID)
		out = append(out, `,"name":`...)
		out = jsonx.AppendString(out, p.Name)
		out = append(out, `,"input":{}}`...)
	default:
		return
	}
	e.next++
	e.blocks[i] = b
	e.order = append(e.order, b)
	e.event("content_block_start", append(out, '}'))
}

func (e *streamEncoder) delta(b *encBlock, typ, key, piece string) {
	out := append([]byte(nil), `{"type":"content_block_delta","index":`...)
	out = strconv.AppendInt(out, int64(b.index), 10)
	out = append(out, `,"delta":{"type":"`...)
	out = append(out, typ...)
	out = append(out, `",`...)
	out = jsonx.AppendString(out, key)
	out = append(out, ':')
	out = jsonx.AppendString(out, piece)
	e.event("content_block_delta", append(out, "}}"...))
}

// citations sends a text block's citations, a citations_delta each; one
// Anthropic has no form for is left out, as EncodeReply leaves it out.
func (e *streamEncoder) citations(b *encBlock, cs []convo.Citation) {
	var r jsonx.Reader
	for i := range cs {
		out := append([]byte(nil), `{"type":"content_block_delta","index":`...)
		out = strconv.AppendInt(out, int64(b.index), 10)
		out = append(out, `,"delta":{"type":"citations_delta","citation":`...)
		out, ok := replyCites.Append(out, &cs[i], &r)
		if ok {
			e.event("content_block_delta", append(out, "}}"...))
		}
	}
}

// end sends what the pieces did not carry (a reasoning summary, a
// signature or arguments that arrived whole) and closes the block.
func (e *streamEncoder) end(i int, p *convo.Part) {
	b := e.blocks[i]
	if b == nil || b.stops {
		return
	}
	b.stops = true
	if b.redacted {
		b.index = e.next
		e.next++
		out := append([]byte(nil), `{"type":"content_block_start","index":`...)
		out = strconv.AppendInt(out, int64(b.index), 10)
		out = append(out, `,"content_block":{"type":"redacted_thinking","data":`...)
		out = jsonx.AppendString(out, p.Encrypted)
		e.event("content_block_start", append(out, "}}"...))
	}
	if b.whole {
		raw, ok := serverBlock(p)
		if !ok {
			return // the part changed kind on the way: nothing was started
		}
		b.index = e.next
		e.next++
		out := append([]byte(nil), `{"type":"content_block_start","index":`...)
		out = strconv.AppendInt(out, int64(b.index), 10)
		out = append(append(out, `,"content_block":`...), raw...)
		e.event("content_block_start", append(out, '}'))
		p = &convo.Part{} // nothing to add: the block is whole
	}
	switch p.Type {
	case convo.TypeReasoning:
		if !b.redacted && !b.text {
			text := p.Text
			if text == "" {
				text = strings.Join(p.Summary, "\n\n")
			}
			if text != "" {
				e.delta(b, "thinking_delta", "thinking", text)
			}
		}
		if !b.redacted && !b.sig && p.Signature != "" && p.Provider == ProviderID {
			e.delta(b, "signature_delta", "signature", p.Signature)
		}
	case convo.TypeToolCall:
		if !b.args {
			if args := argsOf(p); args != "{}" {
				e.delta(b, "input_json_delta", "partial_json", args)
			}
		}
	case convo.TypeText, convo.TypeRefusal:
		if !b.text && p.Text != "" {
			e.delta(b, "text_delta", "text", p.Text)
		}
		if p.Type == convo.TypeText {
			e.citations(b, p.Citations)
		}
	}
	out := append([]byte(nil), `{"type":"content_block_stop","index":`...)
	out = strconv.AppendInt(out, int64(b.index), 10)
	e.event("content_block_stop", append(out, '}'))
}

// argsOf is a tool call's arguments as JSON text ({} when it has none).
func argsOf(p *convo.Part) string {
	switch {
	case p.Args != nil:
		return string(p.Args)
	case p.ArgsRaw != "":
		return p.ArgsRaw
	}
	return "{}"
}

func (e *streamEncoder) finish(f convo.Finish) {
	e.done = true
	for _, b := range e.order {
		if !b.stops {
			// A part the deltas never ended: close its block.
			b.stops = true
			out := append([]byte(nil), `{"type":"content_block_stop","index":`...)
			out = strconv.AppendInt(out, int64(b.index), 10)
			e.event("content_block_stop", append(out, '}'))
		}
	}
	out := append([]byte(nil), `{"type":"message_delta","delta":{"stop_reason":`...)
	out = jsonx.AppendString(out, stopReason(f))
	out = append(out, `,"stop_sequence":null},"usage":`...)
	u := e.usage
	if u == nil {
		u = &convo.Usage{}
	}
	// convo's input counts cached tokens; Anthropic's does not.
	out = append(out, `{"input_tokens":`...)
	out = strconv.AppendInt(out, max(u.Input-u.CacheRead-u.CacheWrite, 0), 10)
	if u.CacheWrite != 0 {
		out = append(out, `,"cache_creation_input_tokens":`...)
		out = strconv.AppendInt(out, u.CacheWrite, 10)
	}
	if u.CacheRead != 0 {
		out = append(out, `,"cache_read_input_tokens":`...)
		out = strconv.AppendInt(out, u.CacheRead, 10)
	}
	out = append(out, `,"output_tokens":`...)
	out = strconv.AppendInt(out, u.Output, 10)
	e.event("message_delta", append(out, "}}"...))
	e.event("message_stop", []byte(`{"type":"message_stop"}`))
}

// stopReason is the Messages stop_reason for a finish reason.
func stopReason(f convo.Finish) string {
	switch f {
	case convo.FinishLength:
		return "max_tokens"
	case convo.FinishToolUse:
		return "tool_use"
	case convo.FinishPause:
		return "pause_turn"
	case convo.FinishRefusal, convo.FinishContentFilter:
		return "refusal"
	}
	return "end_turn"
}

func errorText(err error) string {
	if err == nil {
		return "the upstream stream failed"
	}
	return err.Error()
}
