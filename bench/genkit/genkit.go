// Package genkit puts github.com/firebase/genkit/go's ai.Message beside
// convo in the persistence comparison. It is a module of its own because
// genkit's dotprompt dependency builds only with invopop/jsonschema v0.13,
// and the Anthropic SDK the other benchmarks use needs v0.14.
//
// The adapter follows the conventions of genkit's own plugins: a reasoning
// part is ai.NewReasoningPart(text, []byte(signature)), as the Anthropic
// plugin makes it, and reading the signature back is the plugin's
// p.Metadata["signature"].([]byte). Media are data URLs; tool inputs and
// outputs are decoded JSON values.
package genkit

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/firebase/genkit/go/ai"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/bench/benchkit"
)

// Codec is genkit's []*ai.Message written with encoding/json and the
// parts' own MarshalJSON and UnmarshalJSON methods.
func Codec() benchkit.Codec[[]*ai.Message] {
	enc, dec := benchkit.JSON[[]*ai.Message]()
	return benchkit.Codec[[]*ai.Message]{Name: "genkit", From: toGenkit, To: fromGenkit, Encode: enc, Decode: dec}
}

var toRole = map[convo.Role]ai.Role{
	convo.RoleSystem:    ai.RoleSystem,
	convo.RoleUser:      ai.RoleUser,
	convo.RoleAssistant: ai.RoleModel,
	convo.RoleTool:      ai.RoleTool,
}

func toGenkit(h convo.History) ([]*ai.Message, error) {
	out := make([]*ai.Message, 0, len(h))
	for i, m := range h {
		role, ok := toRole[m.Role]
		if !ok {
			return nil, fmt.Errorf("messages[%d]: genkit has no %s role", i, m.Role)
		}
		gm := &ai.Message{Role: role, Content: make([]*ai.Part, 0, len(m.Parts))}
		for j, p := range m.Parts {
			where := fmt.Sprintf("messages[%d].parts[%d]", i, j)
			switch p.Type {
			case convo.TypeText:
				gm.Content = append(gm.Content, ai.NewTextPart(p.Text))
			case convo.TypeImage:
				gm.Content = append(gm.Content, ai.NewMediaPart(p.MediaType, "data:"+p.MediaType+";base64,"+p.Data))
			case convo.TypeReasoning:
				gm.Content = append(gm.Content, ai.NewReasoningPart(p.Text, []byte(p.Signature)))
			case convo.TypeToolCall:
				var in any
				if err := json.Unmarshal(p.Args, &in); err != nil {
					return nil, fmt.Errorf("%s.args: %w", where, err)
				}
				gm.Content = append(gm.Content, ai.NewToolRequestPart(&ai.ToolRequest{Name: p.Name, Ref: p.ID, Input: in}))
			case convo.TypeToolResult:
				if len(p.Parts) != 1 {
					return nil, fmt.Errorf("%s: a genkit tool response holds one output", where)
				}
				var outv any
				switch q := p.Parts[0]; q.Type {
				case convo.TypeJSON:
					if err := json.Unmarshal(q.Value, &outv); err != nil {
						return nil, fmt.Errorf("%s.parts[0].value: %w", where, err)
					}
				case convo.TypeText:
					outv = q.Text
				default:
					return nil, fmt.Errorf("%s.parts[0]: genkit tool output cannot be %s", where, q.Type)
				}
				gm.Content = append(gm.Content, ai.NewToolResponsePart(&ai.ToolResponse{Name: p.Name, Ref: p.ID, Output: outv}))
			default:
				return nil, fmt.Errorf("%s: genkit has no %s part", where, p.Type)
			}
		}
		out = append(out, gm)
	}
	return out, nil
}

var fromRole = map[ai.Role]convo.Role{
	ai.RoleSystem: convo.RoleSystem,
	ai.RoleUser:   convo.RoleUser,
	ai.RoleModel:  convo.RoleAssistant,
	ai.RoleTool:   convo.RoleTool,
}

func fromGenkit(ms []*ai.Message) (convo.History, error) {
	h := make(convo.History, 0, len(ms))
	for i, gm := range ms {
		role, ok := fromRole[gm.Role]
		if !ok {
			return nil, fmt.Errorf("genkit[%d]: unknown role %q", i, gm.Role)
		}
		m := convo.Message{Role: role, Parts: make([]convo.Part, 0, len(gm.Content))}
		for j, p := range gm.Content {
			where := fmt.Sprintf("genkit[%d].content[%d]", i, j)
			switch {
			case p.IsText():
				m.Parts = append(m.Parts, convo.Text(p.Text))
			case p.IsMedia():
				mt, data, ok := strings.Cut(strings.TrimPrefix(p.Text, "data:"), ";base64,")
				if !ok {
					return nil, fmt.Errorf("%s: media is not a base64 data URL", where)
				}
				if p.ContentType != "" {
					mt = p.ContentType
				}
				m.Parts = append(m.Parts, convo.Part{Type: convo.TypeImage, MediaType: mt, Data: data})
			case p.IsReasoning():
				sig, _ := p.Metadata["signature"].([]byte) // as genkit's Anthropic plugin reads it
				m.Parts = append(m.Parts, convo.Part{Type: convo.TypeReasoning, Text: p.Text, Signature: string(sig)})
			case p.IsToolRequest():
				args, err := json.Marshal(p.ToolRequest.Input)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", where, err)
				}
				m.Parts = append(m.Parts, convo.ToolCall(p.ToolRequest.Ref, p.ToolRequest.Name, args))
			case p.IsToolResponse():
				tr := p.ToolResponse
				if s, ok := tr.Output.(string); ok {
					m.Parts = append(m.Parts, convo.ToolResult(tr.Ref, tr.Name, s))
					continue
				}
				v, err := json.Marshal(tr.Output)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", where, err)
				}
				m.Parts = append(m.Parts, convo.ToolResultParts(tr.Ref, tr.Name, convo.JSON(v)))
			default:
				return nil, fmt.Errorf("%s: unexpected part kind %d", where, p.Kind)
			}
		}
		h = append(h, m)
	}
	return h, nil
}
