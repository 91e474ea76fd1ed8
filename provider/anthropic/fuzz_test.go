package anthropic

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// FuzzDecode feeds arbitrary bodies to Decode. It must never panic; what it
// accepts must survive the canonical format, and encoding is a fixpoint:
// encode(decode(encode(h))) == encode(h).
func FuzzDecode(f *testing.F) {
	opts := provider.Options{Repair: true, Media: provider.MediaPlaceholder}
	codectest.FuzzFixpoint(f, Messages(), opts, "testdata/roundtrip/*.json",
		`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"document","source":{"type":"text","data":"x"}}]}]}]}`,
		`{"system":"","messages":[{"role":"system","content":[]},{"role":"assistant","content":""}]}`,
	)
}

// FuzzAccumulate feeds arbitrary events (one per line) to the stream
// accumulator. It must never panic; whatever it returns must be a message
// the canonical format can hold, partial or not.
func FuzzAccumulate(f *testing.F) {
	for _, name := range codectest.Files(f, "testdata/reply/*.sse") {
		f.Add(bytes.Join(codectest.SSEData(codectest.ReadFile(f, name)), []byte("\n")))
	}
	for _, seed := range codectest.RecordedEvents(f, "testdata/recorded") {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		acc := Messages().NewAccumulator(provider.Options{})
		for _, line := range bytes.Split(data, []byte("\n")) {
			if err := acc.Add(provider.Event{Data: line}); err != nil {
				break
			}
			if _, err := convo.AppendMessage(nil, acc.Snapshot()); err != nil {
				t.Fatalf("snapshot does not marshal: %v", err)
			}
		}
		m, _, _ := acc.Message()
		if _, err := convo.AppendMessage(nil, m); err != nil {
			t.Fatalf("message does not marshal: %v", err)
		}
		foldShared(t, bytes.Split(data, []byte("\n")))
	})
}

// FuzzTextDelta checks readTextDelta against read: an event it takes is
// one read reads without error into the same event.
func FuzzTextDelta(f *testing.F) {
	for _, s := range []string{
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
		`{"type":"content_block_delta","index":12,"delta":{"type":"thinking_delta","thinking":"a \"b\" \u00e9\n"}}` + "\r\n",
		`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Pa"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCkYIBxgCKkBq"}}`,
		`{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","text":"y"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}} }`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud800"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + "\xff" + `"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":null}}`,
		// Padded as Anthropic's API pads its events.
		`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}         }`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""} }` + "\r\n",
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"} } }`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		readAsRead(t, "readTextDelta", (*accumulator).readTextDelta, provider.Options{}, data)
	})
}

