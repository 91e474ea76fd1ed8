// Package request compares building a provider request from a conversation
// with convo's codecs and with the official SDKs' parameter types
// (github.com/anthropics/anthropic-sdk-go, github.com/openai/openai-go/v3).
//
// Each SDK builder fills the SDK's params from the same history the way a
// program keeping its conversation in those types would have filled them,
// choosing the SDK's forms that give the very request convo sends
// (TestSameRequest checks they are equal as JSON), so both sides do the
// same work.
package request

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	canthropic "github.com/convo-go/convo/provider/anthropic"
	copenai "github.com/convo-go/convo/provider/openai"
)

// The request settings besides the conversation, the same on both sides.
const (
	AnthropicModel = "claude-sonnet-4-5"
	OpenAIModel    = "gpt-5"
	MaxTokens      = 1024
)

// AnthropicConvo builds a Messages API request body with convo: the
// settings and the history in one provider.Request, as a program sending it
// does.
func AnthropicConvo(h convo.History) ([]byte, error) { return AnthropicAppend(nil, h) }

// OpenAIChatConvo builds a Chat Completions request body with convo.
func OpenAIChatConvo(h convo.History) ([]byte, error) { return OpenAIChatAppend(nil, h) }

// OpenAIResponsesConvo builds a Responses API request body with convo.
func OpenAIResponsesConvo(h convo.History) ([]byte, error) { return OpenAIResponsesAppend(nil, h) }

// AnthropicAppend is AnthropicConvo appending to dst: a program that sends
// a long conversation again and again can hand its buffer back.
func AnthropicAppend(dst []byte, h convo.History) ([]byte, error) {
	return appendRequest(canthropic.Messages(), dst, &provider.Request{Model: AnthropicModel, MaxTokens: MaxTokens, History: h})
}

// OpenAIChatAppend is OpenAIChatConvo appending to dst.
func OpenAIChatAppend(dst []byte, h convo.History) ([]byte, error) {
	return appendRequest(copenai.Chat(), dst, &provider.Request{Model: OpenAIModel, History: h})
}

// OpenAIResponsesAppend is OpenAIResponsesConvo appending to dst.
func OpenAIResponsesAppend(dst []byte, h convo.History) ([]byte, error) {
	return appendRequest(copenai.Responses(), dst, &provider.Request{Model: OpenAIModel, History: h})
}

func appendRequest(c provider.Codec, dst []byte, r *provider.Request) ([]byte, error) {
	a, ok := c.(provider.RequestAppender)
	if !ok {
		return nil, fmt.Errorf("%s cannot append a request", c.Name())
	}
	body, _, err := a.AppendRequest(dst, r, provider.Options{})
	return body, err
}

// AnthropicParams fills anthropic.MessageNewParams from h.
func AnthropicParams(h convo.History) (anthropic.MessageNewParams, error) {
	p := anthropic.MessageNewParams{Model: AnthropicModel, MaxTokens: MaxTokens}
	for i, m := range h {
		switch m.Role {
		case convo.RoleSystem:
			for _, part := range m.Parts {
				p.System = append(p.System, anthropic.TextBlockParam{Text: part.Text})
			}
			continue
		case convo.RoleUser, convo.RoleAssistant, convo.RoleTool:
		default:
			return p, fmt.Errorf("messages[%d]: role %s", i, m.Role)
		}
		blocks := make([]anthropic.ContentBlockParamUnion, 0, len(m.Parts))
		for j, part := range m.Parts {
			switch part.Type {
			case convo.TypeText:
				blocks = append(blocks, anthropic.NewTextBlock(part.Text))
			case convo.TypeImage:
				blocks = append(blocks, anthropic.NewImageBlockBase64(part.MediaType, part.Data))
			case convo.TypeReasoning:
				blocks = append(blocks, anthropic.NewThinkingBlock(part.Signature, part.Text))
			case convo.TypeToolCall:
				blocks = append(blocks, anthropic.NewToolUseBlock(part.ID, part.Args, part.Name))
			case convo.TypeToolResult:
				r := anthropic.ToolResultBlockParam{ToolUseID: part.ID}
				if part.Error {
					r.IsError = anthropic.Bool(true)
				}
				r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: resultText(part)}}}
				blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolResult: &r})
			default:
				return p, fmt.Errorf("messages[%d].parts[%d]: %s", i, j, part.Type)
			}
		}
		if m.Role == convo.RoleAssistant {
			p.Messages = append(p.Messages, anthropic.NewAssistantMessage(blocks...))
		} else {
			p.Messages = append(p.Messages, anthropic.NewUserMessage(blocks...))
		}
	}
	return p, nil
}

// resultText is a tool result's content as the text the APIs take: text
// as is, JSON as its text.
func resultText(p convo.Part) string {
	if len(p.Parts) == 1 {
		if q := p.Parts[0]; q.Type == convo.TypeJSON {
			return string(q.Value)
		}
		return p.Parts[0].Text
	}
	var b strings.Builder
	for _, q := range p.Parts {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		if q.Type == convo.TypeJSON {
			b.Write(q.Value)
		} else {
			b.WriteString(q.Text)
		}
	}
	return b.String()
}

