package provider

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/convo-go/convo"
)

// NotRun is the text of the error result Repair inserts for a tool call that
// has no result.
const NotRun = "the tool was not run"

// UnpairedError is returned (wrapped) by Prepare, and so by every codec's
// Encode, for tool calls left without results in the middle of a history
// and results that answer no call, when Options.Repair is off. Calls still
// waiting for their results at the end of the history are pending, not
// unpaired (see convo.History.Pending).
type UnpairedError struct {
	Problems []convo.Problem // each marked Unpaired, with its place
}

// Error lists every problem and names Options.Repair as the fix.
func (e *UnpairedError) Error() string { return e.Explain("Options.Repair") }

// Explain lists every problem and names fix as what repairs them, as the
// caller knows it: "--repair" on a command line, "repair=true" in a query.
func (e *UnpairedError) Explain(fix string) string {
	var b strings.Builder
	b.WriteString("unpaired tool calls: ")
	for i, p := range e.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Explain(""))
	}
	fmt.Fprintf(&b, " (%s repairs them, with a warning)", fix)
	return b.String()
}

type call struct {
	id, name string
	at       loc
	answered bool
}

// pairing is the state of one pair run over a history h.
type pairing struct {
	p        *preparer
	h        convo.History
	out      convo.History // nil until the first change (h as it is)
	orig     []int
	done     int    // messages of h accounted for in out
	open     []call // calls of the last assistant message
	problems []convo.Problem
}

// pair matches tool results to the calls of the assistant message before
// them, by id or else by name and order, and reports (or, with Repair,
// fixes) calls without results and results without calls. A call without
// an id gets one (SynthID), and so do the results matched to it. orig[i] is
// the index in h of the returned history's message i, -1 for one inserted.
func (p *preparer) pair(h convo.History) (out convo.History, orig []int, err error) {
	// Most histories are well paired: out and orig stay nil (h as it is)
	// until the first change, so the common case copies nothing.
	s := &pairing{p: p, h: h}
	for i, m := range h {
		if m.Role != convo.RoleTool && len(s.open) > 0 {
			s.settle(i)
		}
		switch m.Role {
		case convo.RoleAssistant:
			m.Parts = s.calls(i, m.Parts)
		case convo.RoleTool:
			parts, changed := p.results(h, i, s.open, s.unpaired)
			if changed {
				s.diverge()
				s.done = i + 1
				if len(parts) == 0 {
					continue
				}
				m.Parts = parts
			}
		}
		if len(m.Parts) > 0 && len(h[i].Parts) > 0 && &m.Parts[0] != &h[i].Parts[0] {
			s.diverge() // ids were synthesised
		}
		if s.out != nil {
			s.out = append(s.out, m)
			s.orig = append(s.orig, i)
		}
		s.done = i + 1
	}
	// Calls still open here are pending: the history ends before their
	// results, as it does while an agent runs its tools. That is a valid
	// history, kept as it is; for a target that refuses such a request it
	// is a warning naming the target's rule, and Repair (asked to make the
	// request sendable) answers them with error results.
	switch {
	case p.t.Pending != "" && p.opts.Repair:
		s.settle(len(h))
	case p.t.Pending != "":
		s.warnPending()
	}
	if len(s.problems) > 0 {
		return nil, nil, &UnpairedError{Problems: s.problems}
	}
	if s.out == nil {
		orig = make([]int, len(h))
		for k := range orig {
			orig[k] = k
		}
		return h, orig, nil
	}
	return s.out, s.orig, nil
}

// diverge starts the returned history as a copy of what h held so far.
func (s *pairing) diverge() {
	if s.out == nil {
		s.out = append(make(convo.History, 0, len(s.h)+4), s.h[:s.done]...)
		s.orig = make([]int, s.done, len(s.h)+4)
		for k := range s.orig {
			s.orig[k] = k
		}
	}
}

func (s *pairing) unpaired(l loc, format string, args ...any) {
	s.problems = append(s.problems, convo.Problem{Path: l.String(), Msg: fmt.Sprintf(format, args...), Unpaired: true})
}

