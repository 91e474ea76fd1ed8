package openai

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
)

var _ provider.ReplyCodec = responses{}

// DecodeReply decodes a Responses response body (a response object) into
// one assistant message: its output items in order — reasoning items (with
// id, summary and encrypted_content), message text and refusals (item ids,
// status and phase kept), function calls, built-in tool items — as the
// parts of one message, decoded as Decode decodes input items, so the
// message replays as the same items. A reply with several message items
// marks where each begins (native "message" on its first part). Usage
// comes with cached and reasoning tokens; the status (and
// incomplete_details) gives Finish, kept raw under native.openai.response;
// Origin has the model and response id; Time comes from created_at. A
// failed response gives the message and an *provider.APIError.
func (responses) DecodeReply(body []byte, opts provider.Options) (convo.Message, []provider.Warning, error) {
	if err := provider.CheckReply(body, ResponsesName); err != nil {
		return convo.Message{}, nil, err
	}
	m, warns, err := decodeResponsesReply(body, opts)
	if err != nil {
		return m, warns, err
	}
	return m, warns, opts.Check(warns)
}

// NewAccumulator returns an accumulator for the events of one streamed
// Responses reply: each SSE event (its data a JSON object with "type")
// given to Add.
func (responses) NewAccumulator(opts provider.Options) provider.Accumulator {
	return newRespAcc(opts)
}

// ReadStream reads a streamed Responses reply (Server-Sent Events) from r,
// such as an HTTP body, and accumulates it.
func (responses) ReadStream(r io.Reader, opts provider.Options) (convo.Message, []provider.Warning, error) {
	r, err := provider.CheckStream(r, ResponsesName)
	if err != nil {
		return convo.Message{}, nil, err
	}
	return stream.FeedSSE(r, newRespAcc(opts), false)
}

// respReply holds the members of a response object while it is read.
type respReply struct {
	id, model, status string
	created           int64
	incomplete        []byte
	apiErr            *provider.APIError
	errRaw            []byte
	usage             *convo.Usage
	gotOutput         bool
}

func decodeResponsesReply(body []byte, opts provider.Options) (convo.Message, []provider.Warning, error) {
	l, err := opts.CheckSize(body, "request body")
	if err != nil {
		return convo.Message{}, nil, err
	}
	d := newRespDec(jsonx.NewReader(body, l.MaxDepth), l.MaxDepth)
	d.reply, d.place = true, "output"
	var w respReply
	err = d.r.ReadObject(func(key []byte) error { return d.replyMember(&w, key) })
	if err == nil {
		err = d.r.ExpectEnd()
	}
	if err != nil {
		return convo.Message{}, d.warns, err
	}
	if !w.gotOutput && w.status == "" && w.id == "" {
		if w.apiErr != nil {
			return convo.Message{Role: convo.RoleAssistant}, d.warns, w.apiErr
		}
		return convo.Message{}, d.warns, errors.New(`not a response object: no "output", "status" or "id"`)
	}
	d.flush()
	m := convo.Message{Role: convo.RoleAssistant}
	if len(d.h) > 0 {
		m = d.h[0]
	}
	m.Origin = &convo.Origin{Provider: ProviderID, Model: w.model, ResponseID: w.id}
	m.Usage = w.usage
	m.Time = unixTime(w.created)
	m.Finish = respFinish(w.status, w.incomplete, m.HasToolCalls())
	w.keepResponse(&m)
	if w.status == "failed" {
		if w.apiErr == nil {
			w.apiErr = &provider.APIError{Provider: ProviderID, Message: "the response failed"}
		}
		return m, d.warns, w.apiErr
	}
	return m, d.warns, nil
}

