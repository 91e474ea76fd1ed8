package openai

import (
	"fmt"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// ChatName is the Chat Completions format's name on the command line.
const ChatName = "openai-chat"

// Chat returns the Chat Completions format (named "openai-chat"): the
// request codec (the "messages" array) and the reply codec (chat.completion
// bodies and chat.completion.chunk SSE streams) in one value.
func Chat() provider.Format { return chat{} }

// chat is the Chat Completions format; its zero value is ready to use.
type chat struct{}

// Name returns "openai-chat".
func (chat) Name() string { return ChatName }

// Provider returns "openai".
func (chat) Provider() string { return ProviderID }

// chatIDMax is the longest tool-call id Chat Completions accepts: longer ids
// are refused with "string too long. Expected a string with maximum length
// 40" (reported against the API by several client libraries).
const chatIDMax = 40

var chatTarget = provider.Target{
	Provider:  ProviderID,
	MidSystem: true,
	Media:     chatMedia,
	Pending:   "OpenAI Chat refuses (an assistant message with tool_calls must be followed by tool messages responding to each tool_call_id)",
	ID: func(id string) string {
		if len(id) <= chatIDMax {
			return id
		}
		return provider.SanitizeID(id, chatIDMax)
	},
}

// chatMedia reports what Chat Completions takes: images by URL or inline
// (as a data URL), wav/mp3 audio inline, files inline or by file id — and
// no media at all in tool messages, whose content is text only.
func chatMedia(p convo.Part, inResult bool) bool {
	if inResult {
		return false
	}
	switch p.Type {
	case convo.TypeImage:
		return p.URL != "" || (p.Data != "" && p.MediaType != "")
	case convo.TypeAudio:
		if p.Data == "" {
			return false
		}
		if audioFormat(p.MediaType) != "" {
			return true
		}
		var nr natReader
		n, _ := nr.of(p.Native)
		_, ok := nr.sub(n.view(true), "input_audio").str("format")
		return ok
	case convo.TypeFile:
		if p.FileID != "" {
			return true
		}
		if p.Data == "" {
			return false
		}
		if p.MediaType != "" {
			return true
		}
		n, _ := readNat(p.Native)
		v, _ := n.view(true).get("data_url")
		return string(v) == "false"
	}
	return false
}

// Encode writes h as a Chat Completions request fragment:
// {"messages":[…]}. See docs/providers.md for the mapping.
func (chat) Encode(h convo.History, opts provider.Options) ([]byte, []provider.Warning, error) {
	return appendChat(nil, h, opts)
}

// appendChat is Chat's Encode appending to dst (see wire.Begin).
func appendChat(dst []byte, h convo.History, opts provider.Options) ([]byte, []provider.Warning, error) {
	switch opts.SystemRole {
	case "", "system", "developer":
	default:
		return nil, nil, fmt.Errorf("unknown system role %q (want system or developer)", opts.SystemRole)
	}
	ph, from, warns, err := provider.PrepareIndexed(h, chatTarget, opts)
	if err != nil {
		return nil, warns, err
	}
	e := chatEnc{opts: opts, warns: warns}
	e.buf = wire.Begin(dst, estimateSize(ph)+32)
	e.buf = append(jsonx.AppendKey(e.buf, "messages"), '[')
	for i := range ph {
		e.pl.set(h, ph, from, i)
		if err := e.message(&ph[i]); err != nil {
			return nil, e.warns, err
		}
	}
	e.buf = append(e.buf, "]}"...)
	if err := opts.Check(e.warns); err != nil {
		return nil, e.warns, err
	}
	return e.buf, e.warns, nil
}

// estimateSize guesses the encoded size of h to size the output buffer once.
func estimateSize(h convo.History) int {
	n := 0
	for i := range h {
		n += h[i].EstimatedBytes()
	}
	return n
}

type chatEnc struct {
	pl    place
	nr    natReader
	parts []convo.Part  // reused for the content of each message
	calls []*convo.Part // reused for the calls of each message
	buf   []byte
	opts  provider.Options
	warns []provider.Warning
	n     int // messages written
}

func (e *chatEnc) path() string { return e.pl.msg(func() string { return index("messages", e.n) }) }

// at names part j of the message being written.
func (e *chatEnc) at(j int) string {
	return e.pl.part(j, func() string { return index("messages", e.n) })
}

func (e *chatEnc) warn(path, format string, args ...any) {
	e.warns = append(e.warns, provider.Warnf(path, format, args...))
}

// str appends s as a JSON string; invalid UTF-8 is an error, since
// replacing it would silently change the text.
func (e *chatEnc) str(s string) error {
	var ok bool
	e.buf, ok = jsonx.AppendStringChecked(e.buf, s)
	if !ok {
		return encErr(e.path(), "invalid UTF-8 in a string")
	}
	return nil
}

func (e *chatEnc) key(k string) { e.buf = jsonx.AppendKey(e.buf, k) }

// begin opens a message object and returns where it starts.
func (e *chatEnc) begin() int {
	if e.n > 0 {
		e.buf = append(e.buf, ',')
	}
	start := len(e.buf)
	e.buf = append(e.buf, '{')
	return start
}

func (e *chatEnc) message(m *convo.Message) error {
	e.nr.reset()
	n, err := e.nr.of(m.Native)
	if err != nil {
		return encErr(e.path(), "%v", err)
	}
	n = n.view(true)
	switch m.Role {
	case convo.RoleSystem, convo.RoleUser:
		return e.plain(m, n)
	case convo.RoleAssistant:
		return e.assistant(m, n)
	case convo.RoleTool:
		return e.tool(m, n)
	}
	return encErr(e.path(), "%s message cannot be sent", m.Role)
}

// plain writes a system, developer or user message.
func (e *chatEnc) plain(m *convo.Message, n nat) error {
	user := m.Role == convo.RoleUser
	where := "a system message"
	if user {
		where = "a user message"
	}
	content := e.parts[:0]
	defer func() { e.parts = content[:0] }()
	for j := range m.Parts {
		p := m.Parts[j]
		switch {
		case p.Type == convo.TypeText:
		case p.Type == convo.TypeJSON:
			s, err := jsonText(p.Value)
			if err != nil {
				return encErr(e.at(j), "%v", err)
			}
			p = convo.Part{Type: convo.TypeText, Text: s, Cache: p.Cache}
		case p.Type == convo.TypeRefusal:
			e.warn(e.at(j), "refusal in %s sent as text", where)
			p = convo.Part{Type: convo.TypeText, Text: p.Text, Cache: p.Cache}
		case p.Type.IsMedia():
			if !user {
				q, err := unsendable(p, where, e.at(j), e.opts, &e.warns)
				if err != nil {
					return err
				}
				p = q
			}
		case isChatContentBlock(p):
		default:
			e.warn(e.at(j), "%s part left out: %s cannot hold it", p.Type, where)
			continue
		}
		content = append(content, p)
	}
	start := e.begin()
	e.key("role")
	switch {
	case user:
		e.buf = append(e.buf, `"user"`...)
	default:
		role, _ := n.str("role")
		if role != "developer" && role != "system" {
			role = e.opts.SystemRole
			if role == "" {
				role = "system"
			}
		}
		e.buf = jsonx.AppendString(e.buf, role)
	}
	if err := e.content(content, n, true); err != nil {
		return err
	}
	if err := e.name(m); err != nil {
		return err
	}
	e.buf = e.nr.close(n, e.buf, start)
	e.n++
	return nil
}

func (e *chatEnc) name(m *convo.Message) error {
	if m.Name == "" {
		return nil
	}
	e.key("name")
	return e.str(m.Name)
}

// isChatContentBlock reports whether p is a content part of unknown type
// kept from a Chat request.
func isChatContentBlock(p convo.Part) bool {
	t := string(p.Type)
	return p.Raw != nil && strings.HasPrefix(t, ProviderID+":chat.") && !strings.HasPrefix(t, ProviderID+":chat.tool_call.")
}

// content writes the "content" member: a string for a lone plain text part,
// else an array of parts. With none it writes nothing unless always is set
// (then an empty string), and leaves a native "content" (null) to n.close.
func (e *chatEnc) content(parts []convo.Part, n nat, always bool) error {
	if len(parts) == 0 {
		if _, ok := n.get("content"); ok || !always {
			return nil
		}
		e.key("content")
		e.buf = append(e.buf, `""`...)
		return nil
	}
	e.key("content")
	if len(parts) == 1 && parts[0].Type == convo.TypeText && parts[0].Cache == nil {
		pn, err := e.nr.of(parts[0].Native)
		if err != nil {
			return encErr(e.path(), "%v", err)
		}
		if pn.view(true).empty() {
			return e.str(parts[0].Text)
		}
	}
	e.buf = append(e.buf, '[')
	for j := range parts {
		if j > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.part(&parts[j], j); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

// part writes content part j.
func (e *chatEnc) part(p *convo.Part, j int) error {
	if p.Raw != nil {
		block, ok := provider.OpaqueBlock(ProviderID, *p)
		if !ok {
			return encErr(e.path(), "part of type %q has no OpenAI block", p.Type)
		}
		e.buf = append(e.buf, block...)
		return nil
	}
	pn, err := e.nr.of(p.Native)
	if err != nil {
		return encErr(e.path(), "%v", err)
	}
	pn = pn.view(true)
	start := len(e.buf)
	switch p.Type {
	case convo.TypeText:
		e.buf = append(e.buf, `{"type":"text","text":`...)
		err = e.str(p.Text)
	case convo.TypeRefusal:
		e.buf = append(e.buf, `{"type":"refusal","refusal":`...)
		err = e.str(p.Text)
	case convo.TypeImage:
		err = e.imagePart(p, pn)
	case convo.TypeAudio:
		err = e.audioPart(p, pn)
	case convo.TypeFile:
		err = e.filePart(p, pn)
	default:
		return encErr(e.path(), "%s part cannot be sent as message content", p.Type)
	}
	if err != nil {
		return err
	}
	if p.Cache != nil {
		if p.Type == convo.TypeRefusal {
			e.warn(e.path(), "cache breakpoint on a refusal left out: refusal parts take none")
		} else {
			kept, _ := pn.get("prompt_cache_breakpoint")
			e.buf = appendBreakpoint(e.buf, p.Cache, kept, e.path(), &e.warns)
		}
	}
	e.buf = e.nr.close(pn, e.buf, start)
	return nil
}

// strMember writes member k with the string value s.
func (e *chatEnc) strMember(k, s string) error {
	e.key(k)
	return e.str(s)
}

// imagePart opens an image_url part: its URL (or the bytes as a data URL)
// and detail, with the kept members of its image_url object.
func (e *chatEnc) imagePart(p *convo.Part, pn nat) error {
	e.buf = append(e.buf, `{"type":"image_url","image_url":{"url":`...)
	in := len(e.buf) - len(`{"url":`)
	if p.URL != "" {
		if err := e.str(p.URL); err != nil {
			return err
		}
	} else {
		e.buf = appendDataURL(e.buf, p.MediaType, p.Data)
	}
	if p.Detail != "" {
		if err := e.strMember("detail", p.Detail); err != nil {
			return err
		}
	}
	e.buf = e.nr.close(e.nr.sub(pn, "image_url"), e.buf, in)
	return nil
}

// audioPart opens an input_audio part: the bytes and their format (from
// the media type, else the kept one).
func (e *chatEnc) audioPart(p *convo.Part, pn nat) error {
	sub := e.nr.sub(pn, "input_audio")
	format := audioFormat(p.MediaType)
	if format == "" {
		format, _ = sub.str("format")
	}
	e.buf = append(e.buf, `{"type":"input_audio","input_audio":{"data":`...)
	in := len(e.buf) - len(`{"data":`)
	if err := e.str(p.Data); err != nil {
		return err
	}
	if err := e.strMember("format", format); err != nil {
		return err
	}
	e.buf = e.nr.close(sub, e.buf, in)
	return nil
}

// filePart opens a file part: a file id or the bytes (as a data URL unless
// they came as bare base64), and the file name.
func (e *chatEnc) filePart(p *convo.Part, pn nat) error {
	e.buf = append(e.buf, `{"type":"file","file":{`...)
	in := len(e.buf) - 1
	var err error
	if p.FileID != "" {
		err = e.strMember("file_id", p.FileID)
	} else if v, _ := pn.get("data_url"); string(v) == "false" {
		err = e.strMember("file_data", p.Data)
	} else {
		e.key("file_data")
		e.buf = appendDataURL(e.buf, p.MediaType, p.Data)
	}
	if err == nil && p.Name != "" {
		err = e.strMember("filename", p.Name)
	}
	if err != nil {
		return err
	}
	e.buf = e.nr.close(e.nr.sub(pn, "file"), e.buf, in)
	return nil
}

// chatReasoning reports whether p is plain reasoning text a Chat request can
// carry as reasoning_content: OpenAI's own, without the id, summary or
// encrypted payload of a Responses reasoning item.
func chatReasoning(p *convo.Part) bool {
	return p.Provider == ProviderID && p.Text != "" && p.ID == "" && p.Encrypted == "" &&
		p.Signature == "" && p.Summary == nil
}

// chatAsst is an assistant message's parts sorted into the members of the
// wire message that carry them.
type chatAsst struct {
	reasoning []string
	content   []convo.Part
	refusal   *convo.Part
	calls     []*convo.Part
	fnCall    *convo.Part
}

func (e *chatEnc) assistant(m *convo.Message, n nat) error {
	a := chatAsst{content: e.parts[:0], calls: e.calls[:0]}
	defer func() { e.parts, e.calls = a.content[:0], a.calls[:0] }()
	for j := range m.Parts {
		if err := e.sortAssistant(&a, &m.Parts[j], j); err != nil {
			return err
		}
		if cs := m.Parts[j].Citations; len(cs) > 0 {
			// Chat requests have no annotations: they are reply-only.
			e.warns = append(e.warns, provider.WarnCode(provider.CodeCitationDropped, e.at(j),
				"%d citations left out: Chat Completions requests take no annotations", len(cs)))
		}
	}
	if m.Phase != "" {
		e.warn(e.path(), "phase %q left out: Chat Completions has no phase", m.Phase)
	}
	start := e.begin()
	e.buf = append(e.buf, `"role":"assistant"`...)
	always := a.refusal == nil && len(a.calls) == 0 && a.fnCall == nil
	if err := e.content(a.content, n, always); err != nil {
		return err
	}
	if a.refusal != nil {
		e.key("refusal")
		if err := e.str(a.refusal.Text); err != nil {
			return err
		}
	}
	if err := e.name(m); err != nil {
		return err
	}
	if err := e.assistantCalls(&a); err != nil {
		return err
	}
	if len(a.reasoning) > 0 {
		e.key("reasoning_content")
		if err := e.str(strings.Join(a.reasoning, "\n")); err != nil {
			return err
		}
	}
	e.buf = e.nr.close(n, e.buf, start)
	e.n++
	return nil
}

// sortAssistant puts part j of an assistant message where the wire message
// carries it, warning of what it cannot carry.
func (e *chatEnc) sortAssistant(a *chatAsst, p *convo.Part, j int) error {
	switch {
	case p.Raw != nil:
		switch {
		case isChatContentBlock(*p):
			a.content = append(a.content, *p)
		case strings.HasPrefix(string(p.Type), ProviderID+":chat.tool_call."):
			a.calls = append(a.calls, p)
		default:
			e.warn(e.at(j), "%s item left out: Chat Completions cannot hold it", p.Type)
		}
	case p.Type == convo.TypeReasoning:
		e.sortReasoning(a, p, j)
	case p.Type == convo.TypeText:
		a.content = append(a.content, *p)
	case p.Type == convo.TypeRefusal:
		pn, _ := e.nr.of(p.Native)
		if t, _ := pn.view(true).str("type"); t == "refusal" || a.refusal != nil {
			a.content = append(a.content, *p)
		} else {
			a.refusal = p
		}
	case p.Type == convo.TypeJSON:
		s, err := jsonText(p.Value)
		if err != nil {
			return encErr(e.at(j), "%v", err)
		}
		a.content = append(a.content, convo.Part{Type: convo.TypeText, Text: s, Cache: p.Cache})
	case p.Type.IsMedia():
		q, err := unsendable(*p, "an assistant message", e.at(j), e.opts, &e.warns)
		if err != nil {
			return err
		}
		a.content = append(a.content, q)
	case p.Type == convo.TypeToolCall:
		pn, _ := e.nr.of(p.Native)
		if t, _ := pn.view(true).str("type"); t == "function_call" && a.fnCall == nil {
			a.fnCall = p
		} else {
			a.calls = append(a.calls, p)
		}
	default:
		e.warn(e.at(j), "%s part left out: an assistant message cannot hold it", p.Type)
	}
	return nil
}

// sortReasoning keeps Chat reasoning as reasoning_content; Responses
// reasoning is sent as text when the options ask for it, else dropped.
func (e *chatEnc) sortReasoning(a *chatAsst, p *convo.Part, j int) {
	if chatReasoning(p) {
		a.reasoning = append(a.reasoning, p.Text)
		return
	}
	text := p.Text
	if text == "" {
		text = strings.Join(p.Summary, "\n")
	}
	if e.opts.Reasoning == provider.ReasoningText && text != "" {
		e.warn(e.at(j), "Responses reasoning sent as text: Chat Completions cannot carry reasoning items")
		a.content = append(a.content, convo.Text(text))
		return
	}
	e.warn(e.at(j), "Responses reasoning item dropped: Chat Completions cannot carry it")
}

// assistantCalls writes an assistant message's tool_calls and function_call.
func (e *chatEnc) assistantCalls(a *chatAsst) error {
	if len(a.calls) > 0 {
		e.key("tool_calls")
		e.buf = append(e.buf, '[')
		for k, p := range a.calls {
			if k > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.toolCall(p, k); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
	}
	if a.fnCall == nil {
		return nil
	}
	pn, _ := e.nr.of(a.fnCall.Native)
	sub := e.nr.sub(pn.view(true), "function_call")
	e.key("function_call")
	in := len(e.buf)
	e.buf = append(e.buf, `{"name":`...)
	if err := e.str(a.fnCall.Name); err != nil {
		return err
	}
	if err := e.args(a.fnCall, sub); err != nil {
		return err
	}
	e.buf = e.nr.close(sub, e.buf, in)
	return nil
}

// args writes the "arguments" member of a function call.
func (e *chatEnc) args(p *convo.Part, fn nat) error {
	e.key("arguments")
	out, ok, err := e.nr.appendArgs(e.buf, p, fn)
	if err != nil {
		return encErr(e.path(), "tool call %q: %v", p.ID, err)
	}
	if !ok {
		return encErr(e.path(), "invalid UTF-8 in a string")
	}
	e.buf = out
	return nil
}

func (e *chatEnc) toolCall(p *convo.Part, k int) error {
	if p.Raw != nil {
		block, _ := provider.OpaqueBlock(ProviderID, *p)
		e.buf = append(e.buf, block...)
		return nil
	}
	pn, err := e.nr.of(p.Native)
	if err != nil {
		return encErr(e.path(), "tool call %q: %v", p.ID, err)
	}
	pn = pn.view(true)
	start := len(e.buf)
	e.buf = append(e.buf, `{"id":`...)
	if err := e.str(p.ID); err != nil {
		return err
	}
	if t, _ := pn.str("type"); t == "custom" {
		sub := e.nr.sub(pn, "custom")
		e.buf = append(e.buf, `,"type":"custom","custom":{"name":`...)
		in := len(e.buf) - len(`{"name":`)
		if err := e.str(p.Name); err != nil {
			return err
		}
		input := p.ArgsRaw
		if p.Args != nil {
			c, err := jsonx.Compact(p.Args, 0)
			if err != nil {
				return encErr(e.path(), "tool call %q: args: invalid JSON: %v", p.ID, err)
			}
			input = string(c)
		}
		e.key("input")
		if err := e.str(input); err != nil {
			return err
		}
		e.buf = e.nr.close(sub, e.buf, in)
	} else {
		sub := e.nr.sub(pn, "function")
		e.buf = append(e.buf, `,"type":"function","function":{"name":`...)
		in := len(e.buf) - len(`{"name":`)
		if err := e.str(p.Name); err != nil {
			return err
		}
		if err := e.args(p, sub); err != nil {
			return err
		}
		e.buf = e.nr.close(sub, e.buf, in)
	}
	if p.Cache != nil {
		e.warn(e.path(), "cache breakpoint on tool call %q left out: Chat Completions takes none there", p.ID)
	}
	e.buf = e.nr.close(pn, e.buf, start)
	return nil
}

// tool writes one tool message per tool result.
func (e *chatEnc) tool(m *convo.Message, n nat) error {
	results := 0
	for j := range m.Parts {
		if m.Parts[j].Type == convo.TypeToolResult {
			results++
		}
	}
	if results != 1 {
		// Message-level native fields belong to a single wire message.
		n = nat{}
	}
	if m.Name != "" {
		e.warn(e.path(), "name %q left out: tool messages carry no name", m.Name)
	}
	for j := range m.Parts {
		r := &m.Parts[j]
		if r.Type != convo.TypeToolResult {
			e.warn(e.path(), "%s part in a tool message left out", r.Type)
			continue
		}
		if err := e.result(r, n); err != nil {
			return err
		}
	}
	return nil
}

func (e *chatEnc) result(r *convo.Part, n nat) error {
	if r.Error {
		e.warn(e.path(), "error flag of the result for %q left out: Chat Completions has none (the text still says what failed)", r.ID)
	}
	content := e.parts[:0]
	defer func() { e.parts = content[:0] }()
	for k := range r.Parts {
		p := r.Parts[k]
		switch {
		case p.Type == convo.TypeText:
		case p.Type == convo.TypeJSON:
			s, err := jsonText(p.Value)
			if err != nil {
				return encErr(e.path(), "result part %d: %v", k, err)
			}
			p = convo.Part{Type: convo.TypeText, Text: s, Cache: p.Cache, Native: p.Native}
		case isChatContentBlock(p):
		default:
			// Prepare turned media into placeholders or failed already.
			e.warn(e.path(), "%s part of a tool result left out: tool messages hold text only", p.Type)
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
	if role, _ := n.str("role"); role == "function" {
		e.buf = append(e.buf, `"role":"function","name":`...)
		if err := e.str(r.Name); err != nil {
			return err
		}
		var text []string
		for _, p := range content {
			text = append(text, p.Text)
		}
		e.key("content")
		if err := e.str(strings.Join(text, "\n")); err != nil {
			return err
		}
	} else {
		e.buf = append(e.buf, `"role":"tool","tool_call_id":`...)
		if err := e.str(r.ID); err != nil {
			return err
		}
		if err := e.content(content, n, true); err != nil {
			return err
		}
	}
	e.buf = e.nr.close(n, e.buf, start)
	e.n++
	return nil
}
