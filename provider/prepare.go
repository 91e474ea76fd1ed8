package provider

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/convo-go/convo"
)

// Target describes what a wire format can carry, for the rules Prepare
// applies on its behalf.
type Target struct {
	// Provider is the target's provider id. Reasoning parts from this
	// provider are kept whole; others are not.
	Provider string
	// PlainReasoning means the target takes reasoning text without
	// signatures (Ollama "thinking", LiteRT "thought"), so unsigned
	// reasoning from any provider is kept.
	PlainReasoning bool
	// MidSystem means the target takes system messages anywhere in the
	// conversation. Without it, a system message after the first non-system
	// message becomes user text, with a warning.
	MidSystem bool
	// Media reports whether the target takes p (a media part) as it is;
	// inResult tells whether p is inside a tool result. Nil means it takes
	// every media part.
	Media func(p convo.Part, inResult bool) bool
	// Pending is the provider's rule when it refuses a request that ends
	// on tool calls without results (what an agent holds before running
	// its tools), e.g. "Anthropic requires a tool_result for every
	// tool_use"; Prepare keeps such calls and warns with it. Empty when
	// the target takes such a request.
	Pending string
	// Prefill is the provider's rule when it refuses a request that ends
	// on an assistant message (a prefill) whose last text ends in white
	// space; Prepare trims that white space with a warning naming it.
	// Signed reasoning is never touched. Empty when the target takes it.
	Prefill string
	// Approvals means the target takes approval_request parts that stand
	// for a call themselves (no call_id) and their answers (OpenAI Responses
	// MCP approvals). Requests that gate a tool_call go to no target: a
	// denied call gets an error result saying so, the results of approved
	// calls go right after their assistant message, and the approvals are
	// left out with a warning; a pending request is never sent.
	Approvals bool
	// Blank is the provider's rule when it refuses text of white space
	// only (Bedrock); Prepare leaves such text out with a warning naming it
	// (CodeTextTrimmed), before the Prefill rule looks at what ends the
	// conversation. Text with citations or the target's own native members
	// is the codec's to judge. Empty when the target takes it.
	Blank string
	// ServerTools means the wire format carries the calls and results of
	// tools its provider ran itself (Anthropic server_tool_use, OpenAI
	// Responses web_search_call, …): those of Provider are kept whole.
	// Other provider-run tool parts are dropped or sent as text
	// (Options.ServerTools).
	ServerTools bool
	// ID sanitises a tool-call id for targets that restrict its characters;
	// nil leaves ids alone. It must be deterministic.
	ID func(id string) string
}

// Prepare applies the conversion rules shared by every codec to h and returns
// the history the codec should map, with warnings:
//
//   - error messages are left out (with a warning), and so are turn-scoped
//     system messages whose turn is over and assistant messages that only
//     record an effort change (Effort without parts: no wire carries it);
//   - summary messages become user messages;
//   - a system message after the conversation started becomes user text
//     unless the target takes system messages anywhere;
//   - tool results are paired with their calls (by id, else by name and
//     order); unpaired ones are an error naming both places (a
//     *convo.ValidationError whose problems are marked Unpaired), or, with
//     Repair, are fixed with a warning. Calls still without results when
//     the history ends are pending, not unpaired: they are kept, with a
//     warning naming the rule of a target that refuses them (Target.Pending);
//   - reasoning the target cannot take is dropped, or sent as text when the
//     options ask for it;
//   - the calls and results of tools a provider ran itself go back only to
//     that provider (Target.ServerTools); elsewhere they are dropped, or
//     sent as text when the options ask for it;
//   - media the target cannot take is offered to Options.Resolve, then
//     becomes an error or a text placeholder;
//   - parts of unknown type are left out with a warning;
//   - approval parts go only to a target that takes them (Target.Approvals);
//     elsewhere a denied call gets an error result (Denied and the reason),
//     and the approvals are left out with a warning;
//   - tool ids are synthesised where missing and sanitised for the target.
//
// h is not modified. Warning paths name places in h.
func Prepare(h convo.History, t Target, opts Options) (convo.History, []Warning, error) {
	out, _, warns, err := PrepareIndexed(h, t, opts)
	return out, warns, err
}