// replyMember reads one member of a response object into w; output items
// go to the decoder's assistant message.
func (d *respDec) replyMember(w *respReply, key []byte) error {
	switch string(key) {
	case "id", "model", "status":
		if d.r.ReadNull() {
			return nil
		}
		s, err := d.r.ReadString()
		switch string(key) {
		case "id":
			w.id = s
		case "model":
			w.model = s
		default:
			w.status = s
		}
		return atKey(err, key)
	case "created_at":
		if d.r.ReadNull() {
			return nil
		}
		n, err := d.r.ReadInt()
		w.created = n
		return atKey(err, key)
	case "incomplete_details":
		raw, err := d.r.ReadRaw()
		if string(raw) != "null" {
			w.incomplete = raw
		}
		return atKey(err, key)
	case "error":
		if d.r.ReadNull() {
			return nil
		}
		start := d.r.Offset()
		e, err := readAPIError(d.r)
		w.apiErr = e
		w.errRaw, _ = jsonx.Compact(d.r.Bytes()[start:d.r.Offset()], 0)
		return atKey(err, key)
	case "usage":
		u, err := readUsage(d.r)
		w.usage = u
		return atKey(err, key)
	case "output":
		if d.r.ReadNull() {
			return nil
		}
		if d.r.Peek() != jsonx.Array {
			return atKey(d.r.Errorf("want an array of items, got %s", d.r.Peek()), key)
		}
		w.gotOutput = true
		return atKey(d.r.ReadArray(func(i int) error { return atIndex(d.item(i), i) }), key)
	}
	return d.r.Skip()
}

// keepResponse keeps the response's status, incomplete_details and error
// under native.openai.response, as they came.
func (w *respReply) keepResponse(m *convo.Message) {
	var resp natBuilder
	if w.status != "" {
		resp.addString("status", w.status)
	}
	if w.incomplete != nil {
		resp.add("incomplete_details", w.incomplete)
	}
	if w.errRaw != nil {
		resp.add("error", w.errRaw)
	}
	if len(resp.buf) > 0 {
		m.Native = m.Native.With(ProviderID, "response", append(append([]byte{'{'}, resp.buf...), '}'))
	}
}

// respFinish derives Finish from a response's status: Responses has no
// finish reason.
func respFinish(status string, incomplete []byte, calls bool) convo.Finish {
	switch status {
	case "completed":
		if calls {
			return convo.FinishToolUse
		}
		return convo.FinishStop
	case "incomplete":
		reason := ""
		if incomplete != nil {
			r := jsonx.NewReader(incomplete, 0)
			_ = r.ReadObject(func(key []byte) error {
				if string(key) == "reason" && r.Peek() == jsonx.String {
					s, err := r.ReadString()
					reason = s
					return err
				}
				return r.Skip()
			})
		}
		switch reason {
		case "max_output_tokens":
			return convo.FinishLength
		case "content_filter":
			return convo.FinishContentFilter
		}
		return convo.FinishOther
	case "failed":
		return convo.FinishError
	case "cancelled":
		return convo.FinishOther
	}
	return "" // in_progress, queued: not finished
}

// respAcc folds the events of a streamed Responses reply. Items are kept by
// output_index and their parts by content_index or summary_index; deltas
// are appended; a .done event's value replaces what its deltas built, and
// response.output_item.done's item replaces the whole item (it is the
// authoritative copy and carries the final encrypted_content). The terminal
// event's response gives status and usage, and its output when it has one.
// The final message is decoded from the response object the events add up
// to, so it equals DecodeReply of the reply read whole.
type respAcc struct {
	opts  provider.Options
	limit int64
	depth int
	rd    jsonx.Reader

	events   int
	size     int64
	base     []byte // the response of response.created / in_progress
	terminal []byte // the response of response.completed / incomplete / failed
	items    []*itemAcc
	ev       event // the event being read
	err      error
	warns    []provider.Warning
	unknown  map[string]bool

	// What the event being read changed in the parts, for AddPiece: the
	// one text a delta extended, its length before and the delta kind it
	// is (0 for a summary); whether anything else changed; and the part
	// index of each text found so far, until something else changes.
	grown     *textBuf
	grownFrom int
	grownKind provider.DeltaKind
	changed   bool
	at        map[*textBuf]int
	snap      []convo.Part // the parts of the last Snapshot, while nothing but pieces changed
	snapOK    bool
	// How many parts the last Snapshot showed, with the parts each piece
	// since added (-1: not known, the parts changed otherwise); the item
	// that output_item.done replaces as it was built before; whether the
	// base response has output items of its own.
	nparts    int
	before    []byte
	fresh     bool // the event being read added an item not seen before
	piecing   bool // AddPiece is reading an event: keep before
	baseItems bool
}

