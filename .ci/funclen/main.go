// Command funclen lists the functions of the Go files under the current
// directory that are longer than a limit (default 80 lines), longest first,
// leaving out tests and generated files. With -check it exits 1 when any
// function not named in the -allow file is over the limit.
//
//	go run ./.ci/funclen            # the list
//	go run ./.ci/funclen -check     # as CI
//
// The allow file names one function a line as the list prints it, without
// the line number ("path Recv.Name"), followed by why it may stay long;
// blank lines and lines starting with # are comments. Entries that no
// longer name a long function are reported, so the list only shrinks.
package main

import (
	"bufio"
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
	path, name string
	line       int
	lines      int
}

func main() {
	limit := flag.Int("limit", 80, "longest function allowed, in lines")
	check := flag.Bool("check", false, "exit 1 when a function not in the -allow file is longer than -limit")
	allowFile := flag.String("allow", ".ci/funclen/allow.txt", "file of functions allowed to be longer, with reasons")
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
				long = append(long, fn{path, name(fd), fset.Position(fd.Pos()).Line, n})
			}
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	sort.Slice(long, func(i, j int) bool { return long[i].lines > long[j].lines })
	if !*check {
		for _, f := range long {
			fmt.Printf("%4d %s:%d %s\n", f.lines, f.path, f.line, f.name)
		}
		return
	}
	allowed, err := readAllow(*allowFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	os.Exit(checkLong(long, allowed, *limit))
}

// checkLong reports the long functions the allow list does not name, and
// the entries of the list that name no long function; it returns the exit
// status: 1 when a function is too long and not allowed.
func checkLong(long []fn, allowed map[string]bool, limit int) int {
	bad := 0
	seen := map[string]bool{}
	for _, f := range long {
		key := filepath.ToSlash(f.path) + " " + f.name
		seen[key] = true
		if !allowed[key] {
			fmt.Fprintf(os.Stderr, "funclen: %s:%d %s is %d lines, longer than %d: split it\n", f.path, f.line, f.name, f.lines, limit)
			bad++
		}
	}
	stale := make([]string, 0, len(allowed))
	for key := range allowed {
		if !seen[key] {
			stale = append(stale, key)
		}
	}
	sort.Strings(stale)
	for _, key := range stale {
		fmt.Fprintf(os.Stderr, "funclen: %s is no longer over %d lines: remove it from the allow list\n", key, limit)
	}
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "funclen: %d functions longer than %d lines\n", bad, limit)
		return 1
	}
	return 0
}

// readAllow reads the allow file: "path Recv.Name reason…" a line. A
// missing file allows nothing.
func readAllow(path string) (map[string]bool, error) {
	allowed := map[string]bool{}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return allowed, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 3 {
			return nil, fmt.Errorf("%s:%d: want a path, a function and a reason", path, n)
		}
		allowed[fields[0]+" "+fields[1]] = true
	}
	return allowed, sc.Err()
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
