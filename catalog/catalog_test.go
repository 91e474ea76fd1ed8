package catalog

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestLookup(t *testing.T) {
	tests := []struct {
		name, entry string
		kind        MatchKind
		context     int
		warn        bool
	}{
		{"claude-sonnet-4-5", "claude-sonnet-4-5", MatchExact, 200000, false},
		{"Claude-Sonnet-4-5", "claude-sonnet-4-5", MatchExact, 200000, false},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5", MatchAlias, 200000, false},
		{"claude-sonnet-4.5", "claude-sonnet-4-5", MatchAlias, 200000, false},
		{"claude-3-5-haiku-latest", "claude-3-5-haiku", MatchVersion, 200000, false},
		{"anthropic/claude-opus-4-6", "claude-opus-4-6", MatchExact, 1000000, false},
		{"anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet", MatchVersion, 200000, false},
		{"us.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4", MatchVersion, 200000, false},
		{"gpt-4o-2024-08-06", "gpt-4o", MatchVersion, 128000, false},
		{"gpt-4o-mini-2024-07-18", "gpt-4o-mini", MatchVersion, 128000, false},
		{"gpt-4-0613", "gpt-4", MatchVersion, 8192, false},
		{"o3-mini-2025-01-31", "o3-mini", MatchVersion, 200000, false},
		{"models/gemini-2.0-flash-001", "gemini-2.0-flash", MatchVersion, 1048576, false},
		{"gemini-2.5-flash-lite-preview-06-17", "gemini-2.5-flash-lite", MatchVersion, 1048576, false},
		{"gemini-3-pro-preview", "gemini-3-pro", MatchAlias, 1048576, false},
		{"amazon.nova-pro-v1:0", "nova-pro", MatchVersion, 300000, false},
		{"llama3.1:8b", "llama3.1", MatchVersion, 131072, false},
		{"gemma3:1b", "gemma3:1b", MatchExact, 32768, false},
		{"claude-opus-5.5", "claude-opus-5-5", MatchAlias, 1000000, false},
		{"claude-sonnet-5", "claude-sonnet-5", MatchExact, 1000000, false},
		{"gemini-3.1-pro-preview", "gemini-3.1-pro", MatchAlias, 1048576, false},
		// Family fallbacks: a sibling the table does not hold.
		{"claude-opus-9", "claude-sonnet-4-5", MatchFamily, 200000, true},
		{"gpt-5.2", "gpt-5", MatchFamily, 400000, true},
		{"claude-sonnet-4-5-turbo", "claude-sonnet-4-5", MatchFamily, 200000, true},
		{"gemini-9-ultra", "gemini-2.5-flash", MatchFamily, 1048576, true},
		// Wholly unknown.
		{"my-house-model", "", MatchNone, 0, true},
		{"", "", MatchNone, 0, true},
	}
	c := Default()
	for _, tt := range tests {
		m, got := c.Lookup(tt.name)
		if m.Name != tt.entry || got.Entry != tt.entry || got.Kind != tt.kind || m.Context != tt.context ||
			(got.Warning != "") != tt.warn {
			t.Errorf("Lookup(%q) = %s %v ctx %d warning %q; want %s %v ctx %d warning %v",
				tt.name, m.Name, got.Kind, m.Context, got.Warning, tt.entry, tt.kind, tt.context, tt.warn)
		}
		if got.Known() != (tt.kind != MatchFamily && tt.kind != MatchNone) {
			t.Errorf("Lookup(%q).Known() = %v", tt.name, got.Known())
		}
		if strings.Contains(got.Warning, "\n") || (tt.warn && !strings.Contains(got.Warning, fmt.Sprintf("%q", tt.name))) {
			t.Errorf("Lookup(%q) warning %q: not one line naming the model", tt.name, got.Warning)
		}
	}
}