// PrepareIndexed is Prepare that also says where each prepared message came
// from: from[i] is the index in h of out[i], or -1 for a message Prepare
// inserted (an error result made by Repair). Codecs use it to name places in
// the caller's history in their own warnings.
func PrepareIndexed(h convo.History, t Target, opts Options) (out convo.History, from []int, warns []Warning, err error) {
	p := preparer{t: t, opts: opts}
	out, from, err = p.run(h)
	if err != nil {
		return nil, nil, p.warns, err
	}
	return out, from, p.warns, opts.Check(p.warns)
}

type preparer struct {
	h convo.History // the caller's history, to name places in it
	t Target
	// answers are the approval parts of h by request id, gated the calls
	// gated by approval requests (request id to call id).
	answers map[string]convo.Part
	gated   map[string]string
	opts    Options
	warns   []Warning
}

// loc is a place in the history, turned into a path string only when a
// warning or an error needs one: most conversions need none.
type loc struct {
	msg   int
	parts [maxNesting]int
	depth int
}

const maxNesting = 6

func at(msg int) loc { return loc{msg: msg} }

func (l loc) part(j int) loc {
	if l.depth < maxNesting {
		l.parts[l.depth] = j
		l.depth++
	}
	return l
}

func (l loc) String() string {
	s := msgPath(l.msg)
	for _, j := range l.parts[:l.depth] {
		s += ".parts[" + strconv.Itoa(j) + "]"
	}
	return s
}

// warnc adds a warning with its code.
func (p *preparer) warnc(code Code, l loc, format string, args ...any) {
	p.warns = append(p.warns, WarnCode(code, l.String(), format, args...))
}

func msgPath(i int) string { return "messages[" + strconv.Itoa(i) + "]" }

func (p *preparer) run(h convo.History) (convo.History, []int, error) {
	p.h = h
	paired, orig, err := p.pairAll(h)
	if err != nil {
		return nil, nil, err
	}
	b := rebuild{paired: paired, orig: orig, expired: paired.Expired()}
	for i := range paired {
		if err := p.lower(&b, i); err != nil {
			return nil, nil, err
		}
	}
	out, from := b.out, b.from
	if out == nil {
		out, from = paired, orig
	}
	if p.t.Prefill != "" {
		out, from = p.trimPrefill(out, from)
	}
	return out, from, nil
}

// pairAll moves approvals next to what they answer and pairs calls with
// results; orig maps the paired messages to h's, and places in warnings
// and errors are named in h.
func (p *preparer) pairAll(h convo.History) (paired convo.History, orig []int, err error) {
	src, moved := p.approvals(h)
	w0 := len(p.warns)
	paired, orig, err = p.pair(src)
	if moved != nil {
		// Places are named in the caller's history.
		err = remap(moved, p.warns[w0:], err)
		for k, o := range orig {
			if o >= 0 {
				orig[k] = moved[o]
			}
		}
	}
	return paired, orig, err
}

// rebuild is the history being made from the paired one. out stays nil
// while it would equal paired[:i]: a history with nothing to change is
// returned as it is, without a copy.
type rebuild struct {
	paired  convo.History
	orig    []int
	expired []bool
	out     convo.History
	from    []int
	started bool // a message other than a system one was sent
}

// diverge starts out, when not yet started, with the messages before i.
func (b *rebuild) diverge(i int) {
	if b.out == nil {
		b.out = append(make(convo.History, 0, len(b.paired)), b.paired[:i]...)
		b.from = append(make([]int, 0, len(b.paired)), b.orig[:i]...)
	}
}

// add appends m, made from paired message i.
func (b *rebuild) add(m convo.Message, i int) {
	b.out = append(b.out, m)
	b.from = append(b.from, b.orig[i])
}

