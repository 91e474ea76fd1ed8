package openai

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// ResponsesName is the Responses format's name on the command line.
const ResponsesName = "openai-responses"

// Responses returns the Responses API format (named "openai-responses"):
// the request codec ("instructions" and "input" items) and the reply codec
// (response bodies and their SSE event streams) in one value.
func Responses() provider.Format { return responses{} }

// responses is the Responses API format; its zero value is ready to use.
type responses struct{}

// Name returns "openai-responses".
func (responses) Name() string { return ResponsesName }

// Provider returns "openai".
func (responses) Provider() string { return ProviderID }

// respIDMax bounds call_id: OpenAI refuses tool-call ids over 64 bytes in
// Responses requests (reported by client libraries; not in the SDK).
const respIDMax = 64

var respTarget = provider.Target{
	Provider:  ProviderID,
	MidSystem: true,
	Media:     respMedia,
	Pending:   "OpenAI Responses refuses (no tool output found for a function_call)",
	Approvals: true,
	// The items of the tools OpenAI ran (web_search_call, mcp_call, …).
	ServerTools: true,
	ID: func(id string) string {
		if len(id) <= respIDMax {
			return id
		}
		return provider.SanitizeID(id, respIDMax)
	},
}

// respMedia reports what Responses takes, in messages and function call
// outputs alike: images and files by URL, file id or inline data; no audio
// or video (input_audio is not in the input content union).
func respMedia(p convo.Part, _ bool) bool {
	switch p.Type {
	case convo.TypeImage:
		return p.URL != "" || p.FileID != "" || (p.Data != "" && p.MediaType != "")
	case convo.TypeFile:
		if p.FileID != "" || p.URL != "" {
			return true
		}
		if p.Data == "" {
			return false
		}
		if p.MediaType != "" {
			return true
		}
		n, _ := readNat(p.Native)
		v, _ := n.view(false).get("data_url")
		return string(v) == "false"
	}
	return false
}

// Encode writes h as a Responses request fragment: {"input":[…]}, with
// "instructions" when h opens with the system message a decoded request's
// instructions became, and "input" as a string when that is how it came.
// See docs/providers.md for the mapping.
func (responses) Encode(h convo.History, opts provider.Options) ([]byte, []provider.Warning, error) {
	return appendResponses(nil, h, opts)
}

// appendResponses is Responses' Encode appending to dst (see wire.Begin).
func appendResponses(dst []byte, h convo.History, opts provider.Options) ([]byte, []provider.Warning, error) {
	e, ph, err := newRespEnc(h, opts)
	if err != nil {
		return nil, e.warns, err
	}
	e.buf = wire.Begin(dst, estimateSize(ph)+32)
	first := 0
	if len(ph) > 0 {
		if text, ok := instructionsText(&ph[0]); ok {
			e.key("instructions")
			if err := e.str(text); err != nil {
				return nil, e.warns, err
			}
			first = 1
		}
	}
	e.key("input")
	if len(ph) == first+1 {
		if text, ok := inputText(&ph[first]); ok {
			if err := e.str(text); err != nil {
				return nil, e.warns, err
			}
			e.buf = append(e.buf, '}')
			return e.finish(opts)
		}
	}
	e.buf = append(e.buf, '[')
	for i := first; i < len(ph); i++ {
		if err := e.write(i); err != nil {
			return nil, e.warns, err
		}
	}
	e.buf = append(e.buf, "]}"...)
	return e.finish(opts)
}

// EncodeItems writes h as Responses input items, one JSON object each, the
// form the Conversations API takes. It applies the same rules as Encode,
// except that every message becomes items (a leading instructions message
// becomes a system or developer message item). A message usually becomes one
// item; an assistant message becomes one item per reasoning part, tool call
// and run of text. Item ids kept in Native come back on their items.
func EncodeItems(h convo.History, opts provider.Options) ([]json.RawMessage, []provider.Warning, error) {
	e, ph, err := newRespEnc(h, opts)
	if err != nil {
		return nil, e.warns, err
	}
	e.buf = make([]byte, 0, estimateSize(ph)+32)
	e.track = true
	for i := range ph {
		if err := e.write(i); err != nil {
			return nil, e.warns, err
		}
	}
	if err := opts.Check(e.warns); err != nil {
		return nil, e.warns, err
	}
	items := make([]json.RawMessage, len(e.starts))
	for k, start := range e.starts {
		end := len(e.buf)
		if k+1 < len(e.starts) {
			end = e.starts[k+1] - 1 // the comma between items
		}
		items[k] = json.RawMessage(e.buf[start:end:end])
	}
	return items, e.warns, nil
}

