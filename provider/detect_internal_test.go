package provider

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"
)

// TestTopKeys checks that every top-level member detection reads by name
// (top["…"] in detect.go) is in topKeys: readTop keeps only those, so a
// member read but not listed would never be seen, and no other test would
// notice (Detect reads through the same list). topFormats' members join
// topKeys where it is built.
func TestTopKeys(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "detect.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	ast.Inspect(f, func(n ast.Node) bool {
		ix, ok := n.(*ast.IndexExpr)
		if !ok {
			return true
		}
		if id, ok := ix.X.(*ast.Ident); !ok || id.Name != "top" {
			return true
		}
		lit, ok := ix.Index.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		k, err := strconv.Unquote(lit.Value)
		if err != nil {
			t.Fatal(err)
		}
		read++
		if topKeys[k] != k {
			t.Errorf("detect.go reads top[%q], which topKeys does not list", k)
		}
		return true
	})
	if read < 8 {
		t.Fatalf("found %d reads of top[…] in detect.go: the test no longer sees them", read)
	}
}
