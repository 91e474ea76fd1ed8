package pricing

import (
	"github.com/convo-go/convo/catalog"
)

// Catalogue is the lookup of the model catalogue's prices (c; nil is the
// shipped one): what Default tries after a prices file. A model the
// catalogue knows only by its family is not priced by the family's entry
// (a guess is not a bill): its cost stays unknown. The catalogue's rates
// (micro-dollars per million tokens) are exact in Rate; a rate it does not
// know falls back as the package documentation says, and a model without
// an input and an output price is not priced. The long-context tier of a
// few models (Gemini 2.5 Pro above 200k prompt tokens) is not applied:
// such prompts are priced at the base rates.
func Catalogue(c *catalog.Catalog) Lookup {
	if c == nil {
		c = catalog.Default()
	}
	return func(model string) (Price, bool) {
		p, m, ok := c.Price(model)
		if !ok || !m.Known() || !p.Input.Known() || !p.Output.Known() {
			return Price{}, false
		}
		return Price{
			Input:      rateOf(p.Input),
			Output:     rateOf(p.Output),
			CacheRead:  optional(p.CacheRead),
			CacheWrite: optional(p.CacheWrite),
			Reasoning:  optional(p.Reasoning),
			Source:     "catalogue " + p.AsOf,
		}, true
	}
}

// rateOf converts a known catalogue rate (micro-dollars per million
// tokens) to a Rate (nano-dollars per million tokens).
func rateOf(r catalog.Rate) Rate {
	micro, _ := r.Micro()
	return Rate(micro * 1000)
}

// optional is the Rate of r, or nil when the catalogue does not know it.
func optional(r catalog.Rate) *Rate {
	if !r.Known() {
		return nil
	}
	v := rateOf(r)
	return &v
}

// Default returns the Pricer convo's commands use: the prices file named
// by file ("": none), first match winning, then the catalogue c (nil: the
// shipped one). A file that cannot be read or parsed is an error naming
// it, so a command refuses to start rather than record unpriced messages.
func Default(file string, c *catalog.Catalog) (*Pricer, error) {
	var t *Table
	if file != "" {
		var err error
		if t, err = LoadFile(file); err != nil {
			return nil, err
		}
	}
	return New(t.Lookup, Catalogue(c)), nil
}
