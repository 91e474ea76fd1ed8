package tokens

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/convo-go/convo/catalog"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		name, model, family, provider, tokenizer string
		context                                  int
	}{
		{"gpt-4o", "gpt-4o", "openai", "openai", O200kBase, 128000},
		{"gpt-4o-2024-08-06", "gpt-4o", "openai", "openai", O200kBase, 128000},
		{"GPT-4o-mini-2024-07-18", "gpt-4o-mini", "openai", "openai", O200kBase, 128000},
		{"chatgpt-4o-latest", "gpt-4o", "openai", "openai", O200kBase, 128000},
		{"gpt-4.1-nano-2025-04-14", "gpt-4.1-nano", "openai", "openai", O200kBase, 1047576},
		{"gpt-5", "gpt-5", "openai", "openai", O200kBase, 400000},
		{"gpt-5.1", "gpt-5", "openai", "openai", O200kBase, 400000},
		{"gpt-5-mini", "gpt-5-mini", "openai", "openai", O200kBase, 400000},
		{"o1-preview", "o1", "openai", "openai", O200kBase, 200000},
		{"o3-mini-2025-01-31", "o3-mini", "openai", "openai", O200kBase, 200000},
		{"gpt-4", "gpt-4", "openai", "openai", Cl100kBase, 8192},
		{"gpt-4-0613", "gpt-4", "openai", "openai", Cl100kBase, 8192},
		{"gpt-4-turbo-2024-04-09", "gpt-4-turbo", "openai", "openai", Cl100kBase, 128000},
		{"gpt-3.5-turbo-0125", "gpt-3.5-turbo", "openai", "openai", Cl100kBase, 16385},
		{"openai/gpt-4o", "gpt-4o", "openai", "openai", O200kBase, 128000},
		{"claude-sonnet-4-20250514", "claude-sonnet-4", "anthropic", "anthropic", O200kBase, 200000},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5", "anthropic", "anthropic", O200kBase, 200000},
		{"claude-3-5-haiku-latest", "claude-3-5-haiku", "anthropic", "anthropic", O200kBase, 200000},
		{"anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet", "anthropic", "bedrock", O200kBase, 200000},
		{"us.anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4", "anthropic", "bedrock", O200kBase, 200000},
		{"global.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5", "anthropic", "bedrock", O200kBase, 200000},
		{"amazon.nova-pro-v1:0", "nova-pro", "nova", "bedrock", O200kBase, 300000},
		{"us.amazon.nova-lite-v1:0", "nova-lite", "nova", "bedrock", O200kBase, 300000},
		{"meta.llama3-1-70b-instruct-v1:0", "llama3.1", "llama", "bedrock", Cl100kBase, 131072},
		{"mistral.mistral-large-2407-v1:0", "mistral-large", "mistral", "bedrock", O200kBase, 131072},
		{"deepseek.r1-v1:0", "deepseek-r1", "local", "bedrock", O200kBase, 131072},
		{"gemini-2.5-flash", "gemini-2.5-flash", "gemini", "gemini", O200kBase, 1048576},
		{"models/gemini-2.0-flash-001", "gemini-2.0-flash", "gemini", "gemini", O200kBase, 1048576},
		{"gemini-2.5-flash-lite-preview-06-17", "gemini-2.5-flash-lite", "gemini", "gemini", O200kBase, 1048576},
		{"llama3.1:8b", "llama3.1", "llama", "ollama", Cl100kBase, 131072},
		{"llama3:70b", "llama3", "llama", "ollama", Cl100kBase, 8192},
		{"gemma3:4b", "gemma3", "gemma", "ollama", O200kBase, 131072},
		{"gemma3:1b", "gemma3:1b", "gemma", "ollama", O200kBase, 32768},
		{"qwen2.5:7b-instruct", "qwen2.5", "qwen", "ollama", O200kBase, 32768},
		{"gpt-oss:20b", "gpt-oss", "local", "ollama", O200kBase, 131072},
	}
	r := Default()
	for _, tt := range tests {
		m, err := r.Lookup(tt.name)
		if err != nil {
			t.Errorf("Lookup(%q): %v", tt.name, err)
			continue
		}
		if m.Name != tt.model || m.Family != tt.family || m.Provider != tt.provider || m.Tokenizer != tt.tokenizer || m.Context != tt.context || m.Image == nil {
			t.Errorf("Lookup(%q) = %s/%s/%s/%s/%d, want %s/%s/%s/%s/%d", tt.name, m.Name, m.Family, m.Provider, m.Tokenizer, m.Context,
				tt.model, tt.family, tt.provider, tt.tokenizer, tt.context)
		}
	}
}

