package bedrock

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// Encode returns the conversation fields of a Converse request for h: a
// JSON object with "system" (when h has leading system messages) and
// "messages". Messages alternate strictly between user and assistant and
// start with a user message: consecutive user, tool and summary messages
// are merged into one user message, consecutive assistant messages into
// one assistant message, and a conversation that opens with the assistant
// gets a StartText user message in front, with a warning.
//
// Warnings from the shared rules (provider.Prepare) and those about single
// messages and parts name places in h (messages[3].parts[1]).
func (converse) Encode(h convo.History, opts provider.Options) ([]byte, []provider.Warning, error) {
	return appendConv(nil, h, opts)
}

// appendConv is Encode appending to dst (see wire.Begin).
func appendConv(dst []byte, h convo.History, opts provider.Options) ([]byte, []provider.Warning, error) {
	pre, err := precheck(h, opts)
	if err != nil {
		return nil, pre, err
	}
	popts := opts
	popts.Strict = false // checked below, once Bedrock's own warnings are in
	ph, from, warns, err := provider.PrepareIndexed(h, target, popts)
	if err != nil {
		return nil, warns, err
	}
	warns = append(warns, pre...)
	e := encoder{buf: wire.Begin(dst, estimate(ph)), from: from}
	if err := e.request(ph); err != nil {
		return nil, warns, oneLine(err)
	}
	warns = append(warns, e.warns...)
	sortWarnings(warns)
	if err := opts.Check(warns); err != nil {
		return nil, warns, err
	}
	return e.buf, warns, nil
}

func article(r convo.Role) string {
	if r == convo.RoleAssistant || r == convo.RoleError {
		return "an " + string(r)
	}
	return "a " + string(r)
}

// sortWarnings orders warnings by the message they are about, keeping the
// order of those about the same message; the shared rules and Bedrock's own
// checks each produce theirs in history order.
func sortWarnings(ws []provider.Warning) {
	slices.SortStableFunc(ws, func(a, b provider.Warning) int {
		return cmp.Compare(warnIndex(a.Path), warnIndex(b.Path))
	})
}

// warnIndex is the message index a warning path starts with, or a number
// past every index for paths that name no message.
func warnIndex(path string) int {
	rest, ok := strings.CutPrefix(path, "messages[")
	if !ok {
		return math.MaxInt
	}
	n := 0
	for i := 0; i < len(rest) && '0' <= rest[i] && rest[i] <= '9'; i++ {
		n = n*10 + int(rest[i]-'0')
		if n > 1<<40 {
			break
		}
	}
	return n
}

func estimate(h convo.History) int {
	n := 64
	for i := range h {
		n += h[i].EstimatedBytes()
	}
	return n
}

func msgPath(i int) string { return "messages[" + strconv.Itoa(i) + "]" }

