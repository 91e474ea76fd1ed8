package provider

import (
	"errors"
	"regexp"
	"strconv"

	"github.com/convo-go/convo"
)

// Denied is the text of the error result a denied tool call becomes for a
// target without tool approvals; the person's reason, if any, follows it.
const Denied = "the tool call was denied"

// approvals makes h ready for pairing tool calls when approval requests gate
// some of them — no wire format takes those, only requests that stand for
// a call themselves (OpenAI Responses MCP approvals): the tool results of calls approved in a user
// message move up to the results right after their assistant message (that
// user message follows them), and a denied call without a result gets an
// error result there. The approval parts themselves stay, for part to drop
// with a warning at their place. orig[i] is the index in h of message i of
// the result, -1 for a message made here; nil orig means h is unchanged.
func (p *preparer) approvals(h convo.History) (convo.History, []int) {
	p.answers, p.gated = nil, nil
	for i := range h {
		for j := range h[i].Parts {
			// By pointer: most histories have no approvals, and a copy of
			// every part to find that out costs more than the rest of the
			// look.
			q := &h[i].Parts[j]
			switch {
			case q.Raw != nil:
			case q.Type == convo.TypeApproval:
				if p.answers == nil {
					p.answers = map[string]convo.Part{}
				}
				p.answers[q.ID] = *q
			case q.Type == convo.TypeApprovalRequest && q.CallID != "":
				if p.gated == nil {
					p.gated = map[string]string{}
				}
				p.gated[q.ID] = q.CallID
			}
		}
	}
	if p.answers == nil || p.gated == nil {
		return h, nil
	}
	var out convo.History
	var orig []int
	keep := func(i int) {
		out = append(out, h[i])
		orig = append(orig, i)
	}
	changed := false
	for i := 0; i < len(h); i++ {
		keep(i)
		gates := gatesOf(h[i])
		if gates == nil {
			continue
		}
		j := i + 1
		for ; j < len(h) && h[j].Role == convo.RoleTool; j++ {
			keep(j)
		}
		if j == len(h) || h[j].Role != convo.RoleUser || !answersAny(h[j], gates) {
			i = j - 1
			continue
		}
		l := j + 1
		for l < len(h) && h[l].Role == convo.RoleTool {
			l++
		}
		var denied []convo.Part
		for _, g := range gates {
			a, ok := p.answers[g.ID]
			if ok && !a.Approved && !answered(h[i+1:l], g.CallID) {
				text := Denied
				if a.Reason != "" {
					text += ": " + a.Reason
				}
				denied = append(denied, convo.ToolError(g.CallID, g.Name, text))
			}
		}
		if denied != nil {
			out = append(out, convo.ToolResults(denied...))
			orig = append(orig, -1)
		}
		for k := j + 1; k < l; k++ {
			keep(k)
		}
		keep(j)
		changed = changed || denied != nil || l > j+1
		i = l - 1
	}
	if !changed {
		return h, nil
	}
	return out, orig
}

// gatesOf returns the approval requests of assistant message m that gate
// one of its tool calls.
func gatesOf(m convo.Message) []convo.Part {
	if m.Role != convo.RoleAssistant {
		return nil
	}
	var gs []convo.Part
	for _, q := range m.Parts {
		if q.Type == convo.TypeApprovalRequest && q.Raw == nil && q.CallID != "" {
			gs = append(gs, q)
		}
	}
	return gs
}

func answersAny(m convo.Message, gates []convo.Part) bool {
	for _, q := range m.Parts {
		for _, g := range gates {
			if q.Type == convo.TypeApproval && q.ID == g.ID {
				return true
			}
		}
	}
	return false
}

// answered reports whether a tool message of h answers call id.
func answered(h convo.History, id string) bool {
	for _, m := range h {
		if m.Role != convo.RoleTool {
			continue
		}
		for _, q := range m.Parts {
			if q.Type == convo.TypeToolResult && q.ID == id {
				return true
			}
		}
	}
	return false
}

// approvalPart reports whether an approval part goes to the target as it
// is: one that gates no call, for a target that takes approvals. Otherwise
// it is left out with a warning saying what became of it.
func (p *preparer) approvalPart(path loc, part convo.Part) bool {
	if p.t.Approvals && p.gated[part.ID] == "" {
		return true
	}
	a, ok := p.answers[part.ID]
	switch {
	case part.Type == convo.TypeApprovalRequest && !ok:
		p.warnc(CodeApprovalDropped, path, "approval request %q (%s) is pending: not sent", part.ID, part.Name)
	case part.Type == convo.TypeApprovalRequest:
		p.warnc(CodeApprovalDropped, path, "approval request %q (%s) left out: the target has no tool approvals", part.ID, part.Name)
	case !a.Approved && p.gated[part.ID] != "":
		p.warnc(CodeApprovalDropped, path, "denial of approval request %q left out: call %q is sent with an error result", part.ID, p.gated[part.ID])
	default:
		p.warnc(CodeApprovalDropped, path, "answer to approval request %q left out: the target has no tool approvals", part.ID)
	}
	return false
}

var msgIndex = regexp.MustCompile(`^messages\[(\d+)\]`)

// remap rewrites the message index at the start of each path, an index in
// the history approvals returned, to its index in the caller's history.
func remap(orig []int, warns []Warning, err error) error {
	fix := func(path string) string {
		m := msgIndex.FindStringSubmatchIndex(path)
		if m == nil {
			return path
		}
		n, _ := strconv.Atoi(path[m[2]:m[3]])
		if n >= len(orig) || orig[n] < 0 {
			return path
		}
		return msgPath(orig[n]) + path[m[1]:]
	}
	for i := range warns {
		warns[i].Path = fix(warns[i].Path)
	}
	var ue *UnpairedError
	if errors.As(err, &ue) {
		for i := range ue.Problems {
			ue.Problems[i].Path = fix(ue.Problems[i].Path)
		}
	}
	return err
}