func TestModelFacts(t *testing.T) {
	c := Default()
	tests := []struct {
		model, mode string
		refuses     string
		structured  bool
		min, max    int
	}{
		{"claude-sonnet-4-5", ThinkBudget, "temperature", true, 1024, 0},
		{"claude-opus-4-6", ThinkAdaptive, "top_k", true, 0, 0},
		{"claude-3-5-haiku", ThinkNone, "", false, 0, 0},
		{"gemini-2.5-pro", ThinkBudget, "", true, 128, 32768},
		{"gemini-3-pro", ThinkLevel, "", true, 0, 0},
		{"o3", ThinkEffort, "top_p", true, 0, 0},
		{"gpt-4.1", ThinkNone, "", true, 0, 0},
		// Sonnet 5 refuses non-default sampling settings (its page, 2026-12-05).
		{"claude-sonnet-5", ThinkAdaptive, "temperature", true, 0, 0},
	}
	for _, tt := range tests {
		m, _ := c.Lookup(tt.model)
		th := m.Thinking
		if th.Mode != tt.mode || th.MinBudget != tt.min || th.MaxBudget != tt.max || m.StructuredOutput != tt.structured {
			t.Errorf("%s: thinking %+v structured %v", tt.model, th, m.StructuredOutput)
		}
		if tt.refuses != "" && !m.Refuses(tt.refuses) {
			t.Errorf("%s does not refuse %s: %v", tt.model, tt.refuses, m.RefusesWhileThinking)
		}
		if tt.refuses == "" && len(m.RefusesWhileThinking) > 0 {
			t.Errorf("%s refuses %v", tt.model, m.RefusesWhileThinking)
		}
	}
	if m, _ := c.Lookup("claude-opus-4-6"); m.Thinking.DefaultEffort != "high" {
		t.Errorf("opus 4.6 default effort %q", m.Thinking.DefaultEffort)
	}
}

func TestPrice(t *testing.T) {
	c := Default()
	p, m, ok := c.Price("claude-sonnet-4-5-20250929")
	if !ok || m.Kind != MatchAlias {
		t.Fatalf("no price: %v %v", m, ok)
	}
	want := Prices{Input: 3_000_000, Output: 15_000_000, CacheRead: 300_000, CacheWrite: 3_750_000, CacheWrite1h: 6_000_000,
		Reasoning: NoRate, AudioInput: NoRate, ImageInput: NoRate}
	p.Source, p.AsOf = "", ""
	if p != want {
		t.Errorf("claude-sonnet-4-5 prices %+v, want %+v", p, want)
	}
	p, _, ok = c.Price("gemini-2.5-pro")
	if !ok || p.LongContext == nil || p.LongContext.Above != 200000 || p.LongContext.Input.String() != "2.5" || p.Input.String() != "1.25" {
		t.Errorf("gemini-2.5-pro prices %+v (tier %+v)", p, p.LongContext)
	}
	if _, _, ok := c.Price("llama3.1:8b"); ok {
		t.Error("a local model has a price")
	}
	if _, m, ok := c.Price("nobody-knows"); ok || m.Kind != MatchNone {
		t.Errorf("unknown model priced: %v %v", m, ok)
	}
}

// TestEveryFigureSourced checks the shipped table: every entry and price
// names an https page and a date, and the table holds the entries tokens
// and fit rely on for windows.
func TestEveryFigureSourced(t *testing.T) {
	c := Default()
	if len(c.Models()) < 50 {
		t.Fatalf("%d models", len(c.Models()))
	}
	for _, m := range c.Models() {
		if len(m.Sources) == 0 || m.AsOf == "" {
			t.Errorf("%s: no source or date", m.Name)
		}
		for _, s := range m.Sources {
			if !strings.HasPrefix(s, "https://") {
				t.Errorf("%s: source %q", m.Name, s)
			}
		}
		if m.Price != nil && (!strings.HasPrefix(m.Price.Source, "https://") || m.Price.AsOf == "") {
			t.Errorf("%s: price without source or date", m.Name)
		}
	}
	for _, f := range c.Families() {
		if _, ok := c.Entry(f.Default); !ok {
			t.Errorf("family %s: default %s is no entry", f.Name, f.Default)
		}
	}
}