// precheck finds, with places in h, what Bedrock cannot carry as it is and
// what it refuses outright. It looks at the messages the shared rules keep,
// and leaves to them the parts they handle (foreign reasoning, media the
// target cannot take, unknown part types).
func precheck(h convo.History, opts provider.Options) ([]provider.Warning, error) {
	var warns []provider.Warning
	warn := func(pl place, format string, args ...any) {
		warns = append(warns, provider.Warnf(pl.String(), format, args...))
	}
	expired := h.Expired()
	started := false
	for i := range h {
		m := &h[i]
		if expired[i] || m.Role == convo.RoleError {
			continue
		}
		system := m.Role == convo.RoleSystem && !started
		if !system {
			started = true
		}
		if m.Name != "" {
			warn(place{i, -1, -1}, "name %q dropped: Bedrock messages have no name", m.Name)
		}
		for j := range m.Parts {
			p := &m.Parts[j]
			if dropped(p, opts) {
				continue
			}
			if emptyReasoning(p) && !system {
				warn(place{i, j, -1}, "empty reasoning part left out: Bedrock refuses a reasoning block with nothing in it")
				continue
			}
			if blankText(p) {
				if p.Native[ProviderID] != nil {
					// The shared rules leave out the others, warning.
					warns = append(warns, provider.WarnCode(provider.CodeTextTrimmed, place{i, j, -1}.String(),
						"blank text left out: Bedrock refuses a text block of white space only"))
				}
				continue
			}
			path := place{i, j, -1}
			if system {
				switch {
				case p.Type == convo.TypeText, p.Type == convo.TypeReasoning && p.Provider != ProviderID:
					// Text, or reasoning the shared rules drop or turn into text.
				case p.Type == convo.TypeRefusal:
					warn(path, "refusal sent as text: Bedrock has no refusal block")
				case p.Raw != nil:
					// Bedrock's own system block (guardContent, cachePoint).
				case p.Type.IsMedia() && !acceptMedia(*p, false):
					// The shared rules resolve it or make it a text placeholder.
				default:
					warn(path, "%s part dropped: Bedrock's system prompt takes only text", p.Type)
				}
				continue
			}
			if err := checkPart(p, path, m.Role, false, warn); err != nil {
				return warns, err
			}
		}
	}
	return warns, nil
}

// dropped reports whether the shared rules will leave p out of the request:
// reasoning Bedrock cannot take, parts of unknown type that are not
// Bedrock's own blocks, and the calls and results of tools another
// provider ran.
func dropped(p *convo.Part, opts provider.Options) bool {
	switch {
	case p.IsServerTool():
		return p.Provider != ProviderID // another provider's: sent as text at most
	case p.Raw != nil || !p.Type.Known():
		_, own := provider.OpaqueBlock(ProviderID, *p)
		return !own
	case p.Type == convo.TypeReasoning:
		if p.Provider == ProviderID {
			return false
		}
		text := p.Text != "" || len(p.Summary) > 0
		return !(opts.Reasoning == provider.ReasoningText && text)
	}
	return false
}

// emptyReasoning reports whether p is a Bedrock reasoning part with no
// text, signature or redacted content: there is no block to send for it.
func emptyReasoning(p *convo.Part) bool {
	return p.Type == convo.TypeReasoning && p.Provider == ProviderID && p.Raw == nil &&
		p.Text == "" && p.Signature == "" && p.Encrypted == "" && len(p.Summary) == 0
}

// blankText reports whether p is text of white space only (or none),
// which Bedrock refuses ("The text field in the ContentBlock object is
// blank"): it is left out. Text that carries citations is kept.
func blankText(p *convo.Part) bool {
	return (p.Type == convo.TypeText || p.Type == convo.TypeRefusal) && p.Raw == nil && len(p.Citations) == 0 &&
		strings.TrimSpace(p.Text) == "" && nativeRaw(p.Native, "citationsContent") == nil
}

// unsent reports whether p becomes no block: empty reasoning and blank
// text, which precheck warned about.
func unsent(p *convo.Part) bool { return emptyReasoning(p) || blankText(p) }

// sendsBlocks reports whether m has a part that becomes a block.
func sendsBlocks(m *convo.Message) bool {
	for i := range m.Parts {
		if !unsent(&m.Parts[i]) {
			return true
		}
	}
	return false
}

// place names a message, a part of it, or a part of a tool result in it,
// in the history being encoded; it becomes a string only for a warning.
type place struct{ msg, part, sub int }

func (pl place) String() string {
	s := msgPath(pl.msg)
	if pl.part >= 0 {
		s += ".parts[" + strconv.Itoa(pl.part) + "]"
	}
	if pl.sub >= 0 {
		s += ".parts[" + strconv.Itoa(pl.sub) + "]"
	}
	return s
}

