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
		// About two messages per kilobyte of request, within reason (as
		// for Chat, see chatDec.messages).
		d.h = make(convo.History, 0, min(1+len(d.r.Bytes())/512, 4096))
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
	raw := d.rawOf(span{it.start, it.end})
	if s := serverOfItem(kind); s != nil {
		if ps, ok := serverParts(s, raw, &d.args, d.maxDepth); ok {
			g := d.open(false)
			g.parts = append(g.parts, ps...)
			return nil
		}
	}
	p := provider.OpaquePart(ProviderID, kind, raw)
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
		d.opaqueMessage(it)
		return nil
	}
	switch role := it.s(hasRole); role {
	case "assistant":
		d.assistantMessage(it, c)
	case "user", "system", "developer":
		d.inputMessage(it, c, role)
	default:
		return at(fmt.Errorf("unknown role %q", role), "role")
	}
	return nil
}

// opaqueMessage keeps a message item whole: in the assistant message it
// belongs to, or as a user message of its own.
func (d *respDec) opaqueMessage(it *rItem) {
	p := d.opaque(it)
	if it.is(hasRole, "assistant") {
		g := d.open(true)
		g.parts = append(g.parts, p)
		g.hasMsg = true
		return
	}
	d.flush()
	d.h = append(d.h, convo.Message{Role: convo.RoleUser, Parts: []convo.Part{p}})
}

// inputMessage adds a user, system or developer message item as a message
// of its own.
func (d *respDec) inputMessage(it *rItem, c *rContent, role string) {
	d.flush()
	m := convo.Message{Role: convo.RoleUser}
	if role != "user" {
		m.Role = convo.RoleSystem
	}
	nb := &it.nb
	if role == "developer" {
		nb.add("role", []byte(`"developer"`))
	}
	used := itemFields(it, nb, hasRole|hasContent)
	m.Parts = messageParts(it, c, false)
	d.keepUnused(it, used)
	m.Native = nb.native(false)
	d.h = append(d.h, m)
}

// assistantMessage adds an assistant message item to the assistant message
// being gathered. Its fields go to the message, or, for a reply's second
// message item, with its first part.
func (d *respDec) assistantMessage(it *rItem, c *rContent) {
	used := hasRole | hasContent
	g := d.open(true)
	var later natBuilder // a reply's second message item: its own fields
	nb := &later
	if !g.hasMsg {
		g.hasMsg = true
		nb = &g.nb
		if it.has&hasPhase != 0 {
			if ph, ok := phaseConvo(it.s(hasPhase)); ok {
				g.phase = ph
				used |= hasPhase
			}
		}
	}
	used = itemFields(it, nb, used)
	parts := messageParts(it, c, true)
	d.keepUnused(it, used)
	appendNat(nb, &it.nb)
	if nb == &later {
		// Marks where this message item starts, with its id, status and
		// phase, so the encoder writes it as its own item again.
		mark := append(append([]byte{'{'}, later.buf...), '}')
		for k := range parts {
			if parts[k].Raw == nil {
				parts[k].Native = parts[k].Native.With(ProviderID, "message", mark)
				break
			}
		}
	}
	g.parts = append(g.parts, parts...)
}

// itemFields keeps a message item's type, id and status in nb and returns
// used with the ones kept marked.
func itemFields(it *rItem, nb *natBuilder, used int) int {
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
	return used
}

// messageParts returns a message item's content as parts.
func messageParts(it *rItem, c *rContent, assistant bool) []convo.Part {
	if c.isString {
		return []convo.Part{convo.Text(c.text)}
	}
	// An output-form message (with its id) is written as an array anyway.
	finishParts(c.parts, c.meta, assistant, assistant && it.has&hasID != 0)
	return c.parts
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
	appendNat(a, b)
	return a.native(false)
}

