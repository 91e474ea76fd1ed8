package openai

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// canonicalJSON re-indents a JSON document with sorted keys, so two
// documents that say the same compare equal as strings and differ line by
// line when they do not.
func canonicalJSON(t testing.TB, b []byte) string {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, b)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// sameJSON fails t unless a and b are the same JSON value.
func sameJSON(t testing.TB, what string, got, want []byte) {
	t.Helper()
	g, w := canonicalJSON(t, got), canonicalJSON(t, want)
	if g != w {
		t.Errorf("%s differs:\n%s", what, codectest.LineDiff(w, g))
	}
}

// project keeps the members of a request body a codec reads and writes.
func project(t testing.TB, body []byte, keys ...string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]json.RawMessage{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// report renders a conversion result for a golden file: the JSON (canonical
// or wire) followed by the warnings, one a line.
func report(t testing.TB, doc []byte, warns []provider.Warning, err error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err != nil {
		b.WriteString("error: " + err.Error() + "\n")
	} else {
		b.Write(doc)
		if len(doc) > 0 && doc[len(doc)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	for _, w := range warns {
		b.WriteString("warning: " + w.String() + "\n")
	}
	return b.Bytes()
}

// indentWire indents a wire document for a readable golden file.
func indentWire(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", " "); err != nil {
		t.Fatalf("encoder wrote invalid JSON: %v\n%s", err, b)
	}
	return out.Bytes()
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func glob(t testing.TB, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no test files %s (%v)", pattern, err)
	}
	return files
}

func mustMarshal(t testing.TB, h convo.History) []byte {
	t.Helper()
	b, err := convo.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustUnmarshal(t testing.TB, b []byte) convo.History {
	t.Helper()
	h, err := convo.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
