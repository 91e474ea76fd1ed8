// Package spool is an append-only log of opaque payloads on local disk:
// what convo gateway writes when its store cannot take its recordings,
// and reads back, in order, when the store can again.
//
// A spool is a directory of segment files. Appends go to the last segment
// in groups, each written with one write and made durable with one fsync;
// a segment that has grown past Options.SegmentBytes is closed and the
// next group starts a new one. Every payload is framed with its length
// and a CRC-32C (see AppendFrame), so a tail a crash tore is detected when
// the spool is opened again, and cut. Reads start at the head: Read
// returns the frames after it, Advance moves it past them, deleting the
// segments left behind and noting the head in a small file (rewritten,
// not synced: a head lost in a crash is older, and its frames are read
// again — a reader must treat a payload it has seen as done).
//
// The segments' bytes are bounded (Options.MaxBytes): an append that
// would pass the bound takes what fits and refuses the rest (ErrFull).
// One process uses a spool at a time (a lock file in the directory).
package spool

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults for Options left zero.
const (
	DefaultMaxBytes     = 1 << 30
	DefaultSegmentBytes = 16 << 20
)

// ErrFull is an append the bound on the spool's bytes refuses.
var ErrFull = errors.New("spool full")

// Options configure a Spool.
type Options struct {
	// MaxBytes bounds the segment files' bytes (0: DefaultMaxBytes).
	MaxBytes int64
	// SegmentBytes is the size past which a segment takes no more appends
	// (0: DefaultSegmentBytes, or MaxBytes/4 when that is smaller).
	SegmentBytes int64
}

// Spool is an open spool directory. Its methods are safe for concurrent
// use; one goroutine appends and one reads, typically.
type Spool struct {
	dir  string
	opts Options
	lock *os.File

	wmu sync.Mutex // serialises appends: the file writes and their fsyncs
	w   *os.File   // the last segment, open for appends; nil: start a new one

	mu     sync.Mutex // guards what follows
	segs   []segment  // the live segments, oldest first; the last takes appends
	head   position   // the next frame to read
	frames int        // frames after head
	bytes  int64      // the segments' bytes (reserved by appends under way included)
	oldest time.Time  // the time of the frame at head; zero when there is none
	next   uint64     // the sequence number of the next segment
	closed bool
}

// segment is a segment file: its sequence number and the bytes of it that
// are durable (its magic and whole frames).
type segment struct {
	seq  uint64
	size int64
}

// position is a place in the spool: a segment and an offset in it.
type position struct {
	seq uint64
	off int64
}

// Mark is where a Read ended, for Advance.
type Mark struct {
	pos position
	n   int
}

// Stats describe what a spool holds.
type Stats struct {
	Frames int       // frames not read and advanced past yet
	Bytes  int64     // the segment files' bytes
	Oldest time.Time // when the oldest of Frames was appended (zero: none)
}

// Recovery is what Open found: the frames waiting, and what it cut.
type Recovery struct {
	Frames   int   // frames after the head
	CutBytes int64 // bytes of torn or damaged tails cut
	Cuts     []string
}

func segName(seq uint64) string { return fmt.Sprintf("seg-%020d.spool", seq) }

// Open opens (creating it when needed) the spool in dir, checks every
// segment and cuts torn tails, and locks the directory against other
// processes.
func Open(dir string, opts Options) (*Spool, Recovery, error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.SegmentBytes <= 0 {
		opts.SegmentBytes = min(DefaultSegmentBytes, max(opts.MaxBytes/4, 1))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, Recovery{}, fmt.Errorf("spool: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, Recovery{}, err
	}
	s := &Spool{dir: dir, opts: opts, lock: lock}
	rec, err := s.recover()
	if err == nil {
		// Ready for the first append: a spool is written to when the
		// store is in trouble, and should not make a file then.
		s.wmu.Lock()
		err = s.ensureSegment()
		s.wmu.Unlock()
	}
	if err != nil {
		lock.Close()
		return nil, Recovery{}, err
	}
	return s, rec, nil
}

// recover reads the head and every segment, cutting torn tails.
func (s *Spool) recover() (Recovery, error) {
	var rec Recovery
	names, err := filepath.Glob(filepath.Join(s.dir, "seg-*.spool"))
	if err != nil {
		return rec, err
	}
	var seqs []uint64
	for _, n := range names {
		seq, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(n), "seg-"), ".spool"), 10, 64)
		if err == nil {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	head, headOK := s.readHead()
	if !headOK && len(seqs) > 0 {
		head = position{seq: seqs[0], off: int64(len(magic))}
	}
	s.head = head
	if headOK {
		s.next = head.seq // an emptied spool's next segment is the head's
	}
	for _, seq := range seqs {
		s.next = max(s.next, seq+1)
		path := filepath.Join(s.dir, segName(seq))
		if seq < head.seq { // read to its end before a crash
			if err := os.Remove(path); err != nil {
				return rec, fmt.Errorf("spool: %w", err)
			}
			continue
		}
		if err := s.check(path, seq, &rec); err != nil {
			return rec, err
		}
	}
	if len(s.segs) == 0 || s.segs[0].seq != s.head.seq {
		s.head = position{seq: s.next, off: int64(len(magic))}
		if len(s.segs) > 0 {
			s.head.seq = s.segs[0].seq
		}
	}
	s.oldest = s.timeAt(s.head)
	rec.Frames = s.frames
	return rec, nil
}

