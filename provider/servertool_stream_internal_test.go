package provider

import (
	"io"
	"reflect"
	"testing"

	"github.com/convo-go/convo"
)

// deltaRecorder is a StreamEncoder that keeps the deltas it is given.
type deltaRecorder struct{ got []Delta }

func (r *deltaRecorder) Write(d Delta) error {
	r.got = append(r.got, d)
	return nil
}

// recordingEncoder is a ReplyEncoder whose stream encoder is rec.
type recordingEncoder struct{ rec *deltaRecorder }

func (e recordingEncoder) NewStreamEncoder(io.Writer, StreamOptions) StreamEncoder { return e.rec }
func (e recordingEncoder) EncodeReply(convo.Message, StreamOptions) []byte         { return nil }

// TestServerToolsStreamSkips checks that serverToolsStream leaves out
// every delta of a part it refuses, of any kind and candidate, before and
// after other parts' deltas, and passes every other delta on as it is:
// those of a stream that leaves nothing out (which skips the lookup) and
// those of the parts around a left-out one, the same index in another
// candidate included.
func TestServerToolsStreamSkips(t *testing.T) {
	text := convo.Text("")
	other := convo.ServerToolCall(convo.ServerWebSearch, "gemini", "c1", "search", []byte(`{}`))
	own := convo.ServerToolCall(convo.ServerWebSearch, "anthropic", "c2", "search", []byte(`{}`))
	pieces := func(c, i int) []Delta {
		return []Delta{
			{Kind: DeltaText, Candidate: c, Index: i, Text: "a"},
			{Kind: DeltaArgs, Candidate: c, Index: i, Text: "{"},
			{Kind: DeltaSignature, Candidate: c, Index: i, Text: "s"},
			{Kind: DeltaEncrypted, Candidate: c, Index: i, Text: "e"},
			{Kind: DeltaPartEnd, Candidate: c, Index: i, Part: &text},
		}
	}
	var in, want []Delta
	add := func(keep bool, ds ...Delta) {
		in = append(in, ds...)
		if keep {
			want = append(want, ds...)
		}
	}
	add(true, Delta{Kind: DeltaStart})
	add(true, Delta{Kind: DeltaPartStart, Index: 0, Part: &text})
	add(true, pieces(0, 0)...) // nothing left out yet
	add(false, Delta{Kind: DeltaPartStart, Index: 1, Part: &other})
	add(true, Delta{Kind: DeltaPartStart, Index: 2, Part: &own})
	add(true, Delta{Kind: DeltaPartStart, Candidate: 1, Index: 1, Part: &text})
	add(false, pieces(0, 1)...)
	add(true, pieces(0, 2)...)
	add(true, pieces(1, 1)...)
	add(true, Delta{Kind: DeltaFinish, Finish: convo.FinishStop})

	rec := &deltaRecorder{}
	enc := serverTools{enc: recordingEncoder{rec}, own: "anthropic"}.NewStreamEncoder(io.Discard, StreamOptions{})
	for _, d := range in {
		if err := enc.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(rec.got, want) {
		t.Errorf("passed on:\n%+v\nwant:\n%+v", rec.got, want)
	}
}
