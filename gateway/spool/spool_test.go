package spool

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "write the golden files (never for a format already released: add a new one)")

func payloads(from, n int) [][]byte {
	var out [][]byte
	for i := from; i < from+n; i++ {
		out = append(out, fmt.Appendf(nil, "payload %d %s", i, bytes.Repeat([]byte{'x'}, i%7)))
	}
	return out
}

// readAll reads and advances past every frame, in reads of at most per.
func readAll(t *testing.T, s *Spool, per int) [][]byte {
	t.Helper()
	var out [][]byte
	for {
		fs, m, err := s.Read(per, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) == 0 {
			return out
		}
		for _, f := range fs {
			out = append(out, f.Data)
		}
		if err := s.Advance(m); err != nil {
			t.Fatal(err)
		}
	}
}

func open(t *testing.T, dir string, opts Options) (*Spool, Recovery) {
	t.Helper()
	s, rec, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, rec
}

// TestAppendRead: what is appended is read back in order, across
// segments, and the segments read are deleted; Stats follow.
func TestAppendRead(t *testing.T) {
	for _, per := range []int{1, 3, 1000} {
		dir := t.TempDir()
		s, _ := open(t, dir, Options{SegmentBytes: 100})
		want := payloads(0, 40)
		t0 := time.Unix(1700000000, 0)
		for i := 0; i < len(want); i += 4 {
			if n, err := s.Append(want[i:i+4], t0.Add(time.Duration(i)*time.Second)); n != 4 || err != nil {
				t.Fatalf("append: %d, %v", n, err)
			}
		}
		st := s.Stats()
		if st.Frames != 40 || !st.Oldest.Equal(t0) {
			t.Fatalf("stats %+v, want 40 frames from %v", st, t0)
		}
		if segs, _ := filepath.Glob(filepath.Join(dir, "seg-*")); len(segs) < 3 {
			t.Fatalf("%d segments, want several of 100 bytes", len(segs))
		}
		fs, m, _ := s.Read(5, 1<<20)
		if err := s.Advance(m); err != nil || len(fs) != 5 {
			t.Fatal(len(fs), err)
		}
		if st := s.Stats(); st.Frames != 35 || !st.Oldest.Equal(t0.Add(4*time.Second)) {
			t.Fatalf("after 5 read: %+v", st)
		}
		got := append([][]byte{fs[0].Data, fs[1].Data, fs[2].Data, fs[3].Data, fs[4].Data}, readAll(t, s, per)...)
		if !slices.EqualFunc(got, want, bytes.Equal) {
			t.Fatalf("per %d: read %q, want %q", per, got, want)
		}
		if st := s.Stats(); st.Frames != 0 || st.Bytes != int64(len(magic)) || !st.Oldest.IsZero() {
			t.Fatalf("read to the end: %+v, want one empty segment", st)
		}
		if segs, _ := filepath.Glob(filepath.Join(dir, "seg-*")); len(segs) != 1 {
			t.Fatalf("segments %v left after reading all, want one, empty", segs)
		}
	}
}

// TestLongFrames: payloads of longFrame bytes and more, which Append
// writes without copying and Read reads into an allocation of their size,
// read back as they were between short ones, before and after a reopen.
func TestLongFrames(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir, Options{})
	long := bytes.Repeat([]byte("0123456789abcdef"), longFrame/16+100)
	want := [][]byte{[]byte("a"), long, []byte("b"), long[:longFrame], long[1:], []byte("c")}
	if n, err := s.Append(want, time.Unix(1700000000, 0)); n != len(want) || err != nil {
		t.Fatalf("append: %d, %v", n, err)
	}
	if got := readAll(t, s, 2); !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("read %d frames, not as appended", len(got))
	}
	if n, err := s.Append(want, time.Unix(1700000001, 0)); n != len(want) || err != nil {
		t.Fatalf("append: %d, %v", n, err)
	}
	s.Close()
	s2, rec := open(t, dir, Options{})
	if rec.Frames != len(want) {
		t.Fatalf("reopened: %d frames, want %d", rec.Frames, len(want))
	}
	if got := readAll(t, s2, 1000); !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("after a reopen: read %d frames, not as appended", len(got))
	}
}

