// Package catalog is convo's table of models: for each, its provider,
// context window and maximum output, how it thinks, which sampling
// settings it refuses while thinking, whether it takes native structured
// output and strict tools, and its prices. Every figure carries the page it
// came from and the date it was read.
//
// The table shipped with convo is embedded (models.json, see Default); a
// caller replaces or extends it with a file of the same format (Parse,
// Load, Merge). Lookup resolves dated ids and aliases, and falls back to a
// family's entry, with a warning, for a model the table does not hold.
//
// The package is plain data: it imports nothing of the rest of convo, and
// nothing here sends a request.
package catalog

import (
	"bytes"
	_ "embed"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Thinking modes: how a model is told to think.
const (
	// ThinkNone: the model does not think before answering.
	ThinkNone = "none"
	// ThinkBudget: a thinking token budget (Anthropic budget_tokens,
	// Gemini 2.5 thinkingBudget) between MinBudget and MaxBudget.
	ThinkBudget = "budget"
	// ThinkAdaptive: the model decides how much to think, guided by an
	// effort (Anthropic adaptive thinking with output_config.effort).
	ThinkAdaptive = "adaptive"
	// ThinkLevel: a thinking level (Gemini 3 thinkingLevel); Efforts lists
	// the levels.
	ThinkLevel = "level"
	// ThinkEffort: a reasoning effort (OpenAI reasoning_effort /
	// reasoning.effort); Efforts lists the values.
	ThinkEffort = "effort"
)

// Thinking is how a model thinks. A zero Thinking (Mode "") is unknown.
type Thinking struct {
	Mode string `json:"mode"`
	// Efforts lists the efforts or levels the model accepts, for the
	// adaptive, level and effort modes (and budget models that also take an
	// effort); DefaultEffort is the one it uses when none is given.
	Efforts       []string `json:"efforts,omitempty"`
	DefaultEffort string   `json:"default_effort,omitempty"`
	// MinBudget and MaxBudget bound a thinking token budget; zero is
	// unknown (or no bound).
	MinBudget int `json:"min_budget,omitempty"`
	MaxBudget int `json:"max_budget,omitempty"`
	// Optional reports that thinking can be turned off (a budget of 0,
	// thinking disabled); false where it is always on or not known.
	Optional bool `json:"optional,omitempty"`
}

// Prices are a model's prices in US dollars per million tokens, exact (see
// Rate). A price the provider does not charge apart, or that the catalogue
// does not know, is NoRate.
type Prices struct {
	Input  Rate // uncached input
	Output Rate // output, thinking included unless Reasoning is known
	// CacheRead is a cache hit; CacheWrite a cache write (Anthropic's
	// five-minute write), CacheWrite1h Anthropic's one-hour write.
	CacheRead    Rate
	CacheWrite   Rate
	CacheWrite1h Rate
	// Reasoning is the price of thinking tokens where it differs from
	// Output.
	Reasoning Rate
	// AudioInput and ImageInput are the prices of audio and image input
	// tokens where they differ from Input.
	AudioInput Rate
	ImageInput Rate
	// LongContext, when not nil, is the tier that applies to a request
	// whose prompt is longer than LongContext.Above tokens (Gemini 2.5 Pro
	// above 200k): its known rates replace the ones above for the whole
	// request.
	LongContext *Tier
	// Source is the provider's pricing page, AsOf the date it was read.
	Source string
	AsOf   string
}

// Tier is a long-context price tier.
type Tier struct {
	Above      int // prompt tokens above which the tier applies
	Input      Rate
	Output     Rate
	CacheRead  Rate
	CacheWrite Rate
}

// Model is one model's entry.
type Model struct {
	Name     string // the catalogue's name: "claude-sonnet-4-5"
	Provider string // the provider whose API serves it: "anthropic"
	Family   string // the family its unknown siblings fall back to
	// Aliases are other names that mean exactly this model, dated ids
	// included ("claude-sonnet-4-5-20250929").
	Aliases []string
	// Context is the context window in tokens (prompt and reply together),
	// MaxOutput the most a reply may take; zero is unknown.
	Context   int
	MaxOutput int
	Thinking  Thinking
	// RefusesWhileThinking lists the sampling settings ("temperature",
	// "top_p", "top_k") the provider rejects, or will not let be changed,
	// while the model thinks.
	RefusesWhileThinking []string
	// StructuredOutput: the model takes a JSON schema for its reply
	// natively; StrictTools: it takes strict tool schemas. False is "no" or
	// "not known".
	StructuredOutput bool
	StrictTools      bool
	// Price is nil when no price is known.
	Price *Prices
	// Sources are the pages the entry's figures (prices aside) come from;
	// AsOf is when they were read. Note says anything a reader should
	// know about them.
	Sources []string
	AsOf    string
	Note    string
}

// Refuses reports whether the model refuses the sampling setting name
// while it thinks.
func (m Model) Refuses(name string) bool {
	return slices.Contains(m.RefusesWhileThinking, name)
}

// Family is a group of models whose unknown members (by name prefix) fall
// back to the entry named Default.
type Family struct {
	Name     string
	Provider string
	Match    []string // name prefixes: "claude-"
	Default  string
}

// MatchKind says how Lookup found an entry.
type MatchKind int

// The ways Lookup finds an entry.
const (
	// MatchNone: no entry and no family; the Model is zero.
	MatchNone MatchKind = iota
	// MatchExact: the name of an entry.
	MatchExact
	// MatchAlias: an alias of an entry.
	MatchAlias
	// MatchVersion: an entry's name or alias followed by a date, version
	// or tag ("gpt-4o-2024-08-06", "llama3.1:8b", "…-v2:0").
	MatchVersion
	// MatchFamily: no entry; the model's family's default entry, which may
	// not fit it. Match.Warning says so.
	MatchFamily
)

var kindNames = [...]string{"none", "exact", "alias", "version", "family"}

func (k MatchKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Match is how a Lookup resolved a name.
type Match struct {
	Kind MatchKind
	// Entry is the name of the entry found ("" for MatchNone).
	Entry string
	// Warning, for MatchFamily and MatchNone, is a one-line sentence a
	// caller can show the user.
	Warning string
}

// Known reports whether the lookup found the model's own entry (not a
// family fallback).
func (m Match) Known() bool {
	return m.Kind == MatchExact || m.Kind == MatchAlias || m.Kind == MatchVersion
}

// Catalog is a table of models. It is immutable once built and safe for
// concurrent use.
type Catalog struct {
	asOf     string
	models   map[string]Model
	order    []string          // model names in file order
	names    map[string]string // lower-case name or alias → model name
	families []Family
}

//go:embed models.json
var modelsJSON []byte

var (
	defaultOnce sync.Once
	defaultCat  *Catalog
	defaultErr  error
)

// Default returns the catalogue shipped with convo (models.json, embedded).
func Default() *Catalog {
	defaultOnce.Do(func() {
		var d Document
		d, defaultErr = Parse(bytes.NewReader(modelsJSON))
		defaultCat = d.Catalog
	})
	if defaultErr != nil {
		// The embedded file is checked by the tests; reaching this is a
		// build of a broken file.
		panic("catalog: embedded models.json: " + defaultErr.Error())
	}
	return defaultCat
}

// AsOf is the date the catalogue's document gives for itself.
func (c *Catalog) AsOf() string { return c.asOf }

// Models returns every entry in the order of the document.
func (c *Catalog) Models() []Model {
	out := make([]Model, 0, len(c.order))
	for _, n := range c.order {
		out = append(out, c.models[n])
	}
	return out
}

// Families returns the families in the order of the document.
func (c *Catalog) Families() []Family { return slices.Clone(c.families) }

// Entry returns the entry called exactly name (or with name as an alias),
// without fallbacks.
func (c *Catalog) Entry(name string) (Model, bool) {
	n, ok := c.names[strings.ToLower(name)]
	if !ok {
		return Model{}, false
	}
	return c.models[n], true
}

// Price returns the prices of model as Lookup finds it. ok is false when no
// price is known; the Match says how the model was found (a family
// fallback's prices are the default entry's).
func (c *Catalog) Price(model string) (p Prices, m Match, ok bool) {
	e, m := c.Lookup(model)
	if e.Price == nil {
		return Prices{}, m, false
	}
	return *e.Price, m, true
}

// Lookup finds model's entry. It accepts the catalogue's names and aliases
// in any case, the same followed by a date, version or tag
// ("claude-sonnet-4-5-20250929", "gpt-4o-2024-08-06", "llama3.1:8b"),
// "provider/model" names, Gemini's "models/…" and Bedrock model and
// inference-profile ids ("us.anthropic.claude-sonnet-4-20250514-v1:0").
// A model the catalogue does not hold falls back to its family's default
// entry (by name prefix: "claude-…" → the anthropic family) with a
// warning; a model of no known family is MatchNone, with a warning.
func (c *Catalog) Lookup(model string) (Model, Match) {
	n := normalize(model)
	if name, ok := c.names[n]; ok {
		kind := MatchAlias
		if strings.ToLower(name) == n {
			kind = MatchExact
		}
		return c.models[name], Match{Kind: kind, Entry: name}
	}
	if name, ok := c.versioned(n); ok {
		return c.models[name], Match{Kind: MatchVersion, Entry: name}
	}
	if f, ok := c.family(n); ok {
		if e, ok := c.models[f.Default]; ok {
			return e, Match{Kind: MatchFamily, Entry: e.Name, Warning: "model " + quote(model) +
				" is not in the model catalogue; using the " + f.Name + " family's entry " + e.Name +
				", whose figures may not fit it (add it with --models FILE)"}
		}
	}
	return Model{}, Match{Kind: MatchNone, Warning: "model " + quote(model) +
		" is not in the model catalogue and belongs to no family it knows (add it with --models FILE)"}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// suffix is what may follow a name for the same model: a date (20250929,
// 2024-08-06, 06-17), a three- or four-digit version (001, 0613), latest,
// a preview or experimental tag, a Bedrock version (-v2:0) or an Ollama
// tag (:8b), in that order.
var suffix = regexp.MustCompile(`^(?:[-@](?:\d{8}|\d{4}-\d{2}-\d{2}|\d{3,4}|latest|preview(?:-[0-9a-z-]+)?|exp(?:-[0-9a-z-]+)?))*(?:-v\d+(?::\d+)?)?(?::[0-9a-z._-]+)?$`)

// versioned finds the longest name or alias that n starts with and whose
// remainder is a date, version or tag.
func (c *Catalog) versioned(n string) (string, bool) {
	for i := len(n) - 1; i > 0; i-- {
		name, ok := c.names[n[:i]]
		if ok && suffix.MatchString(n[i:]) {
			return name, true
		}
	}
	return "", false
}

func (c *Catalog) family(n string) (Family, bool) {
	best, bestLen := Family{}, 0
	for _, f := range c.families {
		for _, p := range f.Match {
			if strings.HasPrefix(n, strings.ToLower(p)) && len(p) > bestLen {
				best, bestLen = f, len(p)
			}
		}
	}
	return best, bestLen > 0
}

// bedrockVendors are the vendor segments of Bedrock model ids.
var bedrockVendors = map[string]bool{"anthropic": true, "amazon": true, "meta": true, "mistral": true,
	"cohere": true, "ai21": true, "deepseek": true, "qwen": true, "openai": true, "writer": true}

// normalize lower-cases a model name and strips what is not the model:
// "models/", a "provider/" prefix, a Bedrock region and vendor.
func normalize(model string) string {
	n := strings.ToLower(strings.TrimSpace(model))
	n = strings.TrimPrefix(n, "models/")
	if i := strings.LastIndexByte(n, '/'); i >= 0 {
		n = n[i+1:]
	}
	seg, rest, ok := strings.Cut(n, ".")
	if ok && !bedrockVendors[seg] && isRegion(seg) {
		if v, _, ok := strings.Cut(rest, "."); ok && bedrockVendors[v] {
			n, seg, rest = rest, v, rest[len(v)+1:]
		}
	}
	if ok && bedrockVendors[seg] && rest != "" {
		n = rest
	}
	return n
}

// isRegion reports whether s looks like the region of a Bedrock
// cross-region inference profile ("us", "eu", "apac", "us-gov", "global").
func isRegion(s string) bool {
	if s == "" || len(s) > 8 {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && c != '-' {
			return false
		}
	}
	return true
}
