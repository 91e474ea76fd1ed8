package litert_test

import (
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/litert"
)

// Conversation is both codecs of the format: Encode gives the request's
// conversation members, DecodeReply reads the provider's answer into one
// assistant message to append to the history.
func Example() {
	h := convo.History{
		convo.System("Be brief."),
		convo.User("Weather in Paris?"),
	}
	body, warns, err := litert.Conversation().Encode(h, provider.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(body), len(warns))

	reply, _, err := litert.Conversation().DecodeReply([]byte(`{"role":"assistant","content":[{"type":"text","text":"18 °C and sunny."}]}`), provider.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(reply.Role, reply.Finish, reply.Text())
	// Output:
	// [{"role":"system","content":[{"type":"text","text":"Be brief."}]},{"role":"user","content":[{"type":"text","text":"Weather in Paris?"}]}] 0
	// assistant stop 18 °C and sunny.
}
