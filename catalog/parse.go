package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Format is the value of a catalogue document's "format" member.
const Format = "convo-catalog/v1"

// MaxDocument is the largest catalogue document Parse reads.
const MaxDocument = 8 << 20

// The document's shape. Nested objects stay raw so that each is decoded on
// its own and an error names its place.
type docFile struct {
	Format   string            `json:"format"`
	AsOf     string            `json:"as_of"`
	Replace  bool              `json:"replace"`
	Families []json.RawMessage `json:"families"`
	Models   []json.RawMessage `json:"models"`
}

type docFamily struct {
	Name     string   `json:"name"`
	Provider string   `json:"provider"`
	Match    []string `json:"match"`
	Default  string   `json:"default"`
}

type docModel struct {
	Name                 string          `json:"name"`
	Provider             string          `json:"provider"`
	Family               string          `json:"family"`
	Aliases              []string        `json:"aliases"`
	Context              int             `json:"context"`
	MaxOutput            int             `json:"max_output"`
	Thinking             json.RawMessage `json:"thinking"`
	RefusesWhileThinking []string        `json:"refuses_while_thinking"`
	StructuredOutput     bool            `json:"structured_output"`
	StrictTools          bool            `json:"strict_tools"`
	Price                json.RawMessage `json:"price"`
	Source               []string        `json:"source"`
	AsOf                 string          `json:"as_of"`
	Note                 string          `json:"note"`
}

type docPrice struct {
	Input        *string         `json:"input"`
	Output       *string         `json:"output"`
	CacheRead    *string         `json:"cache_read"`
	CacheWrite   *string         `json:"cache_write"`
	CacheWrite1h *string         `json:"cache_write_1h"`
	Reasoning    *string         `json:"reasoning"`
	AudioInput   *string         `json:"audio_input"`
	ImageInput   *string         `json:"image_input"`
	LongContext  json.RawMessage `json:"long_context"`
	Source       string          `json:"source"`
	AsOf         string          `json:"as_of"`
}

type docTier struct {
	Above      int     `json:"above"`
	Input      *string `json:"input"`
	Output     *string `json:"output"`
	CacheRead  *string `json:"cache_read"`
	CacheWrite *string `json:"cache_write"`
}

// Document is a parsed catalogue document: the catalogue and whether it
// asks to replace the one it is merged over (see Merge).
type Document struct {
	*Catalog
	// Replace is the document's "replace" member: true when its models
	// are the whole table, not additions to the shipped one.
	Replace bool
}

// Load reads the catalogue document at path (see Parse).
func Load(path string) (Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return Document{}, err
	}
	defer f.Close()
	d, err := Parse(f)
	if err != nil {
		return Document{}, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// Parse reads a catalogue document (the format of models.json, described in
// docs/models.md). Decoding is strict: an unknown member, a figure without
// a source and date, a negative or malformed price, a duplicate name are
// errors, each one line naming its place ("models[3].price.input: …").
func Parse(r io.Reader) (Document, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxDocument+1))
	if err != nil {
		return Document{}, err
	}
	if len(b) > MaxDocument {
		return Document{}, fmt.Errorf("model catalogue is larger than %d MiB", MaxDocument>>20)
	}
	var d docFile
	if err := strict(b, &d); err != nil {
		return Document{}, err
	}
	if d.Format != Format {
		return Document{}, fmt.Errorf("format: %q (want %q)", d.Format, Format)
	}
	if d.AsOf != "" && !dateRE.MatchString(d.AsOf) {
		return Document{}, fmt.Errorf("as_of: %q is not a date (want YYYY-MM or YYYY-MM-DD)", d.AsOf)
	}
	c := &Catalog{asOf: d.AsOf, models: map[string]Model{}, names: map[string]string{}}
	for i, raw := range d.Models {
		m, err := parseModel(raw)
		if err != nil {
			return Document{}, fmt.Errorf("models[%d]%s", i, err)
		}
		if err := c.add(m); err != nil {
			return Document{}, fmt.Errorf("models[%d]: %w", i, err)
		}
	}
	for i, raw := range d.Families {
		f, err := c.parseFamily(raw)
		if err != nil {
			return Document{}, fmt.Errorf("families[%d]%s", i, err)
		}
		c.families = append(c.families, f)
	}
	return Document{Catalog: c, Replace: d.Replace}, nil
}

