package convo_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestGoldenV1 reads every v1 document kept in testdata/v1 — kept forever, so
// later versions of convo still read what earlier ones wrote — and checks that
// its canonical encoding is the one recorded in the .golden file beside it.
func TestGoldenV1(t *testing.T) {
	inputs, err := filepath.Glob("testdata/v1/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, in := range inputs {
		if strings.HasSuffix(in, ".golden") {
			continue
		}
		n++
		t.Run(filepath.Base(in), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			h, err := convo.Unmarshal(src)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			got, err := convo.Marshal(h)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			golden := in + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("encoding changed:\n got %s\nwant %s", got, want)
			}
			// The golden form is a fixed point.
			h2, err := convo.Unmarshal(want)
			if err != nil {
				t.Fatalf("decode golden: %v", err)
			}
			if !h2.Equal(h) {
				t.Errorf("golden decodes to a different history")
			}
		})
	}
	if n < 4 {
		t.Fatalf("only %d v1 documents found in testdata/v1", n)
	}
}
