package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/convo-go/convo/internal/codec"
)

func readAll(t testing.TB, src Source) ([]codec.Event, error) {
	t.Helper()
	var evs []codec.Event
	for {
		ev, err := src.Next()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func ev(typ, data string) codec.Event { return codec.Event{Type: typ, Data: []byte(data)} }

func TestSSE(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []codec.Event
	}{
		{"one event", "data: {\"a\":1}\n\n", []codec.Event{ev("", `{"a":1}`)}},
		{"named", "event: message_start\ndata: {}\n\n", []codec.Event{ev("message_start", `{}`)}},
		{"multi-line data joined by LF", "data: a\ndata: b\n\n", []codec.Event{ev("", "a\nb")}},
		{"comments and ping ignored", ": keep-alive\ndata: x\n\n:\n\n", []codec.Event{ev("", "x")}},
		{"CRLF", "event: e\r\ndata: x\r\n\r\n", []codec.Event{ev("e", "x")}},
		{"CR alone", "event: e\rdata: x\r\r", []codec.Event{ev("e", "x")}},
		{"no space after colon", "data:x\n\n", []codec.Event{ev("", "x")}},
		{"only one space removed", "data:  x\n\n", []codec.Event{ev("", " x")}},
		{"field without colon is an empty value", "data\n\n", []codec.Event{ev("", "")}},
		{"event without data is not dispatched", "event: a\n\ndata: y\n\n", []codec.Event{ev("", "y")}},
		{"id and retry ignored", "id: 7\nretry: 10\ndata: z\n\n", []codec.Event{ev("", "z")}},
		{"unknown field ignored", "foo: bar\ndata: z\n\n", []codec.Event{ev("", "z")}},
		{"BOM stripped", "\xef\xbb\xbfdata: b\n\n", []codec.Event{ev("", "b")}},
		{"unfinished event discarded", "data: a\n\ndata: b\n", []codec.Event{ev("", "a")}},
		{"DONE delivered", "data: {}\n\ndata: [DONE]\n\n", []codec.Event{ev("", "{}"), ev("", "[DONE]")}},
		{"empty", "", nil},
	}
	// More names than are reused: each event keeps its own.
	var in strings.Builder
	var want []codec.Event
	for i, n := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 0, 19, 3} {
		name := fmt.Sprintf("n%d", n)
		fmt.Fprintf(&in, "event: %s\ndata: %d\n\n", name, i)
		want = append(want, ev(name, strconv.Itoa(i)))
	}
	tests = append(tests, struct {
		name string
		in   string
		want []codec.Event
	}{"more names than are reused", in.String(), want})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, wrap := range []func(io.Reader) io.Reader{
				func(r io.Reader) io.Reader { return r },
				iotest.OneByteReader,
				iotest.HalfReader,
			} {
				got, err := readAll(t, NewSSE(wrap(strings.NewReader(tt.in))))
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("got %q, want %q", got, tt.want)
				}
			}
		})
	}
}

// lineEnd finds what bytes.IndexAny(b, "\r\n") finds.
func TestLineEnd(t *testing.T) {
	for _, b := range []string{"", "abc", "a\n", "a\r\n", "\r", "ab\rc\n", "ab\nc\r", "\n\r"} {
		if got, want := lineEnd([]byte(b)), strings.IndexAny(b, "\r\n"); got != want {
			t.Errorf("%q: %d, want %d", b, got, want)
		}
	}
}

func TestSSELongLine(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	got, err := readAll(t, NewSSE(strings.NewReader("data: "+long+"\n\n")))
	if err != nil || len(got) != 1 || string(got[0].Data) != long {
		t.Fatalf("long line: %v, %d events", err, len(got))
	}
	s := NewSSE(strings.NewReader("data: " + long + "\n\n"))
	s.max = 1000
	if _, err := s.Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("limit: got %v", err)
	}
}

func TestSSEReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom))
	got, err := readAll(t, NewSSE(r))
	if !errors.Is(err, boom) || len(got) != 1 {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestNDJSON(t *testing.T) {
	in := "{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}"
	want := []codec.Event{{Data: []byte(`{"a":1}`)}, {Data: []byte(`{"b":2}`)}, {Data: []byte(`{"c":3}`)}}
	for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in))} {
		got, err := readAll(t, NewNDJSON(r))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("got %q, %v", got, err)
		}
	}
	n := NewNDJSON(strings.NewReader(strings.Repeat("x", 100<<10) + "\n"))
	n.max = 1000
	if _, err := n.Next(); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("limit: got %v", err)
	}
}

