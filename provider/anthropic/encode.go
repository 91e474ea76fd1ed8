package anthropic

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// maxCacheBreakpoints is how many cache_control breakpoints one request may
// hold.
const maxCacheBreakpoints = 4

// wireTurn describes a wire message as far as merging is concerned.
type wireTurn struct {
	role  byte // 0 before the first message, else 'u', 'a' or 's'
	other bool // it holds blocks other than tool results
}

var (
	wireUser      = wireTurn{role: 'u'}
	wireAssistant = wireTurn{role: 'a'}
	wireSystem    = wireTurn{role: 's'}
)

// joins reports whether a message of turn next, starting with tool results
// when result is set, is merged into the wire message prev by default.
// Consecutive user turns and consecutive assistant turns are merged, as the
// API itself would merge them, except that tool results are never put after
// other content: they must open their user turn. "system" role messages are
// never merged.
func joins(prev, next wireTurn, result bool) bool {
	if prev.role != next.role || next.role == 's' {
		return false
	}
	return !(result && prev.other)
}

// Encode maps h to the conversation fields of a Messages request:
// {"system":…,"messages":[…]}. See the package documentation and
// docs/providers.md for the mapping; everything dropped or changed
// is a warning whose path names the place in h.
func (messages) Encode(h convo.History, opts provider.Options) ([]byte, []provider.Warning, error) {
	return appendConv(nil, h, opts)
}

// appendConv is Encode appending to dst (see wire.Begin).
func appendConv(dst []byte, h convo.History, opts provider.Options) ([]byte, []provider.Warning, error) {
	p, from, warns, err := provider.PrepareIndexed(h, target, opts)
	if err != nil {
		return nil, warns, err
	}
	e := encoder{orig: h, h: p, from: from, warns: warns}
	e.buf = wire.Begin(dst, estimate(p))
	if err := e.encode(); err != nil {
		return nil, e.warns, err
	}
	return e.buf, e.warns, opts.Check(e.warns)
}

func estimate(h convo.History) int {
	n := 64
	for i := range h {
		n += h[i].EstimatedBytes()
	}
	return n
}

type encoder struct {
	buf   []byte
	orig  convo.History // as the caller gave it, for warning paths
	h     convo.History // prepared
	from  []int         // from[i]: the index in orig of h[i], -1 if Prepare inserted it
	warns []provider.Warning
	raw   jsonx.Reader
	tmp   []byte // scratch for a JSON value sent as text
	// caches counts cache breakpoints written.
	caches int
	units  []unit
	// The part being written, for paths built only when needed: message
	// (prepared index), part index, and index inside a tool result (-1).
	mi, pj, pk int
}

// here names the part being written by its place in the caller's history.
func (e *encoder) here() string {
	if e.pk >= 0 {
		return e.path(e.mi, e.pj, e.pk)
	}
	if e.pj >= 0 {
		return e.path(e.mi, e.pj)
	}
	return e.path(e.mi)
}

// at sets the part being written.
func (e *encoder) at(i, j, k int) { e.mi, e.pj, e.pk = i, j, k }

// unit is one prepared message to be sent inside messages[].
type unit struct {
	i    int
	turn wireTurn
	join bool // merged into the wire message of the unit before
}

func (e *encoder) warn(path, format string, args ...any) {
	e.warns = append(e.warns, provider.Warnf(path, format, args...))
}

// origin returns the index in the caller's history of prepared message i,
// or -1 for a message Prepare inserted.
func (e *encoder) origin(i int) int { return e.from[i] }

// path names prepared message i (and part indices inside it, then inside a
// tool result) by its place in the caller's history.
func (e *encoder) path(i int, part ...int) string {
	oi := e.origin(i)
	if oi < 0 {
		return "messages[" + strconv.Itoa(i) + "] (inserted)"
	}
	s := "messages[" + strconv.Itoa(oi) + "]"
	orig, prep := e.orig[oi].Parts, e.h[i].Parts
	for _, j := range part {
		oj := mapPart(orig, prep, j)
		s += ".parts[" + strconv.Itoa(oj) + "]"
		if oj >= len(orig) || j >= len(prep) {
			break
		}
		orig, prep = orig[oj].Parts, prep[j].Parts
	}
	return s
}