// lower makes paired message i ready for the target: left out (an error,
// an expired turn, nothing sendable), sent in another role, with its parts
// converted, or kept as it is.
func (p *preparer) lower(b *rebuild, i int) error {
	src := &b.paired[i]
	l := at(b.orig[i])
	if b.expired[i] || src.IsError() {
		if src.IsError() {
			p.warnc(CodeMessageDropped, l, "error message left out: %q", clip(src.Text()))
		} // an expired turn-scoped message is left out by design, not lost
		b.diverge(i)
		return nil
	}
	if src.Role == convo.RoleAssistant && len(src.Parts) == 0 && src.Effort != "" {
		// It only records a change of reasoning effort, which no wire
		// carries per message and which is never conversation text:
		// left out for every target alike, by design (no empty turn, no
		// warning).
		b.diverge(i)
		return nil
	}
	role, scope := src.Role, src.Scope
	switch role {
	case convo.RoleSummary:
		role = convo.RoleUser
	case convo.RoleSystem:
		if b.started && !p.t.MidSystem {
			p.warnc(CodeSystemAsUser, l, "system message after the conversation started sent as user text")
			role, scope = convo.RoleUser, ""
		}
	}
	if role != convo.RoleSystem {
		b.started = true
	}
	parts, err := p.parts(l, src.Parts, false)
	if err != nil {
		return err
	}
	if len(parts) == 0 && (role != convo.RoleAssistant || onlyAside(src.Parts)) {
		p.warnc(CodeMessageDropped, l, "%s message left out: nothing in it can be sent", src.Role)
		b.diverge(i)
		return nil
	}
	sameParts := len(parts) == len(src.Parts) && (len(parts) == 0 || &parts[0] == &src.Parts[0])
	if role != src.Role || !sameParts {
		b.diverge(i)
		m := *src
		m.Role, m.Scope, m.Parts = role, scope, parts
		if src.Role == convo.RoleSummary {
			m.Compacted = 0 // it is sent as user text now
		}
		b.add(m, i)
		return nil
	}
	if b.out != nil {
		b.add(*src, i)
	}
	return nil
}

// trimPrefill trims the trailing white space of the last part of a final
// assistant message when it is text, for targets that refuse it; a part
// left empty goes (and the text before it is trimmed in turn), and so does
// a message left empty (and the message before it is trimmed in turn). Reasoning that carries nothing (no text, summary,
// signature or payload) is sent as nothing, so it shields no text; other
// reasoning, signed or not, is never touched. h is copied, never changed
// in place.
func (p *preparer) trimPrefill(h convo.History, from []int) (convo.History, []int) {
	n := len(h) - 1
	for n >= 0 && h[n].Role == convo.RoleAssistant && !slices.ContainsFunc(h[n].Parts, sends) {
		n-- // an assistant message that sends nothing: the one before is the last
	}
	if n < 0 || h[n].Role != convo.RoleAssistant {
		return h, from
	}
	m := h[n]
	changed := false
	for {
		k := len(m.Parts) - 1
		for k >= 0 && emptyReasoning(m.Parts[k]) {
			k--
		}
		if k < 0 {
			break
		}
		last := m.Parts[k]
		if last.Type != convo.TypeText && last.Type != convo.TypeRefusal { // a refusal goes as text
			break // reasoning (signed or not), calls and media stay as they are
		}
		trimmed := strings.TrimRightFunc(last.Text, unicode.IsSpace)
		if trimmed == last.Text && trimmed != "" {
			break // an empty text goes too: it would leave the text before it last
		}
		l := at(from[n])
		if from[n] >= 0 && len(p.h[from[n]].Parts) == len(m.Parts) {
			l = l.part(k) // Prepare dropped nothing before it: the part is where the caller had it
		}
		if !changed {
			m.Parts = slices.Clone(m.Parts)
			changed = true
		}
		if trimmed != "" {
			m.Parts[k].Text = trimmed
			p.warnc(CodeTextTrimmed, l, "trailing white space of the final assistant message trimmed: %s", p.t.Prefill)
			break
		}
		m.Parts = slices.Delete(m.Parts, k, k+1)
		p.warnc(CodeTextTrimmed, l, "white space at the end of the final assistant message left out: %s", p.t.Prefill)
	}
	if !changed {
		return h, from
	}
	h = slices.Clone(h)
	if len(m.Parts) == 0 {
		// The message before is now the final one, and may end in white
		// space of its own.
		return p.trimPrefill(slices.Delete(h, n, n+1), slices.Delete(slices.Clone(from), n, n+1))
	}
	h[n] = m
	return h, from
}

