package convo

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// History is a conversation: messages in the order they happened. Like
// Message it is treated as a value: operations return new histories and
// never modify the one they are given.
type History []Message

// Problem is one thing wrong with a history, at a place such as
// messages[3].parts[1].
type Problem struct {
	Path string
	Msg  string
	// Unpaired marks a tool call left without a result in the middle of
	// the history, or a result that answers no call: a conversion repairs
	// it on request (provider.Options.Repair; --repair on the command
	// line) by inserting an error result or dropping the orphan.
	Unpaired bool
}

// String returns the problem with its place, naming Options.Repair as the
// fix of an unpaired call or result.
func (p Problem) String() string { return p.Explain("Options.Repair") }

// Explain returns the problem with its place and, for an unpaired call or
// result, names fix as what repairs it, as the caller knows it: "--repair"
// on a command line, "repair=true" in a query.
func (p Problem) Explain(fix string) string {
	s := p.Path + ": " + p.Msg
	if p.Unpaired && fix != "" {
		s += " (" + fix + " repairs it when converting)"
	}
	return s
}

// ValidationError lists every problem Validate found.
type ValidationError struct {
	Problems []Problem
}

func (e *ValidationError) Error() string { return e.Explain("Options.Repair") }

// Explain is Error naming fix as what repairs an unpaired tool call or
// result (see Problem.Explain).
func (e *ValidationError) Explain(fix string) string {
	if len(e.Problems) == 1 {
		return e.Problems[0].Explain(fix)
	}
	return fmt.Sprintf("%s (and %d more problems)", e.Problems[0].Explain(fix), len(e.Problems)-1)
}

// Validate checks h against the rules of format v1 and returns a
// *ValidationError listing every problem with its place, or nil:
//
//   - every message has a known role; ids are unique;
//   - tool_call parts only in assistant messages, tool_result parts only in
//     tool messages (and nothing else there);
//   - every tool call is answered exactly once by the tool messages that
//     directly follow its assistant message, and every result answers a
//     call; calls still unanswered when the history ends are pending (what
//     an agent holds between the model's reply and the tool run: see
//     Pending), which is valid;
//   - user, system and tool messages have parts; an assistant message has
//     parts unless it records an effort change or a finish reason (a reply
//     that produced nothing);
//   - meta is a JSON object;
//   - phase only on assistant, scope only on system, compacted (≥ 1) only on
//     summary, finish and phase among their known values;
//   - a media part has exactly one source, and inline data is valid base64;
//   - parts have the fields their type needs;
//   - approval_request parts only in assistant messages, approval parts only
//     in user messages; every approval answers, once, a request an earlier
//     assistant message made; request ids are unique; a request's call_id
//     names a tool_call of its own message. A call gated by a request may
//     have its result after the user message that answers the request
//     (approved: the result follows it; denied: the denial is its answer,
//     and an error result may still follow).
func (h History) Validate() error {
	var v Validator
	var problems []Problem
	for _, m := range h {
		problems = append(problems, v.Add(m)...)
	}
	if len(problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: problems}
}

// A Validator checks a history one message at a time by the rules of
// History.Validate, holding across messages only what those rules need:
// the ids seen and the calls still open. It validates a history read with
// a Decoder without holding the history. The zero Validator is ready.
type Validator struct {
	v       validator
	seenIDs map[string]int
	// open holds the calls of the assistant message before the tool
	// messages being read that are still unanswered; it is non-nil, if
	// empty, once all are answered, and nil when no such message precedes.
	open     []openCall
	requests map[string]*request // approval requests by id
	i        int                 // index of the next message
	// blind is set by Skip until the next message that is not a tool
	// message: results may answer calls of the message it could not see.
	blind bool
}

// Skip counts a message that could not be read (see Decoder.Resume)
// without checking it, so that the paths of later problems keep their
// place. What the unseen message may have settled is not reported: the
// calls open before it, and tool results right after it that answer no
// call it can see.
func (vr *Validator) Skip() {
	vr.i++
	vr.open = nil
	vr.blind = true
}