// TestShapeGolden pins the embedded table's shape: one line per model with
// its figures, so that a change to the data shows in review.
func TestShapeGolden(t *testing.T) {
	var b bytes.Buffer
	for _, m := range Default().Models() {
		price := "-"
		if p := m.Price; p != nil {
			price = fmt.Sprintf("in %s out %s cr %s cw %s", p.Input, p.Output, p.CacheRead, p.CacheWrite)
			if p.LongContext != nil {
				price += fmt.Sprintf(" >%d in %s out %s", p.LongContext.Above, p.LongContext.Input, p.LongContext.Output)
			}
		}
		fmt.Fprintf(&b, "%s %s/%s ctx %d out %d think %s%v so %v st %v refuses %v | %s\n", m.Name, m.Provider, m.Family,
			m.Context, m.MaxOutput, m.Thinking.Mode, m.Thinking.Efforts, m.StructuredOutput, m.StrictTools, m.RefusesWhileThinking, price)
	}
	golden := filepath.Join("testdata", "shape.golden")
	if *update {
		if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("the embedded catalogue's shape changed; run go test -update and review testdata/shape.golden:\n%s", b.String())
	}
}

func TestRate(t *testing.T) {
	tests := []struct {
		in   string
		want Rate
		err  string
	}{
		{"3", 3_000_000, ""},
		{"0.30", 300_000, ""},
		{"0.01875", 18_750, ""},
		{"0.000001", 1, ""},
		{"0", 0, ""},
		{"1000000", 1_000_000_000_000, ""},
		{"-1", NoRate, "negative"},
		{"1.2.3", NoRate, "not a decimal"},
		{"1e3", NoRate, "not a decimal"},
		{".5", NoRate, "not a decimal"},
		{"5.", NoRate, "not a decimal"},
		{" 5", NoRate, "not a decimal"},
		{"0.0000001", NoRate, "decimal places"},
		{"1000001", NoRate, "more than"},
		{"", NoRate, "empty"},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if got != tt.want || (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("ParseRate(%q) = %d, %v; want %d, %q", tt.in, got, err, tt.want, tt.err)
		}
		if err == nil {
			if back, err := ParseRate(got.String()); err != nil || back != got {
				t.Errorf("ParseRate(%q).String() = %q does not read back", tt.in, got.String())
			}
		}
	}
	if NoRate.Known() || NoRate.String() != "unknown" {
		t.Error("NoRate is known")
	}
	if v, ok := Rate(1_250_000).Micro(); !ok || v != 1_250_000 {
		t.Error("Micro")
	}
}

const okModel = `{"name": "m", "provider": "openai", "context": 100, "max_output": 10, "source": ["https://example.com/m"], "as_of": "2026-12"}`

func doc(models ...string) string {
	return `{"format": "convo-catalog/v1", "models": [` + strings.Join(models, ",") + `]}`
}

func withMember(member string) string {
	return strings.Replace(okModel, `"name": "m"`, `"name": "m", `+member, 1)
}

