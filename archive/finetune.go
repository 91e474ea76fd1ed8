package archive

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// OpenAI's chat fine-tuning data is JSON Lines: one training example a
// line, {"messages":[…],"tools":[…],"parallel_tool_calls":…}, messages in
// the Chat Completions shape (content a string or an array of text and
// image_url parts; assistant tool_calls with arguments as JSON text; tool
// messages with tool_call_id; "weight" 0 or 1 on assistant messages). The
// legacy "functions"/"function_call" shape is read too. A preference example
// ({"input","preferred_output","non_preferred_output"}) is read as the
// preferred line with the other as a fork.

type ftExample struct {
	Messages  []ftMessage     `json:"messages"`
	Tools     json.RawMessage `json:"tools,omitempty"`
	Functions json.RawMessage `json:"functions,omitempty"`
	Parallel  *bool           `json:"parallel_tool_calls,omitempty"`
	Input     *struct {
		Messages []ftMessage     `json:"messages"`
		Tools    json.RawMessage `json:"tools"`
	} `json:"input,omitempty"`
	Preferred    []ftMessage `json:"preferred_output,omitempty"`
	NonPreferred []ftMessage `json:"non_preferred_output,omitempty"`
}

type ftMessage struct {
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content,omitempty"`
	Name         string          `json:"name,omitempty"`
	ToolCalls    []ftToolCall    `json:"tool_calls,omitempty"`
	ToolCallID   string          `json:"tool_call_id,omitempty"`
	FunctionCall *functionCall   `json:"function_call,omitempty"`
	Weight       *int            `json:"weight,omitempty"`
}

type ftToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type ftContentPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail,omitempty"`
	} `json:"image_url,omitempty"`
}

func newFineTuneReader(r io.Reader, opts Options) *Reader {
	return jsonReader(r, "lines", true, opts, readFineTune)
}

func readFineTune(raw json.RawMessage, place string) (*Conversation, error) {
	var ex ftExample
	if err := json.Unmarshal(raw, &ex); err != nil {
		return nil, err
	}
	c := &Conversation{}
	var parallel any
	if ex.Parallel != nil {
		parallel = *ex.Parallel
	}
	c.Meta = metaObject("source", "finetune", "parallel_tool_calls", parallel)
	c.Tools = ex.Tools
	if len(c.Tools) == 0 && len(ex.Functions) > 0 {
		c.Tools = legacyTools(ex.Functions)
	}
	if ex.Input != nil {
		c.Tools = ex.Input.Tools
		in := readFTMessages(ex.Input.Messages, place+".input.messages", &c.Warnings)
		c.History = append(in, readFTMessages(ex.Preferred, place+".preferred_output", &c.Warnings)...)
		if len(ex.NonPreferred) > 0 {
			c.Forks = []Fork{{At: len(in), History: readFTMessages(ex.NonPreferred, place+".non_preferred_output", &c.Warnings)}}
		}
		return c, nil
	}
	if ex.Messages == nil {
		return nil, fmt.Errorf("no messages: not a fine-tuning example")
	}
	c.History = readFTMessages(ex.Messages, place+".messages", &c.Warnings)
	return c, nil
}

// legacyTools turns the legacy "functions" list into "tools" entries.
func legacyTools(fns json.RawMessage) json.RawMessage {
	var list []json.RawMessage
	if json.Unmarshal(fns, &list) != nil {
		return nil
	}
	out := make([]map[string]any, len(list))
	for i, f := range list {
		out[i] = map[string]any{"type": "function", "function": f}
	}
	b, _ := json.Marshal(out)
	return b
}