// emptyReasoning reports whether p is a reasoning part that carries
// nothing a request could send.
func emptyReasoning(p convo.Part) bool {
	return p.Type == convo.TypeReasoning && p.Text == "" && len(p.Summary) == 0 && p.Signature == "" && p.Encrypted == ""
}

// sends reports whether p puts anything in a request.
func sends(p convo.Part) bool { return !emptyReasoning(p) }

func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// parts rewrites the parts at l; it returns the same slice when nothing
// changes.
func (p *preparer) parts(l loc, ps []convo.Part, inResult bool) ([]convo.Part, error) {
	var out []convo.Part // nil until something changes
	for j := range ps {
		if p.plain(&ps[j]) {
			if out != nil {
				out = append(out, ps[j])
			}
			continue
		}
		np, keep, err := p.part(l.part(j), ps[j], inResult)
		if err != nil {
			return nil, err
		}
		changed := !keep || !samePart(np, ps[j])
		if changed && out == nil {
			out = make([]convo.Part, j, len(ps))
			copy(out, ps[:j])
		}
		if out != nil && keep {
			out = append(out, np)
		}
	}
	if out == nil {
		return ps, nil
	}
	return out, nil
}

// plain reports whether part would keep q as it is, without a warning:
// text and the other types its switch has no case for, and tool calls and
// results when the target keeps ids and a result's parts are plain. parts skips
// the call for them, as copying every part in and out of it (a Part is
// half a kilobyte) cost more than the rest of the look at a long history.
func (p *preparer) plain(q *convo.Part) bool {
	if q.Raw != nil || !q.Type.Known() || q.Server != "" || q.Type.IsMedia() || p.blank(q) {
		return false
	}
	switch q.Type {
	case convo.TypeApprovalRequest, convo.TypeApproval, convo.TypeReasoning:
		return false
	case convo.TypeToolCall:
		return p.t.ID == nil
	case convo.TypeToolResult:
		if p.t.ID != nil {
			return false
		}
		for k := range q.Parts {
			if !p.plain(&q.Parts[k]) {
				return false
			}
		}
	}
	return true
}

// samePart is a cheap identity check for the parts rewrite: Prepare only
// ever replaces a part wholesale or changes these fields.
func samePart(a, b convo.Part) bool {
	return a.Type == b.Type && a.ID == b.ID && a.Text == b.Text && a.Signature == b.Signature &&
		a.Encrypted == b.Encrypted && a.Data == b.Data && a.URL == b.URL && a.FileID == b.FileID &&
		len(a.Parts) == len(b.Parts) && (len(a.Parts) == 0 || &a.Parts[0] == &b.Parts[0])
}

// blank reports whether q is text the target refuses as white space only
// (Target.Blank).
func (p *preparer) blank(q *convo.Part) bool {
	return p.t.Blank != "" && (q.Type == convo.TypeText || q.Type == convo.TypeRefusal) && q.Raw == nil &&
		len(q.Citations) == 0 && q.Native[p.t.Provider] == nil && strings.TrimSpace(q.Text) == ""
}

