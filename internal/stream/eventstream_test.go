package stream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/convo-go/convo/internal/codec"
)

// The test encoder: written from the framing's description, independent of
// the reader, so the two check each other.

type hdr struct {
	name string
	typ  byte
	val  []byte // raw value bytes, without the length of strings and byte arrays
}

func strHdr(name, v string) hdr { return hdr{name, 7, []byte(v)} }

func encodeHeaders(hs []hdr) []byte {
	var b []byte
	for _, h := range hs {
		b = append(b, byte(len(h.name)))
		b = append(b, h.name...)
		b = append(b, h.typ)
		if h.typ == 6 || h.typ == 7 {
			b = binary.BigEndian.AppendUint16(b, uint16(len(h.val)))
		}
		b = append(b, h.val...)
	}
	return b
}

func frame(hs []hdr, payload []byte) []byte {
	headers := encodeHeaders(hs)
	total := 16 + len(headers) + len(payload)
	var b []byte
	b = binary.BigEndian.AppendUint32(b, uint32(total))
	b = binary.BigEndian.AppendUint32(b, uint32(len(headers)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	b = append(b, headers...)
	b = append(b, payload...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

func eventFrame(typ, payload string) []byte {
	return frame([]hdr{strHdr(":event-type", typ), strHdr(":content-type", "application/json"), strHdr(":message-type", "event")}, []byte(payload))
}

func exceptionFrame(typ, payload string) []byte {
	return frame([]hdr{strHdr(":exception-type", typ), strHdr(":content-type", "application/json"), strHdr(":message-type", "exception")}, []byte(payload))
}

func concat(frames ...[]byte) []byte { return bytes.Join(frames, nil) }

func TestEventStream(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want []codec.Event
		err  string
	}{
		{"empty stream", nil, nil, ""},
		{"events", concat(
			eventFrame("messageStart", `{"role":"assistant"}`),
			eventFrame("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hi"},"p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0"}`),
			eventFrame("messageStop", `{"stopReason":"end_turn"}`)),
			[]codec.Event{ev("messageStart", `{"role":"assistant"}`),
				ev("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hi"},"p":"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0"}`),
				ev("messageStop", `{"stopReason":"end_turn"}`)}, ""},
		{"exception is an event named after it", concat(
			eventFrame("messageStart", `{"role":"assistant"}`),
			exceptionFrame("throttlingException", `{"message":"Too many requests"}`)),
			[]codec.Event{ev("messageStart", `{"role":"assistant"}`), ev("throttlingException", `{"message":"Too many requests"}`)}, ""},
		{"event without message type", frame([]hdr{strHdr(":event-type", "metadata")}, []byte(`{}`)),
			[]codec.Event{ev("metadata", `{}`)}, ""},
		{"empty payload", frame([]hdr{strHdr(":event-type", "messageStop"), strHdr(":message-type", "event")}, nil),
			[]codec.Event{ev("messageStop", "")}, ""},
		{"error message", concat(eventFrame("messageStart", `{}`),
			frame([]hdr{strHdr(":message-type", "error"), strHdr(":error-code", "InternalFailure"), strHdr(":error-message", "boom")}, nil)),
			[]codec.Event{ev("messageStart", `{}`)}, "bedrock: boom (InternalFailure)"},
		{"no event type", frame([]hdr{strHdr(":message-type", "event")}, []byte(`{}`)), nil,
			"event-stream message 1: event without an :event-type header"},
		{"no exception type", frame([]hdr{strHdr(":message-type", "exception")}, []byte(`{}`)), nil,
			"exception without an :exception-type header"},
		{"unknown message type", frame([]hdr{strHdr(":message-type", "hello"), strHdr(":event-type", "x")}, nil), nil,
			`unknown :message-type "hello"`},
		{"event type as bytes is not a name", frame([]hdr{{":event-type", 6, []byte("x")}}, nil), nil,
			"event without an :event-type header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, wrap := range []func(io.Reader) io.Reader{
				func(r io.Reader) io.Reader { return r },
				iotest.OneByteReader,
				iotest.HalfReader,
				iotest.DataErrReader,
			} {
				got, err := readAll(t, NewEventStream(wrap(bytes.NewReader(tt.in))))
				if tt.err == "" && err != nil || tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				for i := range got {
					if len(got[i].Data) == 0 {
						got[i].Data = []byte("")
					}
				}
				for i := range tt.want {
					if len(tt.want[i].Data) == 0 {
						tt.want[i].Data = []byte("")
					}
				}
				if !reflect.DeepEqual(got, tt.want) {
					t.Fatalf("got %q, want %q", got, tt.want)
				}
			}
		})
	}
}