// Add checks the next message and returns the problems found with it, and
// with the calls of the assistant message before it that it leaves
// unanswered. Paths count messages from the first one added.
func (vr *Validator) Add(m Message) []Problem {
	vr.v.problems = nil
	v := &vr.v
	i := vr.i
	vr.i++
	if vr.seenIDs == nil {
		vr.seenIDs = map[string]int{}
	}
	mp := index("messages", i)
	vr.blind = vr.blind && m.Role == RoleTool // a message seen ends Skip's leniency

	var kept []openCall // calls whose approval request this message answers stay open past it
	if m.Role == RoleUser && vr.open != nil {
		kept = answered(vr.open, m)
	}
	if m.Role != RoleTool && vr.open != nil {
		for _, c := range vr.open {
			if !c.optional && !slices.ContainsFunc(kept, func(k openCall) bool { return k.id == c.id }) {
				v.unpaired(c.path, "tool call %q (%s) has no result before messages[%d]", c.id, c.name, i)
			}
		}
		vr.open = kept
	}
	if !m.Role.Known() {
		v.addf(mp, "unknown role %q", m.Role)
	}
	if m.ID != "" {
		if j, dup := vr.seenIDs[m.ID]; dup {
			v.addf(mp, "id %q is already used by messages[%d]", m.ID, j)
		} else {
			vr.seenIDs[m.ID] = i
		}
	}
	v.messageFields(mp, m)
	for j := range m.Parts {
		p := &m.Parts[j]
		pp := partPath(mp, j)
		v.part(pp, p, false)
		v.placed(pp, p, m, j)
		vr.approval(pp, p, m)
		if m.Role == RoleAssistant && p.Type == TypeToolCall && p.Server == "" {
			vr.open = append(vr.open, openCall{id: p.ID, name: p.Name, path: pp, gate: gate(m, p.ID)})
		}
	}
	if m.Role == RoleTool {
		for j, p := range m.Parts {
			if p.Type != TypeToolResult || p.Server != "" {
				continue
			}
			k := -1
			for n, c := range vr.open {
				if c.id == p.ID {
					k = n
					break
				}
			}
			if k < 0 && vr.blind && p.ID != "" {
				continue
			}
			if k < 0 {
				pp := partPath(mp, j)
				if vr.open != nil || p.ID == "" {
					v.unpaired(pp, "tool result %q answers no open call", p.ID)
				} else {
					v.unpaired(pp, "tool result %q answers no call of the preceding assistant message", p.ID)
				}
				continue
			}
			vr.open = append(vr.open[:k], vr.open[k+1:]...)
		}
	}
	// Calls still open at the end are pending: the history ends before
	// their results, as it does while an agent runs its tools.
	return v.problems
}

// partPath is the path of part j of the message or part at path: one
// string made, where path + "." + index("parts", j) made two. A history
// is validated before it is stored, for every exchange a gateway records.
func partPath(path string, j int) string { return path + ".parts[" + strconv.Itoa(j) + "]" }

// placed checks that part p, the j-th of message m, is in a message of
// the right role, and that a provider-run result follows its call.
func (v *validator) placed(pp string, p *Part, m Message, j int) {
	switch {
	case p.Type == TypeToolCall && m.Role != RoleAssistant:
		v.addf(pp, "tool_call in a %s message (only assistant messages call tools)", m.Role)
	case p.Type == TypeToolResult && p.Server != "" && m.Role != RoleAssistant:
		v.addf(pp, "provider-run tool_result in a %s message (it belongs in the assistant message that made the call)", m.Role)
	case p.Type == TypeToolResult && p.Server == "" && m.Role != RoleTool:
		v.addf(pp, "tool_result in a %s message (results belong in tool messages)", m.Role)
	case p.Type != TypeToolResult && m.Role == RoleTool:
		v.addf(pp, "%s part in a tool message (tool messages hold only tool_result parts)", p.Type)
	case p.Type == TypeApprovalRequest && m.Role != RoleAssistant:
		v.addf(pp, "approval_request in a %s message (only assistant messages ask for approval)", m.Role)
	case p.Type == TypeApproval && m.Role != RoleUser:
		v.addf(pp, "approval in a %s message (a person answers in a user message)", m.Role)
	case p.Type == TypeToolResult && p.Server != "" && p.ID != "" && !slices.ContainsFunc(m.Parts[:j], func(q Part) bool {
		return q.Type == TypeToolCall && q.Server != "" && q.ID == p.ID
	}):
		v.addf(pp, "provider-run tool result %q answers no provider-run call before it in its message", p.ID)
	}
	if p.Server != "" && p.Type != TypeToolCall && p.Type != TypeToolResult {
		v.addf(pp, "server on a %s part (only tool calls and results are run by a provider)", p.Type)
	}
}

