package gateway

import (
	"io"
	"testing"
)

// TestTapReaderLetsGo: a tap of several chunks is read in order, and each
// chunk is let go of (its element of the record's body cleared) once read,
// so a long reply's copy shrinks as its decoded text grows instead of
// being held whole beside it.
func TestTapReaderLetsGo(t *testing.T) {
	body := [][]byte{[]byte("ab"), {}, []byte("cd"), []byte("ef")}
	r := tapReader(body)
	p := make([]byte, 3)
	if _, err := io.ReadFull(r, p); err != nil || string(p) != "abc" {
		t.Fatalf("read %q, %v", p, err)
	}
	if body[0] != nil || body[1] != nil || string(body[2]) != "d" {
		t.Errorf("after 3 bytes the tap holds %q, want the first chunks let go of and the third read from", body)
	}
	rest, err := io.ReadAll(r)
	if err != nil || string(rest) != "def" {
		t.Fatalf("then read %q, %v", rest, err)
	}
	for i, c := range body {
		if c != nil {
			t.Errorf("chunk %d (%q) still held after the tap was read", i, c)
		}
	}
}
