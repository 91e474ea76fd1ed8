package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"unsafe"
)

// splitAt cuts b into chunks at the offsets cuts' bytes step by (a zero
// step makes an empty chunk).
func splitAt(b, cuts []byte) [][]byte {
	var out [][]byte
	for _, c := range cuts {
		n := min(int(c)%64, len(b))
		out = append(out, b[:n:n])
		b = b[n:]
	}
	return append(out, b)
}

// sseEvents reads every event of src, copying each event's data (a shared
// reader's is overwritten by the next), and the error that ended it.
func sseEvents(src *SSE) (evs []string, err error) {
	for {
		ev, err := src.Next()
		if err != nil {
			return evs, err
		}
		evs = append(evs, fmt.Sprintf("%q %q", ev.Type, ev.Data))
	}
}

// FuzzSSEChunks: an SSE reader reading a stream in memory in chunks
// (where its events lie, one-line events not copied) returns the events
// and error the reader of the same bytes through a read buffer returns,
// shared or not, however the stream is cut; it never writes to the
// chunks; and a Chunks reads, and heads, as the bytes joined.
func FuzzSSEChunks(f *testing.F) {
	f.Add([]byte("data: {\"a\":1}\n\ndata: [DONE]\n\n"), []byte{3, 9, 0, 17})
	f.Add([]byte("event: ping\r\ndata: a\r\ndata: b\r\n\r\n:c\rdata:x\r\rdata"), []byte{13, 1, 1, 22})
	f.Add([]byte("\xef\xbb\xbfdata: one\n\n\ndata: \n\ndata\n\nid: 1\nretry: 2\ndata: two\nevent: e\n\n"), []byte{2, 40})
	f.Add([]byte("data: cut at the end"), []byte{5})
	f.Fuzz(func(t *testing.T, b, cuts []byte) {
		if len(cuts) > 64 {
			return
		}
		for _, shared := range []bool{false, true} {
			ref := NewSSE(bytes.NewReader(b))
			chunks := splitAt(bytes.Clone(b), cuts)
			src := NewSSE(NewChunks(chunks))
			if shared {
				ref.Share()
				src.Share()
			}
			want, werr := sseEvents(ref)
			got, gerr := sseEvents(src)
			if fmt.Sprint(gerr) != fmt.Sprint(werr) || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("shared %v, %q cut %v: %v, %v; want %v, %v", shared, b, cuts, got, gerr, want, werr)
			}
		}
		// Not shared, no event's data shares memory with the chunks,
		// which their owner may reuse once the stream is read.
		{
			chunks := splitAt(bytes.Clone(b), cuts)
			kept := append([][]byte(nil), chunks...)
			src := NewSSE(NewChunks(chunks))
			for {
				ev, err := src.Next()
				if err != nil {
					break
				}
				for _, c := range kept {
					if len(ev.Data) > 0 && len(c) > 0 && overlaps(ev.Data, c) {
						t.Fatalf("event data %q lies in chunk %q", ev.Data, c)
					}
				}
			}
		}
		// The chunks the SSE reader read are still the stream's bytes.
		chunks := splitAt(bytes.Clone(b), cuts)
		kept := append([][]byte(nil), chunks...)
		_, _ = sseEvents(NewSSE(NewChunks(chunks)))
		if j := bytes.Join(kept, nil); !bytes.Equal(j, b) {
			t.Fatalf("the chunks read became %q, want %q", j, b)
		}
		for _, c := range chunks {
			if c != nil {
				t.Fatalf("chunk %q still held after the stream was read", c)
			}
		}
		for _, n := range []int{0, 1, len(b) / 2, len(b), len(b) + 1} {
			r := NewChunks(splitAt(b, cuts))
			if h := r.Head(n); !bytes.Equal(h, b[:min(n, len(b))]) {
				t.Fatalf("Head(%d) of %q cut %v = %q", n, b, cuts, h)
			}
			if all, err := io.ReadAll(r); err != nil || !bytes.Equal(all, b) {
				t.Fatalf("read %q, %v after Head(%d), want %q", all, err, n, b)
			}
		}
	})
}

// TestSSEChunksLimit: an event over the limit is refused from chunks too,
// whether its line lies in one chunk or across several.
func TestSSEChunksLimit(t *testing.T) {
	long := []byte("data: " + string(bytes.Repeat([]byte("x"), 200<<10)) + "\n\n")
	for _, c := range [][][]byte{{long}, {long[:1000], long[1000:3000], long[3000:]}} {
		s := NewSSE(NewChunks(c))
		s.max = 1000
		if _, err := s.Next(); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("%d chunks: got %v", len(c), err)
		}
	}
}

// overlaps reports whether a and b share memory.
func overlaps(a, b []byte) bool {
	a0, b0 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return a0 < b0+uintptr(len(b)) && b0 < a0+uintptr(len(a))
}
