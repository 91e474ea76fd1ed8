package ollama_test

import (
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/ollama"
)

// Chat is both codecs of the format: Encode gives the request's
// conversation members, DecodeReply reads the provider's answer into one
// assistant message to append to the history.
func Example() {
	h := convo.History{
		convo.System("Be brief."),
		convo.User("Weather in Paris?"),
	}
	body, warns, err := ollama.Chat().Encode(h, provider.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(body), len(warns))

	reply, _, err := ollama.Chat().DecodeReply([]byte(`{"model":"llama3.2","created_at":"2026-01-01T00:00:00Z","message":{"role":"assistant","content":"18 °C and sunny."},"done":true,"done_reason":"stop","prompt_eval_count":12,"eval_count":6}`), provider.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(reply.Role, reply.Finish, reply.Text())
	// Output:
	// {"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Weather in Paris?"}]} 0
	// assistant stop 18 °C and sunny.
}