// mapPart finds which of orig became prep[j]. Prepare keeps an unchanged
// parts slice as it is; otherwise parts were dropped or replaced in place,
// and the others kept in order.
func mapPart(orig, prep []convo.Part, j int) int {
	if len(orig) > 0 && len(prep) > 0 && &orig[0] == &prep[0] {
		return j
	}
	oj := -1
	for t := 0; t <= j && t < len(prep); t++ {
		k := oj + 1
		for k < len(orig) && !looseEqual(orig[k], prep[t]) {
			k++
		}
		if k < len(orig) {
			oj = k
		} else {
			oj++ // a replacement (a placeholder, reasoning as text)
		}
	}
	return oj
}

func looseEqual(a, b convo.Part) bool {
	return a.Type == b.Type && a.Text == b.Text && a.Data == b.Data && a.URL == b.URL &&
		a.FileID == b.FileID && a.Name == b.Name && a.Signature == b.Signature && a.Encrypted == b.Encrypted
}

func (e *encoder) encode() error {
	e.fixIDs()
	lead := e.h.Leading()
	var top []int
	for i := 0; i < lead; i++ {
		if !nativeIs(e.h[i].Native, "role", `"system"`) {
			top = append(top, i)
		}
	}
	e.plan(lead)
	if err := e.system(top); err != nil {
		return err
	}
	e.buf = jsonx.AppendKey(e.buf, "messages")
	e.buf = append(e.buf, '[')
	for g := 0; g < len(e.units); {
		end := g + 1
		for end < len(e.units) && e.units[end].join {
			end++
		}
		if g > 0 {
			e.buf = append(e.buf, ',')
		}
		if err := e.message(e.units[g:end]); err != nil {
			return err
		}
		g = end
	}
	e.buf = append(e.buf, "]}"...)
	return nil
}

// plan decides which prepared messages are sent in messages[] and which are
// merged into the wire message before them.
func (e *encoder) plan(lead int) {
	e.units = make([]unit, 0, len(e.h))
	var cur wireTurn
	for i := range e.h {
		m := &e.h[i]
		var turn wireTurn
		switch m.Role {
		case convo.RoleSystem:
			if nativeIs(m.Native, "role", `"system"`) {
				turn = wireSystem
				break
			}
			if i < lead {
				continue // top-level system
			}
			e.warn(e.path(i), "system message after the conversation started sent as user text")
			turn = wireUser
		case convo.RoleAssistant:
			turn = wireAssistant
		default:
			turn = wireUser
		}
		if m.Name != "" {
			e.warn(e.path(i), "name %q not sent: Anthropic messages have no name", m.Name)
		}
		blocks, substantive := 0, false
		for j := range m.Parts {
			n, s := emits(&m.Parts[j])
			blocks += n
			substantive = substantive || s
		}
		switch {
		case turn == wireAssistant && !substantive:
			e.warn(e.path(i), "empty assistant turn left out: the API rejects empty assistant content")
			continue
		case blocks == 0:
			e.warn(e.path(i), "%s message left out: nothing in it can be sent", m.Role)
			continue
		}
		result := m.Role == convo.RoleTool
		turn.other = !result
		u := unit{i: i, turn: turn}
		u.join = joins(cur, turn, result) && !nativeIs(m.Native, markSeparate, "true")
		if u.join {
			cur.other = cur.other || turn.other
		} else {
			cur = turn
		}
		e.units = append(e.units, u)
	}
}

// emits reports how many blocks p becomes and whether it is content an
// assistant turn may consist of (not empty text).
func emits(p *convo.Part) (int, bool) {
	switch p.Type {
	case convo.TypeText, convo.TypeRefusal:
		return 1, p.Text != ""
	case convo.TypeJSON, convo.TypeImage, convo.TypeFile, convo.TypeToolCall, convo.TypeToolResult:
		return 1, true
	case convo.TypeReasoning:
		if p.Provider == ProviderID && (p.Signature != "" || p.Encrypted != "") {
			return 1, true
		}
		return 0, false
	}
	if _, ok := blockOf(p); ok {
		return 1, true
	}
	return 0, false
}

