package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
)

// Decode reads the "instructions" and "input" of a Responses request body
// into a history. Instructions become a leading system message; an input
// string becomes one user message; input items are grouped into messages as
// docs/providers.md describes. Other members of the body
// are validated as JSON and otherwise ignored.
func (responses) Decode(body []byte, opts provider.Options) (convo.History, []provider.Warning, error) {
	l, err := opts.CheckSize(body, "request body")
	if err != nil {
		return nil, nil, err
	}
	if err := provider.CheckFormat(body, "openai-responses"); err != nil {
		return nil, nil, err
	}
	d := newRespDec(jsonx.NewReader(body, l.MaxDepth), l.MaxDepth)
	var instructions *string
	hasInput := false
	err = d.r.ReadObject(func(key []byte) error {
		switch string(key) {
		case "instructions":
			if d.r.ReadNull() {
				return nil
			}
			s, err := d.r.ReadString()
			instructions = &s
			return at(err, "instructions")
		case "input":
			hasInput = true
			return at(d.input(), "input")
		}
		return d.r.Skip()
	})
	if err == nil {
		err = d.r.ExpectEnd()
	}
	if err != nil {
		return nil, d.warns, err
	}
	if !hasInput && instructions == nil {
		return nil, d.warns, errors.New(`request has neither "input" nor "instructions"`)
	}
	h := d.h
	if instructions != nil {
		sys := convo.Message{
			Role:   convo.RoleSystem,
			Parts:  []convo.Part{convo.Text(*instructions)},
			Native: convo.Native{ProviderID: []byte(`{"from":"instructions"}`)},
		}
		h = append(convo.History{sys}, h...)
	}
	if h == nil {
		h = convo.History{}
	}
	return h, d.warns, opts.Check(d.warns)
}

// DecodeItems decodes Responses input items — the form the Conversations API
// stores and lists — into a history, grouped as Decode groups the items of
// a request's input. Item ids are kept in Native: a message item's id and
// status in its message's Native["openai"], the ids of reasoning,
// function_call and function_call_output items in their part's
// Native["openai"] (a reasoning item's id is also the part's ID). Item
// errors name the item (items[3].content[0]).
func DecodeItems(items []json.RawMessage, opts provider.Options) (convo.History, []provider.Warning, error) {
	l := opts.DecodeLimits()
	d := newRespDec(nil, l.MaxDepth)
	d.place = "items"
	var total int64
	for _, raw := range items {
		total += int64(len(raw))
	}
	if total > l.MaxBytes {
		return nil, nil, fmt.Errorf("items of more than %d bytes: %w", l.MaxBytes, jsonx.ErrTooLarge)
	}
	for i, raw := range items {
		d.r = jsonx.NewReader(raw, l.MaxDepth)
		err := d.item(i)
		if err == nil {
			err = d.r.ExpectEnd()
		}
		if err != nil {
			return nil, d.warns, at(at(err, index("", i)), "items")
		}
	}
	d.flush()
	if d.h == nil {
		d.h = convo.History{}
	}
	return d.h, d.warns, nil
}

type respDec struct {
	r        *jsonx.Reader
	maxDepth int
	place    string // "input" or "items", for warnings
	warns    []provider.Warning
	h        convo.History
	cur      *group   // the assistant message being gathered
	cbuf     rContent // reused by content
	// reply is set while reading a response's output: every item goes into
	// one assistant message.
	reply bool
	args  argsParser
	calls map[string]string // call_id → name of the calls seen so far
}

func newRespDec(r *jsonx.Reader, maxDepth int) *respDec {
	return &respDec{r: r, maxDepth: maxDepth, place: "input", calls: map[string]string{}}
}

// group gathers consecutive model-side items (reasoning, function calls, at
// most one assistant message item, built-in tool items) into one assistant
// message.
type group struct {
	parts  []convo.Part
	nb     natBuilder // the message item's own fields
	phase  convo.Phase
	hasMsg bool
}

func (d *respDec) flush() {
	if d.cur == nil {
		return
	}
	g := d.cur
	d.cur = nil
	d.h = append(d.h, convo.Message{
		Role:   convo.RoleAssistant,
		Parts:  g.parts,
		Phase:  g.phase,
		Native: g.nb.native(false),
	})
}

