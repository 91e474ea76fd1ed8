package provider

import (
	"fmt"
	"strings"

	"github.com/convo-go/convo"
)

// NotRun is the text of the error result Repair inserts for a tool call that
// has no result.
const NotRun = "the tool was not run"

type call struct {
	id, name string
	path     string
	answered bool
}

// pair matches tool results to the calls of the assistant message before
// them, by id or else by name and order, and reports (or, with Repair,
// fixes) calls without results and results without calls.
func (p *preparer) pair(h convo.History) (convo.History, error) {
	var out convo.History
	var open []call // calls of the last assistant message
	var problems []string

	// settle ends the tool run that follows an assistant message: at is the
	// index in h of the message that ends it.
	settle := func(at int) {
		var missing []convo.Part
		for _, c := range open {
			if c.answered {
				continue
			}
			if !p.opts.Repair {
				problems = append(problems, fmt.Sprintf("%s: tool call %q (%s) has no result before %s", c.path, c.id, c.name, msgPath(at)))
				continue
			}
			p.warn(c.path, "tool call %q (%s) had no result: an error result was inserted", c.id, c.name)
			missing = append(missing, convo.ToolError(c.id, c.name, NotRun))
		}
		if len(missing) > 0 {
			out = append(out, convo.ToolResults(missing...))
		}
		open = nil
	}

	for i, m := range h {
		if m.Role != convo.RoleTool && open != nil {
			settle(i)
		}
		switch m.Role {
		case convo.RoleAssistant:
			for j, part := range m.Parts {
				if part.Type == convo.TypeToolCall {
					open = append(open, call{id: part.ID, name: part.Name, path: partPath(i, j)})
				}
			}
		case convo.RoleTool:
			var parts []convo.Part
			changed := false
			for j, part := range m.Parts {
				if part.Type != convo.TypeToolResult {
					parts = append(parts, part)
					continue
				}
				k := match(open, part)
				if k < 0 {
					if !p.opts.Repair {
						problems = append(problems, fmt.Sprintf("%s: tool result %q answers no call of %s", partPath(i, j), part.ID, precedingCall(h, i)))
						continue
					}
					p.warn(partPath(i, j), "tool result %q answers no call: dropped", part.ID)
					changed = true
					continue
				}
				open[k].answered = true
				if part.ID != open[k].id {
					part.ID = open[k].id
					changed = true
				}
				parts = append(parts, part)
			}
			if changed {
				if len(parts) == 0 {
					continue
				}
				m.Parts = parts
			}
		}
		out = append(out, m)
	}
	if open != nil {
		settle(len(h))
	}
	if len(problems) > 0 {
		msg := problems[0]
		if len(problems) > 1 {
			msg += fmt.Sprintf(" (and %d more: %s)", len(problems)-1, strings.Join(problems[1:], "; "))
		}
		return nil, fmt.Errorf("unpaired tool calls: %s (use repair to fix)", msg)
	}
	return out, nil
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
