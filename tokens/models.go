package tokens

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/convo-go/convo/catalog"
)

// The BPE vocabularies convo embeds. An exact family must use one of them;
// an estimating family uses one as the base its factor scales.
const (
	O200kBase  = "o200k_base"  // gpt-4o, gpt-4.1, gpt-5, o-series
	Cl100kBase = "cl100k_base" // gpt-4, gpt-3.5-turbo
)

// ImageRule is how a model family turns an image into tokens. Method
// selects the formula; the other fields are its parameters (see
// docs/tokens.md for each provider's published rule):
//
//   - "tile" (OpenAI): detail low costs Low; otherwise the image is scaled
//     to fit 2048×2048, then its shortest side to 768, and costs Base plus
//     Tile per 512-pixel tile.
//   - "patch" (OpenAI mini models): 32-pixel patches, at most 1536, times
//     Multiplier.
//   - "pixels" (Anthropic and others): width×height/Divisor after scaling the
//     long edge to MaxEdge and the cost to MaxTokens.
//   - "gemini": Tile tokens for an image within Small×Small pixels, else Tile
//     per crop tile.
//   - "fixed": Tokens per image whatever its size.
//
// Unknown is the count used when the size cannot be read (an image by URL or
// file id, or corrupt data); such a count is an estimate.
type ImageRule struct {
	Method     string  `json:"method"`
	Base       int     `json:"base,omitempty"`
	Tile       int     `json:"tile,omitempty"`
	Low        int     `json:"low,omitempty"`
	Multiplier float64 `json:"multiplier,omitempty"`
	Divisor    int     `json:"divisor,omitempty"`
	MaxEdge    int     `json:"max_edge,omitempty"`
	MaxTokens  int     `json:"max_tokens,omitempty"`
	Small      int     `json:"small,omitempty"`
	Tokens     int     `json:"tokens,omitempty"`
	Unknown    int     `json:"unknown"`
}

// Family is a group of models that count tokens the same way: the same
// tokenizer (or the same estimate of it), message framing and image rule.
type Family struct {
	Name     string `json:"name"`
	Provider string `json:"provider"` // the provider id its models are usually served by
	// Tokenizer is the BPE vocabulary: the real one for an exact family, the
	// base of the estimate otherwise.
	Tokenizer string `json:"tokenizer"`
	// Exact families count with their real tokenizer and published framing.
	Exact bool `json:"exact,omitempty"`
	// Factor scales the base tokenizer's count into an estimate of the
	// family's own tokenizer; Bound is the estimate's relative error bound
	// (0.2 means within ±20%).
	Factor float64 `json:"factor,omitempty"`
	Bound  float64 `json:"bound,omitempty"`
	// Framing: tokens added per message, per message name, per tool call and
	// once per request (the reply priming).
	PerMessage  int `json:"per_message"`
	PerName     int `json:"per_name,omitempty"`
	PerToolCall int `json:"per_tool_call"`
	PerRequest  int `json:"per_request"`
	// Reasoning reports whether earlier reasoning text is sent back and so
	// takes room in the window.
	Reasoning bool      `json:"reasoning,omitempty"`
	Image     ImageRule `json:"image"`
	// Media is the estimate for an audio, video or file part that has no
	// formula.
	Media int `json:"media"`
	// Examples names some of its models, for error messages.
	Examples string `json:"examples,omitempty"`
}

// Model holds one model's facts. Tokenizer and Image, when empty, are the
// family's; Context and MaxOutput, when both zero, are the model
// catalogue's (package catalog), the one table of windows convo keeps.
type Model struct {
	Name      string `json:"name"`
	Family    string `json:"family"`
	Provider  string `json:"provider,omitempty"`
	Tokenizer string `json:"tokenizer,omitempty"`
	// Context is the context window in tokens (prompt and reply together);
	// MaxOutput the most a reply may take. Zero means unknown. A document
	// loaded with Load may set them to override the catalogue's figures;
	// the shipped models.json leaves them to the catalogue.
	Context   int `json:"context"`
	MaxOutput int `json:"max_output"`
	// Match lists name prefixes that select this model: "gpt-4o" matches
	// "gpt-4o-2024-08-06". The longest matching prefix wins. The model's
	// Name always matches.
	Match []string   `json:"match,omitempty"`
	Image *ImageRule `json:"image,omitempty"`
}