// open returns the group to add a model-side item to. A second assistant
// message item starts a new group, taking the reasoning items that came
// right before it: reasoning belongs to what follows it.
func (d *respDec) open(message bool) *group {
	if d.cur != nil && message && d.cur.hasMsg && !d.reply {
		g := d.cur
		k := len(g.parts)
		for k > 0 && g.parts[k-1].Type == convo.TypeReasoning {
			k--
		}
		carried := append([]convo.Part(nil), g.parts[k:]...)
		g.parts = g.parts[:k]
		if len(g.parts) == 0 {
			d.cur = nil
		} else {
			d.flush()
		}
		d.cur = &group{parts: carried}
	}
	if d.cur == nil {
		d.cur = &group{parts: make([]convo.Part, 0, 4)}
	}
	return d.cur
}

func (d *respDec) input() error {
	switch d.r.Peek() {
	case jsonx.String:
		s, err := d.r.ReadString()
		if err != nil {
			return err
		}
		d.h = convo.History{{
			Role:   convo.RoleUser,
			Parts:  []convo.Part{convo.Text(s)},
			Native: convo.Native{ProviderID: []byte(`{"from":"input"}`)},
		}}
		return nil
	case jsonx.Array:
		// About one message per kilobyte of request, within reason: a
		// guess that saves most of the copying as the history grows.
		d.h = make(convo.History, 0, min(16+len(d.r.Bytes())/1024, 4096))
		err := d.r.ReadArray(func(i int) error {
			return atIndex(d.item(i), i)
		})
		d.flush()
		return err
	}
	return d.r.Errorf("want a string or an array of items, got %s", d.r.Peek())
}

// Item member flags.
const (
	hasType = 1 << iota
	hasRole
	hasID
	hasStatus
	hasPhase
	hasCallID
	hasName
	hasArgs
	hasInput
	hasEnc
	hasContent
	hasSummary
	hasOutput
)

// span is where a member's value lies in the document being read.
type span struct{ start, end int }

// strKeys are the string members of an item, in the order of their flags.
var strKeys = [...]string{"type", "role", "id", "status", "phase", "call_id", "name", "arguments", "input", "encrypted_content"}

// rItem is one input item while it is read. String members are kept as
// their raw JSON strings: most go to Native as they are, and only the ones
// convo has a field for are decoded.
type rItem struct {
	start, end               int
	raw                      [len(strKeys)][]byte
	has                      int
	content, summary, output span
	msg                      *rContent // message content or call output, when read
	reasoning                *rTexts   // reasoning content, when read
	summ                     *rTexts   // reasoning summary, when read
	nb                       natBuilder
}

// r returns the raw JSON string of the member with the given flag.
func (it *rItem) r(flag int) []byte { return it.raw[bits.TrailingZeros(uint(flag))] }

// s returns the decoded string of the member with the given flag.
func (it *rItem) s(flag int) string { return decodeStr(it.r(flag)) }

// is reports whether the member with the given flag is the string v (v needs
// no escaping).
func (it *rItem) is(flag int, v string) bool {
	raw := it.r(flag)
	return it.has&flag != 0 && len(raw) == len(v)+2 && string(raw[1:len(raw)-1]) == v
}

