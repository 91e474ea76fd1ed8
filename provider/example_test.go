package provider_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
)

// Encode a history for a provider, merge the conversation members into a
// request of your own, and read the streamed reply back as one message.
func Example() {
	f := anthropic.Messages()
	h := convo.History{convo.User("Weather in Paris?")}

	conv, warns, err := f.Encode(h, provider.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, w := range warns {
		fmt.Println("warning:", w) // what the format could not carry
	}
	var req map[string]json.RawMessage
	if err := json.Unmarshal(conv, &req); err != nil {
		fmt.Println(err)
		return
	}
	req["model"] = json.RawMessage(`"claude-sonnet-4-5"`)
	req["max_tokens"] = json.RawMessage(`1024`)
	req["stream"] = json.RawMessage(`true`)
	body, _ := json.Marshal(req) // POST body to /v1/messages
	fmt.Println(string(body))

	stream := strings.NewReader(`event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":12,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"18 °C and sunny."}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":6}}

event: message_stop
data: {"type":"message_stop"}

`)
	reply, _, err := f.ReadStream(stream, provider.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	h = append(h, reply)
	fmt.Println(len(h), reply.Finish, reply.Text(), reply.Usage.Output)
	// Output:
	// {"max_tokens":1024,"messages":[{"role":"user","content":[{"type":"text","text":"Weather in Paris?"}]}],"model":"claude-sonnet-4-5","stream":true}
	// 2 stop 18 °C and sunny. 6
}

// Every codec reports an error the provider sent as one *APIError, and a
// stream cut short wraps ErrIncomplete.
func ExampleAPIError() {
	_, _, err := anthropic.Messages().DecodeReply([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), provider.Options{})
	var apiErr *provider.APIError
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Provider, apiErr.Type, apiErr.Message)
	}
	fmt.Println(err)

	_, _, err = anthropic.Messages().ReadStream(strings.NewReader(""), provider.Options{})
	fmt.Println(errors.Is(err, provider.ErrIncomplete))
	// Output:
	// anthropic overloaded_error Overloaded
	// anthropic: Overloaded (overloaded_error)
	// true
}
