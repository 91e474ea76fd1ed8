package stream

import (
	"bytes"
	"io"
)

// Chunks is a stream held in memory in pieces, in order: a reply the
// gateway's tap copied as it passed. Read copies it out as any reader
// does; an SSE reader given a *Chunks reads its events where they lie
// instead (no copy into a read buffer, and an event of one data line
// not copied either), and Head shows its first bytes without a copy when
// the first chunk holds them.
//
// Each chunk is let go of once read (its element of the slice given to
// NewChunks is cleared, a chunk read in part is cut to what is left): a
// long reply's copy shrinks as what is decoded of it grows, so it is not
// held twice.
type Chunks struct {
	c [][]byte
	// cr is where the first CR of what is left of the chunk being read
	// is (its length when there is none), when crKnown: most streams
	// have none, and a line's end is then found with one scan for LF,
	// not a second for CR (lineEnd).
	cr      int
	crKnown bool
}

// NewChunks returns a reader of the chunks of c in order; it clears c's
// elements as it reads them.
func NewChunks(c [][]byte) *Chunks { return &Chunks{c: c} }

// Read copies the next bytes of the stream into p.
func (r *Chunks) Read(p []byte) (int, error) {
	cur := r.current()
	if cur == nil {
		return 0, io.EOF
	}
	n := copy(p, cur)
	r.advance(n)
	return n, nil
}

// current returns what is left of the chunk being read, nil at the end;
// empty chunks are let go of on the way.
func (r *Chunks) current() []byte {
	for len(r.c) > 0 && len(r.c[0]) == 0 {
		r.c[0], r.c, r.crKnown = nil, r.c[1:], false
	}
	if len(r.c) == 0 {
		return nil
	}
	return r.c[0]
}

// advance moves n bytes on in the chunk being read (n at most what is
// left of it), letting go of it when it is read whole.
func (r *Chunks) advance(n int) {
	// The first CR is as far on, unless it was passed.
	r.cr -= n
	r.crKnown = r.crKnown && r.cr >= 0
	if r.c[0] = r.c[0][n:]; len(r.c[0]) == 0 {
		r.c[0], r.c, r.crKnown = nil, r.c[1:], false
	}
}

// lineEnd is lineEnd(buf) of buf, what is left of the chunk being read
// (current), the chunk scanned for CR once rather than every line.
func (r *Chunks) lineEnd(buf []byte) int {
	if !r.crKnown {
		r.cr = bytes.IndexByte(buf, '\r')
		if r.cr < 0 {
			r.cr = len(buf)
		}
		r.crKnown = true
	}
	if i := bytes.IndexByte(buf[:r.cr], '\n'); i >= 0 {
		return i
	}
	if r.cr < len(buf) {
		return r.cr
	}
	return -1
}

// Head returns the first n bytes of what is left (all of it when it is
// shorter) without reading them: a slice of the first chunk when it holds
// them, else a copy. A caller must not write to it.
func (r *Chunks) Head(n int) []byte {
	cur := r.current()
	if len(cur) >= n || len(r.c) <= 1 {
		return cur[:min(n, len(cur)):min(n, len(cur))]
	}
	head := make([]byte, 0, n)
	for _, c := range r.c {
		if len(head)+len(c) >= n {
			return append(head, c[:n-len(head)]...)
		}
		head = append(head, c...)
	}
	return head
}
