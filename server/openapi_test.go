package server

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// openAPIDoc is what the sync test reads from docs/openapi.yaml. The file is
// YAML in block style, two spaces an indentation level, which a line scanner
// reads reliably: the repository takes no YAML dependency for one test.
type openAPIDoc struct {
	operations []string            // "METHOD /path"
	components map[string][]string // section → names defined
	refs       []string            // "#/components/section/name"
	lines      int
}

func readOpenAPI(t *testing.T) openAPIDoc {
	t.Helper()
	f, err := os.Open("../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc := openAPIDoc{components: map[string][]string{}}
	top, path, section := "", "", ""
	key := regexp.MustCompile(`^( *)([^ #:][^:]*):(\s|$)`)
	ref := regexp.MustCompile(`\$ref: "(#/components/[^"]+)"`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		doc.lines++
		line := sc.Text()
		for _, m := range ref.FindAllStringSubmatch(line, -1) {
			doc.refs = append(doc.refs, m[1])
		}
		m := key.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		indent, name := len(m[1]), strings.Trim(m[2], `"`)
		switch {
		case indent == 0:
			top = name
		case top == "paths" && indent == 2:
			path = name
		case top == "paths" && indent == 4:
			switch name {
			case "get", "put", "post", "delete", "patch", "head", "options":
				doc.operations = append(doc.operations, strings.ToUpper(name)+" "+path)
			}
		case top == "components" && indent == 2:
			section = name
		case top == "components" && indent == 4:
			doc.components[section] = append(doc.components[section], name)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestOpenAPIMatchesRoutes checks that docs/openapi.yaml documents exactly
// the operations the handler serves.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc := readOpenAPI(t)
	served := []string{metricsRoute}
	for _, rt := range (&Server{}).routes() {
		served = append(served, rt.method+" "+rt.pattern)
	}
	for _, op := range served {
		if !slices.Contains(doc.operations, op) {
			t.Errorf("the handler serves %s, which docs/openapi.yaml does not document", op)
		}
	}
	for _, op := range doc.operations {
		if !slices.Contains(served, op) {
			t.Errorf("docs/openapi.yaml documents %s, which the handler does not serve", op)
		}
	}
	if len(doc.operations) < 10 {
		t.Errorf("read only %d operations from %d lines: has the file's layout changed?", len(doc.operations), doc.lines)
	}
}

// TestOpenAPIRefs checks that every $ref names a component the document
// defines, and every component is used.
func TestOpenAPIRefs(t *testing.T) {
	doc := readOpenAPI(t)
	used := map[string]bool{}
	for _, r := range doc.refs {
		used[r] = true
		parts := strings.Split(strings.TrimPrefix(r, "#/components/"), "/")
		if len(parts) != 2 || !slices.Contains(doc.components[parts[0]], parts[1]) {
			t.Errorf("$ref %s names no component", r)
		}
	}
	for section, names := range doc.components {
		if section == "securitySchemes" {
			continue // used by name in security requirements
		}
		for _, n := range names {
			if !used["#/components/"+section+"/"+n] {
				t.Errorf("component %s/%s is never used", section, n)
			}
		}
	}
}

// TestProblemTypesDocumented checks that every problem type the server
// reports is listed in the Problem schema's description.
func TestProblemTypesDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, name := range []string{"problem.go", "server.go", "request.go", "native.go", "openai.go", "items.go"} {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`kind: +"([a-z-]+)"`).FindAllStringSubmatch(string(src), -1) {
			kinds[m[1]] = true
		}
	}
	if len(kinds) < 8 {
		t.Fatalf("found only %d problem kinds in the source", len(kinds))
	}
	desc := regexp.MustCompile(`urn:convo:problem:NAME, NAME one of ([^.]+)\.`).FindSubmatch(b)
	if desc == nil {
		t.Fatal("the Problem schema does not list the problem names")
	}
	listed := strings.Split(string(desc[1]), ", ")
	for k := range kinds {
		if !slices.Contains(listed, k) {
			t.Errorf("problem type %q is not listed in docs/openapi.yaml", k)
		}
	}
	for _, k := range listed {
		if !kinds[k] {
			t.Errorf("docs/openapi.yaml lists problem type %q, which the server never reports", k)
		}
	}
}
