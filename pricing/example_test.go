package pricing_test

import (
	"fmt"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/pricing"
)

func Example() {
	prices, err := pricing.ParseTable([]byte(`{"claude-sonnet-4*": {"input": "3", "output": "15", "cache_read": "0.30"}}`), "prices.json")
	if err != nil {
		panic(err)
	}
	p := pricing.New(prices.Lookup) // then the catalogue's lookup, if any
	reply := convo.Message{
		Role:   convo.RoleAssistant,
		Origin: &convo.Origin{Provider: "anthropic", Model: "claude-sonnet-4-5"},
		Usage:  &convo.Usage{Input: 12_000, CacheRead: 10_000, Output: 800},
		Parts:  []convo.Part{convo.Text("…")},
	}
	c, ok := p.Cost(reply)
	fmt.Println(c.USD, ok)
	_, ok = p.Cost(convo.Message{Role: convo.RoleAssistant, Origin: &convo.Origin{Model: "unknown"}, Usage: reply.Usage})
	fmt.Println(ok)
	// Output:
	// 0.021 true
	// false
}