func checkPart(p *convo.Part, path place, role convo.Role, inResult bool, warn func(place, string, ...any)) error {
	switch p.Type {
	case convo.TypeRefusal:
		warn(path, "refusal sent as text: Bedrock has no refusal block")
	case convo.TypeJSON:
		if !inResult {
			warn(path, "json part sent as text: Bedrock takes JSON blocks only in tool results")
		}
	case convo.TypeToolCall:
		if inResult || role != convo.RoleAssistant {
			return fmt.Errorf("%s: tool_call in %s message: Bedrock takes tool calls only from the assistant", path, article(role))
		}
		if p.Args == nil && p.ArgsRaw != "" {
			warn(path, "malformed tool-call arguments (%d bytes) sent as {}: Bedrock takes only JSON input", len(p.ArgsRaw))
		}
	case convo.TypeToolResult:
		if p.Server != "" && (inResult || role != convo.RoleAssistant) {
			return fmt.Errorf("%s: provider-run tool_result in %s message: Bedrock takes it only in the assistant message that ran the tool", path, article(role))
		}
		if p.Server == "" && (inResult || role == convo.RoleAssistant) {
			return fmt.Errorf("%s: tool_result in %s message: Bedrock takes tool results only in user messages", path, article(role))
		}
		for k := range p.Parts {
			q := &p.Parts[k]
			qpath := place{path.msg, path.part, k}
			if q.Raw != nil || !q.Type.Known() {
				continue // the shared rules keep Bedrock's own blocks and drop the rest
			}
			switch q.Type {
			case convo.TypeText, convo.TypeJSON, convo.TypeRefusal, convo.TypeImage, convo.TypeFile,
				convo.TypeVideo, convo.TypeAudio:
			default:
				return fmt.Errorf("%s: %s part in a tool result: Bedrock tool results hold text, JSON, images, documents and videos", qpath, q.Type)
			}
			if q.Cache != nil {
				warn(qpath, "cache breakpoint dropped: Bedrock has none inside tool results")
			}
			if err := checkPart(q, qpath, role, true, warn); err != nil {
				return err
			}
		}
	case convo.TypeReasoning:
		if p.Provider == ProviderID && p.Encrypted != "" && p.Text != "" {
			warn(path, "reasoning text dropped: Bedrock redacted reasoning carries no text")
		}
	case convo.TypeImage, convo.TypeAudio, convo.TypeVideo, convo.TypeFile:
		if !acceptMedia(*p, inResult) {
			return nil // the shared rules resolve it, refuse it or replace it
		}
		if p.Detail != "" {
			warn(path, "image detail %q dropped: Bedrock has no detail level", p.Detail)
		}
		if p.Type != convo.TypeFile {
			if p.Name != "" {
				warn(path, "%s name %q dropped: Bedrock %s blocks have no name", p.Type, p.Name, p.Type)
			}
			break
		}
		f, _ := mediaFormat(*p)
		if n := documentName(*p, f); n != p.Name {
			if p.Name == "" {
				warn(path, "document without a name sent as %q: Bedrock requires one", n)
			} else {
				warn(path, "document name %q sent as %q: Bedrock restricts the characters of names", p.Name, n)
			}
		}
	}
	return nil
}

// encoder writes the request. Its warnings name places in the request
// (messages[k].content[j]) as they concern what Bedrock requires of it.
type encoder struct {
	buf   []byte
	from  []int // index in the caller's history of each prepared message, -1 if inserted
	warns []provider.Warning
	raw   jsonx.Reader // validates JSON values taken from the history
	msg   int          // index of the request message being written
	block int          // index of its content block being written
}

func (e *encoder) where() string {
	return "messages[" + strconv.Itoa(e.msg) + "].content[" + strconv.Itoa(e.block) + "]"
}

