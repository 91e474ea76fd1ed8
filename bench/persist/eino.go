// Package persist puts convo's canonical format beside the message types of
// other Go LLM libraries for the persistence comparison: each peer gets an
// adapter that fills its own types from a convo history as faithfully as
// those types allow, and converts them back, so the benchmark times each
// library's own JSON and the fidelity diff finds what its types cannot hold.
//
// The adapters use a library's typed fields, and a free-form metadata slot
// only where the library's own provider integration keeps that datum there
// (eino-ext's Claude model keeps the thinking signature in
// Message.Extra["_eino_claude_thinking_signature"]; fantasy's Anthropic
// provider in ProviderOptions["anthropic"]). They invent no keys of their
// own: any map[string]any can carry anything an application encodes into
// it, and that would be the application persisting the history, not the
// library.
package persist

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cloudwego/eino/schema"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/bench/benchkit"
)

// einoSignatureKey is where eino-ext's Claude model
// (components/model/claude, message_extra.go) keeps a thinking block's
// signature.
const einoSignatureKey = "_eino_claude_thinking_signature"

// Eino is github.com/cloudwego/eino's schema.Message, written with
// encoding/json (its JSON support is its struct tags).
func Eino() benchkit.Codec[[]*schema.Message] {
	enc, dec := benchkit.JSON[[]*schema.Message]()
	return benchkit.Codec[[]*schema.Message]{Name: "eino", From: toEino, To: fromEino, Encode: enc, Decode: dec}
}

func toEino(h convo.History) ([]*schema.Message, error) {
	out := make([]*schema.Message, 0, len(h)+len(h)/4)
	for i, m := range h {
		switch m.Role {
		case convo.RoleSystem, convo.RoleUser:
			em := &schema.Message{Role: schema.User, Name: m.Name}
			if m.Role == convo.RoleSystem {
				em.Role = schema.System
			}
			if len(m.Parts) == 1 && m.Parts[0].Type == convo.TypeText {
				em.Content = m.Parts[0].Text
				out = append(out, em)
				continue
			}
			for j, p := range m.Parts {
				switch p.Type {
				case convo.TypeText:
					em.UserInputMultiContent = append(em.UserInputMultiContent, schema.MessageInputPart{Type: schema.ChatMessagePartTypeText, Text: p.Text})
				case convo.TypeImage:
					data := p.Data
					em.UserInputMultiContent = append(em.UserInputMultiContent, schema.MessageInputPart{Type: schema.ChatMessagePartTypeImageURL,
						Image: &schema.MessageInputImage{MessagePartCommon: schema.MessagePartCommon{Base64Data: &data, MIMEType: p.MediaType}, Detail: schema.ImageURLDetail(p.Detail)}})
				default:
					return nil, fmt.Errorf("messages[%d].parts[%d]: %s part has no place in an eino %s message", i, j, p.Type, m.Role)
				}
			}
			out = append(out, em)
		case convo.RoleAssistant:
			em := &schema.Message{Role: schema.Assistant, Name: m.Name}
			var text []string
			for j, p := range m.Parts {
				switch p.Type {
				case convo.TypeText:
					text = append(text, p.Text)
				case convo.TypeReasoning:
					if em.ReasoningContent != "" {
						return nil, fmt.Errorf("messages[%d].parts[%d]: eino holds one reasoning text per message", i, j)
					}
					em.ReasoningContent = p.Text
					if p.Signature != "" {
						em.Extra = map[string]any{einoSignatureKey: p.Signature}
					}
				case convo.TypeToolCall:
					em.ToolCalls = append(em.ToolCalls, schema.ToolCall{ID: p.ID, Type: "function",
						Function: schema.FunctionCall{Name: p.Name, Arguments: string(p.Args)}})
				default:
					return nil, fmt.Errorf("messages[%d].parts[%d]: %s part has no place in an eino assistant message", i, j, p.Type)
				}
			}
			em.Content = strings.Join(text, "\n")
			if m.Finish != "" || m.Usage != nil {
				em.ResponseMeta = &schema.ResponseMeta{FinishReason: string(m.Finish)}
				if u := m.Usage; u != nil {
					em.ResponseMeta.Usage = &schema.TokenUsage{PromptTokens: int(u.Input), CompletionTokens: int(u.Output), TotalTokens: int(u.Total),
						PromptTokenDetails:      schema.PromptTokenDetails{CachedTokens: int(u.CacheRead)},
						CompletionTokensDetails: schema.CompletionTokensDetails{ReasoningTokens: int(u.Reasoning)}}
				}
			}
			out = append(out, em)
		case convo.RoleTool:
			// eino has one tool message per result.
			for j, p := range m.Parts {
				if p.Type != convo.TypeToolResult {
					return nil, fmt.Errorf("messages[%d].parts[%d]: %s part in a tool message", i, j, p.Type)
				}
				out = append(out, &schema.Message{Role: schema.Tool, ToolCallID: p.ID, ToolName: p.Name, Content: resultText(p)})
			}
		default:
			return nil, fmt.Errorf("messages[%d]: eino has no %s role", i, m.Role)
		}
	}
	return out, nil
}