// newRespEnc prepares h for an encoder, which then has a buffer to get.
func newRespEnc(h convo.History, opts provider.Options) (*respEnc, convo.History, error) {
	e := &respEnc{opts: opts}
	switch opts.SystemRole {
	case "", "system", "developer":
	default:
		return e, nil, fmt.Errorf("unknown system role %q (want system or developer)", opts.SystemRole)
	}
	ph, from, warns, err := provider.PrepareIndexed(h, respTarget, opts)
	e.warns = warns
	if err != nil {
		return e, nil, err
	}
	e.h, e.ph, e.from = h, ph, from
	return e, ph, nil
}

// write encodes prepared message i.
func (e *respEnc) write(i int) error {
	e.pl.set(e.h, e.ph, e.from, i)
	return e.message(&e.ph[i])
}

func (e *respEnc) finish(opts provider.Options) ([]byte, []provider.Warning, error) {
	if err := opts.Check(e.warns); err != nil {
		return nil, e.warns, err
	}
	return e.buf, e.warns, nil
}

// instructionsText returns the text of m when it is the system message a
// decoded request's instructions became.
func instructionsText(m *convo.Message) (string, bool) {
	if m.Role != convo.RoleSystem {
		return "", false
	}
	return markedText(m, "instructions")
}

// inputText returns the text of m when it is the user message a decoded
// request's input string became.
func inputText(m *convo.Message) (string, bool) {
	if m.Role != convo.RoleUser || m.Name != "" {
		return "", false
	}
	return markedText(m, "input")
}

func markedText(m *convo.Message, from string) (string, bool) {
	n, err := readNat(m.Native)
	if err != nil {
		return "", false
	}
	if f, _ := n.view(false).str("from"); f != from {
		return "", false
	}
	var texts []string
	for i := range m.Parts {
		p := &m.Parts[i]
		if p.Type != convo.TypeText || p.Cache != nil || p.Native != nil {
			return "", false
		}
		texts = append(texts, p.Text)
	}
	if len(texts) == 0 {
		return "", false
	}
	return strings.Join(texts, "\n"), true
}

type respEnc struct {
	pl place
	nr natReader
	// The caller's history and the prepared one, with the mapping.
	h, ph convo.History
	from  []int
	// The run of content parts being gathered into a message item.
	run    []convo.Part
	runMsg *convo.Message
	runNat nat
	runs   int
	parts  []convo.Part // reused for the content of each tool result

	buf    []byte
	opts   provider.Options
	warns  []provider.Warning
	n      int   // items written
	track  bool  // record where items start (EncodeItems)
	starts []int // item start offsets
}

func (e *respEnc) path() string { return e.pl.msg(func() string { return index("input", e.n) }) }

// at names part j of the message being written.
func (e *respEnc) at(j int) string { return e.pl.part(j, func() string { return index("input", e.n) }) }

func (e *respEnc) warn(format string, args ...any) {
	e.warns = append(e.warns, provider.Warnf(e.path(), format, args...))
}

func (e *respEnc) warnAt(path, format string, args ...any) {
	e.warns = append(e.warns, provider.Warnf(path, format, args...))
}

func (e *respEnc) str(s string) error {
	var ok bool
	e.buf, ok = jsonx.AppendStringChecked(e.buf, s)
	if !ok {
		return encErr(e.path(), "invalid UTF-8 in a string")
	}
	return nil
}

func (e *respEnc) key(k string) { e.buf = jsonx.AppendKey(e.buf, k) }

// begin opens an item object and returns where it starts.
func (e *respEnc) begin() int {
	if e.n > 0 {
		e.buf = append(e.buf, ',')
	}
	start := len(e.buf)
	if e.track {
		e.starts = append(e.starts, start)
	}
	e.buf = append(e.buf, '{')
	return start
}

func (e *respEnc) end(n nat, start int) {
	e.buf = e.nr.close(n, e.buf, start)
	e.n++
}

