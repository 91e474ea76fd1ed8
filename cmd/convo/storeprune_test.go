package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStorePrune(t *testing.T) {
	db := filepath.Join(t.TempDir(), "s.db")
	if _, errs, code := runCLI(t, "", "store", "import", "--db", db, "--id", "trip", "../../testdata/v1/example.json"); code != 0 {
		t.Fatalf("import: %s", errs)
	}
	later := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	out, errs, code := runCLI(t, "", "store", "prune", "--db", db, "--content", "1d", "--metadata", "30d", "--now", later)
	if code != 0 || out != "content expired in 1 conversations, 0 deleted\n" {
		t.Fatalf("prune: exit %d, %q %q", code, out, errs)
	}
	out, _, _ = runCLI(t, "", "store", "export", "--db", db, "trip")
	if !strings.Contains(out, `"content":"expired"`) || strings.Contains(out, `"type":"text"`) {
		t.Errorf("export after prune still holds content:\n%s", out)
	}
	out, _, code = runCLI(t, "", "store", "prune", "--db", db, "--metadata", "30d", "--now", time.Now().Add(31*24*time.Hour).UTC().Format(time.RFC3339))
	if code != 0 || out != "content expired in 0 conversations, 1 deleted\n" {
		t.Errorf("prune metadata: exit %d, %q", code, out)
	}
	if _, errs, code := runCLI(t, "", "store", "prune", "--db", db, "--content", "soon"); code != 2 || !strings.Contains(errs, "--content") {
		t.Errorf("bad duration: exit %d, %q", code, errs)
	}
}
