package main

import (
	"bytes"
	"strings"
	"testing"
)

const houseCatalog = `{"format": "convo-catalog/v1", "models": [
	{"name": "house-model", "provider": "openai", "family": "openai", "context": 9000, "max_output": 1000,
	 "source": ["https://example.com/house"], "as_of": "2026-12"}]}`

// runCLIEnv runs the CLI with the environment vars.
func runCLIEnv(t *testing.T, vars map[string]string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}
	code := run(e, args)
	return out.String(), errb.String(), code
}

func TestModelsCatalogFile(t *testing.T) {
	cat := writeFile(t, "models.json", houseCatalog)
	// A model only the catalogue holds counts with its family's tokenizer
	// and the catalogue's window, by flag or by environment.
	out, errs, code := runCLI(t, "", "tokens", "--model", "house-model-2026-01-01", "--models", cat, cookbook)
	if code != 0 || !strings.Contains(out, "of a 9000-token window") {
		t.Errorf("--models: exit %d: %s\n%s", code, errs, out)
	}
	out, errs, code = runCLIEnv(t, map[string]string{"CONVO_MODELS": cat}, "", "tokens", "--model", "house-model", cookbook)
	if code != 0 || !strings.Contains(out, "of a 9000-token window") {
		t.Errorf("CONVO_MODELS: exit %d: %s\n%s", code, errs, out)
	}
	// fit takes its budget from the same window.
	out, errs, code = runCLI(t, fitSession(10), "fit", "--model", "house-model", "--models", cat, "--reserve", "1000")
	if code != 0 || countFor(t, "gpt-4o", out) > 8000 || !strings.Contains(errs, "of 8000 tokens") {
		t.Errorf("fit: exit %d: %s", code, errs)
	}
}

func TestModelsBadFile(t *testing.T) {
	bad := writeFile(t, "bad.json", strings.Replace(houseCatalog, `"context": 9000`, `"contxt": 9000`, 1))
	facts := writeFile(t, "facts.json", `{"models":[{"name":"house-model","family":"openai","context":9000}]}`)
	tests := []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"tokens", nil, []string{"tokens", "--model", "gpt-4o", "--models", bad, cookbook}, "--models " + bad + `: models[0]: unknown member "contxt"`},
		{"env", map[string]string{"CONVO_MODELS": bad}, []string{"tokens", "--model", "gpt-4o", cookbook}, "CONVO_MODELS=" + bad + ": models[0]"},
		{"convert", nil, []string{"convert", "--from", "convo", "--to", "openai-chat", "--models", bad, cookbook}, `models[0]: unknown member "contxt"`},
		{"convert facts", nil, []string{"convert", "--from", "convo", "--to", "openai-chat", "--models", facts, cookbook}, "not a model catalogue"},
		{"gateway", nil, []string{"gateway", "--upstream", "o=openai-chat@http://127.0.0.1:1", "--route", "*=o", "--addr", "127.0.0.1:0", "--models", bad}, `models[0]: unknown member "contxt"`},
		{"serve", nil, []string{"serve", "--addr", "127.0.0.1:0", "--models", bad}, `models[0]: unknown member "contxt"`},
		{"missing", nil, []string{"serve", "--addr", "127.0.0.1:0", "--models", bad + ".none"}, "no such file"},
	}
	for _, tt := range tests {
		_, errs, code := runCLIEnv(t, tt.vars, "", tt.args...)
		if code != 1 || !strings.Contains(errs, tt.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%s: exit %d: %q, want one line with %q", tt.name, code, errs, tt.want)
		}
	}
}
