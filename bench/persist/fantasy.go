package persist

import (
	"encoding/base64"
	"errors"
	"fmt"

	"charm.land/fantasy"
	fanthropic "charm.land/fantasy/providers/anthropic"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/bench/benchkit"
)

// Fantasy is charm.land/fantasy's fantasy.Message, written with encoding/json
// and the parts' own MarshalJSON and UnmarshalJSON methods. The Anthropic
// provider package is imported so that its reasoning metadata (the
// signature) is registered for decoding, as it is in a program that uses it.
func Fantasy() benchkit.Codec[[]fantasy.Message] {
	enc, dec := benchkit.JSON[[]fantasy.Message]()
	return benchkit.Codec[[]fantasy.Message]{Name: "fantasy", From: toFantasy, To: fromFantasy, Encode: enc, Decode: dec}
}

func toFantasy(h convo.History) ([]fantasy.Message, error) {
	out := make([]fantasy.Message, 0, len(h))
	for i, m := range h {
		fm := fantasy.Message{Role: fantasy.MessageRole(m.Role), Content: make([]fantasy.MessagePart, 0, len(m.Parts))}
		switch m.Role {
		case convo.RoleSystem, convo.RoleUser, convo.RoleAssistant, convo.RoleTool:
		default:
			return nil, fmt.Errorf("messages[%d]: fantasy has no %s role", i, m.Role)
		}
		for j, p := range m.Parts {
			switch p.Type {
			case convo.TypeText:
				fm.Content = append(fm.Content, fantasy.TextPart{Text: p.Text})
			case convo.TypeReasoning:
				rp := fantasy.ReasoningPart{Text: p.Text}
				if p.Signature != "" || p.Encrypted != "" {
					rp.ProviderOptions = fantasy.ProviderOptions{fanthropic.Name: &fanthropic.ReasoningOptionMetadata{Signature: p.Signature, RedactedData: p.Encrypted}}
				}
				fm.Content = append(fm.Content, rp)
			case convo.TypeImage, convo.TypeFile:
				b, err := p.Bytes()
				if err != nil {
					return nil, fmt.Errorf("messages[%d].parts[%d]: %w", i, j, err)
				}
				fm.Content = append(fm.Content, fantasy.FilePart{Filename: p.Name, Data: b, MediaType: p.MediaType})
			case convo.TypeToolCall:
				fm.Content = append(fm.Content, fantasy.ToolCallPart{ToolCallID: p.ID, ToolName: p.Name, Input: string(p.Args)})
			case convo.TypeToolResult:
				var out fantasy.ToolResultOutputContent = fantasy.ToolResultOutputContentText{Text: resultText(p)}
				if p.Error {
					out = fantasy.ToolResultOutputContentError{Error: errors.New(resultText(p))}
				}
				fm.Content = append(fm.Content, fantasy.ToolResultPart{ToolCallID: p.ID, Output: out})
			default:
				return nil, fmt.Errorf("messages[%d].parts[%d]: fantasy has no %s part", i, j, p.Type)
			}
		}
		out = append(out, fm)
	}
	return out, nil
}

func fromFantasy(ms []fantasy.Message) (convo.History, error) {
	h := make(convo.History, 0, len(ms))
	for i, fm := range ms {
		m := convo.Message{Role: convo.Role(fm.Role), Parts: make([]convo.Part, 0, len(fm.Content))}
		for j, p := range fm.Content {
			switch p := p.(type) {
			case fantasy.TextPart:
				m.Parts = append(m.Parts, convo.Text(p.Text))
			case fantasy.ReasoningPart:
				rp := convo.Part{Type: convo.TypeReasoning, Text: p.Text}
				if md := fanthropic.GetReasoningMetadata(p.ProviderOptions); md != nil {
					rp.Signature, rp.Encrypted = md.Signature, md.RedactedData
				}
				m.Parts = append(m.Parts, rp)
			case fantasy.FilePart:
				m.Parts = append(m.Parts, convo.Part{Type: convo.TypeImage, MediaType: p.MediaType, Name: p.Filename, Data: base64.StdEncoding.EncodeToString(p.Data)})
			case fantasy.ToolCallPart:
				m.Parts = append(m.Parts, convo.ToolCall(p.ToolCallID, p.ToolName, []byte(p.Input)))
			case fantasy.ToolResultPart:
				switch o := p.Output.(type) {
				case fantasy.ToolResultOutputContentText:
					m.Parts = append(m.Parts, convo.ToolResult(p.ToolCallID, "", o.Text))
				case fantasy.ToolResultOutputContentError:
					msg := ""
					if o.Error != nil {
						msg = o.Error.Error()
					}
					m.Parts = append(m.Parts, convo.ToolError(p.ToolCallID, "", msg))
				default:
					return nil, fmt.Errorf("fantasy[%d].content[%d]: unexpected tool output %T", i, j, p.Output)
				}
			default:
				return nil, fmt.Errorf("fantasy[%d].content[%d]: unexpected %T", i, j, p)
			}
		}
		h = append(h, m)
	}
	return h, nil
}
