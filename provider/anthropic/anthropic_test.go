package anthropic

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestRoundTrip decodes realistic request bodies and encodes them again: the
// conversation fields must come back semantically equal, directly and after
// a trip through the canonical format (how a history is saved and reloaded).
func TestRoundTrip(t *testing.T) {
	files := codectest.Files(t, "testdata/roundtrip/*.json")
	c := Messages()
	for _, f := range files {
		if strings.HasSuffix(f, ".convo.json") {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			body := codectest.ReadFile(t, f)
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
			codectest.Golden(t, strings.TrimSuffix(f, ".json")+".convo.json", canon)

			out, warns, err := c.Encode(h, provider.Options{Strict: true})
			if err != nil {
				t.Fatalf("encode: %v (warnings %v)", err, warns)
			}
			codectest.ExpectSameJSON(t, out, codectest.Members(t, body, "system", "messages"))

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
	files := codectest.Files(t, "testdata/encode/*.convo.json")
	for _, f := range files {
		name := strings.TrimSuffix(f, ".convo.json")
		t.Run(filepath.Base(name), func(t *testing.T) {
			h := codectest.History(t, f)
			opts := provider.Options{Repair: true, Media: provider.MediaPlaceholder}
			out, warns, err := Messages().Encode(h, opts)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			codectest.Golden(t, name+".anthropic.json", codectest.Indent(t, out, " "))
			codectest.Golden(t, name+".warnings.txt", codectest.WarningText(warns))
			again, warns2, err := Messages().Encode(h, opts)
			if err != nil || !bytes.Equal(out, again) || !reflect.DeepEqual(warns, warns2) {
				t.Errorf("encoding is not deterministic")
			}
			// What Encode writes decodes again without complaint.
			if _, _, err := Messages().Decode(out, provider.Options{}); err != nil {
				t.Errorf("decoding the encoded request: %v", err)
			}
		})
	}
}