type itemAcc struct {
	added, done []byte // raw items of output_item.added and .done
	typ         string
	parts       []*partAcc // content parts by content_index
	summary     []textBuf  // reasoning summary texts by summary_index
	rtext       []textBuf  // reasoning texts by content_index
	args        textBuf    // function_call and mcp_call arguments, custom_tool_call input, code_interpreter_call code
}

type partAcc struct {
	typ         string
	done        []byte // content_part.done's part
	text        textBuf
	annotations []byte // elements, comma-separated
}

func newRespAcc(opts provider.Options) *respAcc {
	l := opts.DecodeLimits()
	return &respAcc{opts: opts, limit: l.MaxBytes, depth: l.MaxDepth, nparts: -1}
}

// event holds the members of one stream event convo reads.
type event struct {
	typ                         []byte
	output, content, summary    int64
	item, part, response, annot span
	delta, text, args, refusal  []byte
	hasDelta, hasText, hasArgs  bool
	hasRefusal                  bool
	errObj                      *provider.APIError
	code, message, param        []byte
}

// Add folds one event into the reply.
func (a *respAcc) Add(ev provider.Event) error {
	if a.err != nil {
		return a.err
	}
	a.events++
	a.size += int64(len(ev.Data))
	if a.size > a.limit {
		a.err = fmt.Errorf("responses stream of more than %d bytes: %w", a.limit, jsonx.ErrTooLarge)
		return a.err
	}
	if string(ev.Data) == "[DONE]" {
		return nil // some compatible servers end with it
	}
	// The caller that feeds the events names the event (stream.Feed does).
	if err := a.event(ev.Data); err != nil {
		a.err = err
		return err
	}
	return nil
}

// grab records where the value at the reader lies.
func (a *respAcc) grab(s *span) error {
	r := &a.rd
	r.Peek()
	s.start = r.Offset()
	err := r.Skip()
	s.end = r.Offset()
	return err
}

// str reads a string or null; the bytes alias the event.
func (a *respAcc) str(dst *[]byte, has *bool) error {
	r := &a.rd
	if r.ReadNull() {
		return nil
	}
	s, err := r.ReadStringBytes()
	*dst = s
	if has != nil {
		*has = true
	}
	return err
}

func (a *respAcc) member(key []byte) error {
	r, e := &a.rd, &a.ev
	var err error
	switch string(key) {
	case "type":
		err = a.str(&e.typ, nil)
	case "output_index":
		e.output, err = r.ReadInt()
	case "content_index":
		e.content, err = r.ReadInt()
	case "summary_index":
		e.summary, err = r.ReadInt()
	case "item":
		err = a.grab(&e.item)
	case "part":
		err = a.grab(&e.part)
	case "response":
		err = a.grab(&e.response)
	case "annotation":
		err = a.grab(&e.annot)
	case "delta":
		err = a.str(&e.delta, &e.hasDelta)
	case "text":
		err = a.str(&e.text, &e.hasText)
	case "arguments", "input":
		err = a.str(&e.args, &e.hasArgs)
	case "refusal":
		err = a.str(&e.refusal, &e.hasRefusal)
	case "code", "param":
		if r.ReadNull() {
			return nil
		}
		raw, rerr := r.ReadRaw()
		if string(key) == "code" {
			e.code = raw
		} else {
			e.param = raw
		}
		err = rerr
	case "message":
		err = a.str(&e.message, nil)
	case "error":
		if r.ReadNull() {
			return nil
		}
		e.errObj, err = readAPIError(r)
	default:
		err = r.Skip()
	}
	return atKey(err, key)
}

