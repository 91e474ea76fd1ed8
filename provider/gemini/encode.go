package gemini

import (
	"bytes"
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

// Encode returns the conversation fields of a generateContent request for h:
// {"systemInstruction":{…},"contents":[…]}, ready to be merged into a
// request.
//
// It applies provider.Prepare first (pairing, other providers' reasoning,
// media, later system messages), then maps the history: leading system
// messages go to systemInstruction; assistant messages become "model"
// contents; user and tool messages become "user" contents, all tool results
// of a step (and a user message right after them) in one content, since
// Gemini wants every functionResponse of a step together. Signatures go back
// on the part they came on. Warning paths name places in the request
// (contents[3].parts[1]) for what this function drops or changes itself,
// and places in h for what Prepare does.
func (generateContent) Encode(h convo.History, opts provider.Options) ([]byte, []provider.Warning, error) {
	return appendConv(nil, h, opts)
}

// appendConv is Encode appending to dst (see wire.Begin).
func appendConv(dst []byte, h convo.History, opts provider.Options) ([]byte, []provider.Warning, error) {
	ph, warns, err := provider.Prepare(h, target, opts)
	if err != nil {
		return nil, warns, err
	}
	size := 64
	for i := range ph {
		size += ph[i].EstimatedBytes()
	}
	e := encoder{buf: wire.Begin(dst, size), warns: warns, opts: opts, content: -1,
		bypass: opts.GeminiBypass || Gemini3(opts.Model)}
	if err := e.request(ph); err != nil {
		return nil, e.warns, err
	}
	if len(e.bypassed) > 0 {
		why := "Options.GeminiBypass is set"
		if Gemini3(opts.Model) {
			why = "model " + strconv.Quote(opts.Model) + " is a Gemini 3 model, which refuses function calls of the current turn without a thought signature"
		}
		e.warn(e.bypassed[0], "%s: Google's documented bypass signature was put on %d function calls from another provider (%s)",
			why, len(e.bypassed), strings.Join(e.bypassed, ", "))
	}
	return e.buf, e.warns, opts.Check(e.warns)
}

type encoder struct {
	buf     []byte
	warns   []provider.Warning
	opts    provider.Options
	raw     jsonx.Reader // reused to validate and compact JSON values
	scratch []byte       // reused for a value that is checked before it is written
	aux     jsonx.Reader // reused for a second look at a value
	mem     []member     // reused: the members of the part's Native["gemini"]

	content  int                 // index of the open content; -1 before the first
	nparts   int                 // parts written in the open content
	side     convo.Role          // RoleAssistant or RoleUser: the open content's role
	last     convo.Role          // role of the message written last
	calls    map[string]sentCall // the calls of the last assistant message, by id
	bypassAt int                 // part of the current message that gets BypassSignature, or -1
	bypass   bool                // put BypassSignature on unsigned calls (Gemini 3 or Options.GeminiBypass)
	bypassed []string            // where it went, for the one warning
}

type member struct{ key, val []byte }

// sentCall is what a tool result needs to know about the call it answers.
type sentCall struct {
	name string
	noID bool // the functionCall went without its id
}

func (e *encoder) warn(path, format string, args ...any) {
	e.warns = append(e.warns, provider.Warnf(path, format, args...))
}

func (e *encoder) path() string {
	if e.content < 0 {
		return "systemInstruction.parts[" + strconv.Itoa(e.nparts) + "]"
	}
	return "contents[" + strconv.Itoa(e.content) + "].parts[" + strconv.Itoa(e.nparts) + "]"
}

func (e *encoder) request(h convo.History) error {
	sys, rest := provider.SplitSystem(h)
	if len(sys) > 0 {
		if err := e.system(sys); err != nil {
			return err
		}
	}
	e.buf = jsonx.AppendKey(e.buf, "contents")
	e.buf = append(e.buf, '[')
	for i := range rest {
		if err := e.message(&rest[i]); err != nil {
			return err
		}
	}
	if e.content >= 0 {
		e.buf = append(e.buf, "]}"...)
	}
	e.buf = append(e.buf, "]}"...)
	return nil
}

func (e *encoder) system(sys convo.History) error {
	e.buf = jsonx.AppendKey(e.buf, "systemInstruction")
	e.buf = append(e.buf, '{')
	if role := nativeMember(sys[0].Native, "role"); role != nil {
		e.buf = jsonx.AppendKey(e.buf, "role")
		e.buf = append(e.buf, role...)
	}
	e.buf = jsonx.AppendKey(e.buf, "parts")
	e.buf = append(e.buf, '[')
	e.bypassAt = -1
	for i := range sys {
		m := &sys[i]
		if m.Name != "" {
			e.warn("systemInstruction", "participant name %q dropped: Gemini has no message names", m.Name)
		}
		for j := range m.Parts {
			if err := e.part(&m.Parts[j], j, convo.RoleSystem); err != nil {
				return err
			}
		}
	}
	e.buf = append(e.buf, "]}"...)
	return nil
}

// openContent closes the open content, if any, and starts contents[n] with
// the given side's role.
func (e *encoder) openContent(side convo.Role) {
	if e.content >= 0 {
		e.buf = append(e.buf, "]},"...)
	}
	e.content++
	e.nparts = 0
	e.side = side
	if side == convo.RoleAssistant {
		e.buf = append(e.buf, `{"role":"model","parts":[`...)
	} else {
		e.buf = append(e.buf, `{"role":"user","parts":[`...)
	}
}

func (e *encoder) message(m *convo.Message) error {
	side := convo.RoleUser
	if m.Role == convo.RoleAssistant {
		side = convo.RoleAssistant
		clear(e.calls)
	}
	if len(m.Parts) == 0 {
		// Prepare keeps empty assistant messages; Gemini refuses a content
		// without parts.
		e.warn(index("contents", e.content+1), "%s message left out: nothing in it can be sent", m.Role)
		return nil
	}
	// A tool message and a user message right after it share one user
	// content: Gemini wants all functionResponses of a step together, and
	// Decode splits such a content the same way. Every other message starts
	// its own content, unless Decode noted otherwise.
	join := e.content >= 0 && e.side == side && side == convo.RoleUser && e.last == convo.RoleTool &&
		(m.Role == convo.RoleTool || m.Role == convo.RoleUser) && !note(&m.Parts[0], NewContent)
	if !join {
		e.openContent(side)
	}
	e.last = m.Role
	if m.Name != "" {
		e.warn(index("contents", e.content), "participant name %q dropped: Gemini has no message names", m.Name)
	}
	e.bypassAt = -1
	for j := range m.Parts {
		p := &m.Parts[j]
		if j > 0 && side == convo.RoleAssistant && note(p, NewContent) {
			e.openContent(side)
		}
		if side == convo.RoleAssistant && e.nparts == 0 && e.bypass {
			e.bypassAt = e.findBypass(m.Parts, j)
		}
		if err := e.part(p, j, m.Role); err != nil {
			return err
		}
	}
	return nil
}

// findBypass returns the index of the first tool call of the step (the
// content) starting at parts[from] when no call of that step has a
// signature, or -1.
func (e *encoder) findBypass(parts []convo.Part, from int) int {
	first := -1
	for j := from; j < len(parts); j++ {
		p := &parts[j]
		if j > from && note(p, NewContent) {
			break
		}
		if p.Type != convo.TypeToolCall || p.IsServerTool() {
			continue
		}
		if nativeMember(p.Native, "thoughtSignature") != nil || nativeMember(p.Native, "thought_signature") != nil {
			return -1
		}
		if first < 0 {
			first = j
		}
	}
	return first
}

// sep writes the comma before an array element or object member.
func (e *encoder) sep() {
	if n := len(e.buf); n > 0 && e.buf[n-1] != '[' && e.buf[n-1] != '{' {
		e.buf = append(e.buf, ',')
	}
}

func (e *encoder) str(s string) error {
	var ok bool
	if e.buf, ok = jsonx.AppendStringChecked(e.buf, s); !ok {
		return errors.New("invalid UTF-8 in string")
	}
	return nil
}

// strMember writes "key":"s".
func (e *encoder) strMember(key, s string) error {
	e.buf = jsonx.AppendKey(e.buf, key)
	return convo.ErrorAt(e.str(s), key)
}

// rawJSON writes v validated and compacted.
func (e *encoder) rawJSON(v []byte) error {
	var err error
	if e.buf, err = wire.AppendValue(&e.raw, e.buf, v); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	return nil
}

// part writes one wire part for p, the j-th part of a message of role.
func (e *encoder) part(p *convo.Part, j int, role convo.Role) error {
	if block, ok := provider.OpaqueBlock(ProviderID, *p); ok {
		// A Gemini part convo has no type for goes back as it came, minus
		// the notes Decode may have put in it.
		e.sep()
		if bytes.Contains(block, []byte(NewContent)) {
			e.buf = append(e.buf, '{')
			e.nestedMembers(block, SyntheticID, NewContent, ResponseWrap)
			e.buf = append(e.buf, '}')
		} else {
			e.buf = append(e.buf, block...)
		}
		e.nparts++
		return nil
	}
	path := e.path
	if err := e.parseNative(p.Native); err != nil {
		return convo.ErrorAt(err, path()+".native.gemini")
	}
	if p.IsServerTool() {
		return e.server(p, role, path)
	}
	if p.Cache != nil {
		e.warn(path(), "cache breakpoint dropped: Gemini caches through cachedContent, not per part")
	}
	if len(p.Citations) > 0 {
		e.warns = append(e.warns, provider.WarnCode(provider.CodeCitationDropped, path(),
			"%d citations left out: Gemini requests take none (its grounding is reply-only)", len(p.Citations)))
	}
	e.sep()
	e.buf = append(e.buf, '{')
	var err error
	own := ""           // the data member this part writes, which its Native may extend
	var written written // members the part writes itself, which its Native must not repeat
	switch p.Type {
	case convo.TypeText:
		own = "text"
		err = e.strMember("text", p.Text)
	case convo.TypeRefusal:
		own = "text"
		e.warn(path(), "refusal sent as text: Gemini has no refusal part")
		err = e.strMember("text", p.Text)
	case convo.TypeReasoning:
		own, written = "text", wroteThought
		if p.Signature != "" {
			written |= wroteSignature
		}
		err = e.reasoning(p)
	case convo.TypeJSON:
		own = "text"
		e.warn(path(), "json part sent as text: Gemini takes JSON only in function responses")
		e.buf = jsonx.AppendKey(e.buf, "text")
		err = e.jsonText(p.Value)
	case convo.TypeImage, convo.TypeAudio, convo.TypeVideo, convo.TypeFile:
		own, err = e.media(p, path)
	case convo.TypeToolCall:
		if role != convo.RoleAssistant {
			return fmt.Errorf("%s: tool_call in a %s message (only the model calls functions)", path(), role)
		}
		own = "functionCall"
		err = e.call(p, j, path)
	case convo.TypeToolResult:
		if role == convo.RoleAssistant || role == convo.RoleSystem {
			return fmt.Errorf("%s: tool_result in a %s message (responses go in a user content)", path(), role)
		}
		own = "functionResponse"
		err = e.response(p, path)
	default:
		return fmt.Errorf("%s: part of type %q cannot be sent to Gemini", path(), p.Type)
	}
	if err != nil {
		return convo.ErrorAt(err, path())
	}
	e.partNative(own, written, path)
	e.buf = append(e.buf, '}')
	e.nparts++
	return nil
}

func (e *encoder) reasoning(p *convo.Part) error {
	text := p.Text
	if text == "" && len(p.Summary) > 0 {
		text = strings.Join(p.Summary, "\n")
	}
	if err := e.strMember("text", text); err != nil {
		return err
	}
	e.buf = append(e.buf, `,"thought":true`...)
	if p.Signature != "" {
		return e.strMember("thoughtSignature", p.Signature)
	}
	return nil
}

// jsonText writes a JSON value as a string holding its compact text.
func (e *encoder) jsonText(v []byte) error {
	e.raw.Reset(v, convo.DefaultLimits.MaxDepth)
	c, err := e.raw.ReadRaw()
	if err == nil {
		err = e.raw.ExpectEnd()
	}
	if err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	return e.str(string(c))
}

// parseNative splits p's Native["gemini"] into e.mem; values alias it.
func (e *encoder) parseNative(n convo.Native) error {
	e.mem = e.mem[:0]
	obj := n[ProviderID]
	if len(obj) == 0 {
		return nil
	}
	// Most parts that have a Native carry just their signature, as Decode
	// writes it: that form is recognised without a JSON parse.
	const sigOnly = `{"thoughtSignature":"`
	if len(obj) > len(sigOnly)+2 && string(obj[:len(sigOnly)]) == sigOnly && obj[len(obj)-2] == '"' && obj[len(obj)-1] == '}' {
		val := obj[len(sigOnly)-1 : len(obj)-1]
		if base64ish(val[1 : len(val)-1]) {
			e.mem = append(e.mem, member{key: obj[2 : len(sigOnly)-3], val: val})
			return nil
		}
	}
	r := &e.raw
	r.Reset(obj, convo.DefaultLimits.MaxDepth)
	return r.ReadObject(func(key []byte) error {
		r.Peek()
		start := r.Offset()
		if err := r.Skip(); err != nil {
			return err
		}
		e.mem = append(e.mem, member{key: key, val: obj[start:r.Offset()]})
		return nil
	})
}

// base64ish reports whether b holds only base64 characters (either
// alphabet), which need no escaping in a JSON string.
func base64ish(b []byte) bool {
	for _, c := range b {
		if !(('A' <= c && c <= 'Z') || ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') || c == '+' || c == '/' || c == '=' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// nested returns the member of the part's Native holding extra members of
// its data object kind ("functionCall", …), or nil.
func (e *encoder) nested(kind string) []byte {
	for _, m := range e.mem {
		if string(m.key) == kind {
			return m.val
		}
	}
	return nil
}

// nestedMembers writes the members of the Native object obj inside the
// data object being written, except those the encoder writes itself.
func (e *encoder) nestedMembers(obj []byte, written ...string) {
	if obj == nil {
		return
	}
	r := jsonx.NewReader(obj, convo.DefaultLimits.MaxDepth)
	_ = r.ReadObject(func(key []byte) error {
		r.Peek()
		start := r.Offset()
		if err := r.Skip(); err != nil {
			return err
		}
		for _, w := range written {
			if string(key) == w {
				return nil
			}
		}
		e.member(key, obj[start:r.Offset()])
		return nil
	})
}

func (e *encoder) member(key, val []byte) {
	e.sep()
	e.buf = jsonx.AppendString(e.buf, string(key))
	e.buf = append(e.buf, ':')
	e.buf = append(e.buf, val...)
}

// written says which part members the encoder wrote from convo fields.
type written uint8

const (
	wroteThought   written = 1 << iota // "thought":true of a reasoning part
	wroteSignature                     // its Signature as thoughtSignature
)

// partNative writes the part-level members of the part's Native: the
// thoughtSignature and whatever else Decode kept, minus convo's notes and
// anything that would clash with the data member own.
func (e *encoder) partNative(own string, w written, path func() string) {
	for _, m := range e.mem {
		if isNote(m.key) {
			continue
		}
		switch string(m.key) {
		case "thought":
			if w&wroteThought != 0 {
				continue
			}
		case "thoughtSignature", "thought_signature":
			if w&wroteSignature != 0 {
				continue
			}
		}
		if kind := dataKind(bstr(m.key)); kind != "" {
			if kind != own || string(m.key) != kind {
				e.warn(path(), "native member %q ignored: it would change the part's data", m.key)
			}
			continue // own's extra members were written inside it
		}
		e.member(m.key, m.val)
	}
}

// media writes inlineData or fileData for a media part.
func (e *encoder) media(p *convo.Part, path func() string) (string, error) {
	var own string
	switch {
	case p.Data != "" || p.Text != "":
		own = "inlineData"
		e.buf = append(e.buf, `"inlineData":{`...)
		mime, data := p.MediaType, p.Data
		if data == "" {
			// An inline text document: Gemini takes it as bytes.
			if mime == "" {
				mime = "text/plain"
			}
			data = base64.StdEncoding.EncodeToString([]byte(p.Text))
		}
		if err := e.strMember("mimeType", mime); err != nil {
			return own, convo.ErrorAt(err, own)
		}
		if err := e.strMember("data", data); err != nil {
			return own, convo.ErrorAt(err, own)
		}
		e.nestedMembers(e.nested(own), "mimeType", "mime_type", "data")
	default:
		own = "fileData"
		e.buf = append(e.buf, `"fileData":{`...)
		if p.MediaType != "" {
			if err := e.strMember("mimeType", p.MediaType); err != nil {
				return own, convo.ErrorAt(err, own)
			}
		}
		uri := p.URL
		if uri == "" {
			uri = p.FileID
		}
		if err := e.strMember("fileUri", uri); err != nil {
			return own, convo.ErrorAt(err, own)
		}
		e.nestedMembers(e.nested(own), "mimeType", "mime_type", "fileUri", "file_uri")
	}
	e.buf = append(e.buf, '}')
	if p.Name != "" && !e.hasDisplayName(own) {
		e.warn(path(), "%s name %q dropped: the Gemini API takes no display names", p.Type, p.Name)
	}
	if p.Detail != "" && p.Detail != "auto" { // auto is every provider's default
		e.warn(path(), "image detail %q dropped: convo does not map it to Gemini's mediaResolution", p.Detail)
	}
	return own, nil
}

func (e *encoder) hasDisplayName(kind string) bool {
	obj := e.nested(kind)
	if obj == nil {
		return false
	}
	found := false
	r := jsonx.NewReader(obj, 0)
	_ = r.ReadObject(func(key []byte) error {
		if string(key) == "displayName" || string(key) == "display_name" {
			found = true
		}
		return r.Skip()
	})
	return found
}

func (e *encoder) call(p *convo.Part, j int, path func() string) error {
	if e.calls == nil {
		e.calls = map[string]sentCall{}
	}
	noID := p.ID == "" || e.synthetic()
	e.calls[p.ID] = sentCall{name: p.Name, noID: noID}
	e.buf = append(e.buf, `"functionCall":{`...)
	if !noID {
		if err := e.strMember("id", p.ID); err != nil {
			return convo.ErrorAt(err, "functionCall")
		}
	}
	if err := e.strMember("name", p.Name); err != nil {
		return convo.ErrorAt(err, "functionCall")
	}
	switch {
	case p.ArgsRaw != "":
		e.warn(path(), "malformed arguments of %s dropped: Gemini takes arguments as a JSON object", p.Name)
	case len(p.Args) > 0:
		mark := len(e.buf)
		e.buf = jsonx.AppendKey(e.buf, "args")
		start := len(e.buf)
		if err := e.rawJSON(p.Args); err != nil {
			return convo.ErrorAt(err, "functionCall.args")
		}
		switch e.buf[start] {
		case '{':
		case 'n': // null: no arguments
			e.buf = e.buf[:mark]
		default:
			e.buf = e.buf[:mark]
			e.warn(path(), "arguments of %s dropped: Gemini takes a JSON object, not %s", p.Name, p.Args)
		}
	}
	e.nestedMembers(e.nested("functionCall"), "id", "name", "args")
	e.buf = append(e.buf, '}')
	if j == e.bypassAt {
		e.buf = append(e.buf, `,"thoughtSignature":"`+BypassSignature+`"`...)
		e.bypassed = append(e.bypassed, e.path())
	}
	return nil
}

// synthetic reports whether the part being written had no id on the wire.
func (e *encoder) synthetic() bool {
	for _, m := range e.mem {
		if string(m.key) == SyntheticID {
			return string(m.val) == "true"
		}
	}
	return false
}

func (e *encoder) response(p *convo.Part, path func() string) error {
	call, answers := e.calls[p.ID]
	name := p.Name
	if name == "" {
		name = call.name
	}
	if name == "" {
		return fmt.Errorf("tool result %q has no name and answers no call: Gemini needs the function name", p.ID)
	}
	e.buf = append(e.buf, `"functionResponse":{`...)
	// An id goes with the response only if it went with the call: an id
	// convo made up for a call means nothing to Gemini.
	if p.ID != "" && !e.synthetic() && !(answers && call.noID) {
		if err := e.strMember("id", p.ID); err != nil {
			return convo.ErrorAt(err, "functionResponse")
		}
	}
	if err := e.strMember("name", name); err != nil {
		return convo.ErrorAt(err, "functionResponse")
	}
	wrap := e.wrapNote()
	e.buf = jsonx.AppendKey(e.buf, "response")
	if err := e.responseValue(p, wrap); err != nil {
		return convo.ErrorAt(err, "functionResponse.response")
	}
	nested := e.nested("functionResponse")
	var saved []member // the result's own Native, which its media parts' replace in e.mem
	media := 0
	for k := range p.Parts {
		q := &p.Parts[k]
		if !q.Type.IsMedia() {
			continue
		}
		if media == 0 {
			e.buf = jsonx.AppendKey(e.buf, "parts")
			e.buf = append(e.buf, '[')
			saved = append(saved, e.mem...)
		}
		media++
		if err := e.responsePart(q, k, path); err != nil {
			return convo.ErrorAt(err, "functionResponse."+index("parts", media-1))
		}
	}
	if media > 0 {
		e.buf = append(e.buf, ']')
		e.mem = append(e.mem[:0], saved...)
	}
	e.nestedMembers(nested, "id", "name", "response", "parts")
	e.buf = append(e.buf, '}')
	return nil
}

// wrapNote returns the ResponseWrap note of the part being written.
func (e *encoder) wrapNote() string {
	for _, m := range e.mem {
		if string(m.key) == ResponseWrap {
			switch string(m.val) {
			case `"output"`:
				return "output"
			case `"none"`:
				return "none"
			}
		}
	}
	return ""
}

// responseValue writes functionResponse.response for a result's text and
// JSON parts: text joined into one string, one JSON value as it is, a mix as
// an array; wrapped in {"output":…} or, for a failed tool, {"error":…}. A
// lone JSON object is sent as the response itself (the SDKs' convention for
// "the whole object is the output") unless that would be misread or the
// ResponseWrap note says otherwise.
func (e *encoder) responseValue(p *convo.Part, wrapNote string) error {
	var texts, jsons, other int
	var single *convo.Part
	for k := range p.Parts {
		q := &p.Parts[k]
		switch {
		case q.Type == convo.TypeText || q.Type == convo.TypeRefusal:
			texts++
			single = q
		case q.Type == convo.TypeJSON:
			jsons++
			single = q
		case !q.Type.IsMedia():
			other++
		}
	}
	if other > 0 {
		return fmt.Errorf("tool result holds a part Gemini cannot take in a function response")
	}
	key := `{"output":`
	if p.Error {
		key = `{"error":`
	}
	switch {
	case texts+jsons == 0:
		if p.Error {
			e.buf = append(e.buf, `{"error":{}}`...)
		} else {
			e.buf = append(e.buf, `{}`...)
		}
		return nil
	case jsons == 1 && texts == 0:
		return e.responseJSON(single, key, wrapNote, p.Error)
	case jsons == 0 && texts == 1:
		e.buf = append(e.buf, key...)
		if err := e.str(single.Text); err != nil {
			return err
		}
	case jsons == 0:
		e.buf = append(e.buf, key...)
		if err := e.str(joinTexts(p.Parts)); err != nil {
			return err
		}
	default:
		e.buf = append(e.buf, key...)
		if err := e.mixedValues(p.Parts); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

// responseJSON writes a result's one JSON value as the response: as it
// is when it is an object Gemini reads as the whole output, else wrapped
// in key (`{"output":` or `{"error":`).
func (e *encoder) responseJSON(q *convo.Part, key, wrapNote string, failed bool) error {
	v, err := wire.AppendValue(&e.raw, e.scratch[:0], q.Value)
	if err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	e.scratch = v
	wrap := wrapsByDefault(&e.aux, v, failed)
	switch {
	case v[0] != '{':
		wrap = true // the response must be an object
	case wrapNote == "output":
		wrap = true
	case wrapNote == "none":
		wrap = false
	}
	if !wrap {
		e.buf = append(e.buf, v...)
		return nil
	}
	e.buf = append(e.buf, key...)
	e.buf = append(e.buf, v...)
	e.buf = append(e.buf, '}')
	return nil
}

// joinTexts joins the text and refusal parts of ps, one a line.
func joinTexts(ps []convo.Part) string {
	var b strings.Builder
	for k := range ps {
		if q := &ps[k]; q.Type == convo.TypeText || q.Type == convo.TypeRefusal {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(q.Text)
		}
	}
	return b.String()
}

// mixedValues writes the text and JSON parts of ps as one array.
func (e *encoder) mixedValues(ps []convo.Part) error {
	e.buf = append(e.buf, '[')
	for k := range ps {
		q := &ps[k]
		var err error
		switch q.Type {
		case convo.TypeText, convo.TypeRefusal:
			e.sep()
			err = e.str(q.Text)
		case convo.TypeJSON:
			e.sep()
			err = e.rawJSON(q.Value)
		}
		if err != nil {
			return err
		}
	}
	e.buf = append(e.buf, ']')
	return nil
}

// responsePart writes a media part of a tool result as a
// FunctionResponsePart.
func (e *encoder) responsePart(q *convo.Part, k int, path func() string) error {
	if err := e.parseNative(q.Native); err != nil {
		return convo.ErrorAt(err, "native.gemini")
	}
	sub := func() string { return path() + ".functionResponse.parts[" + strconv.Itoa(k) + "]" }
	if q.Cache != nil {
		e.warn(sub(), "cache breakpoint dropped: Gemini caches through cachedContent, not per part")
	}
	e.sep()
	e.buf = append(e.buf, '{')
	own, err := e.media(q, sub)
	if err != nil {
		return err
	}
	e.partNative(own, wroteThought|wroteSignature, sub) // neither belongs in a FunctionResponsePart
	e.buf = append(e.buf, '}')
	return nil
}

// server writes a provider-run part Prepare kept for Gemini: its own code
// execution call or result, replayed as executableCode or
// codeExecutionResult with the part's other members. A Gemini part of
// another kind of tool (convo reads none) is left out with a warning.
func (e *encoder) server(p *convo.Part, role convo.Role, path func() string) error {
	kind := serverKind(p)
	if kind == "" {
		e.warns = append(e.warns, provider.WarnCode(provider.CodeServerToolDropped, path(),
			"%s %s of %s left out: Gemini replays only its own code execution", p.Server, p.Type, p.Provider))
		return nil
	}
	if role != convo.RoleAssistant {
		return fmt.Errorf("%s: provider-run %s in a %s message (the model's content holds them)", path(), p.Type, role)
	}
	e.sep()
	var err error
	if e.buf, err = appendServerData(append(e.buf, '{'), p, kind, &e.aux); err != nil {
		return convo.ErrorAt(err, path())
	}
	// A result's outcome went inside it.
	e.mem = slices.DeleteFunc(e.mem, func(m member) bool { return string(m.key) == "outcome" })
	e.partNative(kind, 0, path)
	e.buf = append(e.buf, '}')
	e.nparts++
	return nil
}
