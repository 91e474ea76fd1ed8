package pricing_test

import (
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/pricing"
)

// FuzzParseTable: any input is a table or an error, never a panic, and a
// table's prices are never negative.
func FuzzParseTable(f *testing.F) {
	f.Add([]byte(`{"claude-*": {"input": "3.00", "output": 15, "cache_read": "0.3"}}`))
	f.Add([]byte(`{"a": {"input": 1, "output": 1, "currency": "USD"}, "b*": {"input": 0, "output": 0}}`))
	f.Add([]byte(`{"[": {}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		tab, err := pricing.ParseTable(doc, "f")
		if err != nil {
			return
		}
		for _, m := range []string{"a", "b", "claude-x", ""} {
			p, ok := tab.Lookup(m)
			if !ok {
				continue
			}
			if p.Input < 0 || p.Output < 0 {
				t.Fatalf("negative price %+v", p)
			}
			if _, err := p.Of(convo.Usage{Input: 1e6, Output: 1e6, CacheRead: 10}); err != nil && err != pricing.ErrOverflow {
				t.Fatal(err)
			}
		}
	})
}