// strict decodes one JSON value into v, refusing unknown members and
// trailing data. Its errors are ": message" or ".member: message", ready
// to follow the place of the value.
func strict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			return errors.New(": data after the document")
		}
		return nil
	}
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return fmt.Errorf(".%s: %s where %s is wanted", te.Field, te.Value, typeName(te.Type.String()))
	case errors.As(err, &te):
		return fmt.Errorf(": %s where an object is wanted", te.Value)
	case errors.As(err, &se):
		return fmt.Errorf(": invalid JSON at byte %d: %v", se.Offset, se)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New(": the document ends early")
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return fmt.Errorf(": unknown member %s", f)
	}
	return fmt.Errorf(": %s", strings.TrimPrefix(msg, "json: "))
}

func typeName(t string) string {
	switch {
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "*string"), t == "string":
		return "a string"
	case strings.HasPrefix(t, "int"):
		return "a whole number"
	case t == "bool":
		return "true or false"
	}
	return "an object"
}

var dateRE = regexp.MustCompile(`^\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?$`)

// place errors: ".member: message".
func placef(member, format string, args ...any) error {
	return fmt.Errorf("."+member+": "+format, args...)
}

func parseModel(raw json.RawMessage) (Model, error) {
	var d docModel
	if err := strict(raw, &d); err != nil {
		return Model{}, err
	}
	m := Model{Name: d.Name, Provider: d.Provider, Family: d.Family, Aliases: d.Aliases,
		Context: d.Context, MaxOutput: d.MaxOutput, RefusesWhileThinking: d.RefusesWhileThinking,
		StructuredOutput: d.StructuredOutput, StrictTools: d.StrictTools,
		Sources: d.Source, AsOf: d.AsOf, Note: d.Note}
	if err := checkModel(m); err != nil {
		return Model{}, err
	}
	if len(d.Thinking) > 0 && string(d.Thinking) != "null" {
		if err := strict(d.Thinking, &m.Thinking); err != nil {
			return Model{}, fmt.Errorf(".thinking%w", err)
		}
		if err := checkThinking(m.Thinking); err != nil {
			return Model{}, fmt.Errorf(".thinking%w", err)
		}
	}
	if len(d.Price) > 0 && string(d.Price) != "null" {
		p, err := parsePrice(d.Price)
		if err != nil {
			return Model{}, fmt.Errorf(".price%w", err)
		}
		m.Price = &p
	}
	return m, nil
}

func checkModel(m Model) error {
	switch {
	case m.Name == "":
		return placef("name", "missing")
	case m.Provider == "":
		return placef("provider", "missing (the provider whose API serves %s)", m.Name)
	case m.Context < 0:
		return placef("context", "negative window %d", m.Context)
	case m.MaxOutput < 0:
		return placef("max_output", "negative maximum %d", m.MaxOutput)
	case m.Context > 0 && m.MaxOutput > m.Context:
		return placef("max_output", "%d exceeds the context window %d", m.MaxOutput, m.Context)
	}
	for i, a := range m.Aliases {
		if strings.TrimSpace(a) == "" {
			return placef(fmt.Sprintf("aliases[%d]", i), "empty alias")
		}
	}
	for i, s := range m.RefusesWhileThinking {
		if !slices.Contains(samplingSettings, s) {
			return placef(fmt.Sprintf("refuses_while_thinking[%d]", i), "%q (want one of %s)", s, strings.Join(samplingSettings, ", "))
		}
	}
	return checkSources(m.Sources, m.AsOf)
}