func (e *encoder) request(h convo.History) error {
	lead := h.Leading()
	if err := e.system(h[:lead]); err != nil {
		return err
	}
	e.buf = append(jsonx.AppendKey(e.buf, "messages"), '[')
	role := ""
	var native convo.Native // of the first history message in the request message
	e.msg = -1
	for i := lead; i < len(h); i++ {
		m := &h[i]
		if !sendsBlocks(m) {
			// Prepare drops the other messages with nothing to send; an
			// assistant message with only empty reasoning, or any with
			// only blank text, is left out here.
			e.warns = append(e.warns, provider.WarnCode(provider.CodeMessageDropped, e.origin(i),
				"%s message left out: nothing in it can be sent to Bedrock, which refuses empty messages", m.Role))
			continue
		}
		r := "user"
		if m.Role == convo.RoleAssistant {
			r = "assistant"
		}
		if r != role {
			if role != "" {
				e.closeMessage(native)
				e.buf = append(e.buf, ',')
			} else if r == "assistant" {
				e.startUser(e.origin(i))
			}
			role, native = r, m.Native
			e.msg++
			e.block = 0
			e.buf = append(e.buf, `{"role":"`...)
			e.buf = append(e.buf, r...)
			e.buf = append(e.buf, `","content":[`...)
		}
		for j := range m.Parts {
			if unsent(&m.Parts[j]) {
				continue // precheck warned
			}
			if err := e.part(&m.Parts[j]); err != nil {
				return err
			}
		}
	}
	if role != "" {
		e.closeMessage(native)
	}
	e.buf = append(e.buf, "]}"...)
	return nil
}

// closeMessage ends a request message, with the members of a Bedrock
// message object convo kept in native.bedrock.message. The rest of a
// message's Bedrock native object (a reply's stopReason, metrics, usage
// details) describes the response and is not sent.
func (e *encoder) closeMessage(native convo.Native) {
	e.buf = append(e.buf, ']')
	if extra := nativeRaw(native, "message"); len(extra) > 0 && extra[0] == '{' {
		e.buf = appendMembers(e.buf, extra, func(k string) bool { return k == "role" || k == "content" })
	}
	e.buf = append(e.buf, '}')
}

// origin names the place in the caller's history of prepared message i.
func (e *encoder) origin(i int) string {
	if i < len(e.from) && e.from[i] >= 0 {
		return msgPath(e.from[i])
	}
	return ""
}

// startUser writes the user message a conversation opening with the
// assistant needs in front.
func (e *encoder) startUser(path string) {
	e.warns = append(e.warns, provider.Warnf(path,
		"the conversation starts with an assistant message: a user message %q was put before it, as Bedrock requires", StartText))
	e.buf = append(e.buf, `{"role":"user","content":[{"text":`...)
	e.buf = jsonx.AppendString(e.buf, StartText)
	e.buf = append(e.buf, "}]},"...)
	e.msg++
}

// system writes the top-level system blocks of the leading system
// messages: their text (with cache points) and Bedrock's own system blocks.
func (e *encoder) system(sys convo.History) error {
	start := len(e.buf)
	e.buf = append(jsonx.AppendKey(e.buf, "system"), '[')
	n := 0
	for i := range sys {
		for j := range sys[i].Parts {
			p := &sys[i].Parts[j]
			switch {
			case blankText(p):
				continue // precheck warned
			case p.Type == convo.TypeText || p.Type == convo.TypeRefusal:
				e.buf = comma(e.buf)
				e.buf = append(e.buf, `{"text":`...)
				if err := e.str(p.Text); err != nil {
					return fmt.Errorf("system[%d]: %w", n, err)
				}
				e.buf = append(e.buf, '}')
			case p.Raw != nil:
				block, ok := provider.OpaqueBlock(ProviderID, *p)
				if !ok {
					continue
				}
				e.buf = comma(e.buf)
				if err := e.value(block); err != nil {
					return fmt.Errorf("system[%d]: %w", n, err)
				}
			default:
				continue // precheck warned
			}
			n++
			if p.Cache != nil {
				e.cachePoint(p)
				n++
			}
		}
	}
	if n == 0 {
		e.buf = e.buf[:start]
		return nil
	}
	e.buf = append(e.buf, ']')
	return nil
}