func (e *respEnc) message(m *convo.Message) error {
	e.nr.reset()
	n, err := e.nr.of(m.Native)
	if err != nil {
		return encErr(e.path(), "%v", err)
	}
	n = n.view(false)
	if m.Name != "" {
		e.warn("name %q left out: Responses messages carry no name", m.Name)
	}
	switch m.Role {
	case convo.RoleSystem, convo.RoleUser:
		return e.plain(m, n)
	case convo.RoleAssistant:
		return e.assistant(m, n)
	case convo.RoleTool:
		return e.tool(m)
	}
	return encErr(e.path(), "%s message cannot be sent", m.Role)
}

// itemPart reports whether p is a whole Responses item kept opaque (not a
// content part, not a Chat block).
func itemPart(p *convo.Part) bool {
	if p.Raw == nil {
		return false
	}
	t := string(p.Type)
	return strings.HasPrefix(t, ProviderID+":") && !strings.HasPrefix(t, ProviderID+":content.") &&
		!strings.HasPrefix(t, ProviderID+":chat.")
}

func contentBlock(p *convo.Part) bool {
	return p.Raw != nil && strings.HasPrefix(string(p.Type), ProviderID+":content.")
}

func (e *respEnc) opaque(p *convo.Part) {
	block, _ := provider.OpaqueBlock(ProviderID, *p)
	e.begin()
	e.buf = append(e.buf, block[1:]...)
	e.n++
}

// plain writes a system, developer or user message: its content as one
// message item, with any opaque items it holds around it in order.
func (e *respEnc) plain(m *convo.Message, n nat) error {
	e.startRuns(m, n)
	for j := range m.Parts {
		p := m.Parts[j]
		switch {
		case itemPart(&p):
			if err := e.flush(); err != nil {
				return err
			}
			e.opaque(&p)
			continue
		case p.Type == convo.TypeText, p.Type.IsMedia(), contentBlock(&p):
		case p.Type == convo.TypeJSON:
			s, err := jsonText(p.Value)
			if err != nil {
				return encErr(e.at(j), "%v", err)
			}
			p = convo.Part{Type: convo.TypeText, Text: s, Cache: p.Cache}
		case p.Type == convo.TypeRefusal:
			e.warnAt(e.at(j), "refusal in a %s message sent as text", m.Role)
			p = convo.Part{Type: convo.TypeText, Text: p.Text, Cache: p.Cache}
		case p.Type == convo.TypeApproval && m.Role == convo.RoleUser:
			if err := e.flush(); err != nil {
				return err
			}
			if err := e.approval(&p); err != nil {
				return err
			}
			continue
		default:
			e.warnAt(e.at(j), "%s part left out: a %s message cannot hold it", p.Type, m.Role)
			continue
		}
		e.run = append(e.run, p)
	}
	return e.flush()
}

// startRuns prepares the gathering of m's content parts into message items.
func (e *respEnc) startRuns(m *convo.Message, n nat) {
	e.run, e.runMsg, e.runNat, e.runs = e.run[:0], m, n, 0
}

// mark starts a new message item at content part p when p opens one of a
// reply's later message items (native "message": that item's id, status and
// phase).
func (e *respEnc) mark(p *convo.Part) error {
	if p.Native == nil {
		return nil
	}
	pn, err := e.nr.of(p.Native)
	if err != nil {
		return encErr(e.path(), "%v", err)
	}
	raw, ok := pn.view(false).get("message")
	if !ok {
		return nil
	}
	if err := e.flush(); err != nil {
		return err
	}
	mn, err := e.nr.read(raw)
	if err != nil {
		return encErr(e.path(), "%v", err)
	}
	e.runNat, e.runs = mn, 0
	return nil
}

// flush writes the content parts gathered since the last item as one
// message item. The message's native fields (its item id, status) go on the
// first one only.
func (e *respEnc) flush() error {
	if len(e.run) == 0 {
		return nil
	}
	var n nat
	if e.runs == 0 {
		n = e.runNat
	}
	e.runs++
	var err error
	if e.runMsg.Role == convo.RoleAssistant {
		err = e.outputMessage(e.runMsg, e.run, n)
	} else {
		err = e.inputMessage(e.runMsg, e.run, n)
	}
	e.run = e.run[:0]
	return err
}

func (e *respEnc) inputMessage(m *convo.Message, parts []convo.Part, n nat) error {
	start := e.begin()
	e.buf = append(e.buf, `"role":`...)
	if m.Role == convo.RoleUser {
		e.buf = append(e.buf, `"user"`...)
	} else {
		role, _ := n.str("role")
		if role != "developer" && role != "system" {
			role = e.opts.SystemRole
			if role == "" {
				role = "system"
			}
		}
		e.buf = jsonx.AppendString(e.buf, role)
	}
	if err := e.content("content", parts, false, false); err != nil {
		return err
	}
	e.end(n, start)
	return nil
}