func TestUnknownModel(t *testing.T) {
	for _, name := range []string{"my-model", "", "us.unknownvendor.thing-v1:0", "anthropic.nothing"} {
		_, err := Default().Lookup(name)
		if !errors.Is(err, ErrUnknownModel) {
			t.Fatalf("Lookup(%q): %v, want ErrUnknownModel", name, err)
		}
		msg := err.Error()
		for _, fam := range []string{"openai: gpt-", "anthropic: claude-", "gemini: gemini-", "nova: ", "llama: ", "local: "} {
			if !strings.Contains(msg, fam) {
				t.Errorf("error %q does not name %q", msg, fam)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("error spans lines: %q", msg)
		}
	}
	if _, err := NewCounter("my-model", Options{}); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("NewCounter of an unknown model: %v", err)
	}
	c, err := NewCounter("my-model", Options{Estimate: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.Exact() || c.Bound() == 0 || c.Model().Family != "estimate" || c.Model().Context != 0 {
		t.Errorf("estimated counter: %+v", c.Model())
	}
}

func TestLoad(t *testing.T) {
	r := New()
	err := r.Load([]byte(`{
		"families": [{"name": "acme", "provider": "ollama", "tokenizer": "cl100k_base", "factor": 1.5, "bound": 0.3,
			"per_message": 2, "per_tool_call": 2, "per_request": 1,
			"image": {"method": "fixed", "tokens": 100, "unknown": 100}, "media": 50, "examples": "acme-1"}],
		"models": [
			{"name": "acme-1", "family": "acme", "context": 4096, "max_output": 1024},
			{"name": "gpt-4o", "family": "openai", "context": 64000, "max_output": 4096, "match": ["gpt-4o", "my-4o"]}
		]}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := r.Lookup("acme-1-q4")
	if err != nil || m.Family != "acme" || m.Context != 4096 || m.Tokenizer != Cl100kBase {
		t.Fatalf("added model: %+v, %v", m, err)
	}
	if m, _ := r.Lookup("my-4o"); m.Name != "gpt-4o" || m.Context != 64000 {
		t.Errorf("overridden model: %+v", m)
	}
	if m, _ := Default().Lookup("gpt-4o"); m.Context != 128000 {
		t.Errorf("New changed the shared default registry: %+v", m)
	}
	c, err := NewCounter("acme-1", Options{Registry: r})
	if err != nil {
		t.Fatal(err)
	}
	if c.Exact() || c.Family().Factor != 1.5 {
		t.Errorf("counter of an added family: %+v", c.Family())
	}
	// Replacing a model drops its old prefixes.
	if err := r.Add(Model{Name: "gpt-4o", Family: "openai", Context: 1000}); err != nil {
		t.Fatal(err)
	}
	if m, err := r.Lookup("my-4o"); err == nil {
		t.Errorf("old prefix still matches: %+v", m)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"syntax", `{`, "model facts"},
		{"unknown field", `{"modells": []}`, "unknown field"},
		{"format", `{"format": "other/v2"}`, "format"},
		{"unknown family", `{"models": [{"name": "x", "family": "nope"}]}`, `models[0]: model x: unknown family "nope"`},
		{"no name", `{"models": [{"family": "openai"}]}`, "no name"},
		{"bad tokenizer", `{"families": [{"name": "f", "tokenizer": "spm", "factor": 1, "image": {"method": "fixed", "tokens": 1, "unknown": 1}}]}`, "tokenizer"},
		{"no factor", `{"families": [{"name": "f", "tokenizer": "o200k_base", "image": {"method": "fixed", "tokens": 1, "unknown": 1}}]}`, "factor"},
		{"exact with bound", `{"families": [{"name": "f", "tokenizer": "o200k_base", "exact": true, "bound": 0.1, "image": {"method": "fixed", "tokens": 1, "unknown": 1}}]}`, "bound"},
		{"bad image", `{"families": [{"name": "f", "tokenizer": "o200k_base", "factor": 1, "image": {"method": "tile", "unknown": 1}}]}`, "tile"},
		{"image method", `{"families": [{"name": "f", "tokenizer": "o200k_base", "factor": 1, "image": {"method": "magic", "unknown": 1}}]}`, "magic"},
		{"no unknown", `{"families": [{"name": "f", "tokenizer": "o200k_base", "factor": 1, "image": {"method": "fixed", "tokens": 5}}]}`, "unknown"},
		{"output over window", `{"models": [{"name": "x", "family": "openai", "context": 10, "max_output": 20}]}`, "exceeds"},
		{"empty prefix", `{"models": [{"name": "x", "family": "openai", "match": [""]}]}`, "empty match"},
	}
	for _, tt := range tests {
		r := New()
		err := r.Load([]byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
	// A document with a bad entry adds nothing.
	r := New()
	_ = r.Load([]byte(`{"models": [{"name": "fine", "family": "openai"}, {"name": "bad", "family": "nope"}]}`))
	if _, err := r.Lookup("fine"); err == nil {
		t.Error("a rejected document added a model")
	}
}

func TestShippedFacts(t *testing.T) {
	r := Default()
	if len(r.Families()) < 6 {
		t.Fatalf("families: %d", len(r.Families()))
	}
	for _, m := range r.Models() {
		if m.Context <= 0 || m.MaxOutput <= 0 {
			t.Errorf("%s: context %d, max output %d", m.Name, m.Context, m.MaxOutput)
		}
		// Every model's own name selects it.
		if got, err := r.Lookup(m.Name); err != nil || got.Name != m.Name {
			t.Errorf("Lookup(%q) = %q, %v", m.Name, got.Name, err)
		}
		if _, err := r.CounterFor(m, Options{}); err != nil {
			t.Errorf("%s: %v", m.Name, err)
		}
	}
}

// TestWindowsFromCatalog checks that the catalogue is the one table of
// windows: the shipped tokens file holds none, and every model's window is
// its catalogue entry's.
func TestWindowsFromCatalog(t *testing.T) {
	var d Data
	if err := json.Unmarshal(modelsJSON, &d); err != nil {
		t.Fatal(err)
	}
	for _, m := range d.Models {
		if m.Context != 0 || m.MaxOutput != 0 {
			t.Errorf("tokens/models.json gives %s a window; the catalogue holds windows", m.Name)
		}
	}
	for _, m := range Default().Models() {
		e, ok := catalog.Default().Entry(m.Name)
		if !ok || e.Context != m.Context || e.MaxOutput != m.MaxOutput {
			t.Errorf("%s: window %d/%d, catalogue entry %v %d/%d", m.Name, m.Context, m.MaxOutput, ok, e.Context, e.MaxOutput)
		}
	}
}

func TestCatalogOverlay(t *testing.T) {
	over, err := catalog.Parse(strings.NewReader(`{"format": "convo-catalog/v1", "models": [
		{"name": "house-model", "provider": "openai", "family": "openai", "context": 9000, "max_output": 1000, "source": ["https://example.com"], "as_of": "2026-12"},
		{"name": "gpt-4o", "provider": "openai", "family": "openai", "context": 64000, "max_output": 4000, "source": ["https://example.com"], "as_of": "2026-12"},
		{"name": "odd-model", "provider": "acme", "family": "acme", "context": 10, "source": ["https://example.com"], "as_of": "2026-12"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r := New()
	r.SetCatalog(catalog.Default().Merge(over))
	if m, err := r.Lookup("house-model-2026-01-01"); err != nil || m.Name != "house-model" || m.Context != 9000 || m.Tokenizer != O200kBase {
		t.Errorf("a model only the catalogue holds: %+v, %v", m, err)
	}
	if m, _ := r.Lookup("gpt-4o-2024-08-06"); m.Context != 64000 || m.MaxOutput != 4000 {
		t.Errorf("a window the catalogue overrides: %+v", m)
	}
	if _, err := r.Lookup("odd-model"); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("a catalogue model of no tokenizer family: %v", err)
	}
	if m, _ := Default().Lookup("gpt-4o"); m.Context != 128000 {
		t.Errorf("SetCatalog on a copy changed the default registry: %d", m.Context)
	}
}
