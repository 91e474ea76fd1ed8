package ollama

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// Decode reads the "messages" of an Ollama /api/chat request body (a bare
// messages array is accepted too); other members are ignored. Tool calls
// without an id get a synthesised one, and tool results without
// tool_call_id are paired with the calls of the assistant message before
// them by tool_name, else by order.
func (chat) Decode(body []byte, opts provider.Options) (convo.History, []provider.Warning, error) {
	lim, err := opts.CheckSize(body, "ollama request")
	if err != nil {
		return nil, nil, err
	}
	if err := provider.CheckFormat(body, Name); err != nil {
		return nil, nil, err
	}
	d := decoder{r: jsonx.NewReader(body, lim.MaxDepth)}
	switch d.r.Peek() {
	case jsonx.Object:
		seen := false
		err = d.r.ReadObject(func(key []byte) error {
			if string(key) == "messages" {
				seen = true
				return d.messages()
			}
			return convo.ErrorAt(d.r.Skip(), string(key))
		})
		if err == nil && !seen {
			err = errors.New(`ollama request has no "messages"`)
		}
	case jsonx.Array:
		err = d.messages()
	case jsonx.End:
		err = errors.New("empty ollama request")
	default:
		err = fmt.Errorf("not an ollama request: %w", d.r.Errorf("want an object with \"messages\""))
	}
	if err == nil {
		err = d.r.ExpectEnd()
	}
	if err != nil {
		return nil, d.warns, err
	}
	return d.h, d.warns, opts.Check(d.warns)
}

type decoder struct {
	r     *jsonx.Reader
	h     convo.History
	warns []provider.Warning
	calls wire.Calls // of the last assistant message
	w     wireMsg
}

func (d *decoder) messages() error {
	d.h = convo.History{}
	w := &d.w
	err := d.r.ReadArray(func(i int) error {
		// Nothing a message is built from keeps w's memory: its slices are
		// reused for the next message.
		*w = wireMsg{images: w.images[:0], calls: w.calls[:0], extra: w.extra[:0]}
		if err := readMessage(d.r, w); err != nil {
			return convo.ErrorAt(err, index("", i))
		}
		m, err := d.message(i, w)
		if err != nil {
			return convo.ErrorAt(err, index("", i))
		}
		d.h = append(d.h, m)
		return nil
	})
	return convo.ErrorAt(err, "messages")
}

// lowerRole returns the role b lower-cased, without allocating for the
// roles Ollama knows.
func lowerRole(b []byte) string {
	switch string(b) {
	case "system":
		return "system"
	case "user":
		return "user"
	case "assistant":
		return "assistant"
	case "tool":
		return "tool"
	}
	return strings.ToLower(string(b))
}

// roleOf maps a lower-cased Ollama role to its convo role.
func roleOf(s string) convo.Role {
	switch s {
	case "system":
		return convo.RoleSystem
	case "user":
		return convo.RoleUser
	case "assistant":
		return convo.RoleAssistant
	case "tool":
		return convo.RoleTool
	}
	return ""
}

