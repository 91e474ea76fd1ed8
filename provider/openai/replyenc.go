package openai

import (
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// EncodeChatReply returns a Chat Completions response body for an assistant
// message: the non-streamed counterpart of NewChatStreamEncoder.
func EncodeChatReply(m convo.Message, opts provider.StreamOptions) []byte {
	id, model := wire.NewID("chatcmpl-"), opts.Model
	if m.Origin != nil {
		if strings.HasPrefix(m.Origin.ResponseID, "chatcmpl") {
			id = m.Origin.ResponseID
		}
		if model == "" {
			model = m.Origin.Model
		}
	}
	var text, refusal, reasoning strings.Builder
	var calls []byte
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Type {
		case convo.TypeText:
			text.WriteString(p.Text)
		case convo.TypeRefusal:
			refusal.WriteString(p.Text)
		case convo.TypeReasoning:
			if p.Text != "" {
				reasoning.WriteString(p.Text)
			} else {
				reasoning.WriteString(strings.Join(p.Summary, "\n\n"))
			}
		case convo.TypeToolCall:
			if len(calls) > 0 {
				calls = append(calls, ',')
			}
			args := string(p.Args)
			if p.Args == nil {
				args = p.ArgsRaw
			}
			calls = jsonx.AppendString(append(calls, `{"id":`...), p.ID)
			calls = jsonx.AppendString(append(calls, `,"type":"function","function":{"name":`...), p.Name)
			calls = jsonx.AppendString(append(calls, `,"arguments":`...), args)
			calls = append(calls, "}}"...)
		}
	}
	b := append([]byte(nil), `{"id":`...)
	b = jsonx.AppendString(b, id)
	b = append(b, `,"object":"chat.completion","created":`...)
	b = strconv.AppendInt(b, time.Now().Unix(), 10)
	b = jsonx.AppendString(append(b, `,"model":`...), model)
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	if text.Len() > 0 || len(calls) == 0 && refusal.Len() == 0 {
		b = jsonx.AppendString(b, text.String())
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"refusal":`...)
	if refusal.Len() > 0 {
		b = jsonx.AppendString(b, refusal.String())
	} else {
		b = append(b, "null"...)
	}
	if reasoning.Len() > 0 {
		b = jsonx.AppendString(append(b, `,"reasoning_content":`...), reasoning.String())
	}
	if len(calls) > 0 {
		b = append(append(append(b, `,"tool_calls":[`...), calls...), ']')
	}
	b = jsonx.AppendString(append(b, `},"finish_reason":`...), chatFinishReason(m.Finish))
	b = append(b, `,"logprobs":null}]`...)
	if m.Usage != nil {
		b = appendUsageJSON(append(b, `,"usage":`...), m.Usage, true)
	}
	return append(b, '}')
}

// EncodeResponsesReply returns a Responses response body for an assistant
// message: the response object NewResponsesStreamEncoder ends with.
func EncodeResponsesReply(m convo.Message, opts provider.StreamOptions) []byte {
	e := NewResponsesStreamEncoder(io.Discard, opts).(*respEncoder)
	for _, d := range provider.MessageDeltas(m) {
		_ = e.Write(d)
	}
	status := "completed"
	if m.Finish == convo.FinishLength {
		status = "incomplete"
	}
	return e.response(status, true)[len(`"response":`):]
}
