package anthropic

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
)

// foldBoth folds events twice, with the fast path of repeated text deltas
// (deltaShape) and without, and fails on any difference: each event's
// piece and error, the warnings, the message. It returns how many events
// took the fast path.
func foldBoth(t testing.TB, opts provider.Options, events []provider.Event) int {
	t.Helper()
	fast := Messages().(provider.ReplyCodec).NewAccumulator(opts).(*accumulator)
	slow := Messages().(provider.ReplyCodec).NewAccumulator(opts).(*accumulator)
	slow.shape.off = true
	for i, ev := range events {
		p1, err1 := fast.AddPiece(provider.Event{Type: ev.Type, Data: bytes.Clone(ev.Data)})
		p2, err2 := slow.AddPiece(provider.Event{Type: ev.Type, Data: bytes.Clone(ev.Data)})
		if !reflect.DeepEqual(p1, p2) || fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Fatalf("event %d (%s %q): fast path %+v, %v; full parse %+v, %v", i, ev.Type, ev.Data, p1, err1, p2, err2)
		}
	}
	m1, w1, err1 := fast.Message()
	m2, w2, err2 := slow.Message()
	if !reflect.DeepEqual(m1, m2) || !reflect.DeepEqual(w1, w2) || fmt.Sprint(err1) != fmt.Sprint(err2) {
		t.Fatalf("fast path: %+v %v %v\nfull parse: %+v %v %v", m1, w1, err1, m2, w2, err2)
	}
	return fast.shape.hits
}