func (d *decoder) message(i int, w *wireMsg) (convo.Message, error) {
	if len(w.role) == 0 {
		return convo.Message{}, errors.New("missing role")
	}
	// Ollama lower-cases the role when it reads a message.
	lower := lowerRole(w.role)
	role := roleOf(lower)
	if role == "" {
		return convo.Message{}, convo.ErrorAt(fmt.Errorf("unknown role %q (want system, user, assistant or tool)", w.role), "role")
	}
	m := convo.Message{Role: role}
	var n wire.Members
	if string(w.role) != lower {
		n = append(n, wire.Member{Key: "role", Val: jsonx.AppendString(nil, string(w.role))})
	}
	if !w.hasContent {
		n = append(n, wire.Member{Key: "content", Val: wire.Null})
	}
	content := string(w.content)
	if role != convo.RoleTool {
		d.calls.Reset()
	}
	switch role {
	case convo.RoleAssistant:
		nparts := len(w.images) + len(w.calls) + 2
		m.Parts = make([]convo.Part, 0, nparts)
		if len(w.thinking) > 0 {
			m.Parts = append(m.Parts, reasoningPart(string(w.thinking), ""))
		}
		if content != "" {
			m.Parts = append(m.Parts, convo.Text(content))
		}
		m.Parts = append(m.Parts, imageParts(w.images)...)
		for j := range w.calls {
			c := &w.calls[j]
			p := c.part(provider.SynthID(i, j, c.name))
			m.Parts = append(m.Parts, p)
			d.calls.Add(p.ID, p.Name, false)
		}
		n = appendStrings(n, w, role)
	case convo.RoleTool:
		m.Parts = []convo.Part{d.result(i, w, content)}
		n = appendStrings(n, w, role)
	default:
		// An empty text is kept when it is all the message has, so the
		// message survives conversion and comes back as it was.
		m.Parts = make([]convo.Part, 0, 1+len(w.images))
		if content != "" || (w.hasContent && len(w.images) == 0) {
			m.Parts = append(m.Parts, convo.Text(content))
		}
		m.Parts = append(m.Parts, imageParts(w.images)...)
		n = appendStrings(n, w, role)
	}
	if len(w.calls) > 0 && role != convo.RoleAssistant {
		raw, err := jsonx.Compact(w.callsRaw, 0)
		if err != nil {
			return m, convo.ErrorAt(err, "tool_calls")
		}
		n = append(n, wire.Member{Key: "tool_calls", Val: raw})
	}
	m.Native = append(n, w.extra...).Native(ProviderID)
	return m, nil
}

// appendStrings keeps the string members a message of this role has no
// convo field for: thinking outside assistant messages, tool_name and
// tool_call_id outside tool messages.
func appendStrings(n wire.Members, w *wireMsg, role convo.Role) wire.Members {
	if role != convo.RoleAssistant && len(w.thinking) > 0 {
		n = append(n, wire.Member{Key: "thinking", Val: jsonx.AppendString(nil, string(w.thinking))})
	}
	if role != convo.RoleTool && w.hasToolName {
		n = append(n, wire.Member{Key: "tool_name", Val: jsonx.AppendString(nil, string(w.toolName))})
	}
	if role != convo.RoleTool && w.hasCallID {
		n = append(n, wire.Member{Key: "tool_call_id", Val: jsonx.AppendString(nil, string(w.toolCallID))})
	}
	return n
}

// result builds the tool_result part of a tool message and pairs it with a
// call of the assistant message before it: by tool_call_id, else by
// tool_name and order.
func (d *decoder) result(i int, w *wireMsg, content string) convo.Part {
	p := convo.Part{Type: convo.TypeToolResult}
	if strings.HasPrefix(content, errorPrefix) {
		p.Error = true
		content = content[len(errorPrefix):]
	}
	if content != "" {
		p.Parts = append(p.Parts, convo.Text(content))
	}
	p.Parts = append(p.Parts, imageParts(w.images)...)
	var n wire.Members
	if w.hasCallID {
		p.ID = string(w.toolCallID)
	} else {
		n = append(n, wire.Member{Key: "tool_call_id", Val: wire.Null})
	}
	if w.hasToolName {
		p.Name = string(w.toolName)
	} else {
		n = append(n, wire.Member{Key: "tool_name", Val: wire.Null})
	}
	if id, name, ok := d.calls.Answer(p.ID, p.Name); ok {
		p.ID, p.Name = cmp.Or(p.ID, id), cmp.Or(p.Name, name)
	} else if !w.hasCallID {
		d.warns = append(d.warns, provider.Warnf(msgPath(i), "tool result (%s) answers no call of the assistant message before it", orNone(p.Name)))
	}
	p.Native = n.Native(ProviderID)
	return p
}

func orNone(s string) string {
	if s == "" {
		return "no tool_name"
	}
	return s
}
