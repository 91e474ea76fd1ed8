package archive

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// ShareGPT is the training-data shape FastChat, Axolotl and LLaMA-Factory
// read: a JSON array (or JSON Lines) of {"conversations":[{"from","value"}]}
// with "from" one of system, human, gpt, function_call, observation.
// LLaMA-Factory adds a top-level "system" and "tools" (a JSON string); a
// function_call's value is {"name","arguments"} as JSON text.

type shareGPTRecord struct {
	ID    string          `json:"id,omitempty"`
	Turns []shareGPTTurn  `json:"conversations"`
	Sys   string          `json:"system,omitempty"`
	Tools json.RawMessage `json:"tools,omitempty"`
}

type shareGPTTurn struct {
	From  string `json:"from"`
	Value string `json:"value"`
}

func newShareGPTReader(r io.Reader, opts Options) *Reader {
	return jsonReader(r, "records", true, opts, readShareGPT)
}

// functionCall is a call as ShareGPT and OpenAI's legacy format write it.
type functionCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// callArgs reads arguments that are a JSON object or a string holding one.
func callArgs(a json.RawMessage) (json.RawMessage, string) {
	if len(a) == 0 || string(a) == "null" {
		return json.RawMessage(`{}`), ""
	}
	var s string
	if json.Unmarshal(a, &s) == nil {
		if json.Valid([]byte(s)) {
			return json.RawMessage(s), ""
		}
		return nil, s
	}
	return a, ""
}

func readShareGPT(raw json.RawMessage, place string) (*Conversation, error) {
	var rec shareGPTRecord
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, err
	}
	if rec.Turns == nil {
		return nil, fmt.Errorf("no conversations: not a ShareGPT record")
	}
	c := &Conversation{ID: rec.ID, Meta: metaObject("source", "sharegpt")}
	if len(rec.Tools) > 0 && string(rec.Tools) != "null" {
		// LLaMA-Factory writes the tools as JSON text.
		var s string
		if json.Unmarshal(rec.Tools, &s) == nil {
			if !json.Valid([]byte(s)) {
				return nil, fmt.Errorf("tools: not JSON")
			}
			rec.Tools = json.RawMessage(s)
		}
		c.Tools = rec.Tools
	}
	var h convo.History
	if rec.Sys != "" {
		h = append(h, convo.System(rec.Sys))
	}
	var open []convo.Part
	for i, t := range rec.Turns {
		path := fmt.Sprintf("%s.conversations[%d]", place, i)
		switch strings.ToLower(t.From) {
		case "system":
			h = append(h, convo.System(t.Value))
		case "human", "user":
			h = append(h, convo.User(t.Value))
		case "gpt", "assistant", "chatgpt", "bing", "bard", "model":
			h = append(h, convo.Assistant(t.Value))
		case "function_call":
			var calls []functionCall
			var one functionCall
			if json.Unmarshal([]byte(t.Value), &one) == nil && one.Name != "" {
				calls = []functionCall{one}
			} else if err := json.Unmarshal([]byte(t.Value), &calls); err != nil || len(calls) == 0 {
				c.Warnings = append(c.Warnings, provider.Warnf(path, "function_call is not a call: kept as assistant text"))
				h = append(h, convo.Assistant(t.Value))
				continue
			}
			m := convo.Message{Role: convo.RoleAssistant, Finish: convo.FinishToolUse}
			for k, fc := range calls {
				p := convo.Part{Type: convo.TypeToolCall, ID: fmt.Sprintf("call_%d_%d", i, k), Name: fc.Name}
				p.Args, p.ArgsRaw = callArgs(fc.Arguments)
				m.Parts = append(m.Parts, p)
			}
			open = m.Parts
			h = append(h, m)
		case "observation", "tool", "function":
			r := convo.Part{Type: convo.TypeToolResult, ID: fmt.Sprintf("call_%d", i), Parts: []convo.Part{convo.Text(t.Value)}}
			if len(open) > 0 {
				r.ID, r.Name = open[0].ID, open[0].Name
				open = open[1:]
			}
			h = append(h, convo.ToolResults(r))
		default:
			c.Warnings = append(c.Warnings, provider.Warnf(path+".from", "skipped: unknown speaker %q", t.From))
		}
	}
	var warns []provider.Warning
	c.History, warns = pair(h, func(i int) string { return fmt.Sprintf("%s.messages[%d]", place, i) })
	c.Warnings = append(c.Warnings, warns...)
	return c, nil
}

