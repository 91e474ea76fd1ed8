package pricing_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/catalog"
	"github.com/convo-go/convo/pricing"
)

// TestCatalogue prices from the shipped catalogue: its rates carried
// exactly (micro-dollars become nano-dollars), unknown optional rates nil,
// and no price for a family fallback or a model of no family.
func TestCatalogue(t *testing.T) {
	lookup := pricing.Catalogue(nil)
	want, _, ok := catalog.Default().Price("claude-sonnet-4-5")
	if !ok {
		t.Fatal("the shipped catalogue has no price for claude-sonnet-4-5")
	}
	for _, name := range []string{"claude-sonnet-4-5", "claude-sonnet-4-5-20250929"} {
		p, ok := lookup(name)
		if !ok {
			t.Fatalf("%s: not priced", name)
		}
		in, _ := want.Input.Micro()
		out, _ := want.Output.Micro()
		if p.Input != convo.Money(in*1000) || p.Output != convo.Money(out*1000) {
			t.Errorf("%s: input %v output %v, want %v and %v (per million)", name, p.Input, p.Output, want.Input, want.Output)
		}
		cr, _ := want.CacheRead.Micro()
		if p.CacheRead == nil || *p.CacheRead != convo.Money(cr*1000) {
			t.Errorf("%s: cache read %v, want %v", name, p.CacheRead, want.CacheRead)
		}
		if p.Reasoning != nil {
			t.Errorf("%s: reasoning priced apart (%v); the catalogue has no such price", name, *p.Reasoning)
		}
	}
	for _, name := range []string{"claude-sonnet-99", "llama-none-such", ""} {
		if p, ok := lookup(name); ok {
			t.Errorf("%q priced %+v: a fallback or unknown model must stay unpriced", name, p)
		}
	}
	// A message of a million input tokens costs the input price exactly.
	m := convo.Message{Role: convo.RoleAssistant, Origin: &convo.Origin{Model: "claude-sonnet-4-5"}, Usage: &convo.Usage{Input: 1_000_000}}
	c, ok := pricing.New(lookup).Cost(m)
	if in, _ := want.Input.Micro(); !ok || c.USD != convo.Money(in*1000) {
		t.Errorf("a million input tokens cost %v (ok %v), want %v", c.USD, ok, want.Input)
	}
}

// TestDefaultFileFirst: a prices file's glob wins over the catalogue, and
// the catalogue prices what the file does not name.
func TestDefaultFileFirst(t *testing.T) {
	file := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(file, []byte(`{"claude-*": {"input": "1", "output": "2"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := pricing.Default(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := p.Price("claude-sonnet-4-5"); !ok || got.Input != convo.Dollar {
		t.Errorf("claude-sonnet-4-5: %+v, %v; want the file's USD 1 input", got, ok)
	}
	if _, ok := p.Price("gpt-5"); !ok {
		t.Error("gpt-5: not priced; the catalogue has its price")
	}
}