func readFTMessages(msgs []ftMessage, place string, warns *[]provider.Warning) convo.History {
	var h convo.History
	var legacy int // legacy function calls, for their synthesised ids
	for i, fm := range msgs {
		path := fmt.Sprintf("%s[%d]", place, i)
		parts := ftContent(fm.Content, path+".content", warns)
		m := convo.Message{Name: fm.Name}
		if fm.Weight != nil {
			m.Meta = json.RawMessage(fmt.Sprintf(`{"weight":%d}`, *fm.Weight))
		}
		switch fm.Role {
		case "system":
			m.Role = convo.RoleSystem
		case "developer":
			m.Role = convo.RoleSystem
			m.Native = convo.Native{"openai": json.RawMessage(`{"role":"developer"}`)}
		case "user":
			m.Role = convo.RoleUser
		case "assistant":
			m.Role = convo.RoleAssistant
			for _, tc := range fm.ToolCalls {
				p := convo.Part{Type: convo.TypeToolCall, ID: tc.ID, Name: tc.Function.Name}
				p.Args, p.ArgsRaw = callArgs(mustString(tc.Function.Arguments))
				parts = append(parts, p)
			}
			if fc := fm.FunctionCall; fc != nil {
				legacy++
				p := convo.Part{Type: convo.TypeToolCall, ID: fmt.Sprintf("call_%d", legacy), Name: fc.Name}
				p.Args, p.ArgsRaw = callArgs(fc.Arguments)
				parts = append(parts, p)
			}
		case "tool", "function":
			m.Role = convo.RoleTool
			id := fm.ToolCallID
			if fm.Role == "function" {
				id = fmt.Sprintf("call_%d", legacy)
			}
			name := fm.Name
			m.Name = ""
			parts = []convo.Part{{Type: convo.TypeToolResult, ID: id, Name: name, Parts: parts}}
		default:
			*warns = append(*warns, provider.Warnf(path+".role", "skipped: unknown role %q", fm.Role))
			continue
		}
		if len(parts) == 0 {
			continue // nothing left of it; what was skipped is reported above
		}
		m.Parts = parts
		h = append(h, m)
	}
	// Tool messages name no tool: take the name from the call they answer.
	names := map[string]string{}
	for i := range h {
		for k, p := range h[i].Parts {
			switch p.Type {
			case convo.TypeToolCall:
				names[p.ID] = p.Name
			case convo.TypeToolResult:
				if p.Name == "" {
					h[i].Parts[k].Name = names[p.ID]
				}
			}
		}
	}
	h, pw := pair(h, func(i int) string { return fmt.Sprintf("%s[%d]", place, i) })
	*warns = append(*warns, pw...)
	return h
}

func mustString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// ftContent reads a content that is null, a string or an array of parts.
func ftContent(raw json.RawMessage, path string, warns *[]provider.Warning) []convo.Part {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil
		}
		return []convo.Part{convo.Text(s)}
	}
	var list []ftContentPart
	if err := json.Unmarshal(raw, &list); err != nil {
		*warns = append(*warns, provider.Warnf(path, "skipped: neither text nor a list of parts"))
		return nil
	}
	var parts []convo.Part
	for k, p := range list {
		switch {
		case p.Type == "text":
			parts = append(parts, convo.Text(p.Text))
		case p.Type == "image_url" && p.ImageURL != nil && p.ImageURL.URL != "":
			parts = append(parts, imageFromURL(p.ImageURL.URL, p.ImageURL.Detail))
		default:
			*warns = append(*warns, provider.Warnf(fmt.Sprintf("%s[%d]", path, k), "skipped: unknown part type %q", p.Type))
		}
	}
	return parts
}

// imageFromURL reads an image URL, taking a base64 data URL apart.
func imageFromURL(url, detail string) convo.Part {
	if rest, ok := strings.CutPrefix(url, "data:"); ok {
		if mt, data, ok := strings.Cut(rest, ";base64,"); ok && mt != "" && data != "" && convo.CheckBase64(data) == nil {
			return convo.Part{Type: convo.TypeImage, MediaType: mt, Data: data, Detail: detail}
		}
	}
	return convo.Part{Type: convo.TypeImage, URL: url, Detail: detail}
}

// fineTuneExample converts a conversation to one training example.
func fineTuneExample(c *Conversation) (ftExample, []provider.Warning) {
	var warns []provider.Warning
	ex := ftExample{Messages: []ftMessage{}, Tools: wrapTools(c.Tools)}
	if len(c.Meta) > 0 {
		var meta struct {
			Parallel *bool `json:"parallel_tool_calls"`
		}
		if json.Unmarshal(c.Meta, &meta) == nil {
			ex.Parallel = meta.Parallel
		}
	}
	for i, m := range c.History {
		path := fmt.Sprintf("messages[%d]", i)
		fm := ftMessage{Role: string(m.Role), Name: m.Name}
		if len(m.Meta) > 0 {
			var meta struct {
				Weight *int `json:"weight"`
			}
			if json.Unmarshal(m.Meta, &meta) == nil {
				fm.Weight = meta.Weight
			}
		}
		switch m.Role {
		case convo.RoleSystem:
			if len(m.Native["openai"]) > 0 && strings.Contains(string(m.Native["openai"]), `"developer"`) {
				fm.Role = "developer"
			}
		case convo.RoleSummary:
			fm.Role = "user"
			warns = append(warns, provider.Warnf(path, "a summary is written as user text"))
		case convo.RoleError:
			warns = append(warns, provider.Warnf(path, "error messages are not training data: dropped"))
			continue
		case convo.RoleTool:
			ex.Messages = append(ex.Messages, ftToolMessages(m, path, &warns)...)
			continue
		}
		content := ftParts(m, path, &fm, &warns)
		fm.Content = ftMessageContent(content, m.Role, len(fm.ToolCalls) > 0)
		ex.Messages = append(ex.Messages, fm)
	}
	return ex, warns
}

