package openai_test

import (
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/openai"
)

// Chat and Responses are the two OpenAI formats; each is both codecs.
// Encode gives the request's conversation members, DecodeReply reads the
// answer into one assistant message to append to the history.
func Example() {
	h := convo.History{
		convo.System("Be brief."),
		convo.User("Weather in Paris?"),
	}
	for _, f := range []provider.Format{openai.Chat(), openai.Responses()} {
		body, _, err := f.Encode(h, provider.Options{})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(f.Name(), string(body))
	}

	reply, _, err := openai.Chat().DecodeReply([]byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1767225600,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"18 °C and sunny."},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":6,"total_tokens":18}}`), provider.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(reply.Role, reply.Finish, reply.Text(), reply.Usage.Input)
	// Output:
	// openai-chat {"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Weather in Paris?"}]}
	// openai-responses {"input":[{"role":"system","content":"Be brief."},{"role":"user","content":"Weather in Paris?"}]}
	// assistant stop 18 °C and sunny. 12
}