// fixIDs gives tool calls that have no id a synthesised one, and their
// results the same, matched by name and order as Prepare paired them.
func (e *encoder) fixIDs() {
	var pending map[string][]string
	for i := range e.h {
		m := &e.h[i]
		if m.Role == convo.RoleAssistant {
			pending = nil
		}
		copied := false
		for j := range m.Parts {
			p := &m.Parts[j]
			if p.ID != "" || (p.Type != convo.TypeToolCall && p.Type != convo.TypeToolResult) {
				continue
			}
			var id string
			switch {
			case p.Type == convo.TypeToolCall && m.Role == convo.RoleAssistant:
				oi := e.origin(i)
				if oi < 0 {
					oi = i
				}
				id = provider.SynthID(oi, j, p.Name)
				if pending == nil {
					pending = map[string][]string{}
				}
				pending[p.Name] = append(pending[p.Name], id)
			case p.Type == convo.TypeToolResult && len(pending[p.Name]) > 0:
				id = pending[p.Name][0]
				pending[p.Name] = pending[p.Name][1:]
			default:
				continue
			}
			if !copied {
				m.Parts = append([]convo.Part(nil), m.Parts...)
				p = &m.Parts[j]
				copied = true
			}
			p.ID = id
		}
		if m.Role != convo.RoleAssistant && m.Role != convo.RoleTool {
			pending = nil
		}
	}
}

// system writes the top-level system prompt from the leading system
// messages at top.
func (e *encoder) system(top []int) error {
	if len(top) == 0 {
		return nil
	}
	if len(top) == 1 {
		m := &e.h[top[0]]
		if nativeIs(m.Native, markString, "true") && len(m.Parts) == 1 && plainText(&m.Parts[0]) {
			e.buf = jsonx.AppendKey(e.buf, "system")
			e.at(top[0], 0, -1)
			return e.str(m.Parts[0].Text)
		}
	}
	mark := len(e.buf)
	e.buf = jsonx.AppendKey(e.buf, "system")
	e.buf = append(e.buf, '[')
	n := 0
	for _, i := range top {
		m := &e.h[i]
		if m.Name != "" {
			e.warn(e.path(i), "name %q not sent: Anthropic messages have no name", m.Name)
		}
		for j := range m.Parts {
			p := &m.Parts[j]
			_, opaque := blockOf(p)
			if p.Type != convo.TypeText && p.Type != convo.TypeJSON && !opaque {
				e.warn(e.path(i, j), "%s left out of the system prompt: it takes text only", p.Type)
				continue
			}
			if n > 0 {
				e.buf = append(e.buf, ',')
			}
			n++
			e.at(i, j, -1)
			if err := e.block(p); err != nil {
				return err
			}
		}
	}
	if n == 0 {
		e.buf = e.buf[:mark]
		return nil
	}
	e.buf = append(e.buf, ']')
	return nil
}

// plainText reports whether p can be written as a bare string: a text part
// with nothing else to say.
func plainText(p *convo.Part) bool {
	return p.Type == convo.TypeText && p.Cache == nil && len(p.Native[ProviderID]) == 0
}