// readAsRead checks a fast path of the accumulator's reading against
// read: an event fast takes is one read reads without error into the same
// event (its block included: DeepEqual follows the pointer).
func readAsRead(t *testing.T, name string, fast func(*accumulator, []byte, *event) bool, opts provider.Options, data []byte) {
	t.Helper()
	var got event
	if !fast(Messages().NewAccumulator(opts).(*accumulator), data, &got) {
		return
	}
	slow := Messages().NewAccumulator(opts).(*accumulator)
	var want event
	slow.r.Reset(data, slow.lim.MaxDepth)
	if err := slow.read(&want); err != nil {
		t.Fatalf("%s took %q, which read rejects: %v", name, data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: %s read\n%+v\nread read\n%+v", data, name, got, want)
	}
}

// TestTextDeltaTaken checks that readTextDelta takes the recorded
// streams' deltas of text, thinking, signatures and tool input (the fast
// path is the one taken), padded as Anthropic pads them or not, reading
// them as read does, and leaves the rest to read.
func TestTextDeltaTaken(t *testing.T) {
	taken, left := 0, 0
	for _, ev := range fixtureEvents(t) {
		data := ev.data
		_, ok := takenAsRead(t, "readTextDelta", (*accumulator).readTextDelta, data)
		isDelta := bytes.Contains(data, []byte(`"content_block_delta"`)) && jsonx.Valid(data) &&
			!bytes.Contains(data, []byte(`"citations_delta"`)) && !bytes.Contains(data, []byte(`"compaction_delta"`))
		if ok != isDelta {
			t.Errorf("%s: readTextDelta %v for %s", ev.name, ok, data)
		}
		if ok {
			taken++
		} else {
			left++
		}
	}
	if taken == 0 || left == 0 {
		t.Errorf("%d events taken, %d left", taken, left)
	}
}

// FuzzFixedEvent checks readFixed against read: an event it takes is one
// read reads without error into the same event, its block as startBlock
// makes it.
func FuzzFixedEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"ping"}`,
		`{"type":"message_stop"}` + "\r\n",
		`{"type":"content_block_stop","index":0}`,
		`{"type":"content_block_stop","index":123456789}`,
		`{"type":"content_block_stop","index":1234567890}`,
		`{"type":"content_block_stop","index":01}`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}} `,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}}`,
		`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{},"caller":{"type":"direct"}}     }`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"","name":"","input":{},"caller":{"type":"code_execution"}}}`,
		`{"type":"ping","type":"ping"}`,
		`{"type": "ping"}`,
		`{"type":"message_stop"             }`,
		`{"type":"content_block_stop","index":2   }`,
		`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}             }`,
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Add([]byte(`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, depth uint8) {
		opts := provider.Options{Limits: convo.Limits{MaxDepth: int(depth % 4)}}
		readAsRead(t, "readFixed", (*accumulator).readFixed, opts, data)
	})
}

// TestFixedTaken checks readFixed against read on every event of the
// recorded streams, and that it takes their pings and stops (padded as
// Anthropic pads them or not), empty text and thinking blocks' starts and
// tool calls' starts.
func TestFixedTaken(t *testing.T) {
	taken := map[string]int{}
	for _, ev := range fixtureEvents(t) {
		got, ok := takenAsRead(t, "readFixed", (*accumulator).readFixed, ev.data)
		switch {
		case ok:
			taken[got.typ]++
			if got.block != nil {
				taken[got.block.typ]++
			}
		case bytes.Contains(ev.data, []byte(`"content_block_stop"`)) || bytes.Contains(ev.data, []byte(`"ping"}`)) ||
			bytes.Contains(ev.data, []byte(`{"type":"message_stop"`)):
			t.Errorf("%s: readFixed left %s", ev.name, ev.data)
		case bytes.Contains(ev.data, []byte(`"content_block":{"type":"tool_use"`)):
			t.Errorf("%s: readFixed left %s", ev.name, ev.data)
		}
	}
	for _, typ := range []string{"ping", "message_stop", "content_block_stop", "content_block_start", "text", "thinking", "tool_use"} {
		if taken[typ] == 0 {
			t.Errorf("no %s taken: %v", typ, taken)
		}
	}
}

// FuzzHeadEvent checks readHead against read: an event it takes is one
// read reads without error into the same event.
func FuzzHeadEvent(f *testing.F) {
	for _, s := range []string{
		`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2,"service_tier":"standard"}}}`,
		`{"type":"message_start","message":{"model":"m","id":"msg_1","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"stop_details":null,"usage":{"input_tokens":3,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":1,"inference_geo":"global"}}}  `,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5,"server_tool_use":{"web_search_requests":1}},"context_management":{"applied_edits":[]}}`,
		`{"type":"message_delta","delta":{"stop_reason":"refusal","stop_details":{"type":"refusal","category":"cyber"}},"usage":null}`,
		`{"type":"message_delta","delta":{"type":"x","stop_reason":true,"n":-12},"usage":{"a":false,"b":"c"}}`,
		`{"type":"message_start","message":{"id":"a","id":"b"}}`,
		`{"type":"message_start","message":{"content":[{"type":"text","text":"hi"}]}}`,
		`{"type":"message_start","message":{"role":"user"}}`,
		`{"type":"message_start","message":{"type":"error","error":{"type":"x","message":"y"}}}`,
		`{"type":"message_start","message":{"usage":{"input_tokens":01}}}`,
		`{"type":"message_start","message":{"usage":{"a":{"b":{"c":{}}}}}}`,
		`{"type":"message_start","message":null}`,
		`{"type":"message_start","message":{"content":null,"usage":null,"model":null}}`,
		`{"type":"message_delta","delta":{"text":"x"}}`,
		`{"type":"message_delta","index":0,"delta":{}}`,
		`{"type":"message_delta","delta":{},"usage":{}}}`,
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Add([]byte(`{"type":"message_start","message":{"usage":{"a":{"b":1}}}}`), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, depth uint8) {
		opts := provider.Options{Limits: convo.Limits{MaxDepth: int(depth % 6)}}
		readAsRead(t, "readHead", (*accumulator).readHead, opts, data)
	})
}

// TestHeadTaken checks readHead against read on every event of the
// recorded streams, and that it takes every message_start and
// message_delta of the streams written for these tests, as Anthropic
// writes them.
func TestHeadTaken(t *testing.T) {
	taken := map[string]int{}
	for _, ev := range fixtureEvents(t) {
		got, ok := takenAsRead(t, "readHead", (*accumulator).readHead, ev.data)
		if ok {
			taken[got.typ]++
		} else if bytes.Contains(ev.data, []byte(`"message_start"`)) || bytes.Contains(ev.data, []byte(`"message_delta"`)) {
			t.Logf("left: %s", ev.data)
		}
		if !ok && strings.HasPrefix(ev.name, "testdata/reply/") &&
			(bytes.Contains(ev.data, []byte(`"message_start"`)) || bytes.Contains(ev.data, []byte(`"message_delta"`))) {
			t.Errorf("%s: readHead left %s", ev.name, ev.data)
		}
	}
	t.Logf("taken: %v", taken)
	if taken["message_start"] == 0 || taken["message_delta"] == 0 {
		t.Errorf("taken: %v", taken)
	}
}