func (a *respAcc) event(data []byte) error {
	r := &a.rd
	r.Reset(data, a.depth)
	a.ev = event{}
	e := &a.ev
	err := r.ReadObject(a.member)
	if err == nil {
		err = r.ExpectEnd()
	}
	if err != nil {
		return err
	}
	if e.output < 0 || e.content < 0 || e.summary < 0 || e.output > 1<<20 || e.content > 1<<20 || e.summary > 1<<20 {
		return errors.New("an index out of range")
	}
	typ := string(e.typ)
	if ok, err := a.deltaEvent(typ); ok {
		return err
	}
	a.changed = true
	switch typ {
	case "response.created", "response.in_progress", "response.queued":
		if v := a.raw(e.response); v != nil {
			a.base = v
			items, _ := outputItems(v)
			a.baseItems = len(items) > 0
		}
	case "response.completed", "response.incomplete", "response.failed":
		v := a.raw(e.response)
		if v == nil {
			return fmt.Errorf("%s without a response", typ)
		}
		a.terminal = v
	case "response.output_item.added", "response.output_item.done":
		return a.itemEvent(typ)
	case "response.content_part.added", "response.content_part.done":
		return a.partEvent(typ)
	case "response.output_text.annotation.added":
		p := a.part(e.output, e.content)
		if v := a.raw(e.annot); v != nil {
			if len(p.annotations) > 0 {
				p.annotations = append(p.annotations, ',')
			}
			p.annotations = append(p.annotations, v...)
		}
	case "response.reasoning_summary_part.added", "response.reasoning_summary_part.done":
		it := a.item(e.output)
		tb := grow(&it.summary, e.summary)
		if v := a.raw(e.part); v != nil {
			if s, ok := partText(v); ok && (strings.HasSuffix(typ, ".done") || !tb.set) {
				tb.replace([]byte(s))
			}
		}
	case "error":
		return a.errorEvent()
	case "":
		return errors.New(`event has no "type"`)
	default:
		// Progress events of built-in tools and other news: their items
		// arrive whole in response.output_item.done.
		a.changed = false
		if !strings.HasPrefix(typ, "response.") && !a.unknown[typ] {
			if a.unknown == nil {
				a.unknown = map[string]bool{}
			}
			a.unknown[typ] = true
			a.warns = append(a.warns, provider.Warnf(fmt.Sprintf("event %d", a.events-1), "event of unknown type %q skipped", typ))
		}
	}
	return nil
}

// raw returns the span s of the event being read, compacted, or nil.
func (a *respAcc) raw(s span) []byte {
	if s.end <= s.start {
		return nil
	}
	out, _ := jsonx.Compact(a.rd.Bytes()[s.start:s.end], 0)
	return out
}

// deltaEvent folds the event of type typ when it is one that extends or
// replaces a text or arguments (a delta or its .done), and reports
// whether it was.
func (a *respAcc) deltaEvent(typ string) (bool, error) {
	e := &a.ev
	var t *textBuf
	var value []byte // a .done event's whole value
	done := strings.HasSuffix(typ, ".done")
	kind := provider.DeltaText
	switch typ {
	case "response.output_text.delta", "response.refusal.delta":
		p := a.part(e.output, e.content)
		if p.typ == "" {
			a.changed = true
			p.typ = "output_text"
			if typ == "response.refusal.delta" {
				p.typ = "refusal"
			}
		}
		t = &p.text
	case "response.output_text.done":
		t, value = &a.part(e.output, e.content).text, e.text
	case "response.refusal.done":
		t, value = &a.part(e.output, e.content).text, e.refusal
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		t, kind = &a.item(e.output).args, provider.DeltaArgs
	case "response.function_call_arguments.done", "response.custom_tool_call_input.done":
		if e.hasArgs {
			t, value = &a.item(e.output).args, e.args
		}
	case "response.mcp_call_arguments.delta", "response.code_interpreter_call_code.delta":
		// The item stays opaque until it is done (its call starts then,
		// whole): no piece to report, only the item to keep up to date.
		t, kind = &a.item(e.output).args, 0
	case "response.mcp_call_arguments.done":
		if e.hasArgs {
			t, value = &a.item(e.output).args, e.args
		}
	case "response.code_interpreter_call_code.done":
		if len(e.code) > 0 && e.code[0] == '"' {
			t, value = &a.item(e.output).args, []byte(decodeStr(e.code))
		}
	case "response.reasoning_summary_text.delta":
		t, kind = grow(&a.item(e.output).summary, e.summary), 0
	case "response.reasoning_summary_text.done":
		t, value = grow(&a.item(e.output).summary, e.summary), e.text
	case "response.reasoning_text.delta":
		t = grow(&a.item(e.output).rtext, e.content)
	case "response.reasoning_text.done":
		t, value = grow(&a.item(e.output).rtext, e.content), e.text
	default:
		return false, nil
	}
	switch {
	case t == nil:
	case done:
		// A .done value that repeats what the deltas built changes
		// nothing.
		a.changed = a.changed || !t.set || !t.EqualBytes(value)
		t.replace(value)
	case len(e.delta) == 0:
		a.changed = a.changed || !t.set
		t.add(e.delta)
	default:
		a.grown, a.grownFrom, a.grownKind = t, t.Len(), kind
		t.add(e.delta)
	}
	return true, nil
}

