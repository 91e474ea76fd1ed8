package catalog_test

import (
	"fmt"

	"github.com/convo-go/convo/catalog"
)

func ExampleCatalog_Lookup() {
	cat := catalog.Default()
	m, match := cat.Lookup("claude-sonnet-4-5-20250929")
	fmt.Println(m.Name, m.Context, m.MaxOutput, m.Thinking.Mode, m.Refuses("temperature"), match.Kind)
	_, match = cat.Lookup("claude-opus-9")
	fmt.Println(match.Kind, match.Entry)
	p, _, _ := cat.Price("gpt-4o-2024-08-06")
	fmt.Println(p.Input, p.Output, p.CacheRead)
	// Output:
	// claude-sonnet-4-5 200000 64000 budget true alias
	// family claude-sonnet-4-5
	// 2.5 10 1.25
}
