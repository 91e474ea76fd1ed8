package convo_test

import (
	"encoding/base64"
	"testing"

	"github.com/convo-go/convo"
)

// TestDataSize checks Part.DataSize against decoding, padded and not, at
// every remainder of the length by three (a 145-byte PNG was once shown as
// 147 bytes).
func TestDataSize(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 4, 5, 144, 145, 146, 147} {
		raw := make([]byte, n)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
			p := convo.Image("image/png", raw)
			p.Data = enc.EncodeToString(raw)
			if got := p.DataSize(); got != n {
				t.Errorf("DataSize of %d bytes as %q…: %d", n, p.Data[:min(8, len(p.Data))], got)
			}
		}
	}
}