func TestEventStreamError(t *testing.T) {
	_, err := readAll(t, NewEventStream(bytes.NewReader(
		frame([]hdr{strHdr(":message-type", "error"), strHdr(":error-code", "E"), strHdr(":error-message", "m")}, nil))))
	var ae *codec.APIError
	if !errors.As(err, &ae) || ae.Provider != "bedrock" || ae.Type != "E" || ae.Message != "m" {
		t.Fatalf("got %v", err)
	}
	// A broken frame is not the provider speaking: it stays a framing error.
	bad := frame([]hdr{strHdr(":message-type", "error"), strHdr(":error-code", "E")}, nil)
	bad[len(bad)-1] ^= 1
	if _, err := readAll(t, NewEventStream(bytes.NewReader(bad))); !errors.Is(err, ErrCRC) || errors.As(err, &ae) {
		t.Fatalf("a damaged error frame: %v", err)
	}
}

func TestEventStreamHeaders(t *testing.T) {
	uuid := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	hs := []hdr{
		{"true", 0, nil}, {"false", 1, nil},
		{"int8", 2, []byte{0xcf}},
		{"int16", 3, []byte{0x80, 0x01}},
		{"int32", 4, []byte{0, 0, 0xa0, 0x0c}},
		{"int64", 5, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}},
		{"bytes", 6, []byte("I'm a little teapot!")},
		{"string", 7, []byte("application/json ✓")},
		{"timestamp", 8, binary.BigEndian.AppendUint64(nil, 8675309)},
		{"uuid", 9, uuid},
		{"empty string", 7, nil},
	}
	m, err := NewEventStream(bytes.NewReader(frame(hs, []byte(`{'foo':'bar'}`)))).ReadMessage()
	if err != nil {
		t.Fatal(err)
	}
	want := []EventStreamHeader{
		{"true", true}, {"false", false}, {"int8", int8(-49)}, {"int16", int16(-32767)}, {"int32", int32(40972)},
		{"int64", int64(-2)}, {"bytes", []byte("I'm a little teapot!")}, {"string", "application/json ✓"},
		{"timestamp", time.UnixMilli(8675309).UTC()}, {"uuid", [16]byte(uuid)}, {"empty string", ""},
	}
	if !reflect.DeepEqual(m.Headers, want) {
		t.Errorf("headers\ngot  %#v\nwant %#v", m.Headers, want)
	}
	if string(m.Payload) != `{'foo':'bar'}` {
		t.Errorf("payload %q", m.Payload)
	}
	if v, ok := m.Header("int32"); !ok || v != int32(40972) {
		t.Errorf("Header: %v %v", v, ok)
	}
	if _, ok := m.Header("missing"); ok {
		t.Error("Header found a missing header")
	}
}