// decodeStr decodes a raw JSON string the reader has validated.
func decodeStr(raw []byte) string {
	if len(raw) < 2 {
		return ""
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	s, _ := jsonx.NewReader(raw, 0).ReadString()
	return s
}

// kind is the item's type, "message" for a typeless item with a role, or
// "" while it cannot be told yet.
func (it *rItem) kind() string {
	if it.has&hasType != 0 {
		switch raw := it.r(hasType); string(raw) {
		case `"message"`:
			return "message"
		case `"function_call"`:
			return "function_call"
		case `"function_call_output"`:
			return "function_call_output"
		case `"reasoning"`:
			return "reasoning"
		case `"custom_tool_call"`:
			return "custom_tool_call"
		case `"custom_tool_call_output"`:
			return "custom_tool_call_output"
		default:
			return decodeStr(raw)
		}
	}
	if it.has&hasRole != 0 {
		return "message"
	}
	if it.has&hasID != 0 {
		// An item reference may leave out its type (the SDK writes it so).
		return "item_reference"
	}
	return ""
}

// rContent is message content or a function call output: a string or
// parts.
type rContent struct {
	isString bool
	text     string
	parts    []convo.Part
	meta     []partMeta
	raw      []byte // null or another shape, kept as it came
}

// partMeta is what a content part needs once its message's role is known.
type partMeta struct {
	wireType string
	nb       natBuilder
}

// rTexts is a reasoning item's summary or content: texts when every entry is
// a plain {type, text}, else the raw array.
type rTexts struct {
	texts []string
	raw   []byte
}

func (d *respDec) item(i int) error {
	if d.r.Peek() != jsonx.Object {
		return d.r.Errorf("want an item object, got %s", d.r.Peek())
	}
	it := rItem{start: d.r.Offset()}
	err := d.r.ReadObject(func(key []byte) error {
		k := key
		flag := 0
		switch string(k) {
		case "type":
			flag = hasType
		case "role":
			flag = hasRole
		case "id":
			flag = hasID
		case "status":
			flag = hasStatus
		case "phase":
			flag = hasPhase
		case "call_id":
			flag = hasCallID
		case "name":
			flag = hasName
		case "arguments":
			flag = hasArgs
		case "input":
			flag = hasInput
		case "encrypted_content":
			flag = hasEnc
		case "content", "summary", "output":
			return atKey(d.complexMember(&it, string(k)), k)
		}
		if flag == 0 || d.r.Peek() != jsonx.String {
			raw, err := d.r.ReadRaw()
			it.nb.addKey(k, raw)
			return atKey(err, k)
		}
		start := d.r.Offset()
		_, err := d.r.ReadStringBytes()
		it.raw[bits.TrailingZeros(uint(flag))] = d.r.Bytes()[start:d.r.Offset()]
		it.has |= flag
		return atKey(err, k)
	})
	if err != nil {
		return err
	}
	it.end = d.r.Offset()
	return d.build(&it, i)
}

// complexMember reads content, summary or output: now when the item's kind
// is already known, else later (from its span) once it is.
func (d *respDec) complexMember(it *rItem, k string) error {
	start := d.r.Offset()
	kind := it.kind()
	var err error
	switch {
	case k == "content" && kind == "message":
		it.msg, err = d.content()
	case k == "output" && (kind == "function_call_output" || kind == "custom_tool_call_output"):
		it.msg, err = d.content()
	case k == "content" && kind == "reasoning":
		it.reasoning, err = d.texts("reasoning_text")
	case k == "summary" && kind == "reasoning":
		it.summ, err = d.texts("summary_text")
	default:
		err = d.r.Skip()
	}
	if err != nil {
		return err
	}
	s := span{start, d.r.Offset()}
	switch string(k) {
	case "content":
		it.content, it.has = s, it.has|hasContent
	case "summary":
		it.summary, it.has = s, it.has|hasSummary
	default:
		it.output, it.has = s, it.has|hasOutput
	}
	return nil
}

// deferred reads a member whose kind was not known when it was met.
func (d *respDec) deferred(s span, read func() error) error {
	saved := d.r
	d.r = jsonx.NewReader(saved.Bytes()[s.start:s.end], d.maxDepth)
	err := read()
	d.r = saved
	return err
}

// rawOf returns the compacted JSON of a member.
func (d *respDec) rawOf(s span) []byte {
	raw, _ := jsonx.Compact(d.r.Bytes()[s.start:s.end], 0)
	return raw
}

// keepUnused puts back, as native fields, the members read that this kind
// of item does not use.
func (d *respDec) keepUnused(it *rItem, used int) {
	for k, key := range strKeys {
		if flag := 1 << k; flag != hasType && it.has&flag != 0 && used&flag == 0 {
			it.nb.add(key, it.raw[k])
		}
	}
	spans := [...]struct {
		flag int
		key  string
		s    span
	}{{hasContent, "content", it.content}, {hasSummary, "summary", it.summary}, {hasOutput, "output", it.output}}
	for _, s := range spans {
		if it.has&s.flag != 0 && used&s.flag == 0 {
			it.nb.add(s.key, d.rawOf(s.s))
		}
	}
}

func (d *respDec) warn(i int, format string, args ...any) {
	d.warns = append(d.warns, provider.Warnf(index(d.place, i), format, args...))
}

func (d *respDec) opaque(it *rItem) convo.Part {
	return provider.OpaquePart(ProviderID, it.kind(), d.rawOf(span{it.start, it.end}))
}

// userSide reports whether an item of unknown type is the caller's input
// (a tool output, an approval, a configuration item) rather than the
// model's output.
func userSide(typ string) bool {
	return strings.HasSuffix(typ, "_output") || typ == "mcp_approval_response" ||
		typ == "additional_tools" || typ == "configuration_update" || typ == "compaction_trigger"
}

func (d *respDec) build(it *rItem, i int) error {
	kind := it.kind()
	switch kind {
	case "":
		return errors.New(`item has no "type"`)
	case "message":
		return d.message(it, i)
	case "function_call", "custom_tool_call":
		return d.call(it)
	case "function_call_output", "custom_tool_call_output":
		if d.reply {
			break // not model output: kept whole below
		}
		return d.output(it, i)
	case "reasoning":
		return d.reasoning(it)
	case "mcp_approval_request":
		return d.approvalRequest(it)
	case "mcp_approval_response":
		if !d.reply {
			return d.approval(it)
		}
	}
	p := d.opaque(it)
	if userSide(kind) && !d.reply {
		d.flush()
		d.h = append(d.h, convo.Message{Role: convo.RoleUser, Parts: []convo.Part{p}})
		return nil
	}
	g := d.open(false)
	g.parts = append(g.parts, p)
	return nil
}

func (d *respDec) message(it *rItem, i int) error {
	if it.has&hasRole == 0 {
		return errors.New(`message has no "role"`)
	}
	if it.has&hasContent == 0 {
		return errors.New(`message has no "content"`)
	}
	if it.msg == nil {
		if err := d.deferred(it.content, func() error {
			var err error
			it.msg, err = d.content()
			return err
		}); err != nil {
			return at(err, "content")
		}
	}
	c := it.msg
	if c.raw != nil || (!c.isString && len(c.parts) == 0) || (d.reply && !it.is(hasRole, "assistant")) {
		// Content convo cannot read (null, or no parts at all): the item
		// is kept whole.
		p := d.opaque(it)
		if it.is(hasRole, "assistant") {
			g := d.open(true)
			g.parts = append(g.parts, p)
			g.hasMsg = true
			return nil
		}
		d.flush()
		d.h = append(d.h, convo.Message{Role: convo.RoleUser, Parts: []convo.Part{p}})
		return nil
	}
	used := hasRole | hasContent
	var nb *natBuilder
	var m convo.Message
	var g *group
	var later natBuilder // a reply's second message item: its own fields
	role := it.s(hasRole)
	switch role {
	case "assistant":
		g = d.open(true)
		if g.hasMsg {
			// Only in a reply: the item's fields go with its first part.
			nb = &later
			break
		}
		g.hasMsg = true
		nb = &g.nb
		if it.has&hasPhase != 0 {
			if ph, ok := phaseConvo(it.s(hasPhase)); ok {
				g.phase = ph
				used |= hasPhase
			}
		}
	case "user", "system", "developer":
		d.flush()
		m.Role = convo.RoleUser
		if role != "user" {
			m.Role = convo.RoleSystem
		}
		nb = &it.nb
		if role == "developer" {
			nb.add("role", []byte(`"developer"`))
		}
	default:
		return at(fmt.Errorf("unknown role %q", role), "role")
	}
	if it.has&hasType != 0 {
		nb.add("type", it.r(hasType))
	}
	if it.has&hasID != 0 {
		nb.add("id", it.r(hasID))
		used |= hasID
	}
	if it.has&hasStatus != 0 {
		nb.add("status", it.r(hasStatus))
		used |= hasStatus
	}
	parts := c.parts
	if c.isString {
		parts = []convo.Part{convo.Text(c.text)}
	} else {
		// An output-form message (with its id) is written as an array
		// anyway.
		array := role == "assistant" && it.has&hasID != 0
		finishParts(parts, c.meta, role == "assistant", array)
	}
	if g != nil {
		d.keepUnused(it, used)
		if len(it.nb.buf) > 0 {
			if len(nb.buf) > 0 {
				nb.buf = append(nb.buf, ',')
			}
			nb.buf = append(nb.buf, it.nb.buf...)
			nb.nonRole = true
		}
		if nb == &later {
			// Marks where this message item starts, with its id, status
			// and phase, so the encoder writes it as its own item again.
			mark := append(append([]byte(`"message":{`), later.buf...), '}')
			for k := range parts {
				if parts[k].Raw == nil {
					parts[k].Native = addMember(parts[k].Native, mark)
					break
				}
			}
		}
		g.parts = append(g.parts, parts...)
		return nil
	}
	d.keepUnused(it, used)
	m.Parts = parts
	m.Native = nb.native(false)
	d.h = append(d.h, m)
	return nil
}

// addMember adds a member (`"key":value`) to the provider's native object.
func addMember(n convo.Native, member []byte) convo.Native {
	old := n[ProviderID]
	obj := make([]byte, 0, len(old)+len(member)+2)
	if len(old) > 2 {
		obj = append(append(obj, old[:len(old)-1]...), ',')
	} else {
		obj = append(obj, '{')
	}
	obj = append(append(obj, member...), '}')
	out := make(convo.Native, len(n)+1)
	for k, v := range n {
		out[k] = v
	}
	out[ProviderID] = obj
	return out
}

// finishParts settles the native fields of content parts once the role is
// known: a text part records its wire type when it differs from the role's
// usual one (output_text for the assistant, input_text otherwise) or when it
// was the only part of an array.
func finishParts(parts []convo.Part, meta []partMeta, assistant, array bool) {
	usual := "input_text"
	if assistant {
		usual = "output_text"
	}
	lone := len(parts) == 1 && !array
	for j := range parts {
		if parts[j].Raw != nil {
			continue
		}
		mt := &meta[j]
		if parts[j].Type == convo.TypeText {
			if mt.wireType != usual || (lone && parts[j].Cache == nil && len(mt.nb.buf) == 0) {
				mt.nb.add("type", jsonx.AppendString(nil, mt.wireType))
			}
		}
		parts[j].Native = mt.nb.native(false)
	}
}

func (d *respDec) call(it *rItem) error {
	custom := it.is(hasType, "custom_tool_call")
	argsFlag, argsKey := hasArgs, "arguments"
	if custom {
		argsFlag, argsKey = hasInput, "input"
	}
	switch {
	case it.has&hasCallID == 0:
		return errors.New(`function call has no "call_id"`)
	case it.has&hasName == 0:
		return errors.New(`function call has no "name"`)
	case it.has&argsFlag == 0:
		return fmt.Errorf("function call has no %q", argsKey)
	}
	p := convo.Part{Type: convo.TypeToolCall, ID: it.s(hasCallID), Name: it.s(hasName)}
	used := hasType | hasCallID | hasName | argsFlag
	var nb natBuilder
	if custom {
		nb.add("type", []byte(`"custom_tool_call"`))
		p.ArgsRaw = it.s(hasInput)
	} else if d.args.parse(&p, it.r(hasArgs), d.maxDepth) {
		nb.add("arguments", it.r(hasArgs))
	}
	if it.has&hasID != 0 {
		nb.add("id", it.r(hasID))
		used |= hasID
	}
	if it.has&hasStatus != 0 {
		nb.add("status", it.r(hasStatus))
		used |= hasStatus
	}
	d.keepUnused(it, used)
	p.Native = joinNat(&nb, &it.nb)
	d.calls[p.ID] = p.Name
	g := d.open(false)
	g.parts = append(g.parts, p)
	return nil
}

// joinNat returns the native object of a's members followed by b's.
func joinNat(a, b *natBuilder) convo.Native {
	if len(b.buf) > 0 {
		if len(a.buf) > 0 {
			a.buf = append(a.buf, ',')
		}
		a.buf = append(a.buf, b.buf...)
		a.nonRole = true
	}
	return a.native(false)
}

func (d *respDec) output(it *rItem, i int) error {
	custom := it.is(hasType, "custom_tool_call_output")
	if it.has&hasCallID == 0 {
		return errors.New(`function call output has no "call_id"`)
	}
	if it.has&hasOutput == 0 {
		return errors.New(`function call output has no "output"`)
	}
	callID := it.s(hasCallID)
	name, known := d.calls[callID]
	if !known {
		// Its call is not in this input: it lives in a stored response
		// (previous_response_id) or conversation. Kept whole, so it goes
		// back to OpenAI, but no other provider could pair it.
		d.warn(i, "output for call %q answers no function_call of the input: kept as an opaque item", callID)
		d.flush()
		d.h = append(d.h, convo.Message{Role: convo.RoleUser, Parts: []convo.Part{d.opaque(it)}})
		return nil
	}
	if it.msg == nil {
		if err := d.deferred(it.output, func() error {
			var err error
			it.msg, err = d.content()
			return err
		}); err != nil {
			return at(err, "output")
		}
	}
	c := it.msg
	r := convo.Part{Type: convo.TypeToolResult, ID: callID, Name: name}
	used := hasType | hasCallID | hasOutput
	var nb natBuilder
	if custom {
		nb.add("type", []byte(`"custom_tool_call_output"`))
	}
	switch {
	case c.raw != nil:
		nb.add("output", c.raw)
	case c.isString:
		r.Parts = []convo.Part{convo.Text(c.text)}
	default:
		finishParts(c.parts, c.meta, false, false)
		r.Parts = c.parts
		if len(c.parts) == 0 {
			nb.add("output", []byte("[]"))
		}
	}
	for _, f := range [...]struct {
		flag int
		key  string
	}{{hasID, "id"}, {hasStatus, "status"}, {hasName, "name"}} {
		if it.has&f.flag != 0 {
			nb.add(f.key, it.r(f.flag))
			used |= f.flag
		}
	}
	if it.has&hasName != 0 && r.Name == "" {
		r.Name = it.s(hasName)
	}
	d.keepUnused(it, used)
	r.Native = joinNat(&nb, &it.nb)
	d.flush()
	d.h = append(d.h, convo.Message{Role: convo.RoleTool, Parts: []convo.Part{r}})
	return nil
}

// approvalRequest reads an mcp_approval_request item into an
// approval_request part of the assistant message; server_label and any
// other member convo has no field for stay in the part's Native.
func (d *respDec) approvalRequest(it *rItem) error {
	switch {
	case it.has&hasID == 0:
		return errors.New(`mcp_approval_request has no "id"`)
	case it.has&hasName == 0:
		return errors.New(`mcp_approval_request has no "name"`)
	case it.has&hasArgs == 0:
		return errors.New(`mcp_approval_request has no "arguments"`)
	}
	p := convo.Part{Type: convo.TypeApprovalRequest, ID: it.s(hasID), Name: it.s(hasName)}
	var nb natBuilder
	if d.args.parse(&p, it.r(hasArgs), d.maxDepth) {
		nb.add("arguments", it.r(hasArgs))
	}
	d.keepUnused(it, hasType|hasID|hasName|hasArgs)
	p.Native = joinNat(&nb, &it.nb)
	g := d.open(false)
	g.parts = append(g.parts, p)
	return nil
}

// approval reads an mcp_approval_response item into an approval part of
// its own user message. The item is read again from its bytes: its members
// are not among those the item reader picks out.
func (d *respDec) approval(it *rItem) error {
	p := convo.Part{Type: convo.TypeApproval}
	var nb natBuilder
	hasReq, hasApprove := false, false
	r := jsonx.NewReader(d.r.Bytes()[it.start:it.end], d.maxDepth)
	err := r.ReadObject(func(key []byte) error {
		var err error
		switch string(key) {
		case "type":
			return r.Skip()
		case "approval_request_id":
			hasReq = true
			p.ID, err = r.ReadString()
			return atKey(err, key)
		case "approve":
			hasApprove = true
			p.Approved, err = r.ReadBool()
			return atKey(err, key)
		case "reason":
			if r.Peek() == jsonx.String {
				start := r.Offset()
				p.Reason, err = r.ReadString()
				if err == nil && p.Reason == "" {
					// An empty reason is not a field of the part: kept so
					// it is written back.
					nb.add("reason", r.Bytes()[start:r.Offset()])
				}
				return atKey(err, key)
			}
		}
		raw, err := r.ReadRaw()
		nb.addKey(key, raw)
		return atKey(err, key)
	})
	switch {
	case err != nil:
		return err
	case !hasReq:
		return errors.New(`mcp_approval_response has no "approval_request_id"`)
	case !hasApprove:
		return errors.New(`mcp_approval_response has no "approve"`)
	}
	p.Native = nb.native(false)
	d.flush()
	d.h = append(d.h, convo.Message{Role: convo.RoleUser, Parts: []convo.Part{p}})
	return nil
}

func (d *respDec) reasoning(it *rItem) error {
	p := convo.Part{Type: convo.TypeReasoning, Provider: ProviderID, ID: it.s(hasID), Encrypted: it.s(hasEnc)}
	used := hasType | hasID | hasEnc
	var nb natBuilder
	if it.has&hasSummary != 0 {
		if it.summ == nil {
			if err := d.deferred(it.summary, func() error {
				var err error
				it.summ, err = d.texts("summary_text")
				return err
			}); err != nil {
				return at(err, "summary")
			}
		}
		used |= hasSummary
		if it.summ.raw != nil {
			nb.add("summary", it.summ.raw)
		} else {
			p.Summary = it.summ.texts
		}
	}
	if it.has&hasContent != 0 {
		if it.reasoning == nil {
			if err := d.deferred(it.content, func() error {
				var err error
				it.reasoning, err = d.texts("reasoning_text")
				return err
			}); err != nil {
				return at(err, "content")
			}
		}
		used |= hasContent
		rt := it.reasoning
		if rt.raw == nil && len(rt.texts) == 1 {
			p.Text = rt.texts[0]
		} else {
			// Not one plain text: kept as it came; the text is still
			// readable.
			raw := rt.raw
			if raw == nil {
				raw = d.rawOf(it.content)
			}
			nb.add("content", raw)
			p.Text = strings.Join(rt.texts, "\n")
		}
	}
	if it.has&hasStatus != 0 {
		nb.add("status", it.r(hasStatus))
		used |= hasStatus
	}
	if p.ID == "" && p.Encrypted == "" && p.Text == "" && p.Summary == nil {
		// Nothing convo can hold: keep the whole item.
		g := d.open(false)
		g.parts = append(g.parts, d.opaque(it))
		return nil
	}
	d.keepUnused(it, used)
	p.Native = joinNat(&nb, &it.nb)
	g := d.open(false)
	g.parts = append(g.parts, p)
	return nil
}

// texts reads a reasoning item's summary or content array.
func (d *respDec) texts(want string) (*rTexts, error) {
	start := d.r.Offset()
	if d.r.Peek() != jsonx.Array {
		raw, err := d.r.ReadRaw()
		return &rTexts{raw: raw}, err
	}
	t := &rTexts{texts: []string{}}
	plain := true
	err := d.r.ReadArray(func(j int) error {
		if d.r.Peek() != jsonx.Object {
			plain = false
			return d.r.Skip()
		}
		var typ, text string
		var hasText bool
		err := d.r.ReadObject(func(key []byte) error {
			switch {
			case string(key) == "type" && d.r.Peek() == jsonx.String:
				s, err := d.r.ReadString()
				typ = s
				return err
			case string(key) == "text" && d.r.Peek() == jsonx.String:
				s, err := d.r.ReadString()
				text, hasText = s, true
				return err
			}
			plain = false
			return d.r.Skip()
		})
		if typ != want || !hasText {
			plain = false
		}
		if hasText {
			t.texts = append(t.texts, text)
		}
		return atIndex(err, j)
	})
	if err != nil {
		return nil, err
	}
	if !plain {
		t.raw, _ = jsonx.Compact(d.r.Bytes()[start:d.r.Offset()], 0)
	}
	return t, nil
}

// content reads message content or a function call output: a string or an
// array of content parts (anything else is kept raw).
//
// The result is the decoder's own rContent, reused by the next call: an
// item's content is read and used before the next item is.
func (d *respDec) content() (*rContent, error) {
	c := &d.cbuf
	*c = rContent{meta: c.meta[:0]}
	switch d.r.Peek() {
	case jsonx.String:
		s, err := d.r.ReadString()
		c.isString, c.text = true, s
		return c, err
	case jsonx.Array:
		c.parts = make([]convo.Part, 0, 2)
		err := d.r.ReadArray(func(j int) error {
			p, mt, err := d.part()
			if err != nil {
				return atIndex(err, j)
			}
			c.parts = append(c.parts, p)
			c.meta = append(c.meta, mt)
			return nil
		})
		return c, err
	}
	raw, err := d.r.ReadRaw()
	c.raw = raw
	return c, err
}

// part reads one content part (input_text, output_text, refusal,
// input_image, input_file; others are kept opaque).
func (d *respDec) part() (convo.Part, partMeta, error) {
	var p convo.Part
	var mt partMeta
	if d.r.Peek() != jsonx.Object {
		return p, mt, d.r.Errorf("want a content part object, got %s", d.r.Peek())
	}
	start := d.r.Offset()
	var f struct {
		typ, text, refusal, imageURL, fileID, fileData, fileURL, filename, detail string
	}
	var cache *convo.Cache
	var cacheRaw []byte
	var annotations []byte
	var nb natBuilder
	seen := 0
	const (
		sType = 1 << iota
		sText
		sRefusal
		sImage
		sFileID
		sFileData
		sFileURL
		sFilename
		sDetail
		sAnn
	)
	err := d.r.ReadObject(func(key []byte) error {
		k := key
		var dst *string
		var flag int
		switch string(k) {
		case "type":
			dst, flag = &f.typ, sType
		case "text":
			dst, flag = &f.text, sText
		case "refusal":
			dst, flag = &f.refusal, sRefusal
		case "image_url":
			dst, flag = &f.imageURL, sImage
		case "file_id":
			dst, flag = &f.fileID, sFileID
		case "file_data":
			dst, flag = &f.fileData, sFileData
		case "file_url":
			dst, flag = &f.fileURL, sFileURL
		case "filename":
			dst, flag = &f.filename, sFilename
		case "detail":
			dst, flag = &f.detail, sDetail
		case "prompt_cache_breakpoint":
			c, raw, exact, err := readBreakpoint(d.r)
			if err == nil && !exact {
				nb.addKey(k, raw)
			}
			cache, cacheRaw = c, raw
			return atKey(err, k)
		case "annotations":
			raw, err := d.r.ReadRaw()
			annotations = raw
			seen |= sAnn
			return atKey(err, k)
		}
		if dst == nil || d.r.Peek() != jsonx.String {
			raw, err := d.r.ReadRaw()
			nb.addKey(k, raw)
			return atKey(err, k)
		}
		s, err := d.r.ReadString()
		*dst = s
		seen |= flag
		return atKey(err, k)
	})
	if err != nil {
		return p, mt, err
	}
	used := sType
	switch f.typ {
	case "input_text", "output_text":
		if seen&sText == 0 {
			return p, mt, errors.New(`text part has no "text"`)
		}
		p = convo.Text(f.text)
		used |= sText
		if seen&sAnn != 0 {
			used |= sAnn
			// output_text always carries annotations; an empty list is
			// what the encoder writes anyway.
			if f.typ != "output_text" || string(annotations) != "[]" {
				nb.add("annotations", annotations)
			}
		}
	case "refusal":
		if seen&sRefusal == 0 {
			return p, mt, errors.New(`refusal part has no "refusal"`)
		}
		p = convo.Refusal(f.refusal)
		used |= sRefusal
	case "input_image":
		p.Type = convo.TypeImage
		switch {
		case seen&sImage != 0:
			used |= sImage
			if mtype, b64, ok := parseDataURL(f.imageURL); ok {
				p.MediaType, p.Data = mtype, b64
			} else {
				p.URL = f.imageURL
			}
		case seen&sFileID != 0:
			used |= sFileID
			p.FileID = f.fileID
		default:
			return p, mt, errors.New(`input_image has neither "image_url" nor "file_id"`)
		}
		if seen&sDetail != 0 {
			used |= sDetail
			p.Detail = f.detail
		}
	case "input_file":
		p.Type = convo.TypeFile
		switch {
		case seen&sFileID != 0:
			used |= sFileID
			p.FileID = f.fileID
		case seen&sFileData != 0:
			used |= sFileData
			if mtype, b64, ok := parseDataURL(f.fileData); ok {
				p.MediaType, p.Data = mtype, b64
			} else if f.fileData != "" && convo.CheckBase64(f.fileData) == nil {
				p.MediaType, p.Data = guessFileType(f.filename), f.fileData
				nb.add("data_url", []byte("false"))
			} else {
				return p, mt, at(errors.New("neither a base64 data URL nor base64"), "file_data")
			}
		case seen&sFileURL != 0:
			used |= sFileURL
			p.URL = f.fileURL
		default:
			return p, mt, errors.New(`input_file has none of "file_id", "file_data", "file_url"`)
		}
		if seen&sFilename != 0 {
			used |= sFilename
			p.Name = f.filename
		}
	case "":
		return p, mt, errors.New(`content part has no "type"`)
	default:
		raw, err := jsonx.Compact(d.r.Bytes()[start:d.r.Offset()], 0)
		if err != nil {
			return p, mt, err
		}
		return provider.OpaquePart(ProviderID, "content."+f.typ, raw), mt, nil
	}
	for _, x := range [...]struct {
		flag int
		key  string
		val  string
	}{
		{sText, "text", f.text}, {sRefusal, "refusal", f.refusal}, {sImage, "image_url", f.imageURL},
		{sFileID, "file_id", f.fileID}, {sFileData, "file_data", f.fileData}, {sFileURL, "file_url", f.fileURL},
		{sFilename, "filename", f.filename}, {sDetail, "detail", f.detail},
	} {
		if seen&x.flag != 0 && used&x.flag == 0 {
			nb.addString(x.key, x.val)
		}
	}
	if seen&sAnn != 0 && used&sAnn == 0 {
		nb.add("annotations", annotations)
	}
	if cache != nil {
		if f.typ == "output_text" || f.typ == "refusal" {
			// These parts take no breakpoint: keep it as it came.
			if string(cacheRaw) == `{"mode":"explicit"}` {
				nb.add("prompt_cache_breakpoint", cacheRaw)
			}
		} else {
			p.Cache = cache
		}
	}
	mt.wireType = f.typ
	mt.nb = nb
	return p, mt, nil
}