// itemEvent folds response.output_item.added or .done.
func (a *respAcc) itemEvent(typ string) error {
	e := &a.ev
	v := a.raw(e.item)
	if v == nil {
		return fmt.Errorf("%s without an item", typ)
	}
	a.fresh = e.output >= int64(len(a.items)) || a.items[e.output] == nil
	it := a.item(e.output)
	if strings.HasSuffix(typ, ".done") {
		if a.piecing && it.done == nil && (it.added != nil || it.typ != "") {
			a.before = it.build()
		}
		it.done = v
	} else {
		it.added = v
	}
	if it.typ == "" {
		it.typ = itemType(v)
	}
	return nil
}

// partEvent folds response.content_part.added or .done.
func (a *respAcc) partEvent(typ string) error {
	e := &a.ev
	p := a.part(e.output, e.content)
	v := a.raw(e.part)
	if v == nil {
		return fmt.Errorf("%s without a part", typ)
	}
	if p.typ == "" {
		p.typ = itemType(v)
	}
	if strings.HasSuffix(typ, ".done") {
		p.done = v
	}
	return nil
}

// errorEvent returns the error an error event reports.
func (a *respAcc) errorEvent() error {
	e := &a.ev
	ae := e.errObj
	if ae == nil {
		ae = &provider.APIError{Provider: ProviderID, Message: string(e.message), Code: strings.Trim(string(e.code), `"`), Param: strings.Trim(string(e.param), `"`)}
		if ae.Message == "" {
			ae.Message = "an error with no message"
		}
	}
	return ae
}

// AddPiece folds one event into the reply and says what it changed in the
// parts. A delta that extends a text, refusal, reasoning text or call
// arguments already begun, whose item and part have no .done copy yet, is
// a piece of the part showing that text: the part's index is found once
// in a snapshot and kept until an event changes the parts otherwise.
// Reasoning summaries are not streamed as deltas: a summary delta changes
// nothing a reader streams.
func (a *respAcc) AddPiece(ev provider.Event) (provider.Piece, error) {
	a.grown, a.changed, a.before, a.fresh = nil, false, nil, false
	events := a.events
	a.piecing = true
	err := a.Add(ev)
	a.piecing = false
	if err != nil {
		return provider.Piece{}, err
	}
	if a.events == events || string(ev.Data) == "[DONE]" {
		return provider.Piece{}, nil
	}
	t := a.grown
	if a.changed {
		if p, ok := a.itemPiece(); ok {
			return p, nil
		}
		a.at, a.snap, a.snapOK, a.nparts = nil, nil, false, -1
		return provider.Piece{Other: true}, nil
	}
	if t == nil {
		return provider.Piece{}, nil
	}
	if a.grownFrom == 0 || a.doneCopy() {
		a.at, a.snap, a.snapOK, a.nparts = nil, nil, false, -1
		return provider.Piece{Other: true}, nil
	}
	if a.grownKind == 0 {
		return provider.Piece{}, nil // a summary
	}
	i, ok := a.at[t]
	if !ok {
		if i, ok = a.find(t, a.grownFrom, a.grownKind); !ok {
			return provider.Piece{Other: true}, nil
		}
		if a.at == nil {
			a.at = map[*textBuf]int{}
		}
		a.at[t] = i
	}
	return provider.Piece{Kind: a.grownKind, Index: i, Text: t.Since(a.grownFrom)}, nil
}

