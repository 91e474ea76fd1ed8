package provider

import (
	"testing"
)

// TestStripSpaceFrom strips JSON text cut in two at every place: the two
// pieces, stripped in turn, make the whole stripped at once.
func TestStripSpaceFrom(t *testing.T) {
	for _, s := range []string{
		`{"a": 1, "b" : [ 2 ,3 ] }`,
		`{"q": "a \" b\\\\" , "r":"\\" }`,
		"{\n\t\"city\": \"San Francisco, CA\",\r\n \"units\": \"c\"}",
		`  "x \\\" y"  `,
	} {
		whole := stripSpace(s)
		for i := 0; i <= len(s); i++ {
			in, esc := false, false
			got := stripSpaceFrom(s[:i], &in, &esc)
			got += stripSpaceFrom(s[i:], &in, &esc)
			if got != whole {
				t.Fatalf("%q cut at %d: %q, want %q", s, i, got, whole)
			}
		}
	}
}