// Data is the document format of models.json and of the files callers load
// to add or override models and families.
type Data struct {
	Format         string   `json:"format,omitempty"`
	AsOf           string   `json:"as_of,omitempty"`
	Families       []Family `json:"families,omitempty"`
	BedrockVendors []string `json:"bedrock_vendors,omitempty"`
	Models         []Model  `json:"models,omitempty"`
}

//go:embed models.json
var modelsJSON []byte

// ErrUnknownModel is returned (wrapped) by Lookup for a model no entry
// matches.
var ErrUnknownModel = errors.New("unknown model")

// Registry holds model facts and families. The zero value is empty; New
// returns one holding the facts shipped with convo. A Registry is safe for
// concurrent lookups; Load and Add must not run concurrently with them.
type Registry struct {
	families map[string]Family
	order    []string // family names in the order they were added
	models   map[string]Model
	vendors  map[string]bool
	// prefixes maps each lower-case match prefix to a model name.
	prefixes map[string]string
	// cat supplies windows; nil means catalog.Default().
	cat *catalog.Catalog
}

var (
	defaultOnce sync.Once
	defaultReg  *Registry
	defaultErr  error
)

// Default returns the registry of the facts shipped with convo. It is
// shared: use New for one to change.
func Default() *Registry {
	defaultOnce.Do(func() {
		defaultReg = &Registry{}
		defaultErr = defaultReg.Load(modelsJSON)
	})
	if defaultErr != nil {
		// The embedded file is checked by the tests; reaching this is a
		// build of a broken file.
		panic("tokens: embedded models.json: " + defaultErr.Error())
	}
	return defaultReg
}

// New returns a registry holding a copy of the facts shipped with convo,
// ready for Load or Add.
func New() *Registry {
	d := Default()
	r := &Registry{
		families: make(map[string]Family, len(d.families)),
		order:    slices.Clone(d.order),
		models:   make(map[string]Model, len(d.models)),
		vendors:  make(map[string]bool, len(d.vendors)),
		prefixes: make(map[string]string, len(d.prefixes)),
		cat:      d.cat,
	}
	for k, v := range d.families {
		r.families[k] = v
	}
	for k, v := range d.models {
		r.models[k] = v
	}
	for k, v := range d.vendors {
		r.vendors[k] = v
	}
	for k, v := range d.prefixes {
		r.prefixes[k] = v
	}
	return r
}

// SetCatalog makes the registry take context windows and maximum outputs
// from c (the shipped catalogue when nil), and know the models c holds
// whose family is one of the registry's (see Lookup). Like Load, it must
// not run concurrently with lookups.
func (r *Registry) SetCatalog(c *catalog.Catalog) { r.cat = c }

func (r *Registry) catalog() *catalog.Catalog {
	if r.cat != nil {
		return r.cat
	}
	return catalog.Default()
}

// Load adds the families and models of a JSON document in the format of
// models.json. An entry with the name of an existing one replaces it. The
// whole document is checked before anything is added.
func (r *Registry) Load(data []byte) error {
	var d Data
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return fmt.Errorf("model facts: %w", err)
	}
	if d.Format != "" && d.Format != "convo-models/v1" {
		return fmt.Errorf("model facts: format %q (want convo-models/v1)", d.Format)
	}
	fams := map[string]bool{}
	for i, f := range d.Families {
		if err := checkFamily(f); err != nil {
			return fmt.Errorf("model facts: families[%d]: %w", i, err)
		}
		fams[f.Name] = true
	}
	for i, m := range d.Models {
		if err := r.checkModel(m, fams); err != nil {
			return fmt.Errorf("model facts: models[%d]: %w", i, err)
		}
	}
	for _, f := range d.Families {
		r.addFamily(f)
	}
	for _, v := range d.BedrockVendors {
		if r.vendors == nil {
			r.vendors = map[string]bool{}
		}
		r.vendors[strings.ToLower(v)] = true
	}
	for _, m := range d.Models {
		r.addModel(m)
	}
	return nil
}

// AddFamily adds or replaces a family.
func (r *Registry) AddFamily(f Family) error {
	if err := checkFamily(f); err != nil {
		return err
	}
	r.addFamily(f)
	return nil
}