// FuzzSSE checks that no input panics and that how the bytes are split into
// reads never changes the events.
func FuzzSSE(f *testing.F) {
	for _, s := range []string{"data: a\n\n", "event: x\r\ndata: 1\r\ndata: 2\r\n\r\n", ":c\rdata:y\r\r", "data", "\r\n\r"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		whole, err1 := readAll(t, NewSSE(strings.NewReader(string(b))))
		bytewise, err2 := readAll(t, NewSSE(iotest.OneByteReader(strings.NewReader(string(b)))))
		if (err1 == nil) != (err2 == nil) || !reflect.DeepEqual(whole, bytewise) {
			t.Fatalf("split changed the result: %q %v vs %q %v", whole, err1, bytewise, err2)
		}
		// Shared data, copied as each event comes, is the same.
		for _, r := range []io.Reader{strings.NewReader(string(b)), iotest.OneByteReader(strings.NewReader(string(b)))} {
			shared, err3 := readShared(NewSSE(r))
			if (err1 == nil) != (err3 == nil) || !reflect.DeepEqual(whole, shared) {
				t.Fatalf("Share changed the result: %q %v vs %q %v", whole, err1, shared, err3)
			}
		}
	})
}

// readShared reads every event of s in shared mode (SSE.Share), copying
// each event's data as it comes, as a consumer of shared data does.
func readShared(s *SSE) ([]codec.Event, error) {
	s.Share()
	defer s.Release()
	var evs []codec.Event
	for {
		ev, err := s.Next()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		ev.Data = bytes.Clone(ev.Data)
		evs = append(evs, ev)
	}
}

// Shared data is the events' data while Next is not called again, and the
// next event overwrites it.
func TestShare(t *testing.T) {
	in := "data: first event\n\nevent: x\ndata: 2nd\ndata: lines\n\n" + strings.Repeat("data: "+strings.Repeat("long ", 2000)+"\n\n", 2)
	want, err := readAll(t, NewSSE(strings.NewReader(in)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := readShared(NewSSE(strings.NewReader(in)))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("shared: %v, %d events; want %d", err, len(got), len(want))
	}
	s := NewSSE(strings.NewReader(in))
	s.Share()
	e1, _ := s.Next()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	if string(e1.Data) == "first event" {
		t.Errorf("the first event's data was not reused: Share copies")
	}
}

func FuzzNDJSON(f *testing.F) {
	f.Add([]byte("{}\n{}\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		whole, _ := readAll(t, NewNDJSON(strings.NewReader(string(b))))
		bytewise, _ := readAll(t, NewNDJSON(iotest.OneByteReader(strings.NewReader(string(b)))))
		if !reflect.DeepEqual(whole, bytewise) {
			t.Fatalf("split changed the result: %q vs %q", whole, bytewise)
		}
	})
}

func BenchmarkSSE(b *testing.B) {
	var sb strings.Builder
	for i := 0; i < 1000; i++ {
		sb.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello \"}}\n\n")
	}
	in := sb.String()
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		s := NewSSE(strings.NewReader(in))
		for {
			if _, err := s.Next(); err != nil {
				break
			}
		}
	}
}

// The events of a released reader keep their data when the read buffer
// goes to another reader.
func TestRelease(t *testing.T) {
	s := NewSSE(strings.NewReader("event: a\ndata: first\n\n"))
	e1, err := s.Next()
	if err != nil {
		t.Fatal(err)
	}
	s.Release()
	n := NewNDJSON(strings.NewReader("{\"x\":1}\n"))
	e2, err := n.Next()
	if err != nil {
		t.Fatal(err)
	}
	n.Release()
	s = NewSSE(strings.NewReader("data: second, longer, to overwrite the buffer\n\n"))
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	if string(e1.Data) != "first" || e1.Type != "a" || string(e2.Data) != `{"x":1}` {
		t.Errorf("got %q %q and %q after the buffers were reused", e1.Type, e1.Data, e2.Data)
	}
}

// TestSSEKeptData checks that events' data, kept in shared slabs, stays
// as it was read while later events are read, that an append to one does
// not write over the next, and that a long event is read whole.
func TestSSEKeptData(t *testing.T) {
	var in strings.Builder
	var want []string
	for i := range 300 {
		d := strings.Repeat(strconv.Itoa(i%10), 1+i%37)
		if i%50 == 7 {
			d = strings.Repeat("L", slabMax+1+i) // its own allocation
		}
		want = append(want, d)
		fmt.Fprintf(&in, "data: %s\n\n", d)
	}
	evs, err := readAll(t, NewSSE(strings.NewReader(in.String())))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != len(want) {
		t.Fatalf("%d events, want %d", len(evs), len(want))
	}
	for i := range evs[:len(evs)-1] {
		_ = append(evs[i].Data, "XXXXXXXX"...)
	}
	for i, e := range evs {
		if string(e.Data) != want[i] {
			t.Fatalf("event %d: %q, want %q", i, e.Data, want[i])
		}
	}
}

// TestSSEAllocs guards the reader's allocations: short events share
// slabs rather than allocating each its own copy.
func TestSSEAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts: not in -short")
	}
	in := strings.Repeat("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n", 100)
	r := strings.NewReader(in)
	got := testing.AllocsPerRun(50, func() {
		r.Reset(in)
		s := NewSSE(r)
		if _, err := readAll(t, s); err != nil {
			t.Fatal(err)
		}
		s.Release()
	})
	// Measured 2026-12-06: 15 (4 slabs, the reader, readAll's slice);
	// 112 when each event's data was a copy of its own.
	if got > 20 {
		t.Errorf("%.0f allocations reading 100 events, want at most 20", got)
	}
}
