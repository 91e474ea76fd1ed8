package pricing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/convo-go/convo"
)

// MaxFileBytes bounds a prices file.
const MaxFileBytes = 4 << 20

// Table is a list of prices by model glob, as a prices file gives them:
// the first entry whose glob matches a model wins.
type Table struct {
	entries []entry
}

type entry struct {
	glob  string
	price Price
}

// Lookup returns the price of the first entry whose glob (path.Match
// syntax: * ? [a-z]) matches model. A nil Table knows no price.
func (t *Table) Lookup(model string) (Price, bool) {
	if t == nil {
		return Price{}, false
	}
	for _, e := range t.entries {
		if ok, _ := path.Match(e.glob, model); ok {
			return e.price, true
		}
	}
	return Price{}, false
}

// Len returns how many entries t holds.
func (t *Table) Len() int {
	if t == nil {
		return 0
	}
	return len(t.entries)
}

// LoadFile reads a prices file (see ParseTable); its prices name the
// file as their Source.
func LoadFile(name string) (*Table, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("prices: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("prices %s: %w", name, err)
	}
	if len(b) > MaxFileBytes {
		return nil, fmt.Errorf("prices %s: larger than %d bytes", name, MaxFileBytes)
	}
	t, err := ParseTable(b, name)
	if err != nil {
		return nil, fmt.Errorf("prices %s: %w", name, err)
	}
	return t, nil
}

// ParseTable reads a prices document: a JSON object whose members, in
// order, map a model glob to its price in USD per million tokens:
//
//	{"claude-sonnet-4*": {"input": "3.00", "output": "15.00", "cache_read": "0.30", "cache_write": "3.75"},
//	 "gpt-5*": {"input": 1.25, "output": 10, "cache_read": 0.125},
//	 "llama*": {"input": 0, "output": 0}}
//
// Each figure is a decimal number or a decimal string, with at most nine
// fractional digits; input and output are required, cache_read,
// cache_write and reasoning optional; "currency", when given, must be
// "USD". A negative price, an unknown member, a bad glob or a glob given
// twice is an error naming its place. source becomes each price's Source.
func ParseTable(doc []byte, source string) (*Table, error) {
	var probe any
	if err := json.Unmarshal(doc, &probe); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("want a JSON object of model globs to prices")
	}
	t := &Table{}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		glob := tok.(string)
		if _, err := path.Match(glob, ""); err != nil || glob == "" {
			return nil, fmt.Errorf("%q: not a model glob (path.Match syntax)", glob)
		}
		if seen[glob] {
			return nil, fmt.Errorf("%q: given twice", glob)
		}
		seen[glob] = true
		var raw map[string]json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("%q: want an object of prices: %w", glob, err)
		}
		p, err := parsePrice(raw)
		if err != nil {
			return nil, fmt.Errorf("%q.%w", glob, err)
		}
		p.Source = source
		t.entries = append(t.entries, entry{glob: glob, price: p})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more after the prices object")
	}
	return t, nil
}

func parsePrice(raw map[string]json.RawMessage) (Price, error) {
	var p Price
	for key, v := range raw {
		switch key {
		case "input", "output", "cache_read", "cache_write", "reasoning":
		case "currency":
			var cur string
			if err := json.Unmarshal(v, &cur); err != nil || !strings.EqualFold(cur, "USD") {
				return p, fmt.Errorf("currency: unknown currency %s (prices are in USD)", v)
			}
			continue
		default:
			return p, fmt.Errorf("%s: unknown member (want input, output, cache_read, cache_write, reasoning, currency)", key)
		}
		r, err := parseRate(v)
		if err != nil {
			return p, fmt.Errorf("%s: %w", key, err)
		}
		switch key {
		case "input":
			p.Input = r
		case "output":
			p.Output = r
		case "cache_read":
			p.CacheRead = &r
		case "cache_write":
			p.CacheWrite = &r
		case "reasoning":
			p.Reasoning = &r
		}
	}
	for _, key := range []string{"input", "output"} {
		if _, ok := raw[key]; !ok {
			return p, fmt.Errorf("%s: missing (USD per million tokens)", key)
		}
	}
	return p, nil
}

// parseRate reads a price written as a JSON number or a decimal string.
func parseRate(v json.RawMessage) (Rate, error) {
	s := string(bytes.TrimSpace(v))
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(v, &s); err != nil {
			return 0, err
		}
	}
	r, err := convo.ParseMoney(s)
	if err != nil {
		return 0, fmt.Errorf("want USD per million tokens as a decimal: %w", err)
	}
	if r < 0 {
		return 0, fmt.Errorf("negative price %s", r)
	}
	return r, nil
}