// Add adds or replaces a model. Its family must be known.
func (r *Registry) Add(m Model) error {
	if err := r.checkModel(m, nil); err != nil {
		return err
	}
	r.addModel(m)
	return nil
}

func (r *Registry) addFamily(f Family) {
	if r.families == nil {
		r.families = map[string]Family{}
	}
	if _, ok := r.families[f.Name]; !ok {
		r.order = append(r.order, f.Name)
	}
	r.families[f.Name] = f
}

func (r *Registry) addModel(m Model) {
	if r.models == nil {
		r.models = map[string]Model{}
		r.prefixes = map[string]string{}
	}
	if old, ok := r.models[m.Name]; ok {
		for _, p := range append(old.Match, old.Name) {
			if r.prefixes[strings.ToLower(p)] == old.Name {
				delete(r.prefixes, strings.ToLower(p))
			}
		}
	}
	r.models[m.Name] = m
	for _, p := range append(slices.Clone(m.Match), m.Name) {
		r.prefixes[strings.ToLower(p)] = m.Name
	}
}

func checkFamily(f Family) error {
	switch {
	case f.Name == "":
		return errors.New("family has no name")
	case f.Tokenizer != O200kBase && f.Tokenizer != Cl100kBase:
		return fmt.Errorf("family %s: tokenizer %q (want %s or %s)", f.Name, f.Tokenizer, O200kBase, Cl100kBase)
	case !f.Exact && f.Factor <= 0:
		return fmt.Errorf("family %s: an estimating family needs a factor > 0", f.Name)
	case f.Bound < 0 || f.Bound >= 1:
		return fmt.Errorf("family %s: bound %v out of [0, 1)", f.Name, f.Bound)
	case f.Exact && f.Bound != 0:
		return fmt.Errorf("family %s: an exact family has no error bound", f.Name)
	case f.PerMessage < 0 || f.PerName < 0 || f.PerToolCall < 0 || f.PerRequest < 0 || f.Media < 0:
		return fmt.Errorf("family %s: negative framing count", f.Name)
	}
	return checkImage(f.Image)
}

func checkImage(im ImageRule) error {
	bad := func(what string) error { return fmt.Errorf("image rule %q: %s", im.Method, what) }
	switch im.Method {
	case "tile":
		if im.Tile <= 0 || im.Base < 0 || im.Low < 0 {
			return bad("needs tile > 0, base and low ≥ 0")
		}
	case "patch":
		if im.Multiplier <= 0 {
			return bad("needs multiplier > 0")
		}
	case "pixels":
		if im.Divisor <= 0 || im.MaxEdge <= 0 || im.MaxTokens <= 0 {
			return bad("needs divisor, max_edge and max_tokens > 0")
		}
	case "gemini":
		if im.Tile <= 0 || im.Small <= 0 {
			return bad("needs tile and small > 0")
		}
	case "fixed":
		if im.Tokens <= 0 {
			return bad("needs tokens > 0")
		}
	default:
		return fmt.Errorf("image rule: unknown method %q (want tile, patch, pixels, gemini or fixed)", im.Method)
	}
	if im.Unknown <= 0 {
		return bad("needs unknown > 0 (the estimate for an image of unknown size)")
	}
	return nil
}

// checkModel checks m against the registry's families and the families
// about to be added (extra).
func (r *Registry) checkModel(m Model, extra map[string]bool) error {
	if m.Name == "" {
		return errors.New("model has no name")
	}
	if _, ok := r.families[m.Family]; !ok && !extra[m.Family] {
		return fmt.Errorf("model %s: unknown family %q", m.Name, m.Family)
	}
	if m.Tokenizer != "" && m.Tokenizer != O200kBase && m.Tokenizer != Cl100kBase {
		return fmt.Errorf("model %s: tokenizer %q (want %s or %s)", m.Name, m.Tokenizer, O200kBase, Cl100kBase)
	}
	if m.Context < 0 || m.MaxOutput < 0 {
		return fmt.Errorf("model %s: negative context or max_output", m.Name)
	}
	if m.Context > 0 && m.MaxOutput > m.Context {
		return fmt.Errorf("model %s: max_output %d exceeds the context window %d", m.Name, m.MaxOutput, m.Context)
	}
	for _, p := range m.Match {
		if p == "" {
			return fmt.Errorf("model %s: empty match prefix", m.Name)
		}
	}
	if m.Image != nil {
		if err := checkImage(*m.Image); err != nil {
			return fmt.Errorf("model %s: %w", m.Name, err)
		}
	}
	return nil
}