// doneCopy reports whether the item or part the event being read extends
// has a .done copy, which the message shows instead of the deltas.
func (a *respAcc) doneCopy() bool {
	e := &a.ev
	it := a.items[e.output]
	if it.done != nil {
		return true
	}
	return it.typ == "message" && e.content < int64(len(it.parts)) && it.parts[e.content] != nil && it.parts[e.content].done != nil
}

// find returns the index of the one part of the message whose text (kind
// DeltaText) or arguments (DeltaArgs) is text, which the delta being read
// extended from length from. It looks in the last snapshot, taken before
// the delta, when only pieces of texts whose index is known came since:
// the other texts are as it shows them.
func (a *respAcc) find(text *textBuf, from int, kind provider.DeltaKind) (int, bool) {
	parts, n := a.snap, from
	if !a.snapOK {
		parts, n = a.Snapshot().Parts, text.Len()
	}
	at := -1
	for i := range parts {
		p := &parts[i]
		var got string
		switch {
		case p.Raw != nil:
			continue
		case kind == provider.DeltaText && (p.Type == convo.TypeText || p.Type == convo.TypeRefusal || p.Type == convo.TypeReasoning):
			got = p.Text
		case kind == provider.DeltaArgs && p.Type == convo.TypeToolCall && p.Args == nil:
			got = p.ArgsRaw
		default:
			continue
		}
		if len(got) == n && text.HasPrefix(got) {
			if at >= 0 {
				return 0, false // two alike: which one grows is not known
			}
			at = i
		}
	}
	return at, at >= 0
}

// itemType reads the "type" of an item or part object.
func itemType(raw []byte) string {
	typ := ""
	r := jsonx.NewReader(raw, 0)
	_ = r.ReadObject(func(key []byte) error {
		if string(key) == "type" && r.Peek() == jsonx.String {
			s, err := r.ReadString()
			typ = s
			return err
		}
		return r.Skip()
	})
	return typ
}

// partText reads the "text" of a summary part.
func partText(raw []byte) (string, bool) {
	text, ok := "", false
	r := jsonx.NewReader(raw, 0)
	_ = r.ReadObject(func(key []byte) error {
		if string(key) == "text" && r.Peek() == jsonx.String {
			s, err := r.ReadString()
			text, ok = s, err == nil
			return err
		}
		return r.Skip()
	})
	return text, ok
}

func (a *respAcc) item(i int64) *itemAcc {
	for int64(len(a.items)) <= i {
		a.items = append(a.items, nil)
	}
	if a.items[i] == nil {
		a.items[i] = &itemAcc{}
	}
	return a.items[i]
}

func (a *respAcc) part(item, i int64) *partAcc {
	it := a.item(item)
	for int64(len(it.parts)) <= i {
		it.parts = append(it.parts, nil)
	}
	if it.parts[i] == nil {
		it.parts[i] = &partAcc{}
	}
	return it.parts[i]
}

// grow returns the text at index i of a list, extending the list.
func grow(list *[]textBuf, i int64) *textBuf {
	for int64(len(*list)) <= i {
		*list = append(*list, textBuf{})
	}
	return &(*list)[i]
}