func TestParseErrors(t *testing.T) {
	price := func(p string) string { return withMember(`"price": {` + p + `}`) }
	const src = `"source": "https://example.com/p", "as_of": "2026-12-01"`
	tests := []struct{ name, doc, want string }{
		{"not json", `{`, "ends early"},
		{"syntax", `{"format": }`, "invalid JSON"},
		{"trailing", doc(okModel) + `{}`, "data after the document"},
		{"format", `{"format": "convo-models/v1"}`, `format: "convo-models/v1"`},
		{"unknown top member", `{"format": "convo-catalog/v1", "modells": []}`, `: unknown member "modells"`},
		{"unknown member", doc(okModel, withMember(`"windw": 5`)), `models[1]: unknown member "windw"`},
		{"wrong type", doc(withMember(`"aliases": "x"`)), `models[0].aliases: string where an array is wanted`},
		{"no name", doc(strings.Replace(okModel, `"name": "m"`, `"name": ""`, 1)), "models[0].name: missing"},
		{"no provider", doc(strings.Replace(okModel, `"provider": "openai"`, `"provider": ""`, 1)), "models[0].provider: missing"},
		{"missing source", doc(strings.Replace(okModel, `"source": ["https://example.com/m"], `, ``, 1)), "models[0].source: missing"},
		{"bad source", doc(strings.Replace(okModel, `https://example.com/m`, `example.com`, 1)), "models[0].source[0]: \"example.com\" is not"},
		{"missing date", doc(strings.Replace(okModel, `, "as_of": "2026-12"`, ``, 1)), "models[0].as_of: missing"},
		{"bad date", doc(strings.Replace(okModel, `"2026-12"`, `"Dec 2026"`, 1)), `models[0].as_of: "Dec 2026"`},
		{"output over window", doc(strings.Replace(okModel, `"max_output": 10`, `"max_output": 1000`, 1)), "models[0].max_output: 1000 exceeds"},
		{"negative window", doc(strings.Replace(okModel, `"context": 100`, `"context": -1`, 1)), "models[0].context: negative"},
		{"duplicate", doc(okModel, okModel), `models[1]: name "m" is already m's`},
		{"bad refusal", doc(withMember(`"refuses_while_thinking": ["temp"]`)), `models[0].refuses_while_thinking[0]: "temp"`},
		{"thinking mode", doc(withMember(`"thinking": {"mode": "deep"}`)), `models[0].thinking.mode: "deep"`},
		{"thinking member", doc(withMember(`"thinking": {"mode": "none", "budget": 5}`)), `models[0].thinking: unknown member "budget"`},
		{"effort without list", doc(withMember(`"thinking": {"mode": "effort"}`)), "models[0].thinking.efforts: missing"},
		{"default effort", doc(withMember(`"thinking": {"mode": "level", "efforts": ["low"], "default_effort": "high"}`)), `models[0].thinking.default_effort: "high"`},
		{"budget order", doc(withMember(`"thinking": {"mode": "budget", "min_budget": 10, "max_budget": 5}`)), "models[0].thinking.max_budget"},
		{"negative price", doc(price(`"input": "-1", ` + src)), "models[0].price.input: negative price"},
		{"bad decimal", doc(price(`"input": "1.2.3", ` + src)), `models[0].price.input: "1.2.3" is not a decimal`},
		{"float price", doc(price(`"input": 1.5, ` + src)), "models[0].price.input: number where a string is wanted"},
		{"price member", doc(price(`"inptu": "1", ` + src)), `models[0].price: unknown member "inptu"`},
		{"price source", doc(price(`"input": "1", "as_of": "2026-12"`)), "models[0].price.source: missing"},
		{"price date", doc(price(`"input": "1", "source": "https://example.com/p"`)), "models[0].price.as_of: missing"},
		{"empty price", doc(price(src)), "models[0].price.input: missing"},
		{"tier", doc(price(`"input": "1", "long_context": {"input": "2"}, ` + src)), "models[0].price.long_context.above: missing"},
		{"tier price", doc(price(`"input": "1", "long_context": {"above": 5, "output": "x"}, ` + src)), `models[0].price.long_context.output: "x"`},
		{"family default", `{"format": "convo-catalog/v1", "families": [{"name": "f", "match": ["m"], "default": "nope"}], "models": [` + okModel + `]}`, `families[0].default: "nope"`},
		{"family match", `{"format": "convo-catalog/v1", "families": [{"name": "f", "default": "m"}], "models": [` + okModel + `]}`, "families[0].match: missing"},
	}
	for _, tt := range tests {
		_, err := Parse(strings.NewReader(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error spans lines: %q", tt.name, err)
		}
	}
}

func TestParseLimit(t *testing.T) {
	big := strings.NewReader(`{"format": "convo-catalog/v1", "as_of": "` + strings.Repeat(" ", MaxDocument) + `"}`)
	if _, err := Parse(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a huge document: %v", err)
	}
}

func TestMerge(t *testing.T) {
	over, err := Parse(strings.NewReader(`{"format": "convo-catalog/v1", "as_of": "2027-01",
		"models": [
			{"name": "gpt-4o", "provider": "openai", "family": "openai", "context": 64000, "source": ["https://example.com/a"], "as_of": "2027-01"},
			{"name": "house-model", "provider": "openai", "aliases": ["claude-3-haiku-20240307"], "context": 9000, "max_output": 1000,
			 "price": {"input": "0.01", "output": "0.02", "source": "https://example.com/p", "as_of": "2027-01"},
			 "source": ["https://example.com/b"], "as_of": "2027-01"}
		],
		"families": [{"name": "house", "match": ["house-"], "default": "house-model"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	c := Default().Merge(over)
	if m, k := c.Lookup("gpt-4o-2024-08-06"); m.Context != 64000 || k.Kind != MatchVersion {
		t.Errorf("replaced entry: %+v %v", m, k)
	}
	if m, k := c.Lookup("house-special"); m.Name != "house-model" || k.Kind != MatchFamily {
		t.Errorf("added family: %+v %v", m, k)
	}
	if m, _ := c.Lookup("claude-3-haiku-20240307"); m.Name != "house-model" {
		t.Errorf("an alias the overlay takes: %s", m.Name)
	}
	if m, _ := c.Lookup("claude-3-haiku"); m.Name != "claude-3-haiku" {
		t.Errorf("the shipped entry the alias left: %s", m.Name)
	}
	if m, _ := c.Lookup("claude-sonnet-4-5"); m.Context != 200000 || c.AsOf() != "2027-01" {
		t.Errorf("the rest of the shipped table: %+v, as of %s", m, c.AsOf())
	}
	if m, _ := Default().Lookup("gpt-4o"); m.Context != 128000 {
		t.Error("Merge changed the default catalogue")
	}
	over.Replace = true
	if c := Default().Merge(over); len(c.Models()) != 2 {
		t.Errorf("replace kept %d models", len(c.Models()))
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.json")
	if err := os.WriteFile(path, []byte(doc(okModel)), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := Load(path)
	if err != nil || len(d.Models()) != 1 {
		t.Fatalf("Load: %v", err)
	}
	if err := os.WriteFile(path, []byte(doc(withMember(`"x": 1`))), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.HasPrefix(err.Error(), path+": models[0]: unknown member") {
		t.Errorf("Load of a bad file: %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("Load of a missing file")
	}
}

// FuzzParse checks that no document panics Parse, that every error is one
// line, and that an accepted document's entries all resolve to themselves.
func FuzzParse(f *testing.F) {
	f.Add([]byte(doc(okModel)))
	f.Add([]byte(doc(withMember(`"price": {"input": "1.5", "long_context": {"above": 9, "input": "3"}, "source": "https://e.com", "as_of": "2026-01"}`))))
	f.Add(modelsJSON[:min(len(modelsJSON), 4000)])
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := Parse(bytes.NewReader(b))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
			return
		}
		for _, m := range d.Models() {
			if got, k := d.Lookup(m.Name); got.Name != m.Name || !k.Known() {
				t.Fatalf("entry %q resolves to %q (%v)", m.Name, got.Name, k.Kind)
			}
			if p := m.Price; p != nil && (p.Input < NoRate || p.Output < NoRate) {
				t.Fatalf("rate below NoRate: %+v", p)
			}
		}
	})
}
