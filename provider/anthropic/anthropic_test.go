package anthropic

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

var update = flag.Bool("update", false, "rewrite golden files")

// semJSON decodes a JSON document for semantic comparison.
func semJSON(t testing.TB, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, b)
	}
	return v
}

// conversation returns the members of a request body that Encode produces.
func conversation(t testing.TB, body []byte) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	out := map[string]json.RawMessage{}
	for _, k := range []string{"system", "messages"} {
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

func assertSameJSON(t testing.TB, got, want []byte) {
	t.Helper()
	if !reflect.DeepEqual(semJSON(t, got), semJSON(t, want)) {
		t.Errorf("JSON differs\n got: %s\nwant: %s", got, want)
	}
}

// golden compares got with the file at path, or rewrites it with -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update after checking)\n got: %s\nwant: %s", path, got, want)
	}
}

func indent(t testing.TB, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", " "); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

func warnText(ws []provider.Warning) []byte {
	var b strings.Builder
	for _, w := range ws {
		b.WriteString(w.String())
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// TestRoundTrip decodes realistic request bodies and encodes them again: the
// conversation fields must come back semantically equal, directly and after
// a trip through the canonical format (how a history is saved and reloaded).
func TestRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("testdata/roundtrip/*.json")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	c := Codec()
	for _, f := range files {
		if strings.HasSuffix(f, ".convo.json") {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			h, warns, err := c.Decode(body, provider.Options{})
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if len(warns) > 0 {
				t.Errorf("decode warnings: %v", warns)
			}
			if err := h.Validate(); err != nil {
				t.Errorf("decoded history is not valid: %v", err)
			}
			canon, err := convo.Marshal(h)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, strings.TrimSuffix(f, ".json")+".convo.json", canon)

			out, warns, err := c.Encode(h, provider.Options{Strict: true})
			if err != nil {
				t.Fatalf("encode: %v (warnings %v)", err, warns)
			}
			assertSameJSON(t, out, conversation(t, body))

			reloaded, err := convo.Unmarshal(canon)
			if err != nil {
				t.Fatal(err)
			}
			out2, _, err := c.Encode(reloaded, provider.Options{Strict: true})
			if err != nil {
				t.Fatalf("encode after reload: %v", err)
			}
			if !bytes.Equal(out, out2) {
				t.Errorf("encoding after a canonical round trip differs\n got: %s\nwant: %s", out2, out)
			}
		})
	}
}

// TestEncodeGolden encodes canonical histories (with default options) and
// compares the request and the warnings with golden files.
func TestEncodeGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/encode/*.convo.json")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		name := strings.TrimSuffix(f, ".convo.json")
		t.Run(filepath.Base(name), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			h, err := convo.Unmarshal(data)
			if err != nil {
				t.Fatal(err)
			}
			opts := provider.Options{Repair: true, Media: provider.MediaPlaceholder}
			out, warns, err := Codec().Encode(h, opts)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			golden(t, name+".anthropic.json", indent(t, out))
			golden(t, name+".warnings.txt", warnText(warns))
			again, warns2, err := Codec().Encode(h, opts)
			if err != nil || !bytes.Equal(out, again) || !reflect.DeepEqual(warns, warns2) {
				t.Errorf("encoding is not deterministic")
			}
			// What Encode writes decodes again without complaint.
			if _, _, err := Codec().Decode(out, provider.Options{}); err != nil {
				t.Errorf("decoding the encoded request: %v", err)
			}
		})
	}
}
