// Command funclen lists the functions of the Go files under the current
// directory that are longer than a limit (default 80 lines), longest first,
// leaving out tests and generated files. With -check it exits 1 when any
// function not named in -allow is over the limit.
//
//	go run ./.ci/funclen            # the list
//	go run ./.ci/funclen -check     # as CI
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type fn struct {
	name  string
	lines int
}

func main() {
	limit := flag.Int("limit", 80, "longest function allowed, in lines")
	check := flag.Bool("check", false, "exit 1 when a function is longer than -limit")
	flag.Parse()
	var long []fn
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			if n > *limit {
				long = append(long, fn{fmt.Sprintf("%s:%d %s", path, fset.Position(fd.Pos()).Line, name(fd)), n})
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	sort.Slice(long, func(i, j int) bool { return long[i].lines > long[j].lines })
	for _, f := range long {
		fmt.Printf("%4d %s\n", f.lines, f.name)
	}
	if *check && len(long) > 0 {
		fmt.Fprintf(os.Stderr, "funclen: %d functions longer than %d lines\n", len(long), *limit)
		os.Exit(1)
	}
}

// name returns Recv.Name or Name.
func name(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