// build writes an item as the events so far make it: the done copy when it
// came, else the added item with what the deltas built put in.
func (it *itemAcc) build() []byte {
	if it.done != nil {
		return it.done
	}
	base := it.added
	if base == nil {
		base = []byte(`{"type":` + string(jsonx.AppendString(nil, it.typ)) + `}`)
	}
	switch it.typ {
	case "message":
		c := []byte{'['}
		n := 0
		for _, p := range it.parts {
			if p == nil {
				continue
			}
			if n > 0 {
				c = append(c, ',')
			}
			n++
			c = p.build(c)
		}
		return setMember(base, "content", append(c, ']'))
	case "function_call":
		if it.args.set {
			return setMember(base, "arguments", it.args.AppendJSON(nil))
		}
	case "custom_tool_call":
		if it.args.set {
			return setMember(base, "input", it.args.AppendJSON(nil))
		}
	case "mcp_call":
		if it.args.set {
			return setMember(base, "arguments", it.args.AppendJSON(nil))
		}
	case "code_interpreter_call":
		if it.args.set {
			return setMember(base, "code", it.args.AppendJSON(nil))
		}
	case "reasoning":
		out := base
		if len(it.summary) > 0 {
			out = setMember(out, "summary", textList(it.summary, "summary_text"))
		}
		if len(it.rtext) > 0 {
			out = setMember(out, "content", textList(it.rtext, "reasoning_text"))
		}
		return out
	}
	return base
}

func (p *partAcc) build(dst []byte) []byte {
	if p.done != nil {
		return append(dst, p.done...)
	}
	if p.typ == "refusal" {
		dst = append(dst, `{"type":"refusal","refusal":`...)
		dst = p.text.AppendJSON(dst)
		return append(dst, '}')
	}
	typ := p.typ
	if typ == "" {
		typ = "output_text"
	}
	dst = append(dst, `{"type":`...)
	dst = jsonx.AppendString(dst, typ)
	dst = append(dst, `,"text":`...)
	dst = p.text.AppendJSON(dst)
	dst = append(dst, `,"annotations":[`...)
	dst = append(dst, p.annotations...)
	return append(dst, "]}"...)
}

func textList(list []textBuf, typ string) []byte {
	out := []byte{'['}
	for i := range list {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"type":"`...)
		out = append(out, typ...)
		out = append(out, `","text":`...)
		out = list[i].AppendJSON(out)
		out = append(out, '}')
	}
	return append(out, ']')
}

// setMember returns the object obj with member key set to val (replaced
// where it is, or added at the end).
func setMember(obj []byte, key string, val []byte) []byte {
	out := make([]byte, 0, len(obj)+len(val)+len(key)+4)
	out = append(out, '{')
	found := false
	r := jsonx.NewReader(obj, 0)
	_ = r.ReadObject(func(k []byte) error {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = jsonx.AppendString(out, string(k))
		out = append(out, ':')
		if string(k) == key {
			found = true
			out = append(out, val...)
			return r.Skip()
		}
		var err error
		out, err = r.AppendRaw(out)
		return err
	})
	if !found {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = jsonx.AppendString(out, key)
		out = append(out, ':')
		out = append(out, val...)
	}
	return append(out, '}')
}

// response writes the response object the events so far add up to: the
// terminal response (else the last response.created / in_progress one)
// with the items the events built merged into its output (see merge).
func (a *respAcc) response() []byte {
	resp := a.terminal
	if resp == nil {
		resp = a.base
		if resp == nil {
			resp = []byte(`{"status":"in_progress"}`)
		}
	}
	term, hasOutput := outputItems(resp)
	merged, same := a.merge(term)
	if hasOutput && same {
		return resp // the terminal copy holds every item: as it came
	}
	items := []byte{'['}
	for i, it := range merged {
		if i > 0 {
			items = append(items, ',')
		}
		items = append(items, it...)
	}
	return setMember(resp, "output", append(items, ']'))
}