// ftToolMessages returns a tool message's results, one tool message each.
func ftToolMessages(m convo.Message, path string, warns *[]provider.Warning) []ftMessage {
	var out []ftMessage
	for k, p := range m.Parts {
		pp := fmt.Sprintf("%s.parts[%d]", path, k)
		if p.Type != convo.TypeToolResult {
			*warns = append(*warns, provider.Warnf(pp, "%s in a tool message: dropped", p.Type))
			continue
		}
		text, _ := json.Marshal(resultText(p, pp, warns))
		out = append(out, ftMessage{Role: "tool", ToolCallID: p.ID, Content: text})
	}
	return out
}

// ftParts returns the content parts of m (text, a user's images) and puts
// an assistant's tool calls in fm; other parts are dropped with a warning.
func ftParts(m convo.Message, path string, fm *ftMessage, warns *[]provider.Warning) []ftContentPart {
	var content []ftContentPart
	for k, p := range m.Parts {
		switch {
		case p.Type == convo.TypeText:
			content = append(content, ftContentPart{Type: "text", Text: p.Text})
		case p.Type == convo.TypeImage && m.Role == convo.RoleUser && (p.URL != "" || p.Data != ""):
			url := p.URL
			if p.Data != "" {
				url = "data:" + p.MediaType + ";base64," + p.Data
			}
			cp := ftContentPart{Type: "image_url"}
			cp.ImageURL = &struct {
				URL    string `json:"url"`
				Detail string `json:"detail,omitempty"`
			}{url, p.Detail}
			content = append(content, cp)
		case p.Type == convo.TypeToolCall && m.Role == convo.RoleAssistant:
			var tc ftToolCall
			tc.ID, tc.Type, tc.Function.Name = p.ID, "function", p.Name
			tc.Function.Arguments = string(p.Args)
			if p.Args == nil {
				tc.Function.Arguments = p.ArgsRaw
			}
			fm.ToolCalls = append(fm.ToolCalls, tc)
		default:
			*warns = append(*warns, provider.Warnf(fmt.Sprintf("%s.parts[%d]", path, k), "fine-tuning data has no %s here: dropped", p.Type))
		}
	}
	return content
}

// ftMessageContent returns a message's content: a string, or an array of
// parts for a user message with images; nil for calls without text.
func ftMessageContent(content []ftContentPart, role convo.Role, calls bool) json.RawMessage {
	var out json.RawMessage
	switch {
	case len(content) == 0:
		if !calls {
			out = json.RawMessage(`""`)
		}
	case len(content) == 1 && content[0].Type == "text":
		out, _ = json.Marshal(content[0].Text)
	case role == convo.RoleUser:
		out, _ = json.Marshal(content)
	default:
		var texts []string
		for _, c := range content {
			texts = append(texts, c.Text)
		}
		out, _ = json.Marshal(strings.Join(texts, "\n"))
	}
	return out
}

// wrapTools puts bare function definitions ({"name","description",
// "parameters"}, as ShareGPT keeps them) in the fine-tuning API's
// {"type":"function","function":…}; entries with a type stay as they are.
func wrapTools(tools json.RawMessage) json.RawMessage {
	var list []map[string]json.RawMessage
	if len(tools) == 0 || json.Unmarshal(tools, &list) != nil {
		return tools
	}
	changed := false
	out := make([]any, len(list))
	for i, t := range list {
		if _, ok := t["type"]; ok {
			out[i] = t
			continue
		}
		out[i] = map[string]any{"type": "function", "function": t}
		changed = true
	}
	if !changed {
		return tools
	}
	b, err := json.Marshal(out)
	if err != nil {
		return tools
	}
	return b
}

// unwrapTools is the other way: {"type":"function","function":f} becomes f.
func unwrapTools(tools json.RawMessage) json.RawMessage {
	var list []struct {
		Type     string          `json:"type"`
		Function json.RawMessage `json:"function"`
	}
	if len(tools) == 0 || json.Unmarshal(tools, &list) != nil {
		return tools
	}
	out := make([]json.RawMessage, len(list))
	for i, t := range list {
		if t.Type != "function" || len(t.Function) == 0 {
			return tools
		}
		out[i] = t.Function
	}
	b, err := json.Marshal(out)
	if err != nil {
		return tools
	}
	return b
}
