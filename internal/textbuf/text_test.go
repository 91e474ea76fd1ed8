package textbuf

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"unsafe"

	"github.com/convo-go/convo/internal/jsonx"
)

// TestTextMatchesSlice checks Text against the slice grown by append it
// replaces, over long texts of random pieces with runes (and invalid
// UTF-8) cut across pieces and so across chunks: what it returns and the
// JSON it writes are the whole text's.
func TestTextMatchesSlice(t *testing.T) {
	alphabet := []string{"a", "b c", "\n", `"`, "\\", "é", "€", "𝄞", "\xe2\x82", "\xac", "\xff", "\x00", "<&>"}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 0))
		var txt Text
		var want []byte
		for want != nil && len(want) < 3*textChunk || want == nil {
			var p []byte
			for range rng.IntN(3000) {
				p = append(p, alphabet[rng.IntN(len(alphabet))]...)
			}
			// A rune cut in two: the piece ends with its first bytes.
			if rng.IntN(4) == 0 {
				p = append(p, "𝄞"[:1+rng.IntN(3)]...)
			}
			from := txt.Len()
			txt.Append(p)
			want = append(want, p...)
			if got := txt.Since(from); got != string(p) {
				t.Fatalf("seed %d: Since(%d) = %d bytes, want the piece's %d", seed, from, len(got), len(p))
			}
		}
		if len(txt.full) == 0 {
			t.Fatalf("seed %d: %d bytes in one chunk", seed, txt.Len())
		}
		if txt.Len() != len(want) || txt.String() != string(want) {
			t.Fatalf("seed %d: String differs from the pieces joined", seed)
		}
		if got, w := txt.AppendJSON([]byte("x")), jsonx.AppendString([]byte("x"), string(want)); string(got) != string(w) {
			t.Fatalf("seed %d: AppendJSON differs from AppendString of the whole", seed)
		}
		if !txt.EqualBytes(want) || !txt.HasPrefix(string(want[:len(want)-1])) || txt.EqualBytes(want[1:]) || txt.HasPrefix(string(want[1:])) {
			t.Fatalf("seed %d: EqualBytes or HasPrefix wrong", seed)
		}
		for _, n := range []int{0, 1, textChunk - 1, textChunk + 7, len(want)} {
			if got := txt.Since(n); got != string(want[n:]) {
				t.Fatalf("seed %d: Since(%d) wrong", seed, n)
			}
		}
		txt.Set([]byte("short"))
		if txt.String() != "short" || txt.Len() != 5 {
			t.Fatalf("seed %d: Set: %q", seed, txt.String())
		}
	}
}

// TestTextAllocations checks that a long text is not copied as it grows:
// Append allocates about the text's size (a slice grown by append
// allocates five times it), and String once more.
func TestTextAllocations(t *testing.T) {
	piece := make([]byte, 1000)
	for i := range piece {
		piece[i] = 'a' + byte(i%26)
	}
	const n = 10 << 20
	var txt Text
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for txt.Len() < n {
		txt.Append(piece)
	}
	_ = txt.String()
	runtime.ReadMemStats(&after)
	if ratio := float64(after.TotalAlloc-before.TotalAlloc) / float64(txt.Len()); ratio > 2.2 {
		t.Errorf("gathering and joining a %d-byte text allocated %.2f× its size, want 2 (the chunks, the string)", txt.Len(), ratio)
	}
}

// TestTextAfterString checks that a long text String joined is held as
// that string alone, and that Append, Set and the readers after it
// neither write into the string nor lose a byte.
func TestTextAfterString(t *testing.T) {
	var txt Text
	piece := []byte("a piece of a long reply, é and 𝄞 in it; ")
	var want []byte
	for len(want) < 3*textChunk {
		txt.Append(piece)
		want = append(want, piece...)
	}
	s := txt.String()
	if s != string(want) {
		t.Fatal("String differs from the pieces joined")
	}
	if txt.full != nil || !txt.joined {
		t.Fatalf("after String the chunks are still held (%d of them)", len(txt.full))
	}
	if again := txt.String(); unsafe.StringData(again) != unsafe.StringData(s) {
		t.Fatal("a second String copied the joined text again")
	}
	txt.Append([]byte("more"))
	want = append(want, "more"...)
	if s != string(want[:len(s)]) {
		t.Fatal("Append after String wrote into the string String returned")
	}
	if txt.String() != string(want) || txt.Since(len(s)) != "more" || !txt.EqualBytes(want) {
		t.Fatal("the text after String and Append is wrong")
	}
	if got := txt.AppendJSON(nil); string(got) != string(jsonx.AppendString(nil, string(want))) {
		t.Fatal("AppendJSON after String and Append is wrong")
	}
	joined := txt.String()
	txt.Set([]byte("short"))
	if joined != string(want) || txt.String() != "short" {
		t.Fatal("Set after String wrote into the string String returned, or lost the new text")
	}
}