// TestReopen: frames and the head survive a close (or a crash: the head
// file is all that is kept), and appends go on after them.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir, Options{SegmentBytes: 64})
	s.Append(payloads(0, 10), time.Now())
	fs, m, _ := s.Read(4, 1<<20)
	s.Advance(m)
	s.Close()
	s, rec := open(t, dir, Options{SegmentBytes: 64})
	if rec.Frames != 6 || len(fs) != 4 {
		t.Fatalf("reopened with %d frames, want 6", rec.Frames)
	}
	s.Append(payloads(10, 2), time.Now())
	if got, want := readAll(t, s, 2), payloads(4, 8); !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("read %q, want %q", got, want)
	}
	s.Close()
	// Emptied, then reopened: nothing is read again.
	s, rec = open(t, dir, Options{})
	s.Append(payloads(20, 1), time.Now())
	s.Close()
	s, rec = open(t, dir, Options{})
	if got := readAll(t, s, 10); rec.Frames != 1 || len(got) != 1 || string(got[0]) != string(payloads(20, 1)[0]) {
		t.Fatalf("after emptying: %d frames, read %q", rec.Frames, got)
	}
}

// TestTornTail: a segment whose end a crash tore — cut anywhere in its
// last frame, or with a damaged byte — opens with the frames before it,
// the tail cut, and takes appends after them.
func TestTornTail(t *testing.T) {
	var whole []byte
	{
		dir := t.TempDir()
		s, _ := open(t, dir, Options{})
		s.Append(payloads(0, 3), time.Unix(1, 0))
		s.Close()
		whole, _ = os.ReadFile(filepath.Join(dir, segName(0)))
	}
	last := int(FrameSize(len(payloads(2, 1)[0])))
	type tc struct {
		name string
		img  []byte
		keep int
	}
	var cases []tc
	for cut := 1; cut < last; cut++ {
		cases = append(cases, tc{fmt.Sprintf("cut %d", cut), whole[:len(whole)-cut], 2})
	}
	for _, at := range []int{len(whole) - last + 1, len(whole) - last + 5, len(whole) - last + 9, len(whole) - 1} {
		b := bytes.Clone(whole)
		b[at] ^= 0x40
		cases = append(cases, tc{fmt.Sprintf("damaged at %d", at), b, 2})
	}
	cases = append(cases, tc{"zeros after", append(bytes.Clone(whole), make([]byte, 40)...), 3})
	for _, c := range cases {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, segName(0)), c.img, 0o600)
		s, rec := open(t, dir, Options{})
		if rec.Frames != c.keep || len(rec.Cuts) != 1 {
			t.Fatalf("%s: recovered %+v, want %d frames and one cut", c.name, rec, c.keep)
		}
		s.Append(payloads(9, 1), time.Now())
		want := append(payloads(0, c.keep), payloads(9, 1)...)
		if got := readAll(t, s, 100); !slices.EqualFunc(got, want, bytes.Equal) {
			t.Fatalf("%s: read %q, want %q", c.name, got, want)
		}
	}
}

// TestFull: an append past MaxBytes takes the payloads that fit and
// refuses the rest; once read, there is room again.
func TestFull(t *testing.T) {
	s, _ := open(t, t.TempDir(), Options{MaxBytes: 100})
	n, err := s.Append(payloads(0, 10), time.Now())
	if !errors.Is(err, ErrFull) || n == 0 || n == 10 {
		t.Fatalf("append: %d, %v, want some taken and ErrFull", n, err)
	}
	if st := s.Stats(); st.Bytes > 100 || st.Frames != n {
		t.Fatalf("stats %+v past the bound", st)
	}
	if m, err := s.Append(payloads(20, 1), time.Now()); m != 0 || !errors.Is(err, ErrFull) {
		t.Fatalf("append to a full spool: %d, %v", m, err)
	}
	readAll(t, s, 100)
	if m, err := s.Append(payloads(20, 1), time.Now()); m != 1 || err != nil {
		t.Fatalf("append after reading: %d, %v", m, err)
	}
}

