package openai

import (
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// NewResponsesStreamEncoder returns an encoder that writes a Responses
// event stream to w from the deltas of one reply: response.created, for
// each part an output item (a message with an output_text or refusal
// part, a reasoning item with its text, summary and encrypted_content, a
// function_call with argument pieces) from output_item.added through its
// deltas to output_item.done, then response.completed (or
// response.incomplete when the reply was cut at the length limit) with
// every item and the usage. Parts Responses has no item for are left out.
// The call and result of a tool OpenAI ran are one item (web_search_call,
// mcp_call, …): output_item.added when the call begins, output_item.done
// with the whole item once its result has ended.
//
// Calls and results of tools another provider ran (Part.IsServerTool) are
// left out; the encoders provider.EncoderOf returns leave them out before.
func NewResponsesStreamEncoder(w io.Writer, opts provider.StreamOptions) provider.StreamEncoder {
	return &respEncoder{w: w, opts: opts, items: map[int]*respItem{}}
}

type respEncoder struct {
	w       io.Writer
	opts    provider.StreamOptions
	buf     []byte
	seq     int
	id      string
	model   string
	created int64
	items   map[int]*respItem
	order   []*respItem
	usage   *convo.Usage
	done    bool
}

type respItem struct {
	out   int // output_index
	id    string
	typ   convo.PartType
	text  strings.Builder // text, refusal or reasoning text streamed
	args  strings.Builder
	final []byte // the item as output_item.done gave it
	// A provider-run tool's item: how it maps, its call and result as they
	// ended, and whether its result has begun but not ended.
	srv       *respServer
	call, res *convo.Part
	resOpen   bool
}

// event appends one event: {"type":name,"sequence_number":n,<body>}.
func (e *respEncoder) event(name string, body []byte) {
	b := append([]byte(nil), `{"type":"`...)
	b = append(b, name...)
	b = append(b, `","sequence_number":`...)
	b = strconv.AppendInt(b, int64(e.seq), 10)
	e.seq++
	if len(body) > 0 {
		b = append(b, ',')
		b = append(b, body...)
	}
	e.buf = wire.AppendSSE(e.buf, name, append(b, '}'))
}

func (e *respEncoder) response(status string, withOutput bool) []byte {
	b := append([]byte(nil), `"response":{"id":`...)
	b = jsonx.AppendString(b, e.id)
	b = append(b, `,"object":"response","created_at":`...)
	b = strconv.AppendInt(b, e.created, 10)
	b = append(b, `,"status":`...)
	b = jsonx.AppendString(b, status)
	b = append(b, `,"error":null,"incomplete_details":`...)
	if status == "incomplete" {
		b = append(b, `{"reason":"max_output_tokens"}`...)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"model":`...)
	b = jsonx.AppendString(b, e.model)
	b = append(b, `,"output":[`...)
	if withOutput {
		n := 0
		for _, it := range e.order {
			if it.final == nil {
				continue
			}
			if n > 0 {
				b = append(b, ',')
			}
			n++
			b = append(b, it.final...)
		}
	}
	b = append(b, `],"usage":`...)
	if e.usage != nil && withOutput {
		b = appendUsageJSON(b, e.usage, false)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}')
}

func (e *respEncoder) Write(d provider.Delta) error {
	if e.done || d.Candidate != 0 {
		return nil // one reply per response: candidates after the first are left out
	}
	e.buf = e.buf[:0]
	switch d.Kind {
	case provider.DeltaStart:
		e.id, e.model, e.created = wire.NewID("resp_"), e.opts.Model, time.Now().Unix()
		if d.Origin != nil {
			if strings.HasPrefix(d.Origin.ResponseID, "resp_") {
				e.id = d.Origin.ResponseID
			}
			if e.model == "" {
				e.model = d.Origin.Model
			}
		}
		if e.opts.ResponseID != "" {
			e.id = e.opts.ResponseID
		}
		e.event("response.created", e.response("in_progress", false))
		e.event("response.in_progress", e.response("in_progress", false))
	case provider.DeltaPartStart:
		e.start(d.Index, d.Part)
	case provider.DeltaText:
		if it := e.items[d.Index]; it != nil && it.typ != convo.TypeToolCall && it.srv == nil {
			e.text(it, d.Text)
		}
	case provider.DeltaArgs:
		if it := e.items[d.Index]; it != nil && it.typ == convo.TypeToolCall && it.srv == nil {
			e.argsDelta(it, d.Text)
		}
	case provider.DeltaPartEnd:
		if it := e.items[d.Index]; it != nil && it.final == nil && it.srv != nil {
			e.endServer(it, d.Part)
		} else if it != nil && it.final == nil {
			e.end(it, d.Part)
		}
	case provider.DeltaUsage:
		e.usage = d.Usage
	case provider.DeltaFinish:
		e.done = true
		status, name := "completed", "response.completed"
		if d.Finish == convo.FinishLength {
			status, name = "incomplete", "response.incomplete"
		}
		e.event(name, e.response(status, true))
	case provider.DeltaError:
		e.done = true
		b := append([]byte(nil), `"code":"server_error","message":`...)
		b = jsonx.AppendString(b, errText(d.Err))
		e.event("error", append(b, `,"param":null`...))
	}
	if len(e.buf) == 0 {
		return nil
	}
	_, err := e.w.Write(e.buf)
	return err
}

func (e *respEncoder) itemHead(it *respItem) []byte {
	b := append([]byte(nil), `"item_id":`...)
	b = jsonx.AppendString(b, it.id)
	b = append(b, `,"output_index":`...)
	return strconv.AppendInt(b, int64(it.out), 10)
}

func (e *respEncoder) start(i int, p *convo.Part) {
	if p.IsServerTool() {
		e.startServer(i, p)
		return
	}
	it := &respItem{out: len(e.order), typ: p.Type}
	var item []byte
	switch p.Type {
	case convo.TypeText, convo.TypeRefusal:
		it.id = wire.NewID("msg_")
		item = append(item, `{"id":`...)
		item = jsonx.AppendString(item, it.id)
		item = append(item, `,"type":"message","status":"in_progress","content":[],"role":"assistant"}`...)
	case convo.TypeReasoning:
		it.id = p.ID
		if p.Provider != ProviderID || it.id == "" {
			it.id = wire.NewID("rs_")
		}
		item = append(item, `{"id":`...)
		item = jsonx.AppendString(item, it.id)
		item = append(item, `,"type":"reasoning","summary":[]}`...)
	case convo.TypeToolCall:
		it.id = wire.NewID("fc_")
		item = append(item, `{"id":`...)
		item = jsonx.AppendString(item, it.id)
		item = append(item, `,"type":"function_call","status":"in_progress","arguments":"","call_id":`...)
		item = jsonx.AppendString(item, p.ID)
		item = append(item, `,"name":`...)
		item = jsonx.AppendString(item, p.Name)
		item = append(item, '}')
	case convo.TypeApprovalRequest:
		it.id = p.ID
		item = approvalItem(p)
	default:
		return
	}
	e.items[i] = it
	e.order = append(e.order, it)
	b := append([]byte(nil), `"output_index":`...)
	b = strconv.AppendInt(b, int64(it.out), 10)
	b = append(b, `,"item":`...)
	e.event("response.output_item.added", append(b, item...))
	switch p.Type {
	case convo.TypeText:
		e.event("response.content_part.added", append(e.itemHead(it), `,"content_index":0,"part":{"type":"output_text","annotations":[],"text":""}`...))
	case convo.TypeRefusal:
		e.event("response.content_part.added", append(e.itemHead(it), `,"content_index":0,"part":{"type":"refusal","refusal":""}`...))
	}
}

func (e *respEncoder) text(it *respItem, s string) {
	if s == "" {
		return
	}
	it.text.WriteString(s)
	name := "response.output_text.delta"
	switch it.typ {
	case convo.TypeRefusal:
		name = "response.refusal.delta"
	case convo.TypeReasoning:
		name = "response.reasoning_text.delta"
	}
	b := append(e.itemHead(it), `,"content_index":0,"delta":`...)
	e.event(name, jsonx.AppendString(b, s))
}

func (e *respEncoder) argsDelta(it *respItem, s string) {
	if s == "" {
		return
	}
	it.args.WriteString(s)
	b := append(e.itemHead(it), `,"delta":`...)
	e.event("response.function_call_arguments.delta", jsonx.AppendString(b, s))
}

// annotations sends a response.output_text.annotation.added event for each
// citation of a text part Responses has a form for, and returns them as
// the part's annotations array.
func (e *respEncoder) annotations(it *respItem, cs []convo.Citation, text string) []byte {
	if len(cs) == 0 {
		return []byte("[]")
	}
	var r jsonx.Reader
	all := appendAnnotations(nil, cs, text, &r, nil)
	n := 0
	r.Reset(all, 2)
	_ = r.ReadArray(func(int) error {
		a, err := r.ReadRaw()
		b := append(e.itemHead(it), `,"content_index":0,"annotation_index":`...)
		b = strconv.AppendInt(b, int64(n), 10)
		e.event("response.output_text.annotation.added", append(append(b, `,"annotation":`...), a...))
		n++
		return err
	})
	return all
}

// end sends what the pieces did not carry, the done events and the final
// item.
func (e *respEncoder) end(it *respItem, p *convo.Part) {
	var item []byte
	switch p.Type {
	case convo.TypeText, convo.TypeRefusal:
		if it.text.Len() == 0 {
			e.text(it, p.Text)
		}
		text := it.text.String()
		var part []byte
		if p.Type == convo.TypeText {
			anns := e.annotations(it, p.Citations, p.Text)
			e.event("response.output_text.done", jsonx.AppendString(append(e.itemHead(it), `,"content_index":0,"text":`...), text))
			part = append(append(append(part, `{"type":"output_text","annotations":`...), anns...), `,"text":`...)
			part = jsonx.AppendString(part, text)
		} else {
			e.event("response.refusal.done", jsonx.AppendString(append(e.itemHead(it), `,"content_index":0,"refusal":`...), text))
			part = jsonx.AppendString(append(part, `{"type":"refusal","refusal":`...), text)
		}
		part = append(part, '}')
		e.event("response.content_part.done", append(append(e.itemHead(it), `,"content_index":0,"part":`...), part...))
		item = append(item, `{"id":`...)
		item = jsonx.AppendString(item, it.id)
		item = append(item, `,"type":"message","status":"completed","content":[`...)
		item = append(item, part...)
		item = append(item, `],"role":"assistant"}`...)
	case convo.TypeReasoning:
		if it.text.Len() == 0 {
			e.text(it, p.Text)
		}
		item = append(item, `{"id":`...)
		item = jsonx.AppendString(item, it.id)
		item = append(item, `,"type":"reasoning","summary":[`...)
		for j, s := range p.Summary {
			if j > 0 {
				item = append(item, ',')
			}
			item = jsonx.AppendString(append(item, `{"type":"summary_text","text":`...), s)
			item = append(item, '}')
		}
		item = append(item, ']')
		if text := it.text.String(); text != "" {
			e.event("response.reasoning_text.done", jsonx.AppendString(append(e.itemHead(it), `,"content_index":0,"text":`...), text))
			item = jsonx.AppendString(append(item, `,"content":[{"type":"reasoning_text","text":`...), text)
			item = append(item, "}]"...)
		}
		if p.Encrypted != "" && p.Provider == ProviderID {
			item = jsonx.AppendString(append(item, `,"encrypted_content":`...), p.Encrypted)
		}
		item = append(item, '}')
	case convo.TypeToolCall:
		if it.args.Len() == 0 {
			args := string(p.Args)
			if p.Args == nil {
				args = p.ArgsRaw
			}
			e.argsDelta(it, args)
		}
		args := it.args.String()
		e.event("response.function_call_arguments.done", jsonx.AppendString(append(e.itemHead(it), `,"arguments":`...), args))
		item = append(item, `{"id":`...)
		item = jsonx.AppendString(item, it.id)
		item = append(item, `,"type":"function_call","status":"completed","arguments":`...)
		item = jsonx.AppendString(item, args)
		item = append(item, `,"call_id":`...)
		item = jsonx.AppendString(item, p.ID)
		item = append(item, `,"name":`...)
		item = jsonx.AppendString(item, p.Name)
		item = append(item, '}')
	case convo.TypeApprovalRequest:
		item = approvalItem(p)
	}
	it.final = item
	b := append([]byte(nil), `"output_index":`...)
	b = strconv.AppendInt(b, int64(it.out), 10)
	b = append(b, `,"item":`...)
	e.event("response.output_item.done", append(b, item...))
}

// approvalItem is the mcp_approval_request item of an approval_request
// part, whole (the API streams it so: output_item.added and .done carry the
// same item): its id, the arguments as they were read when the part keeps
// them (Native "arguments"), and the members convo has no field for
// (server_label, …) from the part's Native, in their order.
func approvalItem(p *convo.Part) []byte {
	b := append([]byte(nil), `{"id":`...)
	b = jsonx.AppendString(b, p.ID)
	b = append(b, `,"type":"mcp_approval_request","arguments":`...)
	var r jsonx.Reader
	nat := p.Native[ProviderID]
	args, rest := []byte(nil), [][2][]byte(nil)
	if len(nat) > 0 {
		r.Reset(nat, 0)
		_ = r.ReadObject(func(key []byte) error {
			v, err := r.ReadRaw()
			if string(key) == "arguments" {
				args = v
			} else if string(key) != "type" && string(key) != "id" && string(key) != "name" {
				rest = append(rest, [2][]byte{key, v})
			}
			return err
		})
	}
	switch {
	case args != nil:
		b = append(b, args...)
	case p.Args != nil:
		b = jsonx.AppendString(b, string(p.Args))
	default:
		b = jsonx.AppendString(b, p.ArgsRaw)
	}
	b = jsonx.AppendString(append(b, `,"name":`...), p.Name)
	for _, kv := range rest {
		b = append(jsonx.AppendString(append(b, ','), string(kv[0])), ':')
		b = append(b, kv[1]...)
	}
	return append(b, '}')
}