// message writes one wire message made of the units us (merged turns).
func (e *encoder) message(us []unit) error {
	first := &e.h[us[0].i]
	e.buf = append(e.buf, `{"role":`...)
	switch us[0].turn.role {
	case 'a':
		e.buf = append(e.buf, `"assistant"`...)
	case 's':
		e.buf = append(e.buf, `"system"`...)
	default:
		e.buf = append(e.buf, `"user"`...)
	}
	e.buf = append(e.buf, `,"content":`...)
	if len(us) == 1 && first.Role != convo.RoleTool && len(first.Parts) == 1 && plainText(&first.Parts[0]) &&
		nativeIs(first.Native, markString, "true") {
		e.at(us[0].i, 0, -1)
		if err := e.str(first.Parts[0].Text); err != nil {
			return err
		}
	} else {
		e.buf = append(e.buf, '[')
		n := 0
		for _, u := range us {
			m := &e.h[u.i]
			for j := range m.Parts {
				if c, _ := emits(&m.Parts[j]); c == 0 {
					e.dropped(u.i, j, &m.Parts[j])
					continue
				}
				if n > 0 {
					e.buf = append(e.buf, ',')
				}
				n++
				e.at(u.i, j, -1)
				if err := e.block(&m.Parts[j]); err != nil {
					return err
				}
			}
		}
		e.buf = append(e.buf, ']')
	}
	var keys [8]string
	skip := append(keys[:0], "role", "content")
	for _, u := range us {
		var err error
		e.at(u.i, -1, -1)
		if skip, err = e.messageNative(e.h[u.i].Native, skip); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

// dropped warns about a part that becomes no block.
func (e *encoder) dropped(i int, j int, p *convo.Part) {
	if p.Type == convo.TypeReasoning {
		e.warn(e.path(i, j), "Anthropic thinking without a signature left out: the API rejects it")
		return
	}
	e.warn(e.path(i, j), "%s part left out: Anthropic has no block for it", p.Type)
}

// block writes p, the part set with e.at.
func (e *encoder) block(p *convo.Part) error {
	if raw, ok := blockOf(p); ok {
		return e.rawValue(raw)
	}
	var keys [8]string
	keys[0] = "type"
	n := 1
	switch p.Type {
	case convo.TypeText, convo.TypeRefusal:
		if err := e.text(p); err != nil {
			return err
		}
		keys[n] = "text"
		n++
		if len(p.Citations) > 0 {
			keys[n] = "citations"
			n++
		}
	case convo.TypeJSON:
		// Anthropic has no JSON block: the value is sent as its JSON text.
		e.buf = append(e.buf, `{"type":"text","text":`...)
		var err error
		if e.tmp, err = wire.AppendValue(&e.raw, e.tmp[:0], p.Value); err != nil {
			return fmt.Errorf("%s.value: invalid JSON: %w", e.here(), err)
		}
		e.buf = jsonx.AppendString(e.buf, unsafe.String(unsafe.SliceData(e.tmp), len(e.tmp)))
		keys[n] = "text"
		n++
	case convo.TypeImage, convo.TypeFile:
		if err := e.media(p); err != nil {
			return err
		}
		keys[n] = "source"
		n++
		if p.Type == convo.TypeFile && p.Name != "" {
			keys[n] = "title"
			n++
		}
	case convo.TypeToolCall:
		if err := e.toolUse(p); err != nil {
			return err
		}
		keys[n], keys[n+1], keys[n+2] = "id", "name", "input"
		n += 3
	case convo.TypeToolResult:
		if err := e.result(p); err != nil {
			return err
		}
		keys[n] = "tool_use_id"
		n++
		if len(p.Parts) > 0 {
			keys[n] = "content"
			n++
		}
		if p.Error {
			keys[n] = "is_error"
			n++
		}
	case convo.TypeReasoning:
		return e.reasoning(p)
	default:
		return fmt.Errorf("%s: cannot send a %s part", e.here(), p.Type)
	}
	if p.Cache != nil {
		if err := e.cacheControl(p.Cache); err != nil {
			return err
		}
		keys[n] = "cache_control"
		n++
	}
	return e.nativeAndClose(p, keys[:n])
}

// toolUse writes a tool_use block up to its input.
func (e *encoder) toolUse(p *convo.Part) error {
	e.buf = append(e.buf, `{"type":"tool_use","id":`...)
	if err := e.str(p.ID); err != nil {
		return err
	}
	e.buf = append(e.buf, `,"name":`...)
	if err := e.str(p.Name); err != nil {
		return err
	}
	e.buf = append(e.buf, `,"input":`...)
	switch {
	case p.Args != nil:
		if err := e.rawValue(p.Args); err != nil {
			return err
		}
	case p.ArgsRaw != "":
		e.warn(e.here(), "malformed tool arguments sent as {}: Anthropic takes a JSON object")
		e.buf = append(e.buf, "{}"...)
	default:
		e.buf = append(e.buf, "{}"...)
	}
	return nil
}

// text writes a text block (a refusal becomes one) up to its citations.
func (e *encoder) text(p *convo.Part) error {
	if p.Type == convo.TypeRefusal {
		e.warn(e.here(), "refusal sent as assistant text: Anthropic has no refusal block")
	}
	e.buf = append(e.buf, `{"type":"text","text":`...)
	if err := e.str(p.Text); err != nil {
		return err
	}
	if p.Type == convo.TypeText {
		e.buf = appendCites(e.buf, &cites, p.Citations, &e.raw, func(i int, c *convo.Citation) {
			e.warns = append(e.warns, provider.WarnCode(provider.CodeCitationDropped, fmt.Sprintf("%s.citations[%d]", e.here(), i),
				"%s citation left out: Anthropic has no form for it%s", c.Kind, citeWhy(c)))
		})
	}
	return nil
}

// cacheControl writes a block's cache breakpoint.
func (e *encoder) cacheControl(c *convo.Cache) error {
	if e.caches++; e.caches == maxCacheBreakpoints+1 {
		e.warn(e.here(), "more than %d cache breakpoints: the API rejects the request", maxCacheBreakpoints)
	}
	e.buf = append(e.buf, `,"cache_control":{"type":"ephemeral"`...)
	if c.TTL != "" {
		e.buf = append(e.buf, `,"ttl":`...)
		if err := e.str(c.TTL); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

func (e *encoder) nativeAndClose(p *convo.Part, keys []string) error {
	if _, err := e.native(p.Native, keys); err != nil {
		return err
	}
	e.buf = append(e.buf, '}')
	return nil
}

// media writes an image or document block up to its source (and title).
func (e *encoder) media(p *convo.Part) error {
	if p.Type == convo.TypeImage {
		e.buf = append(e.buf, `{"type":"image","source":`...)
		if p.Detail != "" {
			e.warn(e.here(), "image detail %q not sent: Anthropic has no detail level", p.Detail)
		}
		if p.Name != "" {
			e.warn(e.here(), "image name %q not sent: Anthropic images have no name", p.Name)
		}
	} else {
		e.buf = append(e.buf, `{"type":"document","source":`...)
	}
	var err error
	switch {
	case p.Data != "" && p.Type == convo.TypeFile && p.MediaType == "text/plain":
		// Anthropic takes plain text documents as text, not base64.
		b, derr := base64.StdEncoding.DecodeString(p.Data)
		if derr != nil || !utf8.Valid(b) {
			return fmt.Errorf("%s: text/plain data is not base64 UTF-8 text", e.here())
		}
		e.buf = append(e.buf, `{"type":"text","media_type":"text/plain","data":`...)
		e.buf = jsonx.AppendString(e.buf, string(b))
	case p.Data != "":
		e.buf = append(e.buf, `{"type":"base64","media_type":`...)
		if err = e.str(p.MediaType); err == nil {
			e.buf = append(e.buf, `,"data":`...)
			err = e.str(p.Data)
		}
	case p.URL != "":
		e.buf = append(e.buf, `{"type":"url","url":`...)
		err = e.str(p.URL)
	case p.FileID != "":
		e.buf = append(e.buf, `{"type":"file","file_id":`...)
		err = e.str(p.FileID)
	case p.Type == convo.TypeFile:
		mt := p.MediaType
		if mt == "" {
			mt = "text/plain"
		}
		e.buf = append(e.buf, `{"type":"text","media_type":`...)
		if err = e.str(mt); err == nil {
			e.buf = append(e.buf, `,"data":`...)
			err = e.str(p.Text)
		}
	default:
		return fmt.Errorf("%s: %s part has no source", e.here(), p.Type)
	}
	if err != nil {
		return err
	}
	e.buf = append(e.buf, '}')
	if p.Type == convo.TypeFile && p.Name != "" {
		e.buf = append(e.buf, `,"title":`...)
		return e.str(p.Name)
	}
	return nil
}

// result writes a tool_result block up to its error flag.
func (e *encoder) result(p *convo.Part) error {
	e.buf = append(e.buf, `{"type":"tool_result","tool_use_id":`...)
	if err := e.str(p.ID); err != nil {
		return err
	}
	if len(p.Parts) == 1 && plainText(&p.Parts[0]) && nativeIs(p.Native, markString, "true") {
		e.buf = append(e.buf, `,"content":`...)
		if err := e.str(p.Parts[0].Text); err != nil {
			return err
		}
	} else if len(p.Parts) > 0 {
		e.buf = append(e.buf, `,"content":[`...)
		i, j := e.mi, e.pj
		n := 0
		for k := range p.Parts {
			q := &p.Parts[k]
			if c, _ := emits(q); c == 0 || q.Type == convo.TypeToolResult {
				e.warn(e.path(i, j, k), "%s left out of a tool result: Anthropic cannot take it there", q.Type)
				continue
			}
			if n > 0 {
				e.buf = append(e.buf, ',')
			}
			n++
			e.at(i, j, k)
			if err := e.block(q); err != nil {
				return err
			}
		}
		e.at(i, j, -1)
		e.buf = append(e.buf, ']')
	}
	if p.Error {
		e.buf = append(e.buf, `,"is_error":true`...)
	}
	return nil
}

// reasoning writes an Anthropic reasoning part back as the block it was:
// redacted_thinking when it holds redacted data, else thinking with its
// signature.
func (e *encoder) reasoning(p *convo.Part) error {
	if p.Cache != nil {
		e.warn(e.here(), "cache breakpoint on thinking not sent: Anthropic takes none there")
	}
	if p.Encrypted != "" {
		if p.Text != "" || p.Signature != "" {
			e.warn(e.here(), "text and signature of redacted thinking not sent: the block carries its data only")
		}
		e.buf = append(e.buf, `{"type":"redacted_thinking","data":`...)
		if err := e.str(p.Encrypted); err != nil {
			return err
		}
		return e.nativeAndClose(p, []string{"type", "data"})
	}
	if len(p.Summary) > 0 && p.Text == "" {
		e.warn(e.here(), "reasoning summary not sent: Anthropic thinking carries its text only")
	}
	e.buf = append(e.buf, `{"type":"thinking","thinking":`...)
	if err := e.str(p.Text); err != nil {
		return err
	}
	e.buf = append(e.buf, `,"signature":`...)
	if err := e.str(p.Signature); err != nil {
		return err
	}
	return e.nativeAndClose(p, []string{"type", "thinking", "signature"})
}

// str appends s as a JSON string; invalid UTF-8 is an error, never
// silently replaced.
func (e *encoder) str(s string) error {
	var ok bool
	e.buf, ok = jsonx.AppendStringChecked(e.buf, s)
	if !ok {
		return fmt.Errorf("%s: invalid UTF-8 in string", e.here())
	}
	return nil
}

// rawValue appends a JSON value, validated and compacted.
func (e *encoder) rawValue(v []byte) error {
	var err error
	if e.buf, err = wire.AppendValue(&e.raw, e.buf, v); err != nil {
		return fmt.Errorf("%s: invalid JSON: %w", e.here(), err)
	}
	return nil
}

// native appends the members of n's "anthropic" object, except markers and
// the keys already written (skip), to the object being written. It returns
// skip extended with the keys it wrote, so merged messages never repeat one.
func (e *encoder) native(n convo.Native, skip []string) ([]string, error) {
	obj := n[ProviderID]
	if len(obj) == 0 {
		return skip, nil
	}
	r := &e.raw
	r.Reset(obj, convo.DefaultLimits.MaxDepth)
	err := r.ReadObject(func(key []byte) error {
		k := string(key)
		if isMarker(k) || contains(skip, k) {
			return r.Skip()
		}
		skip = append(skip, k)
		e.buf = append(e.buf, ',')
		e.buf = jsonx.AppendString(e.buf, k)
		e.buf = append(e.buf, ':')
		var err error
		e.buf, err = r.AppendRaw(e.buf)
		return err
	})
	if err == nil {
		err = r.ExpectEnd()
	}
	if err != nil {
		return skip, fmt.Errorf("%s: native.%s: %w", e.here(), ProviderID, err)
	}
	return skip, nil
}

// messageNative appends the members of a wire message kept under
// native.anthropic.message. The other members of the native object are
// convo's markers or, for a reply, describe the response (stop_reason,
// usage, …): they are never sent.
func (e *encoder) messageNative(n convo.Native, skip []string) ([]string, error) {
	obj := n[ProviderID]
	if len(obj) == 0 {
		return skip, nil
	}
	var msg []byte
	r := jsonx.NewReader(obj, convo.DefaultLimits.MaxDepth)
	err := r.ReadObject(func(key []byte) error {
		if string(key) != "message" || r.Peek() != jsonx.Object {
			return r.Skip()
		}
		var err error
		msg, err = r.ReadRaw()
		return err
	})
	if err != nil {
		return skip, fmt.Errorf("%s: native.%s: %w", e.here(), ProviderID, err)
	}
	if msg == nil {
		return skip, nil
	}
	return e.native(convo.Native{ProviderID: msg}, skip)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// nativeIs reports whether n's "anthropic" object has member key with the
// JSON value val (compact).
func nativeIs(n convo.Native, key, val string) bool {
	obj := n[ProviderID]
	if len(obj) == 0 {
		return false
	}
	found := false
	r := jsonx.NewReader(obj, 0)
	err := r.ReadObject(func(k []byte) error {
		if string(k) != key {
			return r.Skip()
		}
		v, err := r.ReadRaw()
		found = string(v) == val
		return err
	})
	return err == nil && found
}

// textData reports whether data is base64 of UTF-8 text.
func textData(data string) bool {
	b, err := base64.StdEncoding.DecodeString(data)
	return err == nil && utf8.Valid(b)
}