// calls opens the tool calls of assistant message i, whose parts are parts,
// and returns the parts with an id synthesised for every call without one
// (on a copy: h is not ours to change).
func (s *pairing) calls(i int, parts []convo.Part) []convo.Part {
	for j, part := range parts {
		if part.Type != convo.TypeToolCall || part.Server != "" {
			continue // a provider-run call is answered in its own message
		}
		if part.ID == "" {
			if &parts[0] == &s.h[i].Parts[0] {
				parts = append([]convo.Part(nil), parts...)
			}
			part.ID = SynthID(i, j, part.Name)
			parts[j].ID = part.ID
		}
		s.open = append(s.open, call{id: part.ID, name: part.Name, at: at(i).part(j)})
	}
	return parts
}

// settle ends the tool run that follows an assistant message: at is the
// index in h of the message that ends it.
func (s *pairing) settle(at int) {
	var missing []convo.Part
	for _, c := range s.open {
		if c.answered {
			continue
		}
		if !s.p.opts.Repair {
			s.unpaired(c.at, "tool call %q (%s) has no result before %s", c.id, c.name, msgPath(at))
			continue
		}
		s.p.warnc(CodeResultInserted, c.at, "tool call %q (%s) had no result: an error result was inserted", c.id, c.name)
		missing = append(missing, convo.ToolError(c.id, c.name, NotRun))
	}
	if len(missing) > 0 {
		s.diverge()
		s.out = append(s.out, convo.ToolResults(missing...))
		s.orig = append(s.orig, -1)
	}
	s.open = s.open[:0]
}

// warnPending warns that the history ends on calls without results, which
// the target refuses.
func (s *pairing) warnPending() {
	var ids []string
	var first loc
	for _, c := range s.open {
		if !c.answered {
			if ids == nil {
				first = c.at
			}
			ids = append(ids, strconv.Quote(c.id))
		}
	}
	if ids != nil {
		s.p.warnc(CodeCallsPending, at(first.msg), "the history ends on tool calls without results (%s), which %s: run the tools and send their results first", strings.Join(ids, ", "), s.p.t.Pending)
	}
}

// results pairs the results of tool message i with the open calls. It
// returns the parts to send and whether they differ from the message's:
// results get their call's id, and with Repair orphans are dropped.
func (p *preparer) results(h convo.History, i int, open []call, unpaired func(loc, string, ...any)) ([]convo.Part, bool) {
	ps := h[i].Parts
	var out []convo.Part // nil until something changes
	changed := false
	diverge := func(j int) {
		if !changed {
			changed = true
			out = append(make([]convo.Part, 0, len(ps)), ps[:j]...)
		}
	}
	for j, part := range ps {
		if part.Type == convo.TypeToolResult {
			k := match(open, part)
			if k < 0 {
				if !p.opts.Repair {
					unpaired(at(i).part(j), "tool result %q answers no call of %s", part.ID, precedingCall(h, i))
				} else {
					p.warnc(CodeResultDropped, at(i).part(j), "tool result %q answers no call: dropped", part.ID)
				}
				diverge(j)
				continue
			}
			open[k].answered = true
			if part.ID != open[k].id {
				part.ID = open[k].id
				diverge(j)
			}
		}
		if changed {
			out = append(out, part)
		}
	}
	return out, changed
}

// match finds the open call a result answers: by id, or when the result has
// no id, the first unanswered call of the same name.
func match(open []call, r convo.Part) int {
	if r.ID != "" {
		for k, c := range open {
			if c.id == r.ID && !c.answered {
				return k
			}
		}
		return -1
	}
	for k, c := range open {
		if !c.answered && c.name == r.Name {
			return k
		}
	}
	return -1
}

// precedingCall names the assistant message a tool message at i follows.
func precedingCall(h convo.History, i int) string {
	for k := i - 1; k >= 0; k-- {
		switch h[k].Role {
		case convo.RoleTool:
			continue
		case convo.RoleAssistant:
			return msgPath(k)
		}
		break
	}
	return "any assistant message (none directly precedes it)"
}