// Family returns the family called name.
func (r *Registry) Family(name string) (Family, bool) {
	f, ok := r.families[name]
	return f, ok
}

// Families returns the families in the order they were added.
func (r *Registry) Families() []Family {
	out := make([]Family, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.families[n])
	}
	return out
}

// Models returns every model, sorted by name.
func (r *Registry) Models() []Model {
	out := make([]Model, 0, len(r.models))
	for _, m := range r.models {
		out = append(out, r.resolve(m, ""))
	}
	slices.SortFunc(out, func(a, b Model) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup finds the model called name. It accepts dated and tagged names
// ("gpt-4o-2024-08-06", "llama3.1:8b"), "provider/model" names, Gemini's
// "models/…" names and Bedrock model and inference-profile ids
// ("us.anthropic.claude-sonnet-4-20250514-v1:0"); the longest matching
// prefix wins. The result has its family's tokenizer and image rule filled
// in. An unknown name is an error wrapping ErrUnknownModel that lists the
// known families.
func (r *Registry) Lookup(name string) (Model, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.TrimPrefix(n, "models/")
	if i := strings.LastIndexByte(n, '/'); i >= 0 {
		n = n[i+1:] // "anthropic/claude-…": the model is what follows
	}
	// A Bedrock id: an optional region of an inference profile, then the
	// vendor ("us.anthropic.claude-…").
	if seg, rest, ok := strings.Cut(n, "."); ok && !r.vendors[seg] && isRegion(seg) {
		if v, _, ok := strings.Cut(rest, "."); ok && r.vendors[v] {
			n = rest
		}
	}
	if v, rest, ok := strings.Cut(n, "."); ok && r.vendors[v] {
		// The vendor's model name first ("mistral.mistral-large-…" is
		// mistral-large, not whatever "mistral." would match), then ids that
		// only make sense whole ("deepseek.r1-v1:0").
		for _, s := range []string{rest, n} {
			if m, ok := r.match(s); ok {
				return r.resolve(m, "bedrock"), nil
			}
		}
	} else if m, ok := r.match(n); ok {
		return r.resolve(m, ""), nil
	}
	// A model only the catalogue holds counts with its catalogue family,
	// when that is one of ours: a --models file can add a model whole.
	if e, k := r.catalog().Lookup(name); k.Known() {
		if _, ok := r.families[e.Family]; ok {
			return r.resolve(Model{Name: e.Name, Family: e.Family}, ""), nil
		}
	}
	return Model{}, fmt.Errorf("%w %q; known families: %s", ErrUnknownModel, name, r.familyList())
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

func (r *Registry) match(n string) (Model, bool) {
	best := ""
	for i := len(n); i > 0; i-- {
		if name, ok := r.prefixes[n[:i]]; ok {
			best = name
			break
		}
	}
	if best == "" {
		return Model{}, false
	}
	return r.models[best], true
}

func (r *Registry) resolve(m Model, provider string) Model {
	f := r.families[m.Family]
	if provider != "" {
		m.Provider = provider
	}
	if m.Provider == "" {
		m.Provider = f.Provider
	}
	if m.Tokenizer == "" {
		m.Tokenizer = f.Tokenizer
	}
	if m.Image == nil {
		im := f.Image
		m.Image = &im
	}
	if m.Context == 0 && m.MaxOutput == 0 {
		if e, ok := r.catalog().Entry(m.Name); ok {
			m.Context, m.MaxOutput = e.Context, e.MaxOutput
		}
	}
	return m
}

func (r *Registry) familyList() string {
	parts := make([]string, 0, len(r.order))
	for _, n := range r.order {
		f := r.families[n]
		if n == "estimate" {
			continue
		}
		if f.Examples != "" {
			parts = append(parts, n+": "+f.Examples)
		} else {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, "; ")
}

// Estimated returns a model entry for a name convo does not know, counted
// with the "estimate" family: no context window is known.
func (r *Registry) Estimated(name string) (Model, error) {
	if _, ok := r.families["estimate"]; !ok {
		return Model{}, errors.New(`no "estimate" family to count an unknown model with`)
	}
	return r.resolve(Model{Name: name, Family: "estimate"}, ""), nil
}
