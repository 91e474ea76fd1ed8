package convo_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/convo-go/convo"
)

// FuzzUnmarshal: no input panics; whatever decodes re-encodes, and the
// re-encoding is a fixed point.
func FuzzUnmarshal(f *testing.F) {
	files, _ := filepath.Glob("testdata/v1/*")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{`[]`, `{"role":"user"}`, `[{"role":"tool","parts":[{"type":"tool_result","parts":[{"type":"tool_result"}]}]}]`,
		`{"format":"convo/v1","messages":[{"role":"x"}]}`, `[{"role":"user","parts":[{"type":"image","data":"===="}]}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		h, err := convo.Unmarshal(doc)
		if err != nil {
			return
		}
		_ = h.Validate()
		_ = h.Curated()
		for _, m := range h {
			_ = m.Text()
			_ = m.EstimatedBytes()
		}
		out, err := convo.Marshal(h)
		if err != nil {
			t.Fatalf("decoded but cannot encode: %v", err)
		}
		back, err := convo.Unmarshal(out)
		if err != nil {
			t.Fatalf("own output does not decode: %v\n%s", err, out)
		}
		if !back.Equal(h) {
			t.Fatalf("round trip changed the history:\n%s", out)
		}
		again, _ := convo.Marshal(back)
		if !bytes.Equal(out, again) {
			t.Fatalf("not a fixed point:\n%s\n%s", out, again)
		}
	})
}