// content writes member key ("content" or "output"): a string for a lone plain text part (unless
// array is set), else an array of parts.
func (e *respEnc) content(key string, parts []convo.Part, assistant, array bool) error {
	e.key(key)
	if !array && len(parts) == 1 && parts[0].Type == convo.TypeText && parts[0].Cache == nil && parts[0].Citations == nil {
		pn, err := e.nr.of(parts[0].Native)
		if err != nil {
			return encErr(e.path(), "%v", err)
		}
		if pn.view(false).plain() {
			return e.str(parts[0].Text)
		}
	}
	e.buf = append(e.buf, '[')
	for j := range parts {
		if j > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.part(&parts[j], j, assistant); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

func (e *respEnc) part(p *convo.Part, j int, assistant bool) error {
	if p.Raw != nil {
		block, ok := provider.OpaqueBlock(ProviderID, *p)
		if !ok || !contentBlock(p) {
			return encErr(e.path(), "part of type %q is no Responses content part", p.Type)
		}
		e.buf = append(e.buf, block...)
		return nil
	}
	pn, err := e.nr.of(p.Native)
	if err != nil {
		return encErr(e.path(), "%v", err)
	}
	pn = pn.view(false)
	start := len(e.buf)
	cacheOK := true
	switch p.Type {
	case convo.TypeText:
		cacheOK, err = e.textPart(p, pn, assistant)
	case convo.TypeRefusal:
		e.buf = append(e.buf, `{"type":"refusal","refusal":`...)
		err = e.str(p.Text)
		cacheOK = false
	case convo.TypeImage:
		err = e.imagePart(p)
	case convo.TypeFile:
		err = e.filePart(p, pn)
	default:
		return encErr(e.path(), "%s part cannot be sent as content", p.Type)
	}
	if err != nil {
		return err
	}
	if p.Cache != nil {
		if cacheOK {
			kept, _ := pn.get("prompt_cache_breakpoint")
			e.buf = appendBreakpoint(e.buf, p.Cache, kept, e.path(), &e.warns)
		} else {
			e.warn("cache breakpoint on a %s part left out: those parts take none", p.Type)
		}
	}
	e.buf = e.nr.close(pn, e.buf, start)
	return nil
}

// strMember writes member k with the string value s.
func (e *respEnc) strMember(k, s string) error {
	e.key(k)
	return e.str(s)
}

// textPart opens an input_text or output_text part (the kept wire type, else
// the role's usual one); cacheOK is false for output_text, which takes no
// cache breakpoint.
func (e *respEnc) textPart(p *convo.Part, pn nat, assistant bool) (cacheOK bool, err error) {
	typ, _ := pn.str("type")
	if typ != "input_text" && typ != "output_text" {
		typ = "input_text"
		if assistant {
			typ = "output_text"
		}
	}
	e.buf = append(e.buf, `{"type":"`...)
	e.buf = append(e.buf, typ...)
	e.buf = append(e.buf, `","text":`...)
	if err := e.str(p.Text); err != nil {
		return false, err
	}
	if typ != "output_text" {
		return true, nil
	}
	if _, ok := pn.get("annotations"); !ok {
		e.buf = append(e.buf, `,"annotations":`...)
		var r jsonx.Reader
		e.buf = appendAnnotations(e.buf, p.Citations, p.Text, &r, func(i int, c *convo.Citation) {
			e.warns = append(e.warns, provider.WarnCode(provider.CodeCitationDropped, e.path()+"."+index("citations", i),
				"%s citation left out: Responses annotations have no form for it", c.Kind))
		})
	} else if len(p.Citations) > 0 {
		e.warn("citations left out: the part keeps its native annotations")
	}
	return false, nil
}

// imagePart opens an input_image part: a file id, a URL or the bytes as a
// data URL, and the detail the API requires.
func (e *respEnc) imagePart(p *convo.Part) error {
	e.buf = append(e.buf, `{"type":"input_image"`...)
	var err error
	switch {
	case p.FileID != "":
		err = e.strMember("file_id", p.FileID)
	case p.URL != "":
		err = e.strMember("image_url", p.URL)
	default:
		e.key("image_url")
		e.buf = appendDataURL(e.buf, p.MediaType, p.Data)
	}
	if err != nil {
		return err
	}
	detail := p.Detail
	if detail == "" {
		detail = "auto" // required by the API
	}
	return e.strMember("detail", detail)
}

// filePart opens an input_file part: a file id, a URL or the bytes (as a
// data URL unless they came as bare base64), and the file name.
func (e *respEnc) filePart(p *convo.Part, pn nat) error {
	e.buf = append(e.buf, `{"type":"input_file"`...)
	var err error
	switch {
	case p.FileID != "":
		err = e.strMember("file_id", p.FileID)
	case p.URL != "":
		err = e.strMember("file_url", p.URL)
	default:
		if v, _ := pn.get("data_url"); string(v) == "false" {
			err = e.strMember("file_data", p.Data)
		} else {
			e.key("file_data")
			e.buf = appendDataURL(e.buf, p.MediaType, p.Data)
		}
	}
	if err != nil || p.Name == "" {
		return err
	}
	return e.strMember("filename", p.Name)
}

// respReasoning reports whether p can be sent as a reasoning item: OpenAI's
// own, with the item id or encrypted payload the API needs to accept it.
func respReasoning(p *convo.Part) bool {
	return p.Type == convo.TypeReasoning && p.Provider == ProviderID && (p.ID != "" || p.Encrypted != "")
}

// assistant writes an assistant message as items, in part order: reasoning
// items, a message item per run of text and refusal parts, function calls,
// and kept opaque items.
func (e *respEnc) assistant(m *convo.Message, n nat) error {
	last := lastFollower(m.Parts)
	e.startRuns(m, n)
	for j := range m.Parts {
		if err := e.assistantPart(&m.Parts[j], j, last); err != nil {
			return err
		}
	}
	if err := e.flush(); err != nil {
		return err
	}
	if e.runs == 0 && m.Phase != "" {
		e.warn("phase %q left out: the message has no text to carry it", m.Phase)
	}
	return nil
}

// lastFollower returns the index of the last part that is written as an
// item a reasoning item can precede, or -1. A reasoning item must be
// followed by the item it produced: one at the end of the message would be
// refused, so it is left out.
func lastFollower(parts []convo.Part) int {
	last := -1
	for j := range parts {
		p := &parts[j]
		switch {
		case p.Type == convo.TypeReasoning, p.Type == convo.TypeToolResult:
		case p.Raw != nil && !itemPart(p) && !contentBlock(p):
		default:
			last = j
		}
	}
	return last
}

// assistantPart writes part j of an assistant message as an item, or adds
// it to the run of content being gathered into a message item.
func (e *respEnc) assistantPart(p *convo.Part, j, last int) error {
	switch {
	case itemPart(p):
		if err := e.flush(); err != nil {
			return err
		}
		e.opaque(p)
	case p.Raw != nil && !contentBlock(p):
		e.warnAt(e.at(j), "%s part left out: Responses cannot hold it", p.Type)
	case p.Type == convo.TypeReasoning:
		return e.assistantReasoning(p, j, last)
	case p.Type == convo.TypeText, p.Type == convo.TypeRefusal, contentBlock(p):
		if err := e.mark(p); err != nil {
			return err
		}
		e.run = append(e.run, *p)
	case p.Type == convo.TypeJSON:
		s, err := jsonText(p.Value)
		if err != nil {
			return encErr(e.at(j), "%v", err)
		}
		e.run = append(e.run, convo.Part{Type: convo.TypeText, Text: s, Cache: p.Cache})
	case p.Type.IsMedia():
		q, err := unsendable(*p, "an assistant message", e.at(j), e.opts, &e.warns)
		if err != nil {
			return err
		}
		e.run = append(e.run, q)
	case serverItem(p):
		if err := e.flush(); err != nil {
			return err
		}
		return e.serverTool(p, j)
	case p.Type == convo.TypeToolCall:
		if err := e.flush(); err != nil {
			return err
		}
		return e.call(p)
	case p.Type == convo.TypeApprovalRequest:
		if err := e.flush(); err != nil {
			return err
		}
		return e.approvalRequest(p)
	default:
		e.warnAt(e.at(j), "%s part left out: an assistant message cannot hold it", p.Type)
	}
	return nil
}

// assistantReasoning writes OpenAI's own reasoning as a reasoning item when
// an item follows it; other reasoning goes as text when the options ask
// for it, else is dropped with a warning.
func (e *respEnc) assistantReasoning(p *convo.Part, j, last int) error {
	if respReasoning(p) {
		if j > last {
			e.warnAt(e.at(j), "reasoning item %q left out: nothing follows it, and the API refuses a reasoning item without its following item", p.ID)
			return nil
		}
		if err := e.flush(); err != nil {
			return err
		}
		return e.reasoning(p)
	}
	text := p.Text
	if text == "" {
		text = strings.Join(p.Summary, "\n")
	}
	if e.opts.Reasoning == provider.ReasoningText && text != "" {
		e.warnAt(e.at(j), "reasoning without an item id sent as text")
		e.run = append(e.run, convo.Text(text))
		return nil
	}
	e.warnAt(e.at(j), "reasoning without an item id or encrypted content dropped: Responses cannot take it")
	return nil
}

// outputMessage writes a run of assistant content as a message item: in
// the output form (type, id, status) when it carries a kept item id, else
// in the easy form.
func (e *respEnc) outputMessage(m *convo.Message, parts []convo.Part, n nat) error {
	start := e.begin()
	_, output := n.get("id")
	if output {
		e.buf = append(e.buf, `"type":"message","role":"assistant"`...)
	} else {
		e.buf = append(e.buf, `"role":"assistant"`...)
	}
	if err := e.content("content", parts, true, output); err != nil {
		return err
	}
	if _, own := n.get("phase"); !own {
		if ph := phaseWire(m.Phase); ph != "" {
			e.key("phase")
			e.buf = jsonx.AppendString(e.buf, ph)
		}
	}
	e.end(n, start)
	return nil
}

func (e *respEnc) reasoning(p *convo.Part) error {
	pn, err := e.nr.of(p.Native)
	if err != nil {
		return encErr(e.path(), "%v", err)
	}
	pn = pn.view(false)
	start := e.begin()
	e.buf = append(e.buf, `"type":"reasoning"`...)
	if p.ID != "" {
		e.key("id")
		if err := e.str(p.ID); err != nil {
			return err
		}
	}
	if _, ok := pn.get("summary"); !ok {
		e.buf = append(e.buf, `,"summary":[`...)
		for k, s := range p.Summary {
			if k > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = append(e.buf, `{"type":"summary_text","text":`...)
			if err := e.str(s); err != nil {
				return err
			}
			e.buf = append(e.buf, '}')
		}
		e.buf = append(e.buf, ']')
	}
	if _, ok := pn.get("content"); !ok && p.Text != "" {
		e.buf = append(e.buf, `,"content":[{"type":"reasoning_text","text":`...)
		if err := e.str(p.Text); err != nil {
			return err
		}
		e.buf = append(e.buf, "}]"...)
	}
	if p.Encrypted != "" {
		e.key("encrypted_content")
		if err := e.str(p.Encrypted); err != nil {
			return err
		}
	}
	e.end(pn, start)
	return nil
}

func (e *respEnc) call(p *convo.Part) error {
	pn, err := e.nr.of(p.Native)
	if err != nil {
		return encErr(e.path(), "%v", err)
	}
	pn = pn.view(false)
	if p.Cache != nil {
		e.warn("cache breakpoint on tool call %q left out: Responses takes none there", p.ID)
	}
	start := e.begin()
	custom := false
	if t, _ := pn.str("type"); t == "custom_tool_call" {
		custom = true
		e.buf = append(e.buf, `"type":"custom_tool_call","call_id":`...)
	} else {
		e.buf = append(e.buf, `"type":"function_call","call_id":`...)
	}
	if err := e.str(p.ID); err != nil {
		return err
	}
	e.key("name")
	if err := e.str(p.Name); err != nil {
		return err
	}
	if custom {
		input := p.ArgsRaw
		if p.Args != nil {
			c, err := jsonx.Compact(p.Args, 0)
			if err != nil {
				return encErr(e.path(), "args: invalid JSON: %v", err)
			}
			input = string(c)
		}
		e.key("input")
		if err := e.str(input); err != nil {
			return err
		}
	} else {
		e.key("arguments")
		out, ok, err := e.nr.appendArgs(e.buf, p, pn)
		if err != nil {
			return encErr(e.path(), "tool call %q: %v", p.ID, err)
		}
		if !ok {
			return encErr(e.path(), "invalid UTF-8 in a string")
		}
		e.buf = out
	}
	e.end(pn, start)
	return nil
}

// approvalRequest writes an approval_request part as an mcp_approval_request
// item; its server_label comes from the part's Native.
func (e *respEnc) approvalRequest(p *convo.Part) error {
	pn, err := e.nr.of(p.Native)
	if err != nil {
		return encErr(e.path(), "%v", err)
	}
	pn = pn.view(false)
	if _, ok := pn.get("server_label"); !ok {
		e.warn("approval request %q has no server_label: the API needs the MCP server it came from", p.ID)
	}
	start := e.begin()
	e.buf = append(e.buf, `"type":"mcp_approval_request","id":`...)
	if err := e.str(p.ID); err != nil {
		return err
	}
	e.key("name")
	if err := e.str(p.Name); err != nil {
		return err
	}
	e.key("arguments")
	out, ok, err := e.nr.appendArgs(e.buf, p, pn)
	if err != nil {
		return encErr(e.path(), "approval request %q: %v", p.ID, err)
	}
	if !ok {
		return encErr(e.path(), "invalid UTF-8 in a string")
	}
	e.buf = out
	e.end(pn, start)
	return nil
}

// approval writes an approval part as an mcp_approval_response item.
func (e *respEnc) approval(p *convo.Part) error {
	pn, err := e.nr.of(p.Native)
	if err != nil {
		return encErr(e.path(), "%v", err)
	}
	pn = pn.view(false)
	start := e.begin()
	e.buf = append(e.buf, `"type":"mcp_approval_response","approval_request_id":`...)
	if err := e.str(p.ID); err != nil {
		return err
	}
	e.buf = append(e.buf, `,"approve":`...)
	e.buf = strconv.AppendBool(e.buf, p.Approved)
	if p.Reason != "" {
		e.key("reason")
		if err := e.str(p.Reason); err != nil {
			return err
		}
	}
	e.end(pn, start)
	return nil
}

// tool writes one function_call_output item per tool result.
func (e *respEnc) tool(m *convo.Message) error {
	for j := range m.Parts {
		r := &m.Parts[j]
		if r.Type != convo.TypeToolResult {
			if itemPart(r) {
				e.opaque(r)
				continue
			}
			e.warnAt(e.at(j), "%s part in a tool message left out", r.Type)
			continue
		}
		if err := e.result(r); err != nil {
			return err
		}
	}
	return nil
}

func (e *respEnc) result(r *convo.Part) error {
	pn, err := e.nr.of(r.Native)
	if err != nil {
		return encErr(e.path(), "%v", err)
	}
	pn = pn.view(false)
	if r.Error {
		e.warn("error flag of the result for %q left out: Responses has none (the text still says what failed)", r.ID)
	}
	content := e.parts[:0]
	defer func() { e.parts = content[:0] }()
	for k := range r.Parts {
		p := r.Parts[k]
		switch {
		case p.Type == convo.TypeText, p.Type.IsMedia(), contentBlock(&p):
		case p.Type == convo.TypeJSON:
			s, err := jsonText(p.Value)
			if err != nil {
				return encErr(e.path(), "result part %d: %v", k, err)
			}
			p = convo.Part{Type: convo.TypeText, Text: s, Cache: p.Cache, Native: p.Native}
		default:
			e.warn("%s part of the result for %q left out: function outputs hold text, images and files", p.Type, r.ID)
			continue
		}
		content = append(content, p)
	}
	if r.Cache != nil {
		if len(content) == 0 {
			content = append(content, convo.Text(""))
		}
		last := &content[len(content)-1]
		if last.Cache == nil {
			last.Cache = r.Cache
		}
	}
	start := e.begin()
	if t, _ := pn.str("type"); t == "custom_tool_call_output" {
		e.buf = append(e.buf, `"type":"custom_tool_call_output","call_id":`...)
	} else {
		e.buf = append(e.buf, `"type":"function_call_output","call_id":`...)
	}
	if err := e.str(r.ID); err != nil {
		return err
	}
	if _, ok := pn.get("output"); !ok || len(content) > 0 {
		if len(content) == 0 {
			e.buf = append(e.buf, `,"output":""`...)
		} else {
			if err := e.content("output", content, false, false); err != nil {
				return err
			}
		}
	}
	e.end(pn, start)
	return nil
}