func (e *encoder) cachePoint(p *convo.Part) {
	if p.Cache == nil {
		return
	}
	e.buf = append(e.buf, `,{"cachePoint":{"type":"default"`...)
	if p.Cache.TTL != "" {
		e.buf = append(e.buf, `,"ttl":`...)
		e.buf = jsonx.AppendString(e.buf, p.Cache.TTL)
	}
	e.buf = append(e.buf, "}}"...)
	e.block++
}

var errUTF8 = errors.New("invalid UTF-8 in a string")

// str writes s as a JSON string; invalid UTF-8 is an error, never replaced
// silently.
func (e *encoder) str(s string) error {
	var ok bool
	if e.buf, ok = jsonx.AppendStringChecked(e.buf, s); !ok {
		return errUTF8
	}
	return nil
}

// value writes a JSON value taken from the history, validated and compacted.
func (e *encoder) value(v []byte) error {
	var err error
	if e.buf, err = wire.AppendValue(&e.raw, e.buf, v); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	return nil
}

// compact returns the JSON value v validated and compacted, for a JSON part
// sent as text.
func (e *encoder) compact(v []byte) (string, error) {
	e.raw.Reset(v, convo.DefaultLimits.MaxDepth)
	out, err := e.raw.ReadRaw()
	if err == nil {
		err = e.raw.ExpectEnd()
	}
	if err != nil {
		return "", fmt.Errorf("invalid JSON: %w", err)
	}
	return string(out), nil
}

