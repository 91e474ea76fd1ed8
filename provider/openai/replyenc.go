package openai

import (
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// EncodeChatReply returns a Chat Completions response body for an assistant
// message: the non-streamed counterpart of NewChatStreamEncoder.
//
// The texts of the message are joined into the content, and their
// citations Chat has a form for (url) become its annotations, start_index
// and end_index counted in runes of the joined content: a citation's span
// moves by where its part begins, and one without a span (it supports its
// whole part, as Anthropic's do) gets the part's stretch, since Chat
// requires both. Other citations are left out.
//
// Calls and results of tools a provider ran itself (Part.IsServerTool)
// are left out: Chat has no form for them, and written as function calls
// a client would run them.
func EncodeChatReply(m convo.Message, opts provider.StreamOptions) []byte {
	return EncodeChatReplies([]convo.Message{m}, opts)
}

// EncodeChatReplies returns a Chat Completions response body with one
// choice per message, message k as the choice with index k (the reply to a
// request with n > 1, as DecodeReplies reads it). The first message gives
// the response's usage, id and model.
func EncodeChatReplies(ms []convo.Message, opts provider.StreamOptions) []byte {
	id, model := wire.NewID("chatcmpl-"), opts.Model
	var usage *convo.Usage
	if len(ms) > 0 {
		usage = ms[0].Usage
		if o := ms[0].Origin; o != nil {
			if strings.HasPrefix(o.ResponseID, "chatcmpl") {
				id = o.ResponseID
			}
			if model == "" {
				model = o.Model
			}
		}
	}
	b := append([]byte(nil), `{"id":`...)
	b = jsonx.AppendString(b, id)
	b = append(b, `,"object":"chat.completion","created":`...)
	b = strconv.AppendInt(b, time.Now().Unix(), 10)
	b = jsonx.AppendString(append(b, `,"model":`...), model)
	b = append(b, `,"choices":[`...)
	for k := range ms {
		if k > 0 {
			b = append(b, ',')
		}
		b = appendChatChoice(b, k, &ms[k])
	}
	b = append(b, ']')
	if usage != nil {
		b = appendUsageJSON(append(b, `,"usage":`...), usage, true)
	}
	return append(b, '}')
}

// appendChatChoice appends the choice with index k for message m.
func appendChatChoice(b []byte, k int, m *convo.Message) []byte {
	var text, refusal, reasoning strings.Builder
	var calls, anns []byte
	var r jsonx.Reader
	runes := 0 // of the content so far, where the next text's citations count from
	for i := range m.Parts {
		p := &m.Parts[i]
		switch p.Type {
		case convo.TypeText:
			text.WriteString(p.Text)
			n := utf8.RuneCountInString(p.Text)
			if mark := len(anns); len(p.Citations) > 0 {
				if mark > 0 {
					anns = append(anns, ',')
				}
				var k int
				if anns, k = appendChatCites(anns, p.Citations, p.Text, runes, &r); k == 0 {
					anns = anns[:mark]
				}
			}
			runes += n
		case convo.TypeRefusal:
			refusal.WriteString(p.Text)
		case convo.TypeReasoning:
			if p.Text != "" {
				reasoning.WriteString(p.Text)
			} else {
				reasoning.WriteString(strings.Join(p.Summary, "\n\n"))
			}
		case convo.TypeToolCall:
			if p.IsServerTool() {
				continue // written as a function call, a client would run it
			}
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
	b = strconv.AppendInt(append(b, `{"index":`...), int64(k), 10)
	b = append(b, `,"message":{"role":"assistant","content":`...)
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
	if len(anns) > 0 {
		b = append(append(append(b, `,"annotations":[`...), anns...), ']')
	}
	b = jsonx.AppendString(append(b, `},"finish_reason":`...), chatFinishReason(m.Finish))
	return append(b, `,"logprobs":null}`...)
}

// EncodeResponsesReply returns a Responses response body for an assistant
// message: the response object NewResponsesStreamEncoder ends with.
//
// The calls and results of tools OpenAI ran are written as their items
// (web_search_call, mcp_call, …) as they came; those of tools another
// provider ran are left out.
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