// shareGPTRecordOf converts a conversation; what ShareGPT cannot hold is a
// warning.
func shareGPTRecordOf(c *Conversation) (shareGPTRecord, []provider.Warning) {
	rec := shareGPTRecord{ID: c.ID, Turns: []shareGPTTurn{}, Tools: unwrapTools(c.Tools)}
	if len(rec.Tools) > 0 {
		s, _ := json.Marshal(string(rec.Tools))
		rec.Tools = s
	}
	var warns []provider.Warning
	h := c.History
	if len(h) > 0 && h[0].Role == convo.RoleSystem && onlyText(h[0]) {
		// One line per text part, as the turns below are written
		// (Message.Text joins with nothing between).
		sys := make([]string, len(h[0].Parts))
		for i, p := range h[0].Parts {
			sys[i] = p.Text
		}
		rec.Sys = strings.Join(sys, "\n")
		h = h[1:]
	}
	off := len(c.History) - len(h)
	for i, m := range h {
		path := fmt.Sprintf("messages[%d]", i+off)
		turn := func(from, value string) { rec.Turns = append(rec.Turns, shareGPTTurn{From: from, Value: value}) }
		var text []string
		var calls []functionCall
		for k, p := range m.Parts {
			pp := fmt.Sprintf("%s.parts[%d]", path, k)
			switch p.Type {
			case convo.TypeText:
				text = append(text, p.Text)
			case convo.TypeToolCall:
				args := p.Args
				if args == nil {
					args, _ = json.Marshal(p.ArgsRaw)
				}
				calls = append(calls, functionCall{Name: p.Name, Arguments: args})
			case convo.TypeToolResult:
				turn("observation", resultText(p, pp, &warns))
			default:
				warns = append(warns, provider.Warnf(pp, "ShareGPT has no %s: dropped", p.Type))
			}
		}
		switch m.Role {
		case convo.RoleSystem:
			turn("system", strings.Join(text, "\n"))
		case convo.RoleUser, convo.RoleSummary:
			turn("human", strings.Join(text, "\n"))
		case convo.RoleAssistant:
			if len(text) > 0 {
				turn("gpt", strings.Join(text, "\n"))
			}
			if len(calls) == 1 {
				b, _ := json.Marshal(calls[0])
				turn("function_call", string(b))
			} else if len(calls) > 1 {
				b, _ := json.Marshal(calls)
				turn("function_call", string(b))
			}
		case convo.RoleTool:
		default:
			warns = append(warns, provider.Warnf(path, "ShareGPT has no %s messages: dropped", m.Role))
		}
	}
	return rec, warns
}

func onlyText(m convo.Message) bool {
	for _, p := range m.Parts {
		if p.Type != convo.TypeText {
			return false
		}
	}
	return true
}

// resultText is a tool result's content as text: text parts as they are,
// JSON values as JSON; media cannot be text and is dropped with a warning.
func resultText(p convo.Part, path string, warns *[]provider.Warning) string {
	var b []string
	for k, q := range p.Parts {
		switch q.Type {
		case convo.TypeText:
			b = append(b, q.Text)
		case convo.TypeJSON:
			b = append(b, string(q.Value))
		default:
			*warns = append(*warns, provider.Warnf(fmt.Sprintf("%s.parts[%d]", path, k), "a tool result's %s cannot be text: dropped", q.Type))
		}
	}
	if p.Error {
		*warns = append(*warns, provider.Warnf(path, "the format cannot mark a failed tool: sent as a plain result"))
	}
	return strings.Join(b, "\n")
}
