package bedrock_test

import (
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/bedrock"
)

// Converse is both codecs of the format: Encode gives the request's
// conversation members, DecodeReply reads the provider's answer into one
// assistant message to append to the history.
func Example() {
	h := convo.History{
		convo.System("Be brief."),
		convo.User("Weather in Paris?"),
	}
	body, warns, err := bedrock.Converse().Encode(h, provider.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(body), len(warns))

	reply, _, err := bedrock.Converse().DecodeReply([]byte(`{"output":{"message":{"role":"assistant","content":[{"text":"18 °C and sunny."}]}},"stopReason":"end_turn","usage":{"inputTokens":12,"outputTokens":6,"totalTokens":18}}`), provider.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(reply.Role, reply.Finish, reply.Text())
	// Output:
	// {"system":[{"text":"Be brief."}],"messages":[{"role":"user","content":[{"text":"Weather in Paris?"}]}]} 0
	// assistant stop 18 °C and sunny.
}