// Pending returns the tool calls of h still waiting for their results: the
// calls of the last assistant message that the tool messages after it (and
// nothing else follows it) do not answer. An agent holds such a history
// between the model's reply and the tool run; it is valid, and a request
// that ends on it is refused by some providers (provider.Prepare warns).
func (h History) Pending() []Part {
	k := len(h) - 1
	for k >= 0 && h[k].Role == RoleTool {
		k--
	}
	if k < 0 || h[k].Role != RoleAssistant {
		return nil
	}
	var open []Part
	for _, p := range h[k].Parts {
		if p.Type == TypeToolCall && p.Server == "" {
			open = append(open, p)
		}
	}
	for _, m := range h[k+1:] {
		for _, p := range m.Parts {
			if p.Type != TypeToolResult {
				continue
			}
			for j, c := range open {
				if c.ID == p.ID {
					open = append(open[:j], open[j+1:]...)
					break
				}
			}
		}
	}
	return open
}

type openCall struct {
	id, name, path string
	gate           string // the approval request that gates the call, if any
	optional       bool   // denied: the denial answers it, a result may still follow
}

// request is an approval request seen by Validate.
type request struct {
	path     string
	answered bool
}

// gate returns the id of the approval request of m that gates call id.
func gate(m Message, id string) string {
	for _, p := range m.Parts {
		if p.Type == TypeApprovalRequest && p.CallID != "" && p.CallID == id {
			return p.ID
		}
	}
	return ""
}

// answered returns the open calls whose approval request user message m
// answers: approved, the call's result follows m; denied, the denial is its
// answer (optional marks it) and an error result may still follow.
func answered(open []openCall, m Message) []openCall {
	var kept []openCall
	for _, c := range open {
		if c.gate == "" {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == TypeApproval && p.ID == c.gate {
				c.optional = !p.Approved
				kept = append(kept, c)
				break
			}
		}
	}
	return kept
}

// approval checks an approval_request or approval part p of message m
// against the requests seen so far.
func (vr *Validator) approval(pp string, p *Part, m Message) {
	v := &vr.v
	switch p.Type {
	case TypeApprovalRequest:
		if p.ID == "" {
			return // reported by part
		}
		if r, dup := vr.requests[p.ID]; dup {
			v.addf(pp, "approval request id %q is already used at %s", p.ID, r.path)
			return
		}
		if vr.requests == nil {
			vr.requests = map[string]*request{} // made for the first: most histories have none
		}
		vr.requests[p.ID] = &request{path: pp}
		if p.CallID != "" && !slices.ContainsFunc(m.Parts, func(q Part) bool { return q.Type == TypeToolCall && q.ID == p.CallID }) {
			v.addf(pp, "approval request gates call %q, which is not in its message", p.CallID)
		}
	case TypeApproval:
		if p.ID == "" {
			return
		}
		r := vr.requests[p.ID]
		switch {
		case r == nil:
			v.addf(pp, "approval answers request %q, which no earlier assistant message made", p.ID)
		case r.answered:
			v.addf(pp, "approval request %q (%s) is already answered", p.ID, r.path)
		default:
			r.answered = true
		}
	}
}

type validator struct {
	problems []Problem
}