func (p *preparer) part(path loc, part convo.Part, inResult bool) (convo.Part, bool, error) {
	switch {
	case p.blank(&part):
		p.warnc(CodeTextTrimmed, path, "blank text left out: %s", p.t.Blank)
		return part, false, nil
	case part.Raw != nil || !part.Type.Known():
		if _, ok := OpaqueBlock(p.t.Provider, part); ok {
			return part, true, nil // the target's own block: its codec sends it back
		}
		p.warnc(CodePartDropped, path, "part of unknown type %q left out", part.Type)
		return part, false, nil
	case part.Type == convo.TypeApprovalRequest || part.Type == convo.TypeApproval:
		return part, p.approvalPart(path, part), nil
	case part.IsServerTool():
		return p.serverTool(path, part)
	case part.Type == convo.TypeReasoning:
		return p.reasoning(path, part)
	case part.Type.IsMedia():
		return p.media(path, part, inResult)
	case part.Type == convo.TypeToolCall || part.Type == convo.TypeToolResult:
		if p.t.ID != nil {
			part.ID = p.t.ID(part.ID)
		}
		if part.Type == convo.TypeToolResult && len(part.Parts) > 0 {
			sub, err := p.parts(path, part.Parts, true)
			if err != nil {
				return part, false, err
			}
			part.Parts = sub
		}
	}
	return part, true, nil
}

func (p *preparer) reasoning(path loc, part convo.Part) (convo.Part, bool, error) {
	if part.Provider != "" && part.Provider == p.t.Provider {
		return part, true, nil
	}
	signed := part.Signature != "" || part.Encrypted != ""
	text := part.Text
	if text == "" && len(part.Summary) > 0 {
		text = strings.Join(part.Summary, "\n")
	}
	from := part.Provider
	if from == "" {
		from = "an unnamed provider"
	}
	switch {
	case p.opts.Reasoning == ReasoningText && text != "":
		p.warnc(CodeReasoningAsText, path, "reasoning from %s sent as text", from)
		return convo.Text(text), true, nil
	case p.t.PlainReasoning && text != "":
		// Plain text is what the target takes: keep it, minus anything
		// bound to another provider.
		if signed {
			p.warnc(CodeSignatureDropped, path, "signature of reasoning from %s dropped; its text is sent as plain reasoning", from)
		}
		return convo.Part{Type: convo.TypeReasoning, Text: text}, true, nil
	case signed:
		p.warnc(CodeReasoningDropped, path, "signed or encrypted reasoning from %s dropped: only %s can read it", from, from)
	default:
		p.warnc(CodeReasoningDropped, path, "reasoning from %s dropped: the target takes no unsigned reasoning", from)
	}
	return part, false, nil
}

func (p *preparer) media(path loc, part convo.Part, inResult bool) (convo.Part, bool, error) {
	if p.t.Media == nil || p.t.Media(part, inResult) {
		return part, true, nil
	}
	if p.opts.Resolve != nil {
		r, err := p.opts.Resolve(part)
		if err != nil {
			return part, false, fmt.Errorf("%s: resolving %s: %w", path, part.Type, err)
		}
		if p.t.Media(r, inResult) {
			return r, true, nil
		}
	}
	desc := describe(part)
	if p.opts.Media != MediaPlaceholder {
		return part, false, fmt.Errorf("%s: the target cannot take %s (use a resolver, or placeholders)", path, desc)
	}
	p.warnc(CodeMediaReplaced, path, "%s replaced by a text placeholder: the target cannot take it", desc)
	return convo.Text("[" + desc + " omitted]"), true, nil
}

// describe names a media part for warnings and placeholders.
func describe(p convo.Part) string {
	src := "inline data"
	switch {
	case p.URL != "":
		src = "URL " + p.URL
	case p.FileID != "":
		src = "file id " + p.FileID
	case p.Text != "":
		src = "inline text"
	}
	kind := string(p.Type)
	if p.MediaType != "" {
		kind += " (" + p.MediaType + ")"
	}
	if p.Name != "" {
		kind += " " + strconv.Quote(p.Name)
	}
	return kind + " by " + src
}

// SplitSystem returns the leading system messages of h and the rest.
func SplitSystem(h convo.History) (system, rest convo.History) {
	n := h.Leading()
	return h[:n], h[n:]
}
