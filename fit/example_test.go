package fit_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/fit"
	"github.com/convo-go/convo/tokens"
)

// Fit a long conversation into a budget: the system prompt and the latest
// turn stay, the oldest turns go, and the report says what was left out.
func Example() {
	h := convo.History{convo.System("You are a weather assistant.")}
	for i := range 20 {
		h = append(h,
			convo.User(fmt.Sprintf("Weather in city %d? %s", i, strings.Repeat("Tell me everything. ", 20))),
			convo.Assistant(strings.Repeat("Sunny and mild. ", 20)))
	}
	h = append(h, convo.User("And in Paris?"))

	c, err := tokens.NewCounter("gpt-4o", tokens.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := fit.Fit(context.Background(), h, fit.Options{Budget: 1000, Counter: c,
		Strategies: []fit.Strategy{fit.DropOldest}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(h), "messages,", r.Original, "tokens")
	fmt.Println(len(r.History), "messages,", r.Tokens, "tokens, within", r.Budget)
	fmt.Println(r.History[0].Role, r.History[len(r.History)-1].Text())
	fmt.Println(len(r.Excluded), "left out")
	// Output:
	// 42 messages, 3541 tokens
	// 12 messages, 901 tokens, within 1000
	// system And in Paris?
	// 30 left out
}