// samplingSettings are the settings refuses_while_thinking may name.
var samplingSettings = []string{"temperature", "top_p", "top_k", "presence_penalty", "frequency_penalty", "logprobs"}

// checkSources insists on at least one page and a date: every figure in a
// catalogue must be traceable to where it was read, and when.
func checkSources(sources []string, asOf string) error {
	if len(sources) == 0 {
		return placef("source", "missing (every figure needs the page it was read from)")
	}
	for i, s := range sources {
		if err := checkURL(s); err != nil {
			return placef(fmt.Sprintf("source[%d]", i), "%v", err)
		}
	}
	return checkAsOf(asOf)
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) address", s)
	}
	return nil
}

func checkAsOf(s string) error {
	if s == "" {
		return placef("as_of", "missing (the date the source was read)")
	}
	if !dateRE.MatchString(s) {
		return placef("as_of", "%q is not a date (want YYYY-MM or YYYY-MM-DD)", s)
	}
	return nil
}

var thinkModes = []string{ThinkNone, ThinkBudget, ThinkAdaptive, ThinkLevel, ThinkEffort}

func checkThinking(t Thinking) error {
	switch {
	case !slices.Contains(thinkModes, t.Mode):
		return placef("mode", "%q (want one of %s)", t.Mode, strings.Join(thinkModes, ", "))
	case t.MinBudget < 0 || t.MaxBudget < 0:
		return placef("min_budget", "negative budget")
	case t.MaxBudget > 0 && t.MinBudget > t.MaxBudget:
		return placef("max_budget", "%d is below min_budget %d", t.MaxBudget, t.MinBudget)
	case (t.Mode == ThinkLevel || t.Mode == ThinkEffort || t.Mode == ThinkAdaptive) && len(t.Efforts) == 0:
		return placef("efforts", "missing (a %s model lists what it accepts)", t.Mode)
	case t.DefaultEffort != "" && !slices.Contains(t.Efforts, t.DefaultEffort):
		return placef("default_effort", "%q is not one of the efforts", t.DefaultEffort)
	case t.Mode == ThinkNone && (len(t.Efforts) > 0 || t.MinBudget > 0 || t.MaxBudget > 0):
		return placef("mode", `"none" with efforts or a budget`)
	}
	return nil
}

func parsePrice(raw json.RawMessage) (Prices, error) {
	var d docPrice
	if err := strict(raw, &d); err != nil {
		return Prices{}, err
	}
	p := Prices{Source: d.Source, AsOf: d.AsOf}
	fields := []struct {
		name string
		in   *string
		out  *Rate
	}{
		{"input", d.Input, &p.Input}, {"output", d.Output, &p.Output},
		{"cache_read", d.CacheRead, &p.CacheRead}, {"cache_write", d.CacheWrite, &p.CacheWrite},
		{"cache_write_1h", d.CacheWrite1h, &p.CacheWrite1h}, {"reasoning", d.Reasoning, &p.Reasoning},
		{"audio_input", d.AudioInput, &p.AudioInput}, {"image_input", d.ImageInput, &p.ImageInput},
	}
	for _, f := range fields {
		r, err := rateOf(f.in)
		if err != nil {
			return Prices{}, placef(f.name, "%v", err)
		}
		*f.out = r
	}
	if !p.Input.Known() && !p.Output.Known() {
		return Prices{}, placef("input", "missing (a price names at least input or output)")
	}
	if d.Source == "" {
		return Prices{}, placef("source", "missing (the pricing page the prices were read from)")
	}
	if err := checkURL(d.Source); err != nil {
		return Prices{}, placef("source", "%v", err)
	}
	if err := checkAsOf(d.AsOf); err != nil {
		return Prices{}, err
	}
	if len(d.LongContext) > 0 && string(d.LongContext) != "null" {
		t, err := parseTier(d.LongContext)
		if err != nil {
			return Prices{}, fmt.Errorf(".long_context%w", err)
		}
		p.LongContext = &t
	}
	return p, nil
}