// sseEvents returns the events of an SSE stream.
func sseEvents(t testing.TB, sse []byte) []provider.Event {
	t.Helper()
	src := stream.NewSSE(bytes.NewReader(sse))
	var evs []provider.Event
	for {
		ev, err := src.Next()
		if errors.Is(err, io.EOF) {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
}

// The long stream takes the fast path for every text delta but the first,
// and folds as the full parse does.
func TestShapeLong(t *testing.T) {
	evs := sseEvents(t, longTextStream(t))
	deltas := 0
	for _, ev := range evs {
		if ev.Type == "content_block_delta" {
			deltas++
		}
	}
	if hits := foldBoth(t, provider.Options{}, evs); hits != deltas-1 {
		t.Errorf("%d of %d deltas took the fast path, want %d", hits, deltas, deltas-1)
	}
}

// Every recorded and hand-written stream folds the same with the fast
// path and without.
func TestShapeRecorded(t *testing.T) {
	files, _ := filepath.Glob("testdata/recorded/*.sse")
	more, _ := filepath.Glob("testdata/reply/*.sse")
	for _, file := range append(files, more...) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		foldBoth(t, provider.Options{}, sseEvents(t, b))
	}
}

// shapeVariants change a text delta of the long stream (and the ones after
// it, in a second run) in ways the fast path must fold as the full parse
// does or leave to it.
var shapeVariants = []struct {
	name     string
	old, new string
}{
	{"escapes", `"text":"`, `"text":"a\"b\\c\u00e9\ud83d\ude00\n\t/\/`},
	{"non-ASCII", `"text":"`, `"text":"héllo ✓ `},
	{"empty", `"text":"`, `"text":"","x":"`},
	{"invalid UTF-8", `"text":"`, "\"text\":\"\xff"},
	{"bad escape", `"text":"`, `"text":"\x`},
	{"lone surrogate", `"text":"`, `"text":"\ud83d`},
	{"control character", `"text":"`, "\"text\":\"\x01"},
	{"not a string", `"text":"`, `"text":5,"x":"`},
	{"repeated key", `"type":"text_delta"}`, `"text":"again","type":"text_delta"}`},
	{"repeated event key", `"index":0,`, `"index":0,"index":0,`},
	{"other index", `"index":0`, `"index":1`},
	{"thinking", `"type":"text_delta"`, `"type":"thinking_delta"`},
	{"other member", `"index":0`, `"x":1,"index":0`},
	{"space", `"delta":{`, `"delta": {`},
	{"trailing space", `"content_block_delta"}`, `"content_block_delta"} `},
	{"trailing garbage", `"content_block_delta"}`, `"content_block_delta"}x`},
	{"cut", `"content_block_delta"}`, `"content_block_delta"`},
	{"no type", `,"type":"content_block_delta"`, ``},
}

func TestShapeVariants(t *testing.T) {
	evs := sseEvents(t, longTextStream(t))
	first := 0
	for evs[first].Type != "content_block_delta" {
		first++
	}
	for _, v := range shapeVariants {
		change := func(ev provider.Event) provider.Event {
			if !bytes.Contains(ev.Data, []byte(v.old)) {
				t.Fatalf("%s: %q not in %q", v.name, v.old, ev.Data)
			}
			ev.Data = bytes.Replace(ev.Data, []byte(v.old), []byte(v.new), 1)
			return ev
		}
		for _, at := range [][]int{{10}, {10, 11}, {0}, {1}} {
			t.Run(fmt.Sprintf("%s/%v", v.name, at), func(t *testing.T) {
				c := append([]provider.Event(nil), evs...)
				for _, i := range at {
					c[first+i] = change(c[first+i])
				}
				foldBoth(t, provider.Options{}, c)
			})
		}
		t.Run(v.name+"/all", func(t *testing.T) {
			c := append([]provider.Event(nil), evs...)
			for i := first + 10; c[i].Type == "content_block_delta"; i++ {
				c[i] = change(c[i])
			}
			foldBoth(t, provider.Options{}, c)
		})
	}
}

// Streams where what comes between two equal deltas, or the limits, change
// what the second does: the fast path must leave it to the full parse.
func TestShapeStreams(t *testing.T) {
	start := `{"type":"message_start","message":{"id":"m","type":"message","role":"assistant","model":"c","content":[],"usage":{"input_tokens":1,"output_tokens":1}}}`
	block := `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	d := `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hello"}}`
	stop := `{"type":"content_block_stop","index":0}`
	mstop := `{"type":"message_stop"}`
	ev := func(typ, data string) provider.Event { return provider.Event{Type: typ, Data: []byte(data)} }
	for _, s := range [][]provider.Event{
		{ev("message_start", start), ev("content_block_start", block), ev("content_block_delta", d), ev("content_block_stop", stop), ev("content_block_delta", d)},
		{ev("message_start", start), ev("content_block_start", block), ev("content_block_delta", d), ev("message_stop", mstop), ev("content_block_delta", d)},
		{ev("message_start", start), ev("content_block_start", block), ev("content_block_delta", d), ev("ping", `{"type":"ping"}`), ev("content_block_delta", d)},
		{ev("message_start", start), ev("content_block_start", block), ev("content_block_delta", d), ev("other", d), ev("", d), ev("content_block_delta", d)},
		{ev("message_start", start), ev("content_block_start", block), ev("content_block_delta", d), ev("content_block_delta", d), ev("content_block_delta", d)},
	} {
		foldBoth(t, provider.Options{}, s)
		// The size limit is passed by the second or third delta.
		for _, n := range []int64{7, 12, 15} {
			foldBoth(t, provider.Options{Limits: convo.Limits{MaxBytes: n}}, s)
		}
	}
}

// FuzzShape folds streams of events (one a line, the event name before a
// tab) with the fast path and without: they must agree on everything.
func FuzzShape(f *testing.F) {
	evs := sseEvents(f, longTextStream(f))
	line := func(ev provider.Event) string { return ev.Type + "\t" + string(ev.Data) }
	var head []string
	for _, ev := range evs[:8] {
		head = append(head, line(ev))
	}
	f.Add(strings.Join(head, "\n"))
	for _, v := range shapeVariants {
		h := append([]string(nil), head...)
		h[6] = strings.Replace(h[6], v.old, v.new, 1)
		f.Add(strings.Join(h, "\n"))
	}
	f.Fuzz(func(t *testing.T, s string) {
		var evs []provider.Event
		for _, l := range strings.Split(s, "\n") {
			typ, data, _ := strings.Cut(l, "\t")
			evs = append(evs, provider.Event{Type: typ, Data: []byte(data)})
		}
		foldBoth(t, provider.Options{}, evs)
	})
}
