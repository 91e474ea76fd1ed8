package openai

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

	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
)

// foldBoth folds events twice, with the fast path of repeated chunks
// (chunkShape) and without, and fails on any difference: each event's
// piece and error, the warnings, the messages. Each event's data is
// overwritten once folded, as a shared SSE buffer is: neither may keep
// it. It returns how many chunks took the fast path.
func foldBoth(t testing.TB, events [][]byte) int {
	t.Helper()
	fast, slow := newChatAcc(provider.Options{}), newChatAcc(provider.Options{})
	slow.shape.off = true
	for i, data := range events {
		var pieces [2]provider.Piece
		var errs [2]string
		for k, a := range []*chatAcc{fast, slow} {
			buf := bytes.Clone(data)
			p, err := a.AddPiece(provider.Event{Data: buf})
			pieces[k], errs[k] = p, fmt.Sprint(err)
			for j := range buf {
				buf[j] = 'x'
			}
		}
		if !reflect.DeepEqual(pieces[0], pieces[1]) || errs[0] != errs[1] {
			t.Fatalf("event %d (%q): fast path %+v, %s; full parse %+v, %s", i, data, pieces[0], errs[0], pieces[1], errs[1])
		}
	}
	m1, w1, err1 := fast.Message()
	m2, w2, err2 := slow.Message()
	if !reflect.DeepEqual(m1, m2) || !reflect.DeepEqual(w1, w2) || fmt.Sprint(err1) != fmt.Sprint(err2) {
		t.Fatalf("fast path: %+v %v %v\nfull parse: %+v %v %v", m1, w1, err1, m2, w2, err2)
	}
	ms1, w1, err1 := fast.Messages()
	ms2, w2, err2 := slow.Messages()
	if !reflect.DeepEqual(ms1, ms2) || !reflect.DeepEqual(w1, w2) || fmt.Sprint(err1) != fmt.Sprint(err2) {
		t.Fatalf("Messages: fast path %+v %v %v\nfull parse %+v %v %v", ms1, w1, err1, ms2, w2, err2)
	}
	return fast.shape.hits
}

// sseEvents returns the data of each event of an SSE stream.
func sseEvents(t testing.TB, sse []byte) [][]byte {
	t.Helper()
	src := stream.NewSSE(bytes.NewReader(sse))
	var evs [][]byte
	for {
		ev, err := src.Next()
		if errors.Is(err, io.EOF) {
			return evs
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev.Data)
	}
}

// longChunks returns the chunks of the long Chat stream, [DONE] last.
func longChunks(t testing.TB) [][]byte { return sseEvents(t, longChatStream(t)) }

// The long stream takes the fast path for all its text chunks but the
// first two (the first has the role; the second is the first template),
// and folds as the full parse does.
func TestChatShapeLong(t *testing.T) {
	evs := longChunks(t)
	if hits := foldBoth(t, evs); hits != len(evs)-5 {
		t.Errorf("%d of %d chunks took the fast path, want %d", hits, len(evs)-1, len(evs)-5)
	}
	// All but the first repeat, which finds that "obfuscation" varies,
	// compare the bytes between the text and that value at once.
	a := newChatAcc(provider.Options{})
	for _, data := range evs {
		_ = a.Add(provider.Event{Data: data})
	}
	if a.shape.quick != a.shape.hits-1 {
		t.Errorf("%d of the %d repeats matched with the varying holes read, want %d", a.shape.quick, a.shape.hits, a.shape.hits-1)
	}
}

// Every recorded and hand-written Chat stream folds the same with the
// fast path and without.
func TestChatShapeRecorded(t *testing.T) {
	files, _ := filepath.Glob("testdata/recorded/chat/*.sse")
	more, _ := filepath.Glob("testdata/replies/chat/*.sse")
	for _, file := range append(files, more...) {
		foldBoth(t, sseEvents(t, readFile(t, file)))
	}
	files, _ = filepath.Glob("testdata/recorded/chat/*.chunks.txt")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		foldBoth(t, bytes.Split(bytes.TrimSpace(b), []byte("\n")))
	}
}

