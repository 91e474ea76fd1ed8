// Package stream compares folding a streamed reply into one message: convo's
// ReplyCodec.ReadStream against the official SDKs' own stream readers and
// accumulators (anthropic-sdk-go's Message.Accumulate, openai-go's
// ChatCompletionAccumulator), both reading the same server-sent-event bytes.
//
// The streams are the captured replies in convo's provider test data and
// longer replies generated in exactly their shape (Anthropic's and OpenAI's
// event and field order, as in the captures), so both sides parse the same
// framing and JSON.
package stream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	assestream "github.com/anthropics/anthropic-sdk-go/packages/ssestream"
	"github.com/openai/openai-go/v3"
	ossestream "github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	canthropic "github.com/convo-go/convo/provider/anthropic"
	copenai "github.com/convo-go/convo/provider/openai"
)

func sseResponse(data []byte) *http.Response {
	return &http.Response{Body: io.NopCloser(bytes.NewReader(data)), Header: http.Header{"Content-Type": {"text/event-stream"}}}
}

// AnthropicConvo reads an Anthropic Messages stream with convo.
func AnthropicConvo(data []byte) (convo.Message, error) {
	m, _, err := canthropic.Messages().ReadStream(bytes.NewReader(data), provider.Options{})
	return m, err
}

// AnthropicSDK reads an Anthropic Messages stream with the SDK's SSE
// decoder and accumulates it with Message.Accumulate.
func AnthropicSDK(data []byte) (anthropic.Message, error) {
	st := assestream.NewStream[anthropic.MessageStreamEventUnion](assestream.NewDecoder(sseResponse(data)), nil)
	var msg anthropic.Message
	for st.Next() {
		if err := msg.Accumulate(st.Current()); err != nil {
			return msg, err
		}
	}
	return msg, st.Err()
}

// OpenAIChatConvo reads a Chat Completions stream with convo.
func OpenAIChatConvo(data []byte) (convo.Message, error) {
	m, _, err := copenai.Chat().ReadStream(bytes.NewReader(data), provider.Options{})
	return m, err
}

// OpenAIChatSDK reads a Chat Completions stream with the SDK's SSE decoder
// and accumulates it with ChatCompletionAccumulator.
func OpenAIChatSDK(data []byte) (openai.ChatCompletion, error) {
	st := ossestream.NewStream[openai.ChatCompletionChunk](ossestream.NewDecoder(sseResponse(data)), nil)
	var acc openai.ChatCompletionAccumulator
	for st.Next() {
		if !acc.AddChunk(st.Current()) {
			return acc.ChatCompletion, fmt.Errorf("chunk rejected by the accumulator")
		}
	}
	return acc.ChatCompletion, st.Err()
}

// words is the prose long replies are made of.
var words = strings.Fields(`The forecast for Friday shows a band of light rain moving in from the
west around noon, clearing by the evening. Temperatures stay between eight and fourteen degrees,
with a light breeze from the south-west. If you are out in the afternoon, a compact umbrella is
worth packing; a light rain jacket would do as well. Saturday looks drier, with sunny spells.`)

// deltas splits n words of prose into deltas of a few words, as models
// stream them.
func deltas(n int) []string {
	out := make([]string, 0, n/3+1)
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(words[i%len(words)])
		b.WriteByte(' ')
		if i%3 == 2 || i == n-1 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	return out
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// AnthropicLong generates an Anthropic Messages stream shaped like the
// captured ones: signed thinking of thinkWords words, a text answer of
// textWords words, and a tool call whose arguments arrive in pieces.
func AnthropicLong(thinkWords, textWords int) []byte {
	var b bytes.Buffer
	ev := func(name, data string) { fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data) }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5-20250929","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":2472,"cache_creation_input_tokens":0,"cache_read_input_tokens":2048,"output_tokens":3,"service_tier":"standard"}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`)
	for _, d := range deltas(thinkWords) {
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":`+jsonString(d)+`}}`)
	}
	ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkYIBxgCKkDx`+strings.Repeat("c2lnbmF0dXJlIGJ5dGVz", 16)+`"}}`)
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`)
	for _, d := range deltas(textWords) {
		ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":`+jsonString(d)+`}}`)
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":1}`)
	ev("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9","name":"get_forecast","input":{}}}`)
	for _, piece := range []string{`{"city": "Os`, `lo", "date": "2026-`, `03-20", "units": "met`, `ric", "hours": [9, 12,`, ` 15, 18]}`} {
		ev("content_block_delta", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":`+jsonString(piece)+`}}`)
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":2}`)
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":`+fmt.Sprint(thinkWords+textWords+40)+`}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	return b.Bytes()
}

// OpenAIChatLong generates a Chat Completions stream shaped like the
// captured ones: a text answer of textWords words, then a tool call whose
// arguments arrive in pieces, the finish reason, and a usage chunk.
func OpenAIChatLong(textWords int) []byte {
	var b bytes.Buffer
	const head = `{"id":"chatcmpl-C3x9Yk2mP7qR","object":"chat.completion.chunk","created":1764410000,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_51e1070cf2","choices":[`
	chunk := func(choice string) {
		fmt.Fprintf(&b, "data: %s%s],\"usage\":null,\"obfuscation\":\"Xq\"}\n\n", head, choice)
	}
	chunk(`{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}`)
	for _, d := range deltas(textWords) {
		chunk(`{"index":0,"delta":{"content":` + jsonString(d) + `},"logprobs":null,"finish_reason":null}`)
	}
	chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_Qx3fT9ZbW1","type":"function","function":{"name":"get_forecast","arguments":""}}]},"logprobs":null,"finish_reason":null}`)
	for _, piece := range []string{`{"city": "Os`, `lo", "date": "2026-`, `03-20", "units": "met`, `ric", "hours": [9, 12,`, ` 15, 18]}`} {
		chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":` + jsonString(piece) + `}}]},"logprobs":null,"finish_reason":null}`)
	}
	chunk(`{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}`)
	fmt.Fprintf(&b, "data: %s],\"usage\":{\"prompt_tokens\":2472,\"completion_tokens\":%d,\"total_tokens\":%d,\"prompt_tokens_details\":{\"cached_tokens\":2048,\"audio_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0,\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}}\n\n",
		head, textWords+40, 2472+textWords+40)
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}
