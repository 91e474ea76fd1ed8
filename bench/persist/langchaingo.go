package persist

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/tmc/langchaingo/llms"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/bench/benchkit"
)

// LangChainGo is github.com/tmc/langchaingo's llms.MessageContent, written
// with its own MarshalJSON and UnmarshalJSON methods. Its parts are text,
// binary (inline media), image URLs, tool calls and tool responses; it has
// no reasoning part, so reasoning is left out.
func LangChainGo() benchkit.Codec[[]llms.MessageContent] {
	enc, dec := benchkit.JSON[[]llms.MessageContent]()
	return benchkit.Codec[[]llms.MessageContent]{Name: "langchaingo", From: toLangChain, To: fromLangChain, Encode: enc, Decode: dec}
}

var toLCRole = map[convo.Role]llms.ChatMessageType{
	convo.RoleSystem:    llms.ChatMessageTypeSystem,
	convo.RoleUser:      llms.ChatMessageTypeHuman,
	convo.RoleAssistant: llms.ChatMessageTypeAI,
	convo.RoleTool:      llms.ChatMessageTypeTool,
}

func toLangChain(h convo.History) ([]llms.MessageContent, error) {
	out := make([]llms.MessageContent, 0, len(h))
	for i, m := range h {
		role, ok := toLCRole[m.Role]
		if !ok {
			return nil, fmt.Errorf("messages[%d]: langchaingo has no %s role", i, m.Role)
		}
		mc := llms.MessageContent{Role: role, Parts: make([]llms.ContentPart, 0, len(m.Parts))}
		for j, p := range m.Parts {
			switch p.Type {
			case convo.TypeText:
				mc.Parts = append(mc.Parts, llms.TextContent{Text: p.Text})
			case convo.TypeImage:
				b, err := p.Bytes()
				if err != nil {
					return nil, fmt.Errorf("messages[%d].parts[%d]: %w", i, j, err)
				}
				mc.Parts = append(mc.Parts, llms.BinaryContent{MIMEType: p.MediaType, Data: b})
			case convo.TypeToolCall:
				mc.Parts = append(mc.Parts, llms.ToolCall{ID: p.ID, Type: "function", FunctionCall: &llms.FunctionCall{Name: p.Name, Arguments: string(p.Args)}})
			case convo.TypeToolResult:
				mc.Parts = append(mc.Parts, llms.ToolCallResponse{ToolCallID: p.ID, Name: p.Name, Content: resultText(p)})
			case convo.TypeReasoning:
				// No part type holds it.
			default:
				return nil, fmt.Errorf("messages[%d].parts[%d]: langchaingo has no %s part", i, j, p.Type)
			}
		}
		out = append(out, mc)
	}
	return out, nil
}

var fromLCRole = map[llms.ChatMessageType]convo.Role{
	llms.ChatMessageTypeSystem: convo.RoleSystem,
	llms.ChatMessageTypeHuman:  convo.RoleUser,
	llms.ChatMessageTypeAI:     convo.RoleAssistant,
	llms.ChatMessageTypeTool:   convo.RoleTool,
}

func fromLangChain(ms []llms.MessageContent) (convo.History, error) {
	h := make(convo.History, 0, len(ms))
	for i, mc := range ms {
		role, ok := fromLCRole[mc.Role]
		if !ok {
			return nil, fmt.Errorf("langchaingo[%d]: unknown role %q", i, mc.Role)
		}
		m := convo.Message{Role: role, Parts: make([]convo.Part, 0, len(mc.Parts))}
		for j, p := range mc.Parts {
			switch p := p.(type) {
			case llms.TextContent:
				m.Parts = append(m.Parts, convo.Text(p.Text))
			case llms.BinaryContent:
				m.Parts = append(m.Parts, convo.Part{Type: convo.TypeImage, MediaType: p.MIMEType, Data: base64.StdEncoding.EncodeToString(p.Data)})
			case llms.ToolCall:
				if p.FunctionCall == nil {
					return nil, fmt.Errorf("langchaingo[%d].parts[%d]: tool call without a function", i, j)
				}
				m.Parts = append(m.Parts, convo.ToolCall(p.ID, p.FunctionCall.Name, json.RawMessage(p.FunctionCall.Arguments)))
			case llms.ToolCallResponse:
				m.Parts = append(m.Parts, convo.ToolResult(p.ToolCallID, p.Name, p.Content))
			default:
				return nil, fmt.Errorf("langchaingo[%d].parts[%d]: unexpected %T", i, j, p)
			}
		}
		h = append(h, m)
	}
	return h, nil
}
