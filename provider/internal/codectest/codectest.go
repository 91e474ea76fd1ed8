// Package codectest is the test scaffolding the provider codecs share:
// golden files rewritten with -update, JSON documents compared as values,
// fixtures read from testdata, and the realistic histories and canonical
// baselines their benchmarks measure against. Only _test.go files import
// it.
package codectest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

var update = flag.Bool("update", false, "rewrite golden files")

// Update reports whether the test binary runs with -update: golden files
// (and other generated fixtures) are written instead of compared.
func Update() bool { return *update }

// TB is what the helpers need of a test: *testing.T, *testing.B and
// *rapid.T all have it.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Golden compares got with the golden file at path or, with -update,
// writes got there.
func Golden(t TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("%v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update after checking):\n%s", path, LineDiff(string(want), string(got)))
	}
}

// LineDiff shows the lines of want and got around their first difference:
// three equal lines, then up to six of want (-) and of got (+).
func LineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	var b strings.Builder
	for k := max(0, i-3); k < i; k++ {
		b.WriteString("  " + wl[k] + "\n")
	}
	for k := i; k < min(len(wl), i+6); k++ {
		b.WriteString("- " + wl[k] + "\n")
	}
	for k := i; k < min(len(gl), i+6); k++ {
		b.WriteString("+ " + gl[k] + "\n")
	}
	return b.String()
}

// ReadFile returns the contents of the fixture at path.
func ReadFile(t TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return b
}

// Files returns the fixtures matching pattern; a pattern that matches
// nothing fails the test.
func Files(t TB, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if len(files) == 0 {
		t.Fatalf("no fixtures match %s", pattern)
	}
	return files
}

// History reads the canonical history in the file at path.
func History(t TB, path string) convo.History {
	t.Helper()
	h, err := convo.Unmarshal(ReadFile(t, path))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return h
}

// JSONValue decodes the JSON document b as a value, numbers kept as their
// text, for comparing documents whatever their spacing and member order.
func JSONValue(t TB, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, b)
	}
	if d.More() {
		t.Fatalf("more than one JSON value:\n%s", b)
	}
	return v
}

// SameJSON reports whether a and b are the same JSON value.
func SameJSON(t TB, a, b []byte) bool {
	t.Helper()
	return reflect.DeepEqual(JSONValue(t, a), JSONValue(t, b))
}

// ExpectSameJSON fails the test unless got and want are the same JSON
// value.
func ExpectSameJSON(t TB, got, want []byte) {
	t.Helper()
	if !SameJSON(t, got, want) {
		t.Errorf("JSON differs\n got: %s\nwant: %s", got, want)
	}
}

// Members returns the JSON object of the members of the object body named
// keys, those it has: the conversation fields of a request, to compare
// with what Encode writes.
func Members(t TB, body []byte, keys ...string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	out := map[string]json.RawMessage{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return b
}

// Elements returns the elements of the JSON array array for which keep
// says yes, each compacted, in order: the blocks of a content array that
// a test compares byte for byte.
func Elements(t TB, array json.RawMessage, keep func(t TB, elem json.RawMessage) bool) [][]byte {
	t.Helper()
	var elems []json.RawMessage
	if err := json.Unmarshal(array, &elems); err != nil {
		t.Fatalf("%v\n%s", err, array)
	}
	var out [][]byte
	for _, e := range elems {
		if !keep(t, e) {
			continue
		}
		var c bytes.Buffer
		if err := json.Compact(&c, e); err != nil {
			t.Fatalf("%v", err)
		}
		out = append(out, c.Bytes())
	}
	return out
}

// Indent returns the JSON document b indented by indent, with a final
// newline: the form of golden files people read.
func Indent(t TB, b []byte, indent string) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", indent); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// WarningText returns the warnings one a line.
func WarningText(ws []provider.Warning) []byte {
	var b []byte
	for _, w := range ws {
		b = append(b, w.String()...)
		b = append(b, '\n')
	}
	return b
}

// MessageJSON returns m in canonical JSON with a final newline.
func MessageJSON(t TB, m convo.Message) []byte {
	t.Helper()
	b, err := convo.AppendMessage(nil, m)
	if err != nil {
		t.Fatalf("the message does not encode: %v", err)
	}
	return append(b, '\n')
}

// ReplyText returns what a decoded reply golden file holds: the message in
// canonical JSON, then the error and the warnings, if any.
func ReplyText(t TB, m convo.Message, warns []provider.Warning, err error) []byte {
	t.Helper()
	b := MessageJSON(t, m)
	if err != nil {
		b = append(b, "-- error --\n"+err.Error()+"\n"...)
	}
	if len(warns) > 0 {
		b = append(b, "-- warnings --\n"...)
		b = append(b, WarningText(warns)...)
	}
	return b
}

// SSEData returns the data of every "data:" line of a server-sent events
// fixture, whose events each have one such line.
func SSEData(sse []byte) [][]byte {
	var out [][]byte
	for _, line := range bytes.Split(sse, []byte("\n")) {
		if d, ok := bytes.CutPrefix(bytes.TrimSuffix(line, []byte("\r")), []byte("data: ")); ok {
			out = append(out, d)
		}
	}
	return out
}

// RequestRoundTrip decodes every request body matching pattern with c,
// compares the decoded request with the golden file beside it
// (<name>.request), and checks that encoding it again gives the same JSON.
func RequestRoundTrip(t TB, c provider.RequestCodec, pattern string) {
	t.Helper()
	for _, path := range Files(t, pattern) {
		body := ReadFile(t, path)
		r, warns, err := c.DecodeRequest(body, provider.Options{})
		if err != nil {
			t.Errorf("%s: decode: %v", path, err)
			continue
		}
		dump, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatalf("%v", err)
		}
		dump = append(dump, '\n')
		dump = append(dump, WarningText(warns)...)
		Golden(t, strings.TrimSuffix(path, ".json")+".request", dump)
		out, _, err := c.EncodeRequest(r, provider.Options{})
		if err != nil {
			t.Errorf("%s: encode: %v", path, err)
			continue
		}
		if !SameJSON(t, out, body) {
			t.Errorf("%s: decode then encode differs\n got: %s\nwant: %s", path, out, body)
		}
	}
}