func (v *validator) addf(path, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (v *validator) unpaired(path, format string, args ...any) {
	v.problems = append(v.problems, Problem{Path: path, Msg: fmt.Sprintf(format, args...), Unpaired: true})
}

func (v *validator) messageFields(mp string, m Message) {
	if len(m.Meta) > 0 && !isObject(m.Meta) {
		v.addf(mp+".meta", "meta must be a JSON object")
	}
	if m.Phase != "" {
		if m.Role != RoleAssistant {
			v.addf(mp, "phase on a %s message (only assistant messages have a phase)", m.Role)
		} else if m.Phase != PhaseCommentary && m.Phase != PhaseFinal {
			v.addf(mp+".phase", "unknown phase %q (want commentary or final)", m.Phase)
		}
	}
	if m.Scope != "" {
		if m.Role != RoleSystem {
			v.addf(mp, "scope on a %s message (only system messages have a scope)", m.Role)
		} else if m.Scope != ScopeTurn {
			v.addf(mp+".scope", "unknown scope %q (want turn)", m.Scope)
		}
	}
	if m.Compacted != 0 && m.Role != RoleSummary {
		v.addf(mp, "compacted on a %s message (only summary messages replace others)", m.Role)
	}
	if m.Compacted < 0 {
		v.addf(mp+".compacted", "compacted must be at least 1, got %d", m.Compacted)
	}
	if m.Finish != "" && !m.Finish.Known() {
		v.addf(mp+".finish", "unknown finish reason %q", m.Finish)
	}
	if m.Usage != nil {
		u := m.Usage
		if u.Input < 0 || u.Output < 0 || u.CacheRead < 0 || u.CacheWrite < 0 || u.Reasoning < 0 || u.Total < 0 {
			v.addf(mp+".usage", "negative token count")
		}
	}
	if m.Cost != nil && m.Cost.USD < 0 {
		v.addf(mp+".cost.usd", "negative cost %s", m.Cost.USD)
	}
	if len(m.Parts) == 0 {
		switch m.Role {
		case RoleUser, RoleSystem, RoleTool:
			v.addf(mp, "%s message has no parts%s", m.Role, foreignHint(m))
		case RoleAssistant:
			if m.Effort == "" && m.Finish == "" {
				v.addf(mp, "assistant message has no parts (only an effort change or a reply that produced nothing, with its finish reason, may have none)%s", foreignHint(m))
			}
		}
	}
}

func (v *validator) part(pp string, p *Part, inResult bool) {
	if p.Raw != nil {
		return // unknown type: kept, not judged
	}
	if len(p.Citations) > 0 {
		if p.Type != TypeText {
			v.addf(pp, "citations on a %s part (only text parts have citations)", p.Type)
		} else {
			v.citations(pp, p.Citations)
		}
	}
	switch p.Type {
	case "":
		v.addf(pp, "part has no type%s", partHint(p))
	case TypeText, TypeRefusal:
	case TypeImage, TypeAudio, TypeVideo, TypeFile:
		v.media(pp, p)
	case TypeJSON:
		if p.Value == nil {
			v.addf(pp, "json part has no value")
		}
	case TypeToolCall, TypeApprovalRequest:
		// An approval request names its call as a tool call does.
		noun := "tool call"
		if p.Type == TypeApprovalRequest {
			noun = "approval request"
		}
		if inResult {
			v.addf(pp, "%s inside a tool result", p.Type)
		}
		if p.ID == "" && p.Server == "" {
			v.addf(pp, "%s has no id", noun) // a provider that runs its tools may give none
		}
		if p.Name == "" {
			v.addf(pp, "%s has no name", noun)
		}
		if p.Args != nil && p.ArgsRaw != "" {
			v.addf(pp, "%s has both args and args_raw", noun)
		}
	case TypeToolResult:
		if inResult {
			v.addf(pp, "tool_result inside a tool result")
		}
		if p.ID == "" && p.Server == "" {
			v.addf(pp, "tool result has no id")
		}
		for j := range p.Parts {
			q := &p.Parts[j]
			qp := partPath(pp, j)
			switch q.Type {
			case TypeText, TypeJSON, TypeImage, TypeAudio, TypeVideo, TypeFile:
			default:
				if q.Raw == nil {
					v.addf(qp, "%s part inside a tool result (want text, json or media)", q.Type)
				}
			}
			v.part(qp, q, true)
		}
	case TypeReasoning:
		if inResult {
			v.addf(pp, "reasoning inside a tool result")
		}
		if p.Text == "" && p.Summary == nil && p.Signature == "" && p.Encrypted == "" && p.ID == "" {
			v.addf(pp, "reasoning part is empty")
		}
	case TypeApproval:
		if inResult {
			v.addf(pp, "approval inside a tool result")
		}
		if p.ID == "" {
			v.addf(pp, "approval has no id (of the request it answers)")
		}
	default:
		v.addf(pp, "unknown part type %q without its raw object", p.Type)
	}
}

func (v *validator) media(pp string, p *Part) {
	n := 0
	for _, s := range []string{p.Data, p.URL, p.FileID} {
		if s != "" {
			n++
		}
	}
	if p.Text != "" {
		if p.Type != TypeFile {
			v.addf(pp, "%s part with a text source (only files may be inline text)", p.Type)
		}
		n++
	}
	if n != 1 {
		v.addf(pp, "%s part has %d sources (want exactly one of data, url, file_id%s)", p.Type, n,
			map[bool]string{true: ", text", false: ""}[p.Type == TypeFile])
	}
	if p.Data != "" {
		if i := badBase64(p.Data); i >= 0 {
			v.addf(pp+".data", "malformed base64 at offset %d", i)
		}
		if p.MediaType == "" {
			v.addf(pp, "inline %s data has no media_type", p.Type)
		}
	}
	if p.Detail != "" && p.Type != TypeImage {
		v.addf(pp, "detail on a %s part (only images have a detail level)", p.Type)
	}
}

// Leading returns how many system messages open h.
func (h History) Leading() int {
	n := 0
	for n < len(h) && h[n].Role == RoleSystem {
		n++
	}
	return n
}

// ErrSplitsToolCall is returned (wrapped) by Compact when the cut would
// separate a tool call from its results.
var ErrSplitsToolCall = errors.New("the cut separates a tool call from its results")

// Compact returns a history in which the first n messages after the leading
// system messages are replaced by one summary message with the given text
// and Compacted n. It refuses (with ErrSplitsToolCall) a cut that would leave
// a tool call or result on one side and its partner on the other. h itself is
// not changed.
func (h History) Compact(n int, summary string) (History, error) {
	lead := h.Leading()
	if n < 1 || lead+n > len(h) {
		return nil, fmt.Errorf("compact %d messages: history has %d after its %d leading system messages", n, len(h)-lead, lead)
	}
	if !h.CanCut(lead + n) {
		return nil, fmt.Errorf("compact %d messages: %w at messages[%d]", n, ErrSplitsToolCall, lead+n)
	}
	out := make(History, 0, len(h)-n+1)
	out = append(out, h[:lead]...)
	out = append(out, Summary(summary, n))
	return append(out, h[lead+n:]...), nil
}

// CanCut reports whether h can be divided before message i without
// separating tool calls from their results: no call before i is answered at
// or after i.
func (h History) CanCut(i int) bool {
	if i <= 0 || i >= len(h) {
		return true
	}
	if h[i].Role != RoleTool {
		return true
	}
	// A tool message at the cut answers calls made before it.
	return !h[i].has(TypeToolResult)
}

// Curated returns the history as it should be sent to a model: without error
// messages and without turn-scoped system messages whose turn has ended (the
// assistant gave its final answer after them). The full history, h itself,
// keeps everything.
func (h History) Curated() History {
	drop := h.Expired()
	n := 0
	for i := range h {
		if drop[i] || h[i].Role == RoleError {
			n++
		}
	}
	if n == 0 {
		return h
	}
	out := make(History, 0, len(h)-n)
	for i := range h {
		if !drop[i] && h[i].Role != RoleError {
			out = append(out, h[i])
		}
	}
	return out
}

// Expired reports, for each message of h, whether it is a turn-scoped system
// message whose turn has ended: an assistant final answer follows it.
func (h History) Expired() []bool {
	drop := make([]bool, len(h))
	final := -1 // index of the nearest final answer after i
	for i := len(h) - 1; i >= 0; i-- {
		switch {
		case h[i].IsFinalAnswer():
			final = i
		case h[i].IsTurnScoped() && final > i:
			drop[i] = true
		}
	}
	return drop
}