// resultText is a tool result's content as one string, which is all most
// peers hold: text as is, JSON as its text.
func resultText(p convo.Part) string {
	var b strings.Builder
	for _, q := range p.Parts {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		switch q.Type {
		case convo.TypeJSON:
			b.Write(q.Value)
		default:
			b.WriteString(q.Text)
		}
	}
	return b.String()
}

func fromEino(ms []*schema.Message) (convo.History, error) {
	h := make(convo.History, 0, len(ms))
	for i, em := range ms {
		switch em.Role {
		case schema.System, schema.User:
			m := convo.Message{Role: convo.RoleUser, Name: em.Name}
			if em.Role == schema.System {
				m.Role = convo.RoleSystem
			}
			if em.Content != "" {
				m.Parts = append(m.Parts, convo.Text(em.Content))
			}
			for j, p := range em.UserInputMultiContent {
				switch p.Type {
				case schema.ChatMessagePartTypeText:
					m.Parts = append(m.Parts, convo.Text(p.Text))
				case schema.ChatMessagePartTypeImageURL:
					if p.Image == nil || p.Image.Base64Data == nil {
						return nil, fmt.Errorf("eino[%d].user_input_multi_content[%d]: image without inline data", i, j)
					}
					m.Parts = append(m.Parts, convo.Part{Type: convo.TypeImage, MediaType: p.Image.MIMEType, Data: *p.Image.Base64Data, Detail: string(p.Image.Detail)})
				default:
					return nil, fmt.Errorf("eino[%d].user_input_multi_content[%d]: unexpected %s part", i, j, p.Type)
				}
			}
			h = append(h, m)
		case schema.Assistant:
			m := convo.Message{Role: convo.RoleAssistant, Name: em.Name}
			if em.ReasoningContent != "" {
				sig, _ := em.Extra[einoSignatureKey].(string)
				m.Parts = append(m.Parts, convo.Part{Type: convo.TypeReasoning, Text: em.ReasoningContent, Signature: sig})
			}
			if em.Content != "" {
				m.Parts = append(m.Parts, convo.Text(em.Content))
			}
			for _, tc := range em.ToolCalls {
				m.Parts = append(m.Parts, convo.ToolCall(tc.ID, tc.Function.Name, json.RawMessage(tc.Function.Arguments)))
			}
			if rm := em.ResponseMeta; rm != nil {
				m.Finish = convo.Finish(rm.FinishReason)
				if u := rm.Usage; u != nil {
					m.Usage = &convo.Usage{Input: int64(u.PromptTokens), Output: int64(u.CompletionTokens), Total: int64(u.TotalTokens),
						CacheRead: int64(u.PromptTokenDetails.CachedTokens), Reasoning: int64(u.CompletionTokensDetails.ReasoningTokens)}
				}
			}
			h = append(h, m)
		case schema.Tool:
			res := convo.ToolResult(em.ToolCallID, em.ToolName, em.Content)
			if n := len(h); n > 0 && h[n-1].Role == convo.RoleTool && i > 0 && ms[i-1].Role == schema.Tool {
				h[n-1].Parts = append(h[n-1].Parts, res)
				continue
			}
			h = append(h, convo.ToolResults(res))
		default:
			return nil, fmt.Errorf("eino[%d]: unknown role %q", i, em.Role)
		}
	}
	return h, nil
}