// check reads one segment, counts its frames after the head and cuts its
// torn tail; a segment without a whole magic is removed.
func (s *Spool) check(path string, seq uint64, rec *Recovery) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	defer f.Close()
	r, err := NewReader(f)
	if errors.Is(err, ErrTorn) {
		rec.Cuts = append(rec.Cuts, fmt.Sprintf("%s: %v", segName(seq), err))
		return os.Remove(path)
	}
	if err != nil {
		return fmt.Errorf("spool: %s: %w", path, err)
	}
	all, after := 0, 0
	aligned := seq != s.head.seq || s.head.off == r.Offset()
	for {
		start := r.Offset()
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fi, serr := f.Stat()
			if serr != nil {
				return fmt.Errorf("spool: %w", serr)
			}
			rec.CutBytes += fi.Size() - start
			rec.Cuts = append(rec.Cuts, fmt.Sprintf("%s: %v", segName(seq), err))
			if err := f.Truncate(start); err != nil {
				return fmt.Errorf("spool: cutting %s: %w", path, err)
			}
			break
		}
		all++
		if seq > s.head.seq || start >= s.head.off {
			after++
		}
		aligned = aligned || r.Offset() == s.head.off
	}
	switch {
	case seq == s.head.seq && s.head.off > r.Offset():
		s.head.off = r.Offset() // the head was past what survived
	case !aligned:
		// A head between frames' starts (a head file older than a
		// segment emptied and written again): read the segment from its
		// start; what is read again is recognised by the reader.
		s.head.off, after = int64(len(magic)), all
	}
	s.frames += after
	s.segs = append(s.segs, segment{seq: seq, size: r.Offset()})
	s.bytes += r.Offset()
	return f.Sync()
}

// The head file: magic, segment, offset, CRC-32C of the three.
const headMagic = "CVHEAD01"

func (s *Spool) readHead() (position, bool) {
	b, err := os.ReadFile(filepath.Join(s.dir, "head"))
	if err != nil || len(b) != 28 || string(b[:8]) != headMagic || crc32.Checksum(b[:24], castagnoli) != binary.LittleEndian.Uint32(b[24:]) {
		return position{}, false
	}
	return position{seq: binary.LittleEndian.Uint64(b[8:]), off: int64(binary.LittleEndian.Uint64(b[16:]))}, true
}