// TestLocked: a second process (here a second Open) cannot use a spool
// in use.
func TestLocked(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir, Options{})
	if _, _, err := Open(dir, Options{}); err == nil {
		t.Fatal("a second Open of a spool in use succeeded")
	}
	s.Close()
	if s2, _, err := Open(dir, Options{}); err != nil {
		t.Fatalf("Open after Close: %v", err)
	} else {
		s2.Close()
	}
}

// TestGolden: the segment format is stored: testdata/v1.seg, written by
// the first version, reads as its frames, and the same frames are
// written byte for byte as it. Keep the file forever.
func TestGolden(t *testing.T) {
	frames := []Frame{
		{Time: time.Unix(1764892800, 123456789), Data: []byte(`{"v":1}`)},
		{Time: time.Unix(1764892801, 0), Data: []byte{}},
		{Time: time.Unix(1764892802, 5), Data: []byte("second\x00frame\xff")},
	}
	img := []byte(magic)
	for _, f := range frames {
		img = AppendFrame(img, f.Time, f.Data)
	}
	path := filepath.Join("testdata", "v1.seg")
	if *update {
		os.WriteFile(path, img, 0o644)
	}
	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(img, golden) {
		t.Fatalf("the frames encode as\n%x\nnot as %s holds:\n%x", img, path, golden)
	}
	got, err := Frames(golden)
	if err != nil || len(got) != len(frames) {
		t.Fatalf("%s: %d frames, %v", path, len(got), err)
	}
	for i := range got {
		if !got[i].Time.Equal(frames[i].Time) || !bytes.Equal(got[i].Data, frames[i].Data) {
			t.Fatalf("frame %d: %v %q, want %v %q", i, got[i].Time, got[i].Data, frames[i].Time, frames[i].Data)
		}
	}
}

// FuzzFrames: the frame reader never panics, reads only whole frames with
// their CRC right, and what it read encodes back to the bytes it
// accepted.
func FuzzFrames(f *testing.F) {
	golden, _ := os.ReadFile(filepath.Join("testdata", "v1.seg"))
	f.Add(golden)
	f.Add([]byte(magic))
	f.Add(golden[:len(golden)-3])
	f.Fuzz(func(t *testing.T, b []byte) {
		frames, err := Frames(b)
		if err != nil && !errors.Is(err, ErrTorn) && len(b) >= len(magic) && string(b[:len(magic)]) == magic {
			t.Fatalf("error %v is not ErrTorn", err)
		}
		if len(b) < len(magic) || string(b[:len(magic)]) != magic {
			if err == nil {
				t.Fatal("no magic, no error")
			}
			return
		}
		img := []byte(magic)
		for _, fr := range frames {
			img = AppendFrame(img, fr.Time, fr.Data)
		}
		if !bytes.HasPrefix(b, img) {
			t.Fatal("the frames read do not encode back to the start of the input")
		}
		if err == nil && len(img) != len(b) {
			t.Fatalf("a clean end at %d of %d bytes", len(img), len(b))
		}
	})
}

// TestHeadBetweenFrames: a head file that points between two frames'
// starts (older than a segment emptied and written again) makes the
// segment read from its start, not from the middle of a frame.
func TestHeadBetweenFrames(t *testing.T) {
	dir := t.TempDir()
	s, _ := open(t, dir, Options{})
	s.Append(payloads(0, 3), time.Now())
	s.writeHead(position{seq: 0, off: int64(len(magic)) + 5})
	s.Close()
	s, rec := open(t, dir, Options{})
	if got, want := readAll(t, s, 10), payloads(0, 3); rec.Frames != 3 || !slices.EqualFunc(got, want, bytes.Equal) {
		t.Fatalf("recovered %d frames, read %q, want %q", rec.Frames, got, want)
	}
}
