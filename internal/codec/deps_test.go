package codec

import (
	"go/build"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/convo-go/convo"

// deps returns the project packages pkg imports, directly or not, from
// their non-test files (as a build of pkg compiles them).
func deps(t *testing.T, pkg string) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	var walk func(string)
	walk = func(path string) {
		dir := filepath.Join("..", "..", filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(path, module), "/")))
		p, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, imp := range p.Imports {
			if (imp == module || strings.HasPrefix(imp, module+"/")) && !seen[imp] {
				seen[imp] = true
				walk(imp)
			}
		}
	}
	walk(pkg)
	return seen
}

// TestDependenciesPointDown keeps the leaves below package provider: the
// stream readers and the token counter use this package's values, never
// provider's, and this package needs nothing of convo but the root (and
// the leaves the root itself imports: the JSON reader, and internal/lend,
// which imports nothing).
func TestDependenciesPointDown(t *testing.T) {
	for _, pkg := range []string{module + "/internal/stream", module + "/tokens", module + "/internal/codec"} {
		d := deps(t, pkg)
		if d[module+"/provider"] {
			t.Errorf("%s imports %s/provider (directly or not); use %s/internal/codec", pkg, module, module)
		}
		if !d[module+"/internal/codec"] && pkg != module+"/internal/codec" {
			t.Errorf("%s no longer imports internal/codec: is this test still checking what it should?", pkg)
		}
	}
	for imp := range deps(t, module+"/internal/codec") {
		if imp != module && imp != module+"/internal/jsonx" && imp != module+"/internal/lend" {
			t.Errorf("internal/codec imports %s; it may import only the root, internal/jsonx and internal/lend", imp)
		}
	}
}

// TestCatalogIsALeaf: the model catalogue is data that tokens, provider
// and pricing all read, so it may import nothing of convo.
func TestCatalogIsALeaf(t *testing.T) {
	for imp := range deps(t, module+"/catalog") {
		t.Errorf("catalog imports %s; it may import nothing of convo", imp)
	}
}

// TestLendIsALeaf: package convo imports internal/lend to set its hook,
// so internal/lend may import nothing of convo (nor anything else that
// would make the root's imports reach further).
func TestLendIsALeaf(t *testing.T) {
	for imp := range deps(t, module+"/internal/lend") {
		t.Errorf("internal/lend imports %s; it may import nothing of convo", imp)
	}
}