// TestEventStreamCorrupt flips, cuts and lies about bytes of valid frames:
// every damage is an error, never an event and never a panic.
func TestEventStreamCorrupt(t *testing.T) {
	good := eventFrame("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hello"}}`)
	relength := func(b []byte, total, hlen uint32) []byte {
		b = append([]byte(nil), b...)
		binary.BigEndian.PutUint32(b[0:], total)
		binary.BigEndian.PutUint32(b[4:], hlen)
		binary.BigEndian.PutUint32(b[8:], crc32.ChecksumIEEE(b[:8]))
		return b
	}
	tests := []struct {
		name string
		in   []byte
		want string
		is   error
	}{
		{"prelude CRC", flip(good, 9), "prelude CRC", ErrCRC},
		{"total length", flip(good, 3), "prelude CRC", ErrCRC},
		{"header byte", flip(good, 14), "message CRC", ErrCRC},
		{"payload byte", flip(good, len(good)-10), "message CRC", ErrCRC},
		{"message CRC", flip(good, len(good)-1), "message CRC", ErrCRC},
		{"cut in the prelude", good[:7], "stream cut inside the prelude", io.ErrUnexpectedEOF},
		{"cut in the message", good[:len(good)-3], "stream cut inside a message", io.ErrUnexpectedEOF},
		{"cut in the second message", concat(good, good[:20]), "event-stream message 2: stream cut", io.ErrUnexpectedEOF},
		{"too short", relength(good, 15, 0), "shorter than", nil},
		{"headers past the total", relength(good, 40, 30), "does not fit", nil},
		{"headers too large", relength(good, 200<<10, 129<<10), "headers of", ErrTooLarge},
		{"payload too large", relength(good, 17<<20, 10), "payload of", ErrTooLarge},
		{"empty header name", frame([]hdr{{"", 7, []byte("x")}}, nil), "empty name", nil},
		{"unknown header type", frame([]hdr{{"x", 10, nil}}, nil), "unknown value type 10", nil},
		{"string header not UTF-8", frame([]hdr{{"x", 7, []byte{0xff}}}, nil), "not UTF-8", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := readAll(t, NewEventStream(bytes.NewReader(tt.in)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v (events %q), want %q", err, evs, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("%v is not %v", err, tt.is)
			}
		})
	}
	// A header whose length runs past the headers, with CRCs made right.
	hs := encodeHeaders([]hdr{strHdr(":event-type", "x")})
	hs[len(hs)-3] = 9 // string length 9 > 1 byte left
	b := binary.BigEndian.AppendUint32(nil, uint32(16+len(hs)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(hs)))
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	b = append(b, hs...)
	b = binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	if _, err := NewEventStream(bytes.NewReader(b)).Next(); err == nil || !strings.Contains(err.Error(), "runs past the headers") {
		t.Errorf("overlong header value: %v", err)
	}
}

func flip(b []byte, i int) []byte {
	b = append([]byte(nil), b...)
	b[i] ^= 0x40
	return b
}

func TestEventStreamReadError(t *testing.T) {
	boom := errors.New("connection reset")
	good := eventFrame("messageStart", `{}`)
	r := io.MultiReader(bytes.NewReader(good), bytes.NewReader(good[:5]), iotest.ErrReader(boom))
	evs, err := readAll(t, NewEventStream(r))
	if !errors.Is(err, boom) || len(evs) != 1 {
		t.Fatalf("got %v, %d events", err, len(evs))
	}
}

// TestEventStreamDataIsOwned checks the events can be kept: the reader
// reuses its buffer, not the bytes it hands out.
func TestEventStreamDataIsOwned(t *testing.T) {
	s := NewEventStream(bytes.NewReader(concat(eventFrame("a", "first"), eventFrame("b", "second"))))
	e1, _ := s.Next()
	e2, _ := s.Next()
	if string(e1.Data) != "first" || string(e2.Data) != "second" {
		t.Fatalf("%q %q", e1.Data, e2.Data)
	}
}

var updateStreams = flag.Bool("update-eventstream", false, "rewrite testdata/eventstream/*.bin from the .events files")

func eventsFile(t testing.TB, path string) []codec.Event {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var evs []codec.Event
	for _, line := range strings.Split(strings.TrimSpace(string(text)), "\n") {
		typ, data, _ := strings.Cut(line, "\t")
		evs = append(evs, ev(typ, data))
	}
	return evs
}

// TestEventStreamFiles reads the captured streams in
// testdata/eventstream: each NAME.bin must give the events of NAME.events
// (one "type<TAB>payload" line per event).
func TestEventStreamFiles(t *testing.T) {
	if *updateStreams {
		sources, _ := filepath.Glob("testdata/eventstream/*.events")
		for _, src := range sources {
			var b []byte
			for _, e := range eventsFile(t, src) {
				if strings.HasSuffix(e.Type, "Exception") {
					b = append(b, exceptionFrame(e.Type, string(e.Data))...)
				} else {
					b = append(b, eventFrame(e.Type, string(e.Data))...)
				}
			}
			if err := os.WriteFile(strings.TrimSuffix(src, ".events")+".bin", b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	files, _ := filepath.Glob("testdata/eventstream/*.bin")
	if len(files) == 0 {
		t.Fatal("no streams")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(t, NewEventStream(bytes.NewReader(b)))
			if err != nil {
				t.Fatal(err)
			}
			want := eventsFile(t, strings.TrimSuffix(f, ".bin")+".events")
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %q\nwant %q", got, want)
			}
		})
	}
}

// FuzzEventStream feeds arbitrary bytes: no panic, no event after an
// error, and every event read comes from a message whose CRCs matched.
func FuzzEventStream(f *testing.F) {
	f.Add(concat(eventFrame("messageStart", `{"role":"assistant"}`), eventFrame("contentBlockDelta", `{"delta":{"text":"x"}}`)))
	f.Add(exceptionFrame("throttlingException", `{"message":"slow down"}`))
	f.Add(frame([]hdr{{"true", 0, nil}, {"i", 5, make([]byte, 8)}, {"u", 9, make([]byte, 16)}, {":event-type", 7, []byte("e")}}, []byte("p")))
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0})
	files, _ := filepath.Glob("testdata/eventstream/*.bin")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := NewEventStream(bytes.NewReader(b))
		for range 1000 {
			if _, err := s.Next(); err != nil {
				break
			}
		}
		m := NewEventStream(bytes.NewReader(b))
		for range 1000 {
			if _, err := m.ReadMessage(); err != nil {
				break
			}
		}
	})
}

func BenchmarkEventStream(b *testing.B) {
	var stream []byte
	for i := range 1000 {
		stream = append(stream, eventFrame("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"token `+strings.Repeat("x", i%7)+`"},"p":"abcdefghijklmnop"}`)...)
	}
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		s := NewEventStream(bytes.NewReader(stream))
		for {
			if _, err := s.Next(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
}

// TestEventStreamLargeMessage reads a message of several MiB, which the
// reader takes in steps, and a lying prelude that claims one.
func TestEventStreamLargeMessage(t *testing.T) {
	payload := bytes.Repeat([]byte("x"), 3<<20+17)
	e, err := NewEventStream(iotest.HalfReader(bytes.NewReader(eventFrame("chunk", string(payload))))).Next()
	if err != nil || !bytes.Equal(e.Data, payload) {
		t.Fatalf("large message: %v, %d bytes", err, len(e.Data))
	}
	lie := frame(nil, nil)[:12]
	binary.BigEndian.PutUint32(lie[0:], 15<<20)
	binary.BigEndian.PutUint32(lie[8:], crc32.ChecksumIEEE(lie[:8]))
	_, err = NewEventStream(bytes.NewReader(append(lie, "short"...))).Next()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("lying prelude: %v", err)
	}
}
