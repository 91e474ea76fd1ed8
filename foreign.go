package convo

import (
	"bytes"
	"encoding/json"
)

// foreignHint explains a message without parts that carries a provider's
// members instead (read as Extra): the text says which wire format it looks
// like, so that "convo validate" on an array of OpenAI messages says to
// convert it rather than only that parts are missing. It returns "" when
// nothing points at a known format.
func foreignHint(m Message) string {
	content := m.Extra.Get("content")
	switch {
	case content != nil:
		return `; its "content" member is not format v1: this looks like ` + contentFormat(content, m.Extra) + `: convert it to convo from that format`
	case m.Extra.Get("tool_calls") != nil || m.Extra.Get("tool_call_id") != nil:
		return `; its "tool_calls"/"tool_call_id" members are not format v1: this looks like an OpenAI Chat message (format openai-chat): convert it to convo from that format`
	}
	return ""
}

// contentFormat names the format a message's content member looks like.
func contentFormat(content json.RawMessage, extra Fields) string {
	if extra.Get("tool_calls") != nil || extra.Get("tool_call_id") != nil {
		return "an OpenAI Chat message (format openai-chat)"
	}
	var blocks []struct {
		Type   string          `json:"type"`
		Source json.RawMessage `json:"source"`
	}
	if json.Unmarshal(content, &blocks) == nil {
		for _, b := range blocks {
			switch b.Type {
			case "tool_use", "tool_result", "thinking", "redacted_thinking", "document":
				return "an Anthropic message (format anthropic)"
			case "image_url", "input_audio", "refusal":
				return "an OpenAI Chat message (format openai-chat)"
			case "input_text", "output_text", "input_image":
				return "an OpenAI Responses item (format openai-responses)"
			}
			if b.Source != nil {
				return "an Anthropic message (format anthropic)"
			}
		}
	}
	return "an OpenAI Chat or Anthropic message (format openai-chat or anthropic)"
}

// partHint explains a part without a type that carries a Gemini part's
// members.
func partHint(p *Part) string {
	if p.Text != "" {
		return `; a part with "text" and no "type" looks like a Gemini part (format gemini): convert it to convo from that format`
	}
	for _, k := range []string{"text", "functionCall", "functionResponse", "inlineData", "fileData", "thought"} {
		if p.Extra.Get(k) != nil {
			return `; its "` + k + `" member is not format v1: this looks like a Gemini part (format gemini): convert it to convo from that format`
		}
	}
	return ""
}

// isObject reports whether raw JSON is an object.
func isObject(raw json.RawMessage) bool {
	b := bytes.TrimLeft(raw, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}
