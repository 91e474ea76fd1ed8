// Package redact removes secrets and personal data from conversations before
// they are written down: API keys and tokens of the providers convo speaks,
// bearer tokens, e-mail addresses, card numbers (Luhn-checked) and whatever
// regular expressions the caller configures.
//
// Redaction never changes a value under the caller: Message and History
// return new values that share every part left unchanged. What was removed is
// replaced in the text by a marker, "[REDACTED:rule]", and every part (or
// message, for message-level members) that changed says so in its
// Native["convo"] object:
//
//	{"type":"text","text":"mail [REDACTED:email]","native":{"convo":{"redacted":{"email":1}}}}
//
// The counts are per rule and add up when a redacted value is redacted again
// with other rules. Redaction is idempotent: redacting its own output changes
// nothing, because text inside a marker is never matched again and rules are
// applied until nothing more matches.
//
// What is scanned: text (text, refusal and reasoning parts, inline text
// documents), reasoning summaries, media URLs, tool-call arguments, json
// values, tool results' nested parts, and the string values of members
// format v1 does not define (Extra). What is never touched: reasoning
// signatures and encrypted payloads, inline base64 media, ids, names,
// provider-native fields, message metadata and parts of unknown type (kept
// verbatim as Raw). A reasoning part whose text was redacted keeps its
// signature, which no longer matches the text: a provider refuses such a
// block on replay, which is the right outcome for a record that was altered.
package redact

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/convo-go/convo"
)

// NativeKey is the Native key under which a redacted part or message records
// what was removed: {"redacted":{"rule":count,…}}.
const NativeKey = "convo"

// Rule is one detector: text matching Pattern (and accepted by Check, when
// set) is replaced by the marker "[REDACTED:Name]".
type Rule struct {
	// Name appears in markers and in the Native record: letters, digits,
	// '-', '_' and '.'.
	Name    string
	Pattern *regexp.Regexp
	// Check, when not nil, confirms a match (the Luhn check of card
	// numbers); a match it refuses is kept.
	Check func(match string) bool
}

var ruleName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// marker matches a marker this package writes.
var marker = regexp.MustCompile(`\[REDACTED:[A-Za-z0-9._-]{1,64}\]`)

// Marker returns the text that replaces what rule name matched.
func Marker(name string) string { return "[REDACTED:" + name + "]" }

// The names of the built-in rules.
const (
	AnthropicKey = "anthropic-key"
	OpenAIKey    = "openai-key"
	GoogleKey    = "google-api-key"
	AWSKeyID     = "aws-access-key-id"
	BearerToken  = "bearer-token"
	Email        = "email"
	CardNumber   = "card-number"
)

// Builtin returns the built-in rules, in the order they apply: provider keys
// first (an Anthropic key also looks like an OpenAI one), then bearer tokens,
// e-mail addresses and card numbers.
func Builtin() []Rule {
	return []Rule{
		{Name: AnthropicKey, Pattern: regexp.MustCompile(`sk-ant-[A-Za-z0-9_-]{20,}`)},
		{Name: OpenAIKey, Pattern: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}`)},
		{Name: GoogleKey, Pattern: regexp.MustCompile(`AIza[0-9A-Za-z_-]{35}`)},
		{Name: AWSKeyID, Pattern: regexp.MustCompile(`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`)},
		{Name: BearerToken, Pattern: regexp.MustCompile(`(?i)\bbearer[ \t]+[A-Za-z0-9._~+/-]{16,}=*`)},
		{Name: Email, Pattern: regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`)},
		{Name: CardNumber, Pattern: regexp.MustCompile(`\b\d(?:[ -]?\d){12,18}\b`), Check: luhn},
	}
}

// luhn reports whether the digits of s (spaces and dashes ignored) are 13 to
// 19 long and pass the Luhn check.
func luhn(s string) bool {
	sum, n := 0, 0
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if c == ' ' || c == '-' {
			continue
		}
		if c < '0' || c > '9' {
			return false
		}
		d := int(c - '0')
		if n%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		n++
	}
	return n >= 13 && n <= 19 && sum%10 == 0
}

