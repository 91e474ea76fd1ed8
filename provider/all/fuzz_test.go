package all

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// FuzzDecodeRequest feeds every whole-request decoder the same bytes: none
// may panic, and a request it reads encodes to a body that reads back and
// encodes to the same JSON again.
func FuzzDecodeRequest(f *testing.F) {
	paths, _ := filepath.Glob("testdata/requests/*.json")
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && !strings.Contains(p, ".to.") {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, c := range Formats() {
			rc := c.(provider.RequestCodec)
			r, _, err := rc.DecodeRequest(body, provider.Options{Repair: true})
			if err != nil {
				continue
			}
			once, _, err := rc.EncodeRequest(r, provider.Options{Repair: true, Media: provider.MediaPlaceholder})
			if err != nil {
				continue // a request the codec reads but cannot send as it is (unpaired calls, …)
			}
			r2, _, err := rc.DecodeRequest(once, provider.Options{Repair: true})
			if err != nil {
				t.Fatalf("%s: its own encoding does not decode: %v\n%s", c.Name(), err, once)
			}
			twice, _, err := rc.EncodeRequest(r2, provider.Options{Repair: true, Media: provider.MediaPlaceholder})
			if err != nil {
				t.Fatalf("%s: re-encoding: %v", c.Name(), err)
			}
			if !codectest.SameJSON(t, once, twice) {
				t.Fatalf("%s: not stable\nonce:  %s\ntwice: %s", c.Name(), once, twice)
			}
		}
	})
}