func parseTier(raw json.RawMessage) (Tier, error) {
	var d docTier
	if err := strict(raw, &d); err != nil {
		return Tier{}, err
	}
	if d.Above <= 0 {
		return Tier{}, placef("above", "missing or not positive (the prompt tokens above which the tier applies)")
	}
	t := Tier{Above: d.Above}
	for _, f := range []struct {
		name string
		in   *string
		out  *Rate
	}{{"input", d.Input, &t.Input}, {"output", d.Output, &t.Output}, {"cache_read", d.CacheRead, &t.CacheRead}, {"cache_write", d.CacheWrite, &t.CacheWrite}} {
		r, err := rateOf(f.in)
		if err != nil {
			return Tier{}, placef(f.name, "%v", err)
		}
		*f.out = r
	}
	return t, nil
}

func rateOf(s *string) (Rate, error) {
	if s == nil {
		return NoRate, nil
	}
	return ParseRate(*s)
}

func (c *Catalog) parseFamily(raw json.RawMessage) (Family, error) {
	var d docFamily
	if err := strict(raw, &d); err != nil {
		return Family{}, err
	}
	switch {
	case d.Name == "":
		return Family{}, placef("name", "missing")
	case len(d.Match) == 0:
		return Family{}, placef("match", "missing (the name prefixes of the family's models)")
	case d.Default == "":
		return Family{}, placef("default", "missing (the entry unknown members fall back to)")
	}
	for i, p := range d.Match {
		if p == "" {
			return Family{}, placef(fmt.Sprintf("match[%d]", i), "empty prefix")
		}
	}
	if _, ok := c.models[d.Default]; !ok {
		return Family{}, placef("default", "%q is not a model of the document", d.Default)
	}
	return Family(d), nil
}

// add puts m in the catalogue; a name or alias already taken is an error.
func (c *Catalog) add(m Model) error {
	for _, n := range append([]string{m.Name}, m.Aliases...) {
		k := strings.ToLower(n)
		if other, dup := c.names[k]; dup {
			return fmt.Errorf("name %q is already %s's", n, other)
		}
		c.names[k] = m.Name
	}
	c.models[m.Name] = m
	c.order = append(c.order, m.Name)
	return nil
}

// Merge returns a catalogue holding c's entries and families with
// over's laid over them: an entry or family of over replaces c's of the
// same name (its aliases with it), the rest of c stays. When over.Replace
// is true the result is over alone. Neither argument changes.
func (c *Catalog) Merge(over Document) *Catalog {
	if over.Replace || c == nil {
		return over.Catalog
	}
	out := &Catalog{asOf: c.asOf, models: map[string]Model{}, names: map[string]string{}}
	if over.asOf != "" {
		out.asOf = over.asOf
	}
	taken := map[string]bool{}
	for _, m := range over.Models() {
		for _, n := range append([]string{m.Name}, m.Aliases...) {
			taken[strings.ToLower(n)] = true
		}
	}
	for _, m := range c.Models() {
		if _, replaced := over.models[m.Name]; replaced {
			continue
		}
		// An alias the overlay now gives another model is dropped here.
		m.Aliases = slices.DeleteFunc(slices.Clone(m.Aliases), func(a string) bool { return taken[strings.ToLower(a)] })
		if taken[strings.ToLower(m.Name)] {
			continue
		}
		_ = out.add(m) // names were unique in c
	}
	for _, m := range over.Models() {
		_ = out.add(m) // unique in over, and cleared from c above
	}
	fams := map[string]bool{}
	for _, f := range over.families {
		fams[f.Name] = true
	}
	for _, f := range c.families {
		if !fams[f.Name] {
			if _, ok := out.models[f.Default]; ok {
				out.families = append(out.families, f)
			}
		}
	}
	out.families = append(out.families, over.families...)
	return out
}
