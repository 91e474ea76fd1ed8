package spool

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"time"
)

// The layout of a segment file, version 1 (a stored format: a spool
// written by one version is read by every later one):
//
//	magic   8 bytes  "CVSPOOL1"
//	frames, each:
//	  length  4 bytes, little endian: the payload's length
//	  crc     4 bytes, little endian: CRC-32C (Castagnoli) of time and payload
//	  time    8 bytes, little endian: when it was appended, Unix nanoseconds
//	  payload length bytes
//
// A frame whose header or payload is cut short, or whose CRC does not
// match, ends what can be read: it is the torn tail of a write a crash
// interrupted, and it and anything after it are cut.
const (
	magic       = "CVSPOOL1"
	headerBytes = 16
	// MaxFrameBytes bounds a frame's payload: larger lengths are read as a
	// torn frame, not allocated.
	MaxFrameBytes = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrTorn is a frame cut short or damaged: the end of what can be read.
var ErrTorn = errors.New("spool: torn or damaged frame")

// Frame is one appended payload and when it was appended.
type Frame struct {
	Time time.Time
	Data []byte
}

// AppendFrame appends the encoding of a frame to b.
func AppendFrame(b []byte, t time.Time, data []byte) []byte {
	h := header(t, data)
	return append(append(b, h[:]...), data...)
}

// header returns the header of a frame of data appended at t.
func header(t time.Time, data []byte) [headerBytes]byte {
	var h [headerBytes]byte
	binary.LittleEndian.PutUint32(h[0:], uint32(len(data)))
	binary.LittleEndian.PutUint64(h[8:], uint64(t.UnixNano()))
	crc := crc32.Update(0, castagnoli, h[8:16])
	crc = crc32.Update(crc, castagnoli, data)
	binary.LittleEndian.PutUint32(h[4:], crc)
	return h
}

// FrameSize is the bytes a frame of n payload bytes takes.
func FrameSize(n int) int64 { return headerBytes + int64(n) }

// Reader reads the frames of a segment.
type Reader struct {
	r    *bufio.Reader
	off  int64 // bytes read and accepted: the segment's magic, then whole frames
	size int64 // the segment's length when known (Spool.Read), else 0
}

// NewReader reads a segment from r, which starts with its magic.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var m [len(magic)]byte
	if _, err := io.ReadFull(br, m[:]); err != nil {
		return nil, fmt.Errorf("spool segment: %w", ErrTorn)
	}
	if string(m[:]) != magic {
		return nil, fmt.Errorf("spool segment: not a spool (magic %q)", m[:])
	}
	return &Reader{r: br, off: int64(len(magic))}, nil
}

// Next returns the next frame: io.EOF at a clean end, ErrTorn (wrapped)
// at a torn or damaged one. Offset is then where the good frames end.
func (r *Reader) Next() (Frame, error) {
	var h [headerBytes]byte
	n, err := io.ReadFull(r.r, h[:])
	if err == io.EOF {
		return Frame{}, io.EOF
	}
	if err != nil {
		return Frame{}, fmt.Errorf("frame at byte %d: header of %d bytes: %w", r.off, n, ErrTorn)
	}
	size := binary.LittleEndian.Uint32(h[0:])
	if size > MaxFrameBytes {
		return Frame{}, fmt.Errorf("frame at byte %d: length %d: %w", r.off, size, ErrTorn)
	}
	var data []byte
	if r.size > 0 && r.off+FrameSize(int(size)) <= r.size {
		// The segment holds the length: read it into one allocation of
		// its size (a 40 MB frame read by io.ReadAll is copied as it
		// grows, 100 MB allocated).
		data = make([]byte, size)
		_, err = io.ReadFull(r.r, data)
	} else {
		// Read rather than allocate the length: a torn header's length
		// is garbage, and the file ends long before it.
		data, err = io.ReadAll(io.LimitReader(r.r, int64(size)))
	}
	if err != nil || len(data) != int(size) {
		return Frame{}, fmt.Errorf("frame at byte %d: payload cut short: %w", r.off, ErrTorn)
	}
	crc := crc32.Update(0, castagnoli, h[8:16])
	if crc32.Update(crc, castagnoli, data) != binary.LittleEndian.Uint32(h[4:]) {
		return Frame{}, fmt.Errorf("frame at byte %d: CRC mismatch: %w", r.off, ErrTorn)
	}
	r.off += FrameSize(len(data))
	return Frame{Time: time.Unix(0, int64(binary.LittleEndian.Uint64(h[8:]))), Data: data}, nil
}

// Offset is the number of bytes read and accepted: the magic and the
// frames Next returned.
func (r *Reader) Offset() int64 { return r.off }