// shapeVariants change a text chunk of the long stream in ways the fast
// path must either fold as the full parse does or leave to it: other
// texts (escapes, non-ASCII, empty, null), invalid strings where the holes
// are, keys that repeat one of the template's, other values where its
// bytes are, white space, a cut chunk.
var shapeVariants = []struct {
	name     string
	old, new string
}{
	{"escapes", `"content":"`, `"content":"a\"b\\c\u00e9\ud83d\ude00\n\t/\/`},
	{"non-ASCII", `"content":"`, `"content":"héllo wörld ✓ `},
	{"empty text", `"content":"`, `"content":"",  "x":"`},
	{"text null", `"content":"`, `"content":null,"x":"`},
	{"invalid UTF-8", `"content":"`, "\"content\":\"\xff"},
	{"bad escape", `"content":"`, `"content":"\x`},
	{"lone surrogate", `"content":"`, `"content":"\ud83d`},
	{"control character", `"content":"`, "\"content\":\"\x01"},
	{"obfuscation not a string", `"obfuscation":"`, `"obfuscation":5,"o":"`},
	{"obfuscation escaped", `"obfuscation":"`, `"obfuscation":"\n`},
	{"obfuscation bad", `"obfuscation":"`, "\"obfuscation\":\"\x00"},
	{"repeated text key", `"},"logprobs"`, `","content":"again"},"logprobs"`},
	{"repeated chunk key", `"obfuscation":`, `"id":"chatcmpl-x","obfuscation":`},
	{"repeated choice key", `"finish_reason":null}`, `"finish_reason":null,"index":0}`},
	{"other id", `"id":"chatcmpl-`, `"id":"chatcmpl-other`},
	{"empty id", `"id":"chatcmpl-D8Z5oo6uDh67AD85p73ksdT1KxhE0"`, `"id":""`},
	{"other choice", `"index":0`, `"index":1`},
	{"other created", `"created":1770933892`, `"created":1770933893`},
	{"finish", `"finish_reason":null`, `"finish_reason":"length"`},
	{"usage", `"usage":null`, `"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}`},
	{"reasoning too", `"delta":{"content":`, `"delta":{"reasoning_content":"why","content":`},
	{"refusal after", `"},"logprobs"`, `","refusal":"no"},"logprobs"`},
	{"tool call", `"delta":{"content":`, `"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{}"}}],"content":`},
	{"space", `"choices":[`, `"choices": [`},
	{"trailing space", `"}`, `"} `},
	{"trailing garbage", `"}`, `"}x`},
	{"cut", `"usage":null,`, ``},
	{"error", `"usage":null`, `"error":{"message":"boom"}`},
}

// Each variant, in one chunk, in two in a row (the first becoming the
// template), and in every chunk from the tenth on, folds as the full
// parse does.
func TestChatShapeVariants(t *testing.T) {
	evs := longChunks(t)
	for _, v := range shapeVariants {
		change := func(b []byte) []byte {
			if !bytes.Contains(b, []byte(v.old)) {
				return b // the first chunk has another delta
			}
			if v.name == "cut" {
				return b[:bytes.Index(b, []byte(v.old))]
			}
			return bytes.Replace(b, []byte(v.old), []byte(v.new), 1)
		}
		for _, at := range [][]int{{10}, {10, 11}, {2}, {1}, {0}} {
			t.Run(fmt.Sprintf("%s/%v", v.name, at), func(t *testing.T) {
				c := append([][]byte(nil), evs...)
				for _, i := range at {
					c[i] = change(c[i])
				}
				foldBoth(t, c)
			})
		}
		t.Run(v.name+"/all", func(t *testing.T) {
			c := append([][]byte(nil), evs...)
			for i := 10; i < len(c)-3; i++ {
				c[i] = change(c[i])
			}
			foldBoth(t, c)
		})
	}
}

// shapeStreams are streams where a chunk repeats a template after one that
// is none changed what the template's full parse does: the template may
// only have effects no chunk after it undoes.
var shapeStreams = [][]string{
	// An empty id kept nothing; a later id makes the repeat warn.
	{`{"id":"","choices":[{"index":0,"delta":{"content":"a"}}]}`,
		`{"id":"x","choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}]}`,
		`{"id":"","choices":[{"index":0,"delta":{"content":"c"}}]}`},
	// The last usage wins.
	{`{"id":"x","choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"completion_tokens":1}}`,
		`{"id":"x","choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop"}],"usage":{"completion_tokens":2}}`,
		`{"id":"x","choices":[{"index":0,"delta":{"content":"c"}}],"usage":{"completion_tokens":1}}`},
	// The last finish reason wins.
	{`{"id":"x","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"length"}]}`,
		`{"id":"x","choices":[{"index":0,"delta":{"content":"b"},"finish_reason":"stop","logprobs":{"content":[]}}]}`,
		`{"id":"x","choices":[{"index":0,"delta":{"content":"c"},"finish_reason":"length"}]}`},
	// A second choice.
	{`{"id":"x","choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}`,
		`{"id":"x","choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":"b"}}]}`},
	// A role set by a later chunk than the template's empty one.
	{`{"id":"x","choices":[{"index":0,"delta":{"role":"","content":"a"}}]}`,
		`{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":"b"},"finish_reason":"stop"}]}`,
		`{"id":"x","choices":[{"index":0,"delta":{"role":"","content":"a"}}]}`},
	// Data after [DONE].
	{`{"id":"x","choices":[{"index":0,"delta":{"content":"a"}}]}`, `[DONE]`,
		`{"id":"x","choices":[{"index":0,"delta":{"content":"a"}}]}`},
}

func TestChatShapeStreams(t *testing.T) {
	for _, s := range shapeStreams {
		var evs [][]byte
		for _, c := range s {
			evs = append(evs, []byte(c))
		}
		foldBoth(t, evs)
	}
}

// FuzzChatShape folds streams of chunks (one a line) with the fast path and
// without: they must agree on everything. The seeds are the long stream's
// first chunks, and the variants of one.
func FuzzChatShape(f *testing.F) {
	evs := longChunks(f)
	head := bytes.Join(evs[:6], []byte("\n"))
	f.Add(head)
	for _, v := range shapeVariants {
		f.Add(bytes.Join([][]byte{evs[1], evs[2], []byte(strings.Replace(string(evs[3]), v.old, v.new, 1)), evs[4]}, []byte("\n")))
	}
	for _, s := range shapeStreams {
		f.Add([]byte(strings.Join(s, "\n")))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		foldBoth(t, bytes.Split(b, []byte("\n")))
	})
}