// appendNat adds b's members after a's.
func appendNat(a, b *natBuilder) {
	if len(b.buf) > 0 {
		if len(a.buf) > 0 {
			a.buf = append(a.buf, ',')
		}
		a.buf = append(a.buf, b.buf...)
		a.nonRole = true
	}
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

// Content part members with a flag: the string members, in the order of
// partKeys, then annotations.
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

// partKeys are the string members of a content part, in the order of their
// flags.
var partKeys = [...]string{"type", "text", "refusal", "image_url", "file_id", "file_data", "file_url", "filename", "detail"}

// rPart holds the members of one content part while it is read: the members
// come in any order, so each is read by name and interpreted once the type
// is known. used marks the members the part's builder took; the others go
// to Native as they came.
type rPart struct {
	str         [len(partKeys)]string
	seen, used  int
	cache       *convo.Cache
	cacheRaw    []byte
	annotations []byte
	nb          natBuilder
}

// has reports whether the member with the given flag was read.
func (w *rPart) has(flag int) bool { return w.seen&flag != 0 }

// take returns the string member with the given flag and marks it used.
func (w *rPart) take(flag int) string {
	w.used |= flag
	return w.str[bits.TrailingZeros(uint(flag))]
}

// part reads one content part (input_text, output_text, refusal,
// input_image, input_file; others are kept opaque).
func (d *respDec) part() (convo.Part, partMeta, error) {
	if d.r.Peek() != jsonx.Object {
		return convo.Part{}, partMeta{}, d.r.Errorf("want a content part object, got %s", d.r.Peek())
	}
	start := d.r.Offset()
	var w rPart
	if err := d.r.ReadObject(func(key []byte) error { return d.partMember(&w, key) }); err != nil {
		return convo.Part{}, partMeta{}, err
	}
	typ := w.take(sType)
	var p convo.Part
	var err error
	switch typ {
	case "input_text", "output_text":
		p, err = w.textPart(typ)
	case "refusal":
		p, err = w.refusalPart()
	case "input_image":
		p, err = w.imagePart()
	case "input_file":
		p, err = w.filePart()
	case "":
		return p, partMeta{}, errors.New(`content part has no "type"`)
	default:
		raw, err := jsonx.Compact(d.r.Bytes()[start:d.r.Offset()], 0)
		if err != nil {
			return p, partMeta{}, err
		}
		return provider.OpaquePart(ProviderID, "content."+typ, raw), partMeta{}, nil
	}
	if err != nil {
		return p, partMeta{}, err
	}
	w.keepUnused()
	w.settleCache(&p, typ)
	return p, partMeta{wireType: typ, nb: w.nb}, nil
}

// partMember reads one member of a content part into w.
func (d *respDec) partMember(w *rPart, k []byte) error {
	flag := 0
	switch string(k) {
	case "type":
		flag = sType
	case "text":
		flag = sText
	case "refusal":
		flag = sRefusal
	case "image_url":
		flag = sImage
	case "file_id":
		flag = sFileID
	case "file_data":
		flag = sFileData
	case "file_url":
		flag = sFileURL
	case "filename":
		flag = sFilename
	case "detail":
		flag = sDetail
	case "prompt_cache_breakpoint":
		c, raw, exact, err := readBreakpoint(d.r)
		if err == nil && !exact {
			w.nb.addKey(k, raw)
		}
		w.cache, w.cacheRaw = c, raw
		return atKey(err, k)
	case "annotations":
		raw, err := d.r.ReadRaw()
		w.annotations = raw
		w.seen |= sAnn
		return atKey(err, k)
	}
	if flag == 0 || d.r.Peek() != jsonx.String {
		raw, err := d.r.ReadRaw()
		w.nb.addKey(k, raw)
		return atKey(err, k)
	}
	s, err := d.r.ReadString()
	w.str[bits.TrailingZeros(uint(flag))] = s
	w.seen |= flag
	return atKey(err, k)
}

// textPart builds an input_text or output_text part.
func (w *rPart) textPart(typ string) (convo.Part, error) {
	if !w.has(sText) {
		return convo.Part{}, errors.New(`text part has no "text"`)
	}
	p := convo.Text(w.take(sText))
	if w.has(sAnn) {
		w.used |= sAnn
		// output_text always carries annotations; an empty list is what
		// the encoder writes anyway.
		cs, ok := readAnnotations(w.annotations)
		switch {
		case typ == "output_text" && ok:
			p.Citations = cs
		case typ != "output_text" || string(w.annotations) != "[]":
			w.nb.add("annotations", w.annotations)
		}
	}
	return p, nil
}

// refusalPart builds a refusal part.
func (w *rPart) refusalPart() (convo.Part, error) {
	if !w.has(sRefusal) {
		return convo.Part{}, errors.New(`refusal part has no "refusal"`)
	}
	return convo.Refusal(w.take(sRefusal)), nil
}

// imagePart builds an input_image part from its URL (a data URL holds the
// bytes) or file id.
func (w *rPart) imagePart() (convo.Part, error) {
	p := convo.Part{Type: convo.TypeImage}
	switch {
	case w.has(sImage):
		u := w.take(sImage)
		if mtype, b64, ok := parseDataURL(u); ok {
			p.MediaType, p.Data = mtype, b64
		} else {
			p.URL = u
		}
	case w.has(sFileID):
		p.FileID = w.take(sFileID)
	default:
		return p, errors.New(`input_image has neither "image_url" nor "file_id"`)
	}
	if w.has(sDetail) {
		p.Detail = w.take(sDetail)
	}
	return p, nil
}

// filePart builds an input_file part from its file id, data (a data URL or
// bare base64) or URL.
func (w *rPart) filePart() (convo.Part, error) {
	p := convo.Part{Type: convo.TypeFile}
	switch {
	case w.has(sFileID):
		p.FileID = w.take(sFileID)
	case w.has(sFileData):
		data := w.take(sFileData)
		if mtype, b64, ok := parseDataURL(data); ok {
			p.MediaType, p.Data = mtype, b64
		} else if data != "" && convo.CheckBase64(data) == nil {
			p.MediaType, p.Data = guessFileType(w.str[bits.TrailingZeros(sFilename)]), data
			w.nb.add("data_url", []byte("false"))
		} else {
			return p, at(errors.New("neither a base64 data URL nor base64"), "file_data")
		}
	case w.has(sFileURL):
		p.URL = w.take(sFileURL)
	default:
		return p, errors.New(`input_file has none of "file_id", "file_data", "file_url"`)
	}
	if w.has(sFilename) {
		p.Name = w.take(sFilename)
	}
	return p, nil
}

// keepUnused puts back, as native fields, the members read that the part's
// type does not use.
func (w *rPart) keepUnused() {
	for k := 1; k < len(partKeys); k++ {
		if flag := 1 << k; w.seen&flag != 0 && w.used&flag == 0 {
			w.nb.addString(partKeys[k], w.str[k])
		}
	}
	if w.seen&sAnn != 0 && w.used&sAnn == 0 {
		w.nb.add("annotations", w.annotations)
	}
}

// settleCache sets the part's cache breakpoint, or keeps it in Native on
// the parts that take none.
func (w *rPart) settleCache(p *convo.Part, typ string) {
	if w.cache == nil {
		return
	}
	if typ == "output_text" || typ == "refusal" {
		// These parts take no breakpoint: keep it as it came.
		if string(w.cacheRaw) == `{"mode":"explicit"}` {
			w.nb.add("prompt_cache_breakpoint", w.cacheRaw)
		}
		return
	}
	p.Cache = w.cache
}