// merge joins the items the events built with the items of the terminal
// response's output. Some compatible servers and proxies send a terminal
// event whose output is empty or partial: nothing streamed may be lost. An
// item is matched by its id, else by its output index and type when the
// terminal item there has no id the events used (servers that give items
// new ids in the terminal copy); the terminal copy of an item is preferred,
// the streamed one kept when the terminal has none; a terminal item the
// events never announced takes its own index. same reports that the result
// is the terminal output as it is.
func (a *respAcc) merge(term [][]byte) (out [][]byte, same bool) {
	used := make([]bool, len(term))
	built := make([][]byte, len(a.items))
	streamed := map[string]bool{}
	for k, it := range a.items {
		if it != nil {
			built[k] = it.build()
			if id := itemMember(built[k], "id"); id != "" {
				streamed[id] = true
			}
		}
	}
	byID := map[string]int{}
	for j, t := range term {
		if id := itemMember(t, "id"); id != "" {
			byID[id] = j
		}
	}
	type slot struct {
		index int
		item  []byte
	}
	var slots []slot
	same = true
	for k, it := range a.items {
		if it == nil {
			continue
		}
		j, ok := byID[itemMember(built[k], "id")]
		if !ok && k < len(term) && !used[k] && !streamed[itemMember(term[k], "id")] && itemMember(term[k], "type") == it.typ {
			j, ok = k, true
		}
		if ok && !used[j] {
			used[j] = true
			same = same && j == k
			slots = append(slots, slot{k, term[j]})
			continue
		}
		same = false
		slots = append(slots, slot{k, built[k]})
	}
	for j, t := range term {
		if used[j] {
			continue
		}
		at := j
		for _, s := range slots {
			if s.index == at {
				at = -1 // taken by a streamed item: after the others
				break
			}
		}
		if at < 0 {
			at = len(a.items) + j
		}
		slots = append(slots, slot{at, t})
	}
	slices.SortStableFunc(slots, func(x, y slot) int { return x.index - y.index })
	out = make([][]byte, len(slots))
	for i, s := range slots {
		out[i] = s.item
	}
	return out, same && len(out) == len(term)
}

// outputItems returns the items of a response object's output and whether
// it has a non-null output.
func outputItems(resp []byte) (items [][]byte, present bool) {
	r := jsonx.NewReader(resp, 0)
	_ = r.ReadObject(func(key []byte) error {
		if string(key) != "output" || r.Peek() == jsonx.Null {
			return r.Skip()
		}
		present = true
		if r.Peek() != jsonx.Array {
			return r.Skip() // not an array: decoding reports it
		}
		return r.ReadArray(func(int) error {
			raw, err := r.ReadRaw()
			items = append(items, raw)
			return err
		})
	})
	return items, present
}

// itemMember returns the string member key of an item object, or "".
func itemMember(item []byte, key string) string {
	var v string
	r := jsonx.NewReader(item, 0)
	_ = r.ReadObject(func(k []byte) error {
		if string(k) == key && r.Peek() == jsonx.String {
			s, err := r.ReadString()
			v = s
			return err
		}
		return r.Skip()
	})
	return v
}

func (a *respAcc) decode() (convo.Message, []provider.Warning, error) {
	opts := provider.Options{Limits: convo.Limits{MaxBytes: 1 << 62, MaxDepth: a.depth}}
	return decodeResponsesReply(a.response(), opts)
}

// Snapshot returns the message gathered so far (for showing partial text).
func (a *respAcc) Snapshot() convo.Message {
	m, _, err := a.decode()
	a.snap, a.snapOK, a.nparts = m.Parts, true, len(m.Parts)
	if err != nil {
		a.nparts = -1 // an item convo cannot read: the parts are not the items'
	}
	if m.Role == "" {
		m.Role = convo.RoleAssistant
	}
	return m
}

// Message returns the final message. A stream that reported an error, or
// ended before its terminal response event, gives the partial message and
// an error.
func (a *respAcc) Message() (convo.Message, []provider.Warning, error) {
	m, warns, err := a.decode()
	if m.Role == "" {
		m.Role = convo.RoleAssistant
	}
	warns = append(a.warns, warns...)
	switch {
	case a.err != nil:
		return m, warns, a.err
	case err != nil:
		return m, warns, err
	case a.terminal == nil:
		return m, warns, fmt.Errorf("openai: the stream ended after %d events, before its terminal response event: %w", a.events, provider.ErrIncomplete)
	}
	return m, warns, a.opts.Check(warns)
}
