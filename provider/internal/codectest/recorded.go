package codectest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// Recorded folds every recording of real provider traffic in dir with rc
// and compares each result with its golden file, <recording>.golden: the
// message in indented canonical JSON, then the error and the warnings.
//
// A recording's name says how it is read:
//   - *.json: a response body, read with DecodeReply;
//   - *.sse, *.ndjson, *.eventstream: a stream as it came over the wire,
//     read with ReadStream (and again one byte at a time, which must give
//     the same result);
//   - *.chunks.txt: the events of a stream one JSON value a line, as
//     recorded without their framing (the Vercel AI SDK's fixtures); frame
//     puts them back into the format's framing for ReadStream.
//
// dir must hold a README.md that names every recording (its origin and
// licence). skip maps a recording's name to the reason convo cannot fold
// it correctly yet; its golden file is then written by hand as the result
// should be, is checked to be a canonical message, and is never rewritten
// by -update.
func Recorded(t *testing.T, dir string, rc provider.ReplyCodec, frame func([]byte) []byte, skip map[string]string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(ReadFile(t, filepath.Join(dir, "README.md")))
	var n int
	for _, e := range entries {
		name := e.Name()
		kind := recordingKind(name)
		if e.IsDir() || kind == "" {
			continue
		}
		n++
		path := filepath.Join(dir, name)
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(readme, "`"+name+"`") {
				t.Errorf("README.md does not name %s and its origin", name)
			}
			if why, ok := skip[name]; ok {
				checkHandGolden(t, path+".golden")
				t.Skip(why)
			}
			data := ReadFile(t, path)
			var (
				m     convo.Message
				warns []provider.Warning
				err   error
			)
			switch kind {
			case "body":
				m, warns, err = rc.DecodeReply(data, provider.Options{})
			case "chunks":
				data = frame(data)
				fallthrough
			default:
				m, warns, err = rc.ReadStream(bytes.NewReader(data), provider.Options{})
				m1, warns1, err1 := rc.ReadStream(iotest.OneByteReader(bytes.NewReader(data)), provider.Options{})
				if !m1.Equal(m) || len(warns1) != len(warns) || (err1 == nil) != (err == nil) {
					t.Errorf("read one byte at a time, the result differs: %v %v", err1, warns1)
				}
			}
			Golden(t, path+".golden", RecordedText(t, m, warns, err))
		})
	}
	if n == 0 {
		t.Fatalf("no recordings in %s", dir)
	}
}

// recordingKind says how the recording called name is read: "body",
// "stream", "chunks", or "" for a file that is not a recording.
func recordingKind(name string) string {
	switch {
	case strings.HasSuffix(name, ".chunks.txt"):
		return "chunks"
	case strings.HasSuffix(name, ".json"):
		return "body"
	case strings.HasSuffix(name, ".sse"), strings.HasSuffix(name, ".ndjson"), strings.HasSuffix(name, ".eventstream"):
		return "stream"
	}
	return ""
}

// RecordedText returns what a recorded reply's golden file holds: the
// message in indented canonical JSON, then "-- error --" and the error,
// then "-- warnings --" and the warnings one a line, when there are any.
func RecordedText(t TB, m convo.Message, warns []provider.Warning, err error) []byte {
	t.Helper()
	b := Indent(t, bytes.TrimSuffix(MessageJSON(t, m), []byte("\n")), "  ")
	if err != nil {
		b = append(b, "-- error --\n"+err.Error()+"\n"...)
	}
	if len(warns) > 0 {
		b = append(b, "-- warnings --\n"...)
		b = append(b, WarningText(warns)...)
	}
	return b
}

// checkHandGolden fails unless the golden file at path, written by hand,
// starts with a canonical message that convo reads and writes back the
// same.
func checkHandGolden(t *testing.T, path string) {
	t.Helper()
	g := ReadFile(t, path)
	doc, _, _ := bytes.Cut(g, []byte("\n-- "))
	m, err := convo.UnmarshalMessage(doc)
	if err != nil {
		t.Fatalf("%s: the expected message does not read: %v", path, err)
	}
	if !json.Valid(doc) || !SameJSON(t, doc, MessageJSON(t, m)) {
		t.Fatalf("%s: the expected message is not in canonical form", path)
	}
}

// SSEFromChunks frames chunks, one JSON event a line, as server-sent
// events: each line becomes one event whose data is the line, named by
// the event's "type" member when named is set (as Anthropic and the
// OpenAI Responses API name theirs).
func SSEFromChunks(chunks []byte, named bool) []byte {
	var out []byte
	for _, line := range bytes.Split(chunks, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if named {
			var ev struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(line, &ev) == nil && ev.Type != "" {
				out = append(out, "event: "+ev.Type+"\n"...)
			}
		}
		out = append(out, "data: "...)
		out = append(out, line...)
		out = append(out, "\n\n"...)
	}
	return out
}

// RecordedEvents returns, for every server-sent-events recording in dir
// (*.sse and *.chunks.txt), the data of its events one a line: seeds that
// give a fuzzer the shapes real providers send.
func RecordedEvents(t TB, dir string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, pattern := range []string{"*.chunks.txt", "*.sse"} {
		files, err := filepath.Glob(filepath.Join(dir, pattern))
		if err != nil {
			t.Fatalf("%v", err)
		}
		for _, f := range files {
			data := ReadFile(t, f)
			if pattern == "*.sse" {
				data = bytes.Join(SSEData(data), []byte("\n"))
			}
			out = append(out, data)
		}
	}
	return out
}
