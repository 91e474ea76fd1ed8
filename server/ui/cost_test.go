package ui_test

import (
	"testing"
	"time"

	"github.com/convo-go/convo"
)

// TestCostShown: a priced reply shows its cost beside its usage, an
// unpriced one says its cost is unknown, and the page and the list show
// the conversation's total, marked when some of it is unknown.
func TestCostShown(t *testing.T) {
	backends(t, nil, func(t *testing.T, e *env) {
		priced := convo.Assistant("18 °C.")
		priced.Origin = &convo.Origin{Provider: "anthropic", Model: "claude-sonnet-4-5"}
		priced.Usage = &convo.Usage{Input: 1200, Output: 300, CacheRead: 1000}
		priced.Cost = &convo.Cost{USD: 5_400_000}
		unpriced := convo.Assistant("Rain.")
		unpriced.Origin = &convo.Origin{Provider: "openai", Model: "unknown-model"}
		unpriced.Usage = &convo.Usage{Input: 5, Output: 2}
		e.create(t, "", "costly", "Costly", convo.History{convo.User("Weather?"), priced, convo.User("Tomorrow?"), unpriced})
		cl := e.client(t)
		get(t, cl, e.URL+"/ui/c/costly").has(t, `<span class="cost" title="priced when recorded">$0.0054</span>`,
			`<span class="cost" title="priced when recorded">cost unknown</span>`, `cost <b>$0.0054</b> + 1 unpriced`)
		get(t, cl, e.URL+"/ui/").has(t, `<span class="cost">$0.0054+?</span>`)
	})
}

// TestUsagePage: the usage page charts the tenant's cost by day and by
// model as inline SVG drawn on the server.
func TestUsagePage(t *testing.T) {
	backends(t, nil, func(t *testing.T, e *env) {
		a := convo.Assistant("ok")
		a.Time = time.Now().UTC()
		a.Origin = &convo.Origin{Model: "claude-sonnet-4-5"}
		a.Usage = &convo.Usage{Input: 1000, Output: 100}
		a.Cost = &convo.Cost{USD: 4_500_000}
		e.create(t, "", "u", "U", convo.History{convo.User("q"), a})
		p := get(t, e.client(t), e.URL+"/ui/usage?days=7")
		p.has(t, "The last 7 days", "<b>$0.0045</b> over 1 replies", "<h2>By day</h2>", "<h2>By model</h2>",
			`<svg class="chart"`, `width="480"`, ">claude-sonnet-4-5</text>", "$0.0045</text>")
	})
}