// writeHead notes the head, by a rename: the file is the old head or the
// new one, never a mix. It is not synced (see the package comment).
func (s *Spool) writeHead(p position) error {
	b := make([]byte, 28)
	copy(b, headMagic)
	binary.LittleEndian.PutUint64(b[8:], p.seq)
	binary.LittleEndian.PutUint64(b[16:], uint64(p.off))
	binary.LittleEndian.PutUint32(b[24:], crc32.Checksum(b[:24], castagnoli))
	tmp := filepath.Join(s.dir, "head.tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(s.dir, "head"))
}

// timeAt returns the time of the frame at p, or zero when there is none.
// Called with mu held.
func (s *Spool) timeAt(p position) time.Time {
	i := slices.IndexFunc(s.segs, func(g segment) bool { return g.seq == p.seq })
	if i < 0 || p.off+headerBytes > s.segs[i].size {
		if i >= 0 && i+1 < len(s.segs) {
			return s.timeAt(position{seq: s.segs[i+1].seq, off: int64(len(magic))})
		}
		return time.Time{}
	}
	f, err := os.Open(filepath.Join(s.dir, segName(p.seq)))
	if err != nil {
		return time.Time{}
	}
	defer f.Close()
	var h [headerBytes]byte
	if _, err := f.ReadAt(h[:], p.off); err != nil {
		return time.Time{}
	}
	return time.Unix(0, int64(binary.LittleEndian.Uint64(h[8:])))
}

// Append appends payloads as frames stamped now, in one write and one
// fsync, and returns how many it took: all, or as many of the first as
// the bound leaves room for, with ErrFull.
func (s *Spool) Append(payloads [][]byte, now time.Time) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.ensureSegment(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return 0, errors.New("spool: closed")
	}
	room := s.opts.MaxBytes - s.bytes
	n := 0
	var size int64
	for _, p := range payloads {
		if size+FrameSize(len(p)) > room {
			break
		}
		size += FrameSize(len(p))
		n++
	}
	s.bytes += size // reserved
	s.mu.Unlock()
	var full error
	if n < len(payloads) {
		full = ErrFull
	}
	if n == 0 {
		return 0, full
	}
	seg := &s.segs[len(s.segs)-1] // only appends change segs' last; wmu is held
	err := s.write(payloads[:n], now)
	if err == nil {
		err = s.w.Sync()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.bytes -= size
		// What was written is not durable and not counted: cut it, so the
		// next append does not follow a torn frame. A segment that cannot
		// be cut takes no more appends (its torn tail is cut at the next
		// Open; reads stop at its durable size).
		if terr := s.w.Truncate(seg.size); terr != nil {
			s.w.Close()
			s.w = nil
		}
		return 0, fmt.Errorf("spool: appending: %w", err)
	}
	if s.frames == 0 {
		s.oldest = now
	}
	s.frames += n
	seg.size += size
	return n, full
}

// longFrame is the payload length from which write does not copy a
// payload into its buffer.
const longFrame = 64 << 10

// write writes payloads as frames to the open segment: short ones
// gathered into one write, a long one written as it is after its header
// (copied, a 40 MB reply would be held twice). Called with wmu held.
func (s *Spool) write(payloads [][]byte, now time.Time) error {
	var n int64
	for _, p := range payloads {
		if len(p) < longFrame {
			n += FrameSize(len(p))
		}
	}
	buf := make([]byte, 0, n+headerBytes)
	for _, p := range payloads {
		if len(p) < longFrame {
			buf = AppendFrame(buf, now, p)
			continue
		}
		h := header(now, p)
		if _, err := s.w.Write(append(buf, h[:]...)); err != nil {
			return err
		}
		buf = buf[:0]
		if _, err := s.w.Write(p); err != nil {
			return err
		}
	}
	if len(buf) == 0 {
		return nil
	}
	_, err := s.w.Write(buf)
	return err
}

