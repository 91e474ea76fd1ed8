package all

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// TestRequestMappings converts every whole request in testdata/requests
// (named <format>.<name>.json) to every format that takes whole requests,
// and compares the body and its warnings with golden files: the mapping of
// every setting, and what each target says it could not carry.
func TestRequestMappings(t *testing.T) {
	for _, path := range codectest.Files(t, "testdata/requests/*.json") {
		base := strings.TrimSuffix(filepath.Base(path), ".json")
		if strings.Contains(base, ".to.") {
			continue
		}
		from, err := LookupRequest(strings.SplitN(base, ".", 2)[0])
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := from.DecodeRequest(codectest.ReadFile(t, path), provider.Options{})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for _, c := range Formats() {
			to, ok := c.(provider.RequestCodec)
			if !ok {
				continue
			}
			t.Run(base+"/"+to.Name(), func(t *testing.T) {
				body, warns, err := to.EncodeRequest(r, provider.Options{})
				var out []byte
				if err != nil {
					out = []byte("error: " + err.Error() + "\n")
				} else {
					out = codectest.Indent(t, body, "  ")
				}
				out = append(out, codectest.WarningText(warns)...)
				codectest.Golden(t, filepath.Join("testdata/requests", base+".to."+to.Name()+".txt"), out)
			})
		}
	}
}