func dataURL(p convo.Part) string { return "data:" + p.MediaType + ";base64," + p.Data }

// OpenAIChatParams fills openai.ChatCompletionNewParams from h. Reasoning
// has no place in Chat Completions and is left out, as convo leaves it out.
func OpenAIChatParams(h convo.History) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: OpenAIModel, Messages: make([]openai.ChatCompletionMessageParamUnion, 0, len(h)+len(h)/8)}
	for i, m := range h {
		switch m.Role {
		case convo.RoleSystem:
			p.Messages = append(p.Messages, openai.SystemMessage(m.Text()))
		case convo.RoleUser:
			if len(m.Parts) == 1 && m.Parts[0].Type == convo.TypeText {
				p.Messages = append(p.Messages, openai.UserMessage(m.Parts[0].Text))
				continue
			}
			parts := make([]openai.ChatCompletionContentPartUnionParam, 0, len(m.Parts))
			for j, part := range m.Parts {
				switch part.Type {
				case convo.TypeText:
					parts = append(parts, openai.TextContentPart(part.Text))
				case convo.TypeImage:
					parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: dataURL(part)}))
				default:
					return p, fmt.Errorf("messages[%d].parts[%d]: %s", i, j, part.Type)
				}
			}
			p.Messages = append(p.Messages, openai.UserMessage(parts))
		case convo.RoleAssistant:
			a := openai.ChatCompletionAssistantMessageParam{}
			if t := m.Text(); t != "" {
				a.Content.OfString = openai.String(t)
			}
			for _, part := range m.Parts {
				if part.Type == convo.TypeToolCall {
					a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: part.ID, Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: part.Name, Arguments: string(part.Args)}}})
				}
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case convo.RoleTool:
			for _, part := range m.Parts {
				p.Messages = append(p.Messages, openai.ToolMessage(resultText(part), part.ID))
			}
		default:
			return p, fmt.Errorf("messages[%d]: role %s", i, m.Role)
		}
	}
	return p, nil
}

// OpenAIResponsesParams fills responses.ResponseNewParams from h.
func OpenAIResponsesParams(h convo.History) (responses.ResponseNewParams, error) {
	items := make(responses.ResponseInputParam, 0, len(h)*2)
	for i, m := range h {
		switch m.Role {
		case convo.RoleSystem, convo.RoleUser:
			role := responses.EasyInputMessageRoleUser
			if m.Role == convo.RoleSystem {
				role = responses.EasyInputMessageRoleSystem
			}
			if len(m.Parts) == 1 && m.Parts[0].Type == convo.TypeText {
				items = append(items, responses.ResponseInputItemParamOfMessage(m.Parts[0].Text, role))
				continue
			}
			content := make(responses.ResponseInputMessageContentListParam, 0, len(m.Parts))
			for j, part := range m.Parts {
				switch part.Type {
				case convo.TypeText:
					content = append(content, responses.ResponseInputContentParamOfInputText(part.Text))
				case convo.TypeImage:
					img := responses.ResponseInputImageParam{Detail: responses.ResponseInputImageDetailAuto, ImageURL: openai.String(dataURL(part))}
					content = append(content, responses.ResponseInputContentUnionParam{OfInputImage: &img})
				default:
					return responses.ResponseNewParams{}, fmt.Errorf("messages[%d].parts[%d]: %s", i, j, part.Type)
				}
			}
			items = append(items, responses.ResponseInputItemParamOfMessage(content, role))
		case convo.RoleAssistant:
			for j, part := range m.Parts {
				switch part.Type {
				case convo.TypeReasoning:
					summary := make([]responses.ResponseReasoningItemSummaryParam, len(part.Summary))
					for k, s := range part.Summary {
						summary[k] = responses.ResponseReasoningItemSummaryParam{Text: s}
					}
					it := responses.ResponseInputItemParamOfReasoning(part.ID, summary)
					it.OfReasoning.EncryptedContent = openai.String(part.Encrypted)
					items = append(items, it)
				case convo.TypeText:
					items = append(items, responses.ResponseInputItemParamOfMessage(part.Text, responses.EasyInputMessageRoleAssistant))
				case convo.TypeToolCall:
					items = append(items, responses.ResponseInputItemParamOfFunctionCall(string(part.Args), part.ID, part.Name))
				default:
					return responses.ResponseNewParams{}, fmt.Errorf("messages[%d].parts[%d]: %s", i, j, part.Type)
				}
			}
		case convo.RoleTool:
			for _, part := range m.Parts {
				// The helper takes no call id (a gap in the generated SDK): set it.
				it := responses.ResponseInputItemParamOfFunctionCallOutput(resultText(part))
				it.OfFunctionCallOutput.CallID = openai.String(part.ID)
				items = append(items, it)
			}
		default:
			return responses.ResponseNewParams{}, fmt.Errorf("messages[%d]: role %s", i, m.Role)
		}
	}
	return responses.ResponseNewParams{Model: shared.ResponsesModel(OpenAIModel), Input: responses.ResponseNewParamsInputUnion{OfInputItemList: items}}, nil
}

// Marshal is how a program using an SDK gets the request body from its
// params: the SDK's own MarshalJSON methods, through encoding/json.
func Marshal(v any) ([]byte, error) { return json.Marshal(v) }