// ensureSegment opens a new segment for appends when there is none open
// or the last is full. Called with wmu held.
func (s *Spool) ensureSegment() error {
	s.mu.Lock()
	last := len(s.segs) - 1
	full := last < 0 || s.segs[last].size >= s.opts.SegmentBytes
	s.mu.Unlock()
	if s.w != nil && !full {
		return nil
	}
	if s.w == nil && !full {
		// The last segment survived a restart, or an append that failed:
		// append to it after its durable bytes. One that cannot be cut
		// back to them is left as it is, and a new one started.
		f, err := os.OpenFile(filepath.Join(s.dir, segName(s.segs[last].seq)), os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			if err = f.Truncate(s.segs[last].size); err == nil {
				s.w = f
				return nil
			}
			f.Close()
		}
	}
	if s.w != nil {
		s.w.Close()
		s.w = nil
	}
	s.mu.Lock()
	seq := s.next
	s.next++
	s.mu.Unlock()
	f, err := os.OpenFile(filepath.Join(s.dir, segName(seq)), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err == nil {
		_, err = f.Write([]byte(magic))
		if err == nil {
			err = f.Sync()
		}
		if err == nil {
			err = syncDir(s.dir)
		}
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}
	if err != nil {
		return fmt.Errorf("spool: new segment: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.segs) == 0 {
		s.head = position{seq: seq, off: int64(len(magic))}
	}
	s.segs = append(s.segs, segment{seq: seq, size: int64(len(magic))})
	s.bytes += int64(len(magic))
	s.w = f
	return nil
}

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 64<<10) }

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Read returns up to max frames from the head on, of at most about
// maxBytes in all (at least one frame), and the mark Advance takes to
// move past them. No frames: the spool has none waiting.
func (s *Spool) Read(max int, maxBytes int64) ([]Frame, Mark, error) {
	s.mu.Lock()
	head := s.head
	var size int64
	var segs []segment
	for _, g := range s.segs {
		if g.seq >= head.seq {
			segs = append(segs, g)
		}
	}
	s.mu.Unlock()
	var out []Frame
	pos := head
	for _, g := range segs {
		if g.seq > pos.seq {
			pos = position{seq: g.seq, off: int64(len(magic))}
		}
		if pos.off >= g.size {
			continue
		}
		f, err := os.Open(filepath.Join(s.dir, segName(g.seq)))
		if err != nil {
			return nil, Mark{}, fmt.Errorf("spool: %w", err)
		}
		r := &Reader{r: bufioReader(io.NewSectionReader(f, pos.off, g.size-pos.off)), off: pos.off, size: g.size}
		for len(out) < max && (len(out) == 0 || size < maxBytes) {
			fr, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return nil, Mark{}, fmt.Errorf("spool: %s: %w", segName(g.seq), err)
			}
			out = append(out, fr)
			size += FrameSize(len(fr.Data))
		}
		pos.off = r.Offset()
		f.Close()
		if len(out) >= max || size >= maxBytes {
			break
		}
	}
	return out, Mark{pos: pos, n: len(out)}, nil
}

// Advance moves the head past the frames a Read returned, and deletes the
// segments wholly behind it. A spool read to its end is emptied.
func (s *Spool) Advance(m Mark) error {
	if m.n == 0 {
		return nil
	}
	s.wmu.Lock() // an append may not start a segment while the last is removed
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.head = m.pos
	s.frames -= m.n
	var gone []segment
	if s.frames == 0 && s.w != nil {
		// Everything is read: the last segment starts afresh, the others
		// go. (Kept open, the next append pays no file creation.)
		last := len(s.segs) - 1
		gone, s.segs = slices.Clone(s.segs[:last]), s.segs[last:]
		if err := s.w.Truncate(int64(len(magic))); err == nil {
			s.bytes -= s.segs[0].size - int64(len(magic))
			s.segs[0].size = int64(len(magic))
		} else {
			s.w.Close()
			s.w = nil
			gone, s.segs = append(gone, s.segs[0]), nil
		}
	} else if s.frames == 0 {
		gone, s.segs = s.segs, nil
	} else {
		i := 0
		for i < len(s.segs)-1 && s.segs[i].seq < s.head.seq {
			i++
		}
		gone, s.segs = slices.Clone(s.segs[:i]), s.segs[i:]
	}
	if len(s.segs) > 0 && s.frames == 0 {
		s.head = position{seq: s.segs[0].seq, off: int64(len(magic))}
	} else if s.frames == 0 {
		s.head = position{seq: s.next, off: int64(len(magic))}
	}
	err := s.writeHead(s.head)
	for _, g := range gone {
		s.bytes -= g.size
		if rerr := os.Remove(filepath.Join(s.dir, segName(g.seq))); rerr != nil && err == nil {
			err = rerr
		}
	}
	s.oldest = s.timeAt(s.head)
	if err != nil {
		return fmt.Errorf("spool: advancing: %w", err)
	}
	return nil
}

// Stats returns what the spool holds now.
func (s *Spool) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Frames: s.frames, Bytes: s.bytes, Oldest: s.oldest}
}

// Dir returns the spool's directory.
func (s *Spool) Dir() string { return s.dir }

// Close closes the spool's files and releases its lock.
func (s *Spool) Close() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var err error
	if s.w != nil {
		err = s.w.Close()
	}
	if lerr := s.lock.Close(); err == nil {
		err = lerr
	}
	return err
}

// Frames reads every frame of a segment image (its magic first), as Open
// checks a segment: the frames up to the first torn or damaged one, and
// the error that ended them (nil at a clean end).
func Frames(segment []byte) ([]Frame, error) {
	r, err := NewReader(bytes.NewReader(segment))
	if err != nil {
		return nil, err
	}
	var out []Frame
	for {
		f, err := r.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, f)
	}
}