// Regexp returns a configured rule: text matching expr (RE2 syntax) becomes
// "[REDACTED:name]".
func Regexp(name, expr string) (Rule, error) {
	if !ruleName.MatchString(name) {
		return Rule{}, fmt.Errorf("redact: rule name %q: want 1-64 letters, digits, '.', '_' or '-'", name)
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return Rule{}, fmt.Errorf("redact: rule %q: %w", name, err)
	}
	return Rule{Name: name, Pattern: re}, nil
}

// Redactor applies a set of rules. Its methods are safe for concurrent use.
type Redactor struct {
	rules []Rule
}

// New returns a Redactor applying rules in order. Pass Builtin() (and more)
// for the built-in detectors. A rule without a valid name or pattern is an
// error.
func New(rules ...Rule) (*Redactor, error) {
	for i, r := range rules {
		if !ruleName.MatchString(r.Name) {
			return nil, fmt.Errorf("redact: rules[%d]: name %q: want 1-64 letters, digits, '.', '_' or '-'", i, r.Name)
		}
		if r.Pattern == nil {
			return nil, fmt.Errorf("redact: rules[%d] (%s): no pattern", i, r.Name)
		}
	}
	return &Redactor{rules: slices.Clone(rules)}, nil
}

// Counts says how many matches of each rule were replaced.
type Counts map[string]int

func (c Counts) add(o Counts) Counts {
	if len(o) == 0 {
		return c
	}
	if c == nil {
		c = Counts{}
	}
	for k, v := range o {
		c[k] += v
	}
	return c
}

// maxRounds bounds the fixpoint loop of String. Each round replaces text
// outside markers, so the loop ends anyway; the bound keeps a pathological
// configured rule from costing more than a few passes.
const maxRounds = 8

// String returns s with every match replaced by its marker, and the counts
// per rule. Text inside markers already present is never matched, and rules
// are applied again until nothing changes, so String(String(s)) == String(s).
func (r *Redactor) String(s string) (string, Counts) {
	var counts Counts
	for range maxRounds {
		changed := false
		for _, rule := range r.rules {
			var n int
			s, n = apply(rule, s)
			if n > 0 {
				counts = counts.add(Counts{rule.Name: n})
				changed = true
			}
		}
		if !changed {
			break
		}
	}
	return s, counts
}

// apply replaces the matches of rule in s that do not overlap a marker.
func apply(rule Rule, s string) (string, int) {
	matches := rule.Pattern.FindAllStringIndex(s, -1)
	if matches == nil {
		return s, 0
	}
	var marks [][]int
	if strings.Contains(s, "[REDACTED:") {
		marks = marker.FindAllStringIndex(s, -1)
	}
	var b strings.Builder
	last, n := 0, 0
	for _, m := range matches {
		if m[0] == m[1] || overlaps(m, marks) || (rule.Check != nil && !rule.Check(s[m[0]:m[1]])) {
			continue
		}
		if n == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(Marker(rule.Name))
		last = m[1]
		n++
	}
	if n == 0 {
		return s, 0
	}
	b.WriteString(s[last:])
	return b.String(), n
}

func overlaps(m []int, marks [][]int) bool {
	for _, k := range marks {
		if m[0] < k[1] && k[0] < m[1] {
			return true
		}
	}
	return false
}

// History returns h with every message redacted, and the counts over all of
// it. Messages left unchanged are shared with h; h is not modified.
func (r *Redactor) History(h convo.History) (convo.History, Counts) {
	var out convo.History
	var total Counts
	for i, m := range h {
		nm, c := r.Message(m)
		if c == nil {
			continue
		}
		if out == nil {
			out = slices.Clone(h)
		}
		out[i] = nm
		total = total.add(c)
	}
	if out == nil {
		return h, nil
	}
	return out, total
}

// Message returns m redacted and the counts (nil when nothing matched, and
// then m itself is returned). Each changed part, and the message when one of
// its own members changed, records its counts in Native["convo"].
func (r *Redactor) Message(m convo.Message) (convo.Message, Counts) {
	parts, total := r.parts(m.Parts)
	if parts != nil {
		m.Parts = parts
	}
	extra, c := r.fields(m.Extra)
	if c != nil {
		m.Extra = extra
		m.Native = mark(m.Native, c)
		total = total.add(c)
	}
	return m, total
}

