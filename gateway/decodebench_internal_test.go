package gateway

import (
	"io"
	"net/http/httptest"
	"testing"

	"github.com/convo-go/convo/internal/longstream"
)

// benchTextStream is the gateway bench's "text" stream (package
// longstream): the recorded OpenAI Chat chunks, each a data: event, then
// data: [DONE]; one event a slice, as the upstream flushes them.
func benchTextStream(tb testing.TB) [][]byte {
	tb.Helper()
	chat, _, err := longstream.Load("..")
	if err != nil {
		tb.Fatal(err)
	}
	return chat
}

// eventReader returns one event a Read, as a flushed upstream's body does.
type eventReader struct{ evs [][]byte }

func (r *eventReader) Read(p []byte) (int, error) {
	if len(r.evs) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.evs[0])
	if r.evs[0] = r.evs[0][n:]; len(r.evs[0]) == 0 {
		r.evs = r.evs[1:]
	}
	return n, nil
}

// tapOf returns the chunks copyReply keeps of evs.
func tapOf(tb testing.TB, evs [][]byte) [][]byte {
	tb.Helper()
	g := &Gateway{opts: Options{MaxReplyBytes: DefaultMaxReplyBytes}}
	tap, _, _, err := g.copyReply(httptest.NewRecorder(), &eventReader{append([][]byte(nil), evs...)}, true, true, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return tap
}

// BenchmarkDecodeTapText measures the writer's decode of the bench's text
// stream as the tap keeps it: the CPU a recorded exchange spends on its
// reply beside what a reverse proxy spends (issue 35).
func BenchmarkDecodeTapText(b *testing.B) {
	tap := tapOf(b, benchTextStream(b))
	p := protocols["openai-chat"]
	body := make([][]byte, len(tap))
	b.ReportAllocs()
	for b.Loop() {
		copy(body, tap) // the reader lets go of the chunks it read
		m, err := decodeReply(p, body, true)
		if err != nil || len(m.Parts) == 0 {
			b.Fatalf("decoded %v, %v", m.Parts, err)
		}
	}
}
