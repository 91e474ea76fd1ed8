package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreUsage: costs recorded in the messages and costs priced by
// store append --prices add up by model; a message without a price says
// so; --json gives exact decimal strings.
func TestStoreUsage(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "convo.db")
	prices := filepath.Join(dir, "prices.json")
	os.WriteFile(prices, []byte(`{"claude-opus-4*": {"input": 15, "output": 75, "cache_read": "1.50", "cache_write": "18.75"}}`), 0o600)
	id, errs, code := runCLI(t, "", "store", "import", "--db", db, "../../testdata/v1/cost.json")
	if code != 0 {
		t.Fatalf("import: %s", errs)
	}
	id = strings.TrimSpace(id)
	if _, errs, code = runCLI(t, `{"role":"user","parts":[{"type":"text","text":"more"}]}`, "store", "append", "--db", db, id); code != 0 {
		t.Fatalf("append: %s", errs)
	}
	if _, errs, code = runCLI(t, "", "store", "append", "--db", db, "--prices", prices, "--from", "anthropic", id, "../../provider/anthropic/testdata/reply/interleaved.sse"); code != 0 {
		t.Fatalf("append reply: %s", errs)
	}
	out, errs, code := runCLI(t, "", "store", "usage", "--db", db, "--by", "model", "--json")
	if code != 0 {
		t.Fatalf("usage: %s", errs)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := map[string]string{ // model: cost, unpriced
		"claude-opus-4-1":   "0.10683 0", // 12×15 + 30000×1.5 + 2048×18.75 + 310×75, per million
		"claude-sonnet-4-5": "0.0054 0",
		"llama3":            "0 0",
		"unpriced-model":    "0 1",
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows: %s", len(rows), out)
	}
	for _, r := range rows {
		model, _ := r["model"].(string)
		got := r["cost_usd"].(string) + " " + strings.TrimSpace(jsonNum(r["unpriced_messages"]))
		if got != want[model] {
			t.Errorf("%s: %s, want %s", model, got, want[model])
		}
	}
	if rows[0]["input_tokens"].(float64) != 32060 || rows[0]["cached_tokens"].(float64) != 30000 {
		t.Errorf("opus tokens: %v", rows[0])
	}

	out, _, code = runCLI(t, "", "store", "usage", "--db", db)
	if code != 0 || !strings.Contains(out, "0.11223*") || !strings.Contains(out, "* 1 message without a known price") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "", "store", "usage", "--db", db, "--by", "day", "--since", "2026-12-01", "--until", "2026-12-02", "--json")
	if code != 0 || !strings.Contains(out, `"day": "2026-12-01"`) || !strings.Contains(out, `"cost_usd": "0.0054"`) {
		t.Errorf("by day: exit %d\n%s", code, out)
	}
	for _, bad := range [][]string{{"--by", "week"}, {"--since", "yesterday"}, {"--limit", "-1"}} {
		if _, errs, code := runCLI(t, "", append([]string{"store", "usage", "--db", db}, bad...)...); code != 2 {
			t.Errorf("%v: exit %d %s", bad, code, errs)
		}
	}
	if _, errs, code := runCLI(t, "", "store", "usage", "--db", db, "--since", "2026-12-02", "--until", "2026-12-01"); code != 1 || !strings.Contains(errs, "is after until") {
		t.Errorf("since after until: exit %d %s", code, errs)
	}
}

func jsonNum(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