// parts returns a new slice when a part changed, nil otherwise.
func (r *Redactor) parts(ps []convo.Part) ([]convo.Part, Counts) {
	var out []convo.Part
	var total Counts
	for i, p := range ps {
		np, c := r.part(p)
		if c == nil {
			continue
		}
		if out == nil {
			out = slices.Clone(ps)
		}
		out[i] = np
		total = total.add(c)
	}
	return out, total
}

func (r *Redactor) part(p convo.Part) (convo.Part, Counts) {
	if p.Raw != nil {
		return p, nil // unknown part type: kept verbatim, documented
	}
	var c, own Counts
	str := func(s *string) {
		ns, n := r.String(*s)
		if n != nil {
			*s = ns
			c = c.add(n)
		}
	}
	raw := func(v *json.RawMessage) {
		nv, n := r.json(*v)
		if n != nil {
			*v = nv
			c = c.add(n)
		}
	}
	str(&p.Text)
	str(&p.URL)
	str(&p.ArgsRaw)
	raw(&p.Args)
	raw(&p.Value)
	if len(p.Summary) > 0 {
		sum, cloned := p.Summary, false
		for i := range sum {
			ns, n := r.String(sum[i])
			if n == nil {
				continue
			}
			if !cloned {
				sum, cloned = slices.Clone(p.Summary), true
			}
			sum[i] = ns
			c = c.add(n)
		}
		p.Summary = sum
	}
	if extra, n := r.fields(p.Extra); n != nil {
		p.Extra = extra
		c = c.add(n)
	}
	if cs, n := r.citations(p.Citations); n != nil {
		p.Citations = cs
		c = c.add(n)
	}
	own = c
	if nested, n := r.parts(p.Parts); nested != nil {
		// Nested parts carry their own record; the tool_result says only
		// what changed in its own members.
		p.Parts = nested
		c = c.add(n)
	}
	if own != nil {
		p.Native = mark(p.Native, own)
	}
	return p, c
}

// citations redacts what a text part's citations quote and name: a cited
// passage or page address can hold what the text itself would not. It
// returns a new slice when a citation changed, nil otherwise; the counts go
// to the part, as citations have no native record of their own.
func (r *Redactor) citations(cs []convo.Citation) ([]convo.Citation, Counts) {
	var out []convo.Citation
	var total Counts
	for i := range cs {
		c := cs[i]
		var n Counts
		for _, s := range []*string{&c.Text, &c.Title, &c.URL} {
			ns, k := r.String(*s)
			if k != nil {
				*s, n = ns, n.add(k)
			}
		}
		if extra, k := r.fields(c.Extra); k != nil {
			c.Extra, n = extra, n.add(k)
		}
		if n == nil {
			continue
		}
		if out == nil {
			out = slices.Clone(cs)
		}
		out[i] = c
		total = total.add(n)
	}
	return out, total
}

// fields redacts the string values of members kept verbatim.
func (r *Redactor) fields(f convo.Fields) (convo.Fields, Counts) {
	var out convo.Fields
	var total Counts
	for i, x := range f {
		nv, c := r.json(x.Value)
		if c == nil {
			continue
		}
		if out == nil {
			out = slices.Clone(f)
		}
		out[i].Value = nv
		total = total.add(c)
	}
	return out, total
}

// mark returns a copy of n whose Native["convo"] records counts beside the
// counts already there and any other members it had.
func mark(n convo.Native, counts Counts) convo.Native {
	all, _ := json.Marshal(Counts{}.add(Redacted(n)).add(counts)) // map keys are sorted
	return n.With(NativeKey, "redacted", all)
}

// Redacted returns what the part's or message's Native record says was
// removed, or nil.
func Redacted(n convo.Native) Counts {
	var obj struct {
		Redacted Counts `json:"redacted"`
	}
	if n[NativeKey] == nil || json.Unmarshal(n[NativeKey], &obj) != nil {
		return nil
	}
	return obj.Redacted
}
