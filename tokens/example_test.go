package tokens_test

import (
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/tokens"
)

// Count a history for an OpenAI model: exact, offline, with the chat
// format's framing; other families are estimates within Bound.
func Example() {
	c, err := tokens.NewCounter("gpt-4o", tokens.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	r := c.Count(convo.History{
		convo.System("You are a weather assistant."),
		convo.User("Weather in Paris?"),
	})
	fmt.Println(r.Tokenizer, r.Exact, r.Tokens, len(r.Messages))

	c, err = tokens.NewCounter("claude-sonnet-4-5", tokens.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	r = c.Count(convo.History{convo.User("Weather in Paris?")})
	fmt.Println(r.Family, r.Exact, r.Bound > 0)
	// Output:
	// o200k_base true 21 2
	// anthropic false true
}
