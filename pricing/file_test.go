package pricing_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo/pricing"
)

func TestParseTable(t *testing.T) {
	doc := `{"claude-sonnet-4*": {"input": "3.00", "output": "15", "cache_read": 0.30, "cache_write": "3.75", "currency": "USD"},
	         "claude-*": {"input": 1, "output": 5},
	         "gpt-5": {"input": 1.25, "output": 10, "reasoning": "10"}}`
	tab, err := pricing.ParseTable([]byte(doc), "prices.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		model, input string // "" input: unknown
	}{
		{"claude-sonnet-4-5", "3"}, // first match wins
		{"claude-haiku-4", "1"},
		{"gpt-5", "1.25"},
		{"gpt-5-mini", ""},
		{"", ""},
	}
	for _, tt := range tests {
		p, ok := tab.Lookup(tt.model)
		if ok != (tt.input != "") || (ok && p.Input.String() != tt.input) {
			t.Errorf("Lookup(%q) = %s, %v; want %q", tt.model, p.Input, ok, tt.input)
		}
		if ok && p.Source != "prices.json" {
			t.Errorf("source %q", p.Source)
		}
	}
	if p, _ := tab.Lookup("claude-sonnet-4-5"); p.CacheRead == nil || p.CacheRead.String() != "0.3" || p.Reasoning != nil {
		t.Errorf("optional rates %+v", p)
	}
}

func TestParseTableErrors(t *testing.T) {
	tests := []struct{ doc, err string }{
		{`not json`, "not valid JSON: invalid character"},
		{`[]`, "want a JSON object"},
		{`{"m": {"input": 1, "output": 1}`, "not valid JSON"},
		{`{"m": {"input": 1, "output": 1}} {}`, "not valid JSON"},
		{`{"m": {"input": -3, "output": 1}}`, `"m".input: negative price -3`},
		{`{"m": {"input": "abc", "output": 1}}`, `"m".input: want USD per million tokens as a decimal`},
		{`{"m": {"input": 3e-6, "output": 1}}`, `"m".input: want USD per million tokens`},
		{`{"m": {"input": 1}}`, `"m".output: missing`},
		{`{"m": {"input": 1, "output": 1, "currency": "EUR"}}`, `"m".currency: unknown currency "EUR"`},
		{`{"m": {"input": 1, "output": 1, "per": "token"}}`, `"m".per: unknown member`},
		{`{"m": 3}`, `"m": want an object of prices`},
		{`{"[a-": {"input": 1, "output": 1}}`, `"[a-": not a model glob`},
		{`{"m": {"input": 1, "output": 1}, "m": {"input": 2, "output": 2}}`, `"m": given twice`},
	}
	for _, tt := range tests {
		_, err := pricing.ParseTable([]byte(tt.doc), "f")
		if err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: error %v, want %q", tt.doc, err, tt.err)
		}
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "prices.json")
	os.WriteFile(good, []byte(`{"*": {"input": 1, "output": 2}}`), 0o600)
	tab, err := pricing.LoadFile(good)
	if err != nil || tab.Len() != 1 {
		t.Fatalf("LoadFile: %v, %d entries", err, tab.Len())
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"*": {"input": -1, "output": 2}}`), 0o600)
	if _, err := pricing.LoadFile(bad); err == nil || !strings.HasPrefix(err.Error(), "prices "+bad+": ") {
		t.Errorf("error %v does not name the file", err)
	}
	if _, err := pricing.LoadFile(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file loaded")
	}
}
