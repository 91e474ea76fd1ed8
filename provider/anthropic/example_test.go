package anthropic_test

import (
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/anthropic"
)

// Messages is both codecs of the format: Encode gives the request's
// conversation members, DecodeReply reads the provider's answer into one
// assistant message to append to the history.
func Example() {
	h := convo.History{
		convo.System("Be brief."),
		convo.User("Weather in Paris?"),
	}
	body, warns, err := anthropic.Messages().Encode(h, provider.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(body), len(warns))

	reply, _, err := anthropic.Messages().DecodeReply([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"18 °C and sunny."}],"stop_reason":"end_turn","usage":{"input_tokens":12,"output_tokens":6}}`), provider.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(reply.Role, reply.Finish, reply.Text())
	// Output:
	// {"system":[{"type":"text","text":"Be brief."}],"messages":[{"role":"user","content":[{"type":"text","text":"Weather in Paris?"}]}]} 0
	// assistant stop 18 °C and sunny.
}
