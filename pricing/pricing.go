// Package pricing prices what a model did: the cost of an assistant message
// from its recorded usage and model, in exact money (convo.Money,
// nano-dollars), never a sum of floats.
//
// Prices come from lookups tried in order: a prices file an operator gives
// (LoadFile, `--prices FILE` on the command line) before the model
// catalogue. A message whose model no lookup knows is not priced: its cost
// is unknown, never zero by accident.
//
// # How a message is priced
//
// convo's Usage counts every input token in Input, including those read
// from and written to a prompt cache, and every output token in Output,
// including reasoning (each provider's codec normalises to that: OpenAI
// reports it so, Anthropic and Bedrock report input without the cached
// tokens and are added up when decoded, Gemini's thoughts are added to the
// candidates). So a message costs
//
//	(Input − CacheRead − CacheWrite) × input
//	+ CacheRead × cache_read + CacheWrite × cache_write
//	+ (Output − Reasoning) × output + Reasoning × reasoning
//
// with each price in dollars per million tokens. A price that leaves out
// cache_read or cache_write charges those tokens at the input price, and
// one without reasoning charges reasoning at the output price (as every
// provider bills it today): an overestimate rather than a free lunch. Usage
// that does not add up — cached tokens beyond Input, as a hand-built
// message counting Anthropic's way might hold, or reasoning beyond Output —
// is read as counting them apart.
//
// The sum is exact (128-bit) in billionths of a nano-dollar and rounded
// once per message to the nearest nano-dollar, halves up. Totals are sums
// of these per-message amounts, so they are exact and the same whichever
// way they are grouped. Cache writes are priced at one rate whatever their
// time to live, and images or audio at the token prices: Usage does not
// count them apart.
package pricing

import (
	"errors"
	"math/bits"

	"github.com/convo-go/convo"
)

// Rate is a price in nano-dollars per million tokens: Rate(3 * convo.Dollar)
// is USD 3.00 per million tokens, and the finest rate is a nano-dollar per
// million tokens. Its text form is that of convo.Money.
type Rate = convo.Money

// Price is what one model costs, in USD per million tokens of each kind.
// Input and Output are required; a nil optional rate falls back as the
// package documentation says.
type Price struct {
	Input      Rate
	Output     Rate
	CacheRead  *Rate
	CacheWrite *Rate
	Reasoning  *Rate
	// Source says where the price came from, for people: "prices.json",
	// "catalogue 2026-11-01".
	Source string
}

// Lookup finds the price of a model by its name, as an assistant
// message's Origin.Model records it.
type Lookup func(model string) (Price, bool)

// Pricer prices messages from its lookups, the first that knows a model
// winning. The zero Pricer and a nil *Pricer know no price.
type Pricer struct {
	lookups []Lookup
}

// New returns a Pricer trying lookups in order. Nil lookups are skipped,
// so an optional source (a prices file not given) can be passed as nil.
func New(lookups ...Lookup) *Pricer {
	p := &Pricer{}
	for _, l := range lookups {
		if l != nil {
			p.lookups = append(p.lookups, l)
		}
	}
	return p
}

// Price returns the price of model, and whether any lookup knows it.
func (p *Pricer) Price(model string) (Price, bool) {
	if p == nil || model == "" {
		return Price{}, false
	}
	for _, l := range p.lookups {
		if pr, ok := l(model); ok {
			return pr, true
		}
	}
	return Price{}, false
}

// Cost prices an assistant message from its Usage and Origin.Model. ok is
// false when it cannot be priced: no usage, no model, a model no lookup
// knows, or an amount too large for convo.Money.
func (p *Pricer) Cost(m convo.Message) (c convo.Cost, ok bool) {
	if m.Role != convo.RoleAssistant || m.Usage == nil || m.Origin == nil {
		return convo.Cost{}, false
	}
	pr, ok := p.Price(m.Origin.Model)
	if !ok {
		return convo.Cost{}, false
	}
	usd, err := pr.Of(*m.Usage)
	if err != nil {
		return convo.Cost{}, false
	}
	return convo.Cost{USD: usd}, true
}

// Fill returns h with the cost of each assistant message that has usage
// and no cost yet filled in where a price is known; a message already
// priced keeps its cost (it was priced when it was recorded). h itself is
// not modified: when anything is filled in, the result is a copy.
func (p *Pricer) Fill(h convo.History) convo.History {
	out, copied := h, false
	for i, m := range h {
		if m.Cost != nil {
			continue
		}
		c, ok := p.Cost(m)
		if !ok {
			continue
		}
		if !copied {
			out, copied = append(convo.History(nil), h...), true
		}
		out[i].Cost = &c
	}
	return out
}

// ErrOverflow is returned by Price.Of for an amount past the range of
// convo.Money (about 9.2 billion dollars).
var ErrOverflow = errors.New("cost too large")

// Of returns what usage costs at this price, as the package documentation
// says.
func (pr Price) Of(u convo.Usage) (convo.Money, error) {
	cacheRead := rateOr(pr.CacheRead, pr.Input)
	cacheWrite := rateOr(pr.CacheWrite, pr.Input)
	reasoning := rateOr(pr.Reasoning, pr.Output)
	uncached := u.Input - u.CacheRead - u.CacheWrite
	if uncached < 0 {
		uncached = u.Input // cached tokens counted apart
	}
	visible := u.Output - u.Reasoning
	if visible < 0 {
		visible = u.Output // reasoning counted apart
	}
	var acc sum
	acc.add(uncached, pr.Input)
	acc.add(u.CacheRead, cacheRead)
	acc.add(u.CacheWrite, cacheWrite)
	acc.add(visible, pr.Output)
	acc.add(u.Reasoning, reasoning)
	return acc.money()
}

func rateOr(r *Rate, fallback Rate) Rate {
	if r != nil {
		return *r
	}
	return fallback
}

// sum adds tokens × rate products exactly, in nano-dollars per million
// (128 bits).
type sum struct {
	hi, lo   uint64
	overflow bool
}

func (s *sum) add(tokens int64, rate Rate) {
	if tokens <= 0 || rate <= 0 {
		return
	}
	hi, lo := bits.Mul64(uint64(tokens), uint64(rate))
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, lo, 0)
	s.hi, carry = bits.Add64(s.hi, hi, carry)
	if carry != 0 {
		s.overflow = true
	}
}

// money rounds the sum to the nearest nano-dollar, halves up.
func (s *sum) money() (convo.Money, error) {
	const perMillion = 1_000_000
	lo, carry := bits.Add64(s.lo, perMillion/2, 0)
	hi, carry2 := bits.Add64(s.hi, 0, carry)
	if s.overflow || carry2 != 0 || hi >= perMillion {
		return 0, ErrOverflow
	}
	q, _ := bits.Div64(hi, lo, perMillion)
	if q > 1<<63-1 {
		return 0, ErrOverflow
	}
	return convo.Money(q), nil
}