// takenAsRead reports whether fast takes data and, when it does, checks
// that read reads data without error into the same event.
func takenAsRead(t *testing.T, name string, fast func(*accumulator, []byte, *event) bool, data []byte) (event, bool) {
	t.Helper()
	var got event
	if !fast(Messages().NewAccumulator(provider.Options{}).(*accumulator), data, &got) {
		return got, false
	}
	readAsRead(t, name, fast, provider.Options{}, data)
	return got, true
}

// fixtureEvent is the data of one event of a recorded stream.
type fixtureEvent struct {
	name string
	data []byte
}

// fixtureEvents returns every event of the streams in testdata: those
// written for these tests and those recorded from Anthropic's API.
func fixtureEvents(t *testing.T) []fixtureEvent {
	var out []fixtureEvent
	for _, name := range codectest.Files(t, "testdata/reply/*.sse") {
		for _, data := range codectest.SSEData(codectest.ReadFile(t, name)) {
			out = append(out, fixtureEvent{name, data})
		}
	}
	for _, data := range codectest.RecordedEvents(t, "testdata/recorded") {
		for _, line := range bytes.Split(data, []byte("\n")) {
			out = append(out, fixtureEvent{"testdata/recorded", line})
		}
	}
	return out
}

// TestRawAsReadRaw checks that the accumulator's raw reads member values
// as jsonx.Reader.ReadRaw does, byte for byte (a compact value exactly as
// written, escapes included), and that values kept in a shared chunk stay
// as they were read.
func TestRawAsReadRaw(t *testing.T) {
	vals := []string{`472`, `"standard"`, `null`, `true`, `{"\u0041":"x\u00e9","b":[1, 2]}`,
		`{"\u0041":"x\u00e9"}`, `[ 1 ,2 ]`, `"` + strings.Repeat("long ", 40) + `"`, `-1.5e3`, `{}`}
	var got [][]byte
	var d replyReader
	for range 20 {
		for _, v := range vals {
			r := jsonx.NewReader([]byte(v), 0)
			d.r = r
			b, err := d.raw()
			if err != nil {
				t.Fatalf("%s: %v", v, err)
			}
			want, err := jsonx.NewReader([]byte(v), 0).ReadRaw()
			if err != nil || string(b) != string(want) {
				t.Fatalf("raw read %s as %s, ReadRaw as %s (%v)", v, b, want, err)
			}
			got = append(got, b)
		}
	}
	for i, b := range got {
		want, _ := jsonx.NewReader([]byte(vals[i%len(vals)]), 0).ReadRaw()
		if string(b) != string(want) {
			t.Fatalf("value %d became %s, want %s", i, b, want)
		}
	}
}

// foldShared folds events twice, once each event's data in memory of its
// own and once in a buffer overwritten as soon as the event is folded, as
// an SSE reader that shares its buffer (stream.SSE.Share) overwrites it
// with the next event, and fails on any difference: each event's piece
// and the snapshot after it, the message, its warnings and error. The
// accumulator must keep nothing of an event's data but copies.
func foldShared(t *testing.T, events [][]byte) {
	t.Helper()
	own := Messages().NewAccumulator(provider.Options{}).(*accumulator)
	shared := Messages().NewAccumulator(provider.Options{}).(*accumulator)
	var buf []byte
	for i, data := range events {
		p1, err1 := own.AddPiece(provider.Event{Data: bytes.Clone(data)})
		buf = append(buf[:0], data...)
		p2, err2 := shared.AddPiece(provider.Event{Data: buf})
		for j := range buf {
			buf[j] = 'x'
		}
		if !reflect.DeepEqual(p1, p2) || fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Fatalf("event %d (%q): own data %+v, %v; shared %+v, %v", i, data, p1, err1, p2, err2)
		}
		if s1, s2 := own.Snapshot(), shared.Snapshot(); !reflect.DeepEqual(s1, s2) {
			t.Fatalf("after event %d (%q): own data %+v; shared %+v", i, data, s1, s2)
		}
		if err1 != nil {
			break
		}
	}
	m1, w1, err1 := own.Message()
	m2, w2, err2 := shared.Message()
	if !reflect.DeepEqual(m1, m2) || !reflect.DeepEqual(w1, w2) || fmt.Sprint(err1) != fmt.Sprint(err2) {
		t.Fatalf("own data: %+v %v %v\nshared: %+v %v %v", m1, w1, err1, m2, w2, err2)
	}
}

// TestSharedData checks, on every recorded stream, that the accumulator
// folds each event's data in a buffer the next event overwrites as it
// folds it in memory of its own (see foldShared): ReadStream and the
// gateway give it events so.
func TestSharedData(t *testing.T) {
	n := 0
	for _, name := range codectest.Files(t, "testdata/reply/*.sse") {
		foldShared(t, codectest.SSEData(codectest.ReadFile(t, name)))
		n++
	}
	for _, data := range codectest.RecordedEvents(t, "testdata/recorded") {
		foldShared(t, bytes.Split(data, []byte("\n")))
		n++
	}
	t.Logf("%d streams", n)
}