// part writes the content block (and cache point) of one part of a user,
// tool or assistant message.
func (e *encoder) part(p *convo.Part) error {
	e.buf = comma(e.buf)
	var err error
	switch p.Type {
	case convo.TypeText:
		err = e.text(p)
	case convo.TypeRefusal:
		e.buf = append(e.buf, `{"text":`...)
		err = e.str(p.Text)
		e.buf = append(e.buf, '}')
	case convo.TypeJSON:
		var text string
		if text, err = e.compact(p.Value); err == nil {
			e.buf = append(e.buf, `{"text":`...)
			e.buf = jsonx.AppendString(e.buf, text)
			e.buf = append(e.buf, '}')
		}
	case convo.TypeImage, convo.TypeAudio, convo.TypeVideo, convo.TypeFile:
		err = e.media(p)
	case convo.TypeToolCall:
		if p.Server != "" {
			err = e.serverUse(p)
		} else {
			err = e.toolUse(p)
		}
	case convo.TypeToolResult:
		if p.Server != "" {
			err = e.serverResult(p)
		} else {
			err = e.toolResult(p)
		}
	case convo.TypeReasoning:
		err = e.reasoning(p)
	default:
		block, ok := provider.OpaqueBlock(ProviderID, *p)
		if !ok {
			err = fmt.Errorf("%s part cannot be sent to Bedrock", p.Type)
		} else {
			err = e.value(block)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", e.where(), err)
	}
	e.block++
	e.cachePoint(p)
	return nil
}

// text writes a text block, or a citationsContent block when the text came
// from one (the rest of that block is kept in Native).
func (e *encoder) text(p *convo.Part) error {
	cc := nativeRaw(p.Native, "citationsContent")
	cites := citesArray(p.Citations, func(i int, c *convo.Citation) {
		e.warns = append(e.warns, provider.WarnCode(provider.CodeCitationDropped, fmt.Sprintf("%s.citations[%d]", e.where(), i),
			"%s citation left out: Converse has no form for it", c.Kind))
	})
	if cc == nil && cites == nil {
		e.buf = append(e.buf, `{"text":`...)
		if err := e.str(p.Text); err != nil {
			return err
		}
		e.buf = append(e.buf, '}')
		return nil
	}
	e.buf = append(e.buf, `{"citationsContent":{`...)
	switch c := memberOf(cc, "content"); {
	case c != nil && joinTexts(c) == p.Text:
		e.buf = append(append(e.buf, `"content":`...), c...)
	case c == nil && cc != nil && p.Text == "":
		// A block of citations alone, as Nova's web grounding sends them
		// after the text they support: it goes back without content.
	default:
		e.buf = append(e.buf, `"content":[{"text":`...)
		if err := e.str(p.Text); err != nil {
			return err
		}
		e.buf = append(e.buf, "}]"...)
	}
	if cites != nil {
		e.buf = append(append(comma(e.buf), `"citations":`...), cites...)
	}
	e.buf = appendMembers(e.buf, cc, func(k string) bool { return k == "content" || k == "citations" && cites != nil })
	e.buf = append(e.buf, "}}"...)
	return nil
}

// memberOf returns the value of key in the JSON object obj, or nil.
func memberOf(obj []byte, key string) []byte {
	return nativeRaw(convo.Native{ProviderID: obj}, key)
}

// joinTexts concatenates the text members of an array of {"text":…}
// objects; anything else makes it return a value no text equals.
func joinTexts(arr []byte) string {
	var out []byte
	r := jsonx.NewReader(arr, 0)
	err := r.ReadArray(func(int) error {
		return r.ReadObject(func(k []byte) error {
			if string(k) != "text" {
				return errors.New("not text")
			}
			s, err := r.ReadStringBytes()
			out = append(out, s...)
			return err
		})
	})
	if err != nil {
		return "\x00invalid"
	}
	return string(out)
}

func mediaKey(t convo.PartType) string {
	switch t {
	case convo.TypeImage:
		return "image"
	case convo.TypeAudio:
		return "audio"
	case convo.TypeVideo:
		return "video"
	}
	return "document"
}

// mediaReserved are the media block members the encoder writes itself.
func mediaReserved(k string) bool {
	return k == "format" || k == "source" || k == "name" || k == "s3Location"
}

func (e *encoder) media(p *convo.Part) error {
	e.buf = append(e.buf, `{"`...)
	e.buf = append(e.buf, mediaKey(p.Type)...)
	e.buf = append(e.buf, `":{`...)
	format, _ := mediaFormat(*p)
	if format != "" {
		e.buf = append(e.buf, `"format":`...)
		e.buf = jsonx.AppendString(e.buf, format)
	}
	if p.Type == convo.TypeFile {
		e.buf = jsonx.AppendKey(e.buf, "name")
		if err := e.str(documentName(*p, format)); err != nil {
			return err
		}
	}
	e.buf = jsonx.AppendKey(e.buf, "source")
	switch {
	case p.URL != "":
		e.buf = append(e.buf, `{"s3Location":{"uri":`...)
		if err := e.str(p.URL); err != nil {
			return err
		}
		if extra := nativeRaw(p.Native, "s3Location"); extra != nil {
			e.buf = appendMembers(e.buf, extra, func(k string) bool { return k == "uri" })
		}
		e.buf = append(e.buf, "}}"...)
	case p.Type == convo.TypeFile && p.Text != "":
		if c := nativeRaw(p.Native, "source"); c != nil && documentContentText(c) == p.Text {
			e.buf = append(e.buf, c...)
			break
		}
		e.buf = append(e.buf, `{"text":`...)
		if err := e.str(p.Text); err != nil {
			return err
		}
		e.buf = append(e.buf, '}')
	default:
		e.buf = append(e.buf, `{"bytes":`...)
		if err := e.str(p.Data); err != nil {
			return err
		}
		e.buf = append(e.buf, '}')
	}
	e.buf = appendNative(e.buf, p.Native, mediaReserved)
	e.buf = append(e.buf, "}}"...)
	return nil
}

// documentContentText is the text of a document source of the content
// kind ({"content":[{"text":…},…]}), joined as decoding joins it.
func documentContentText(src []byte) string {
	var text string
	found := false
	r := jsonx.NewReader(src, 0)
	err := r.ReadObject(func(k []byte) error {
		if string(k) != "content" || found {
			return errors.New("not a content source")
		}
		found = true
		raw, err := r.ReadRaw()
		text = joinTexts(raw)
		return err
	})
	if err != nil || !found {
		return "\x00invalid"
	}
	return text
}

// appendMembers appends the members of the JSON object obj to the object
// being written in dst, except those skip reports.
func appendMembers(dst, obj []byte, skip func(string) bool) []byte {
	return appendNative(dst, convo.Native{ProviderID: obj}, skip)
}

func (e *encoder) toolUse(p *convo.Part) error {
	e.buf = append(e.buf, `{"toolUse":{"toolUseId":`...)
	if err := e.str(p.ID); err != nil {
		return err
	}
	e.buf = append(e.buf, `,"name":`...)
	if err := e.str(p.Name); err != nil {
		return err
	}
	e.buf = append(e.buf, `,"input":`...)
	if p.Args == nil {
		e.buf = append(e.buf, "{}"...)
	} else if err := e.value(p.Args); err != nil {
		return fmt.Errorf("toolUse.input: %w", err)
	}
	e.buf = appendNative(e.buf, p.Native, func(k string) bool {
		return k == "toolUseId" || k == "name" || k == "input"
	})
	e.buf = append(e.buf, "}}"...)
	return nil
}

func (e *encoder) toolResult(p *convo.Part) error {
	e.buf = append(e.buf, `{"toolResult":{"toolUseId":`...)
	if err := e.str(p.ID); err != nil {
		return err
	}
	e.buf = append(e.buf, `,"content":`...)
	if err := e.resultContent(p); err != nil {
		return err
	}
	if s := resultStatus(p); s != "" {
		e.buf = append(e.buf, `,"status":`...)
		e.buf = jsonx.AppendString(e.buf, s)
	}
	e.buf = appendNative(e.buf, p.Native, func(k string) bool {
		return k == "toolUseId" || k == "content" || k == "status"
	})
	e.buf = append(e.buf, "}}"...)
	return nil
}

// resultContent writes the content array of a tool result.
func (e *encoder) resultContent(p *convo.Part) error {
	e.buf = append(e.buf, '[')
	for k := range p.Parts {
		q := &p.Parts[k]
		e.buf = comma(e.buf)
		var err error
		switch q.Type {
		case convo.TypeText, convo.TypeRefusal:
			e.buf = append(e.buf, `{"text":`...)
			err = e.str(q.Text)
			e.buf = append(e.buf, '}')
		case convo.TypeJSON:
			e.buf = append(e.buf, `{"json":`...)
			err = e.value(q.Value)
			e.buf = append(e.buf, '}')
		case convo.TypeImage, convo.TypeFile, convo.TypeVideo:
			err = e.media(q)
		default:
			block, ok := provider.OpaqueBlock(ProviderID, *q)
			if !ok {
				err = fmt.Errorf("%s part cannot be sent in a Bedrock tool result", q.Type)
			} else {
				err = e.value(block)
			}
		}
		if err != nil {
			return fmt.Errorf("toolResult.content[%d]: %w", k, err)
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

func (e *encoder) reasoning(p *convo.Part) error {
	if p.Encrypted != "" {
		e.buf = append(e.buf, `{"reasoningContent":{"redactedContent":`...)
		if err := e.str(p.Encrypted); err != nil {
			return err
		}
		e.buf = append(e.buf, "}}"...)
		return nil
	}
	e.buf = append(e.buf, `{"reasoningContent":{"reasoningText":{"text":`...)
	if err := e.str(p.Text); err != nil {
		return err
	}
	if p.Signature != "" {
		e.buf = append(e.buf, `,"signature":`...)
		if err := e.str(p.Signature); err != nil {
			return err
		}
	}
	e.buf = appendNative(e.buf, p.Native, func(k string) bool { return k == "text" || k == "signature" })
	e.buf = append(e.buf, "}}}"...)
	return nil
}
