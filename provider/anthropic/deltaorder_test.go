package anthropic

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/jsonx"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/wire"
)

// FuzzDeltaAnyOrder checks readDeltaAnyOrder against read on arbitrary
// events, one a line: an event it takes is one read reads without error
// into the same event, one it leaves it leaves untouched, and a stream
// folded with it (each event it leaves read by read) ends as the same
// stream folded by read alone: the same snapshot after every event, the
// same error, the same message.
func FuzzDeltaAnyOrder(f *testing.F) {
	for _, s := range []string{
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
		`{"delta":{"text":"Hello","type":"text_delta"},"index":0,"type":"content_block_delta"}`,
		`{"index":1,"delta":{"thinking":"a \"b\" \u00e9\n","type":"thinking_delta"},"type":"content_block_delta"}` + "\r\n",
		`{"delta":{"partial_json":"{\"city\": \"Pa","type":"input_json_delta"},"index":2,"type":"content_block_delta"}`,
		`{"delta":{"signature":"EqQBCkYIBxgCKkBq","type":"signature_delta"},"index":1,"type":"content_block_delta"}`,
		` { "delta" : { "text" : "x" , "type" : "text_delta" } , "index" : 0 , "type" : "content_block_delta" } `,
		`{"delta":{"text":"x","type":"text_delta"},"index":0,"type":"content_block_delta"}         `,
		`{"delta":{"text":"x","type":"text_delta"},"index":0,"type":"content_block_delta","type":"content_block_delta"}`,
		`{"delta":{"text":"x","type":"text_delta","text":"y"},"index":0,"type":"content_block_delta"}`,
		`{"delta":{"text":"x","type":"text_delta","type":"text_delta"},"index":0,"type":"content_block_delta"}`,
		`{"delta":{"text":"x","thinking":"y","type":"text_delta"},"index":0,"type":"content_block_delta"}`,
		`{"delta":{"text":"x","type":"text_delta"},"index":0,"index":0,"type":"content_block_delta"}`,
		`{"delta":{"text":"x","type":"text_delta"},"delta":{"text":"y","type":"text_delta"},"index":0,"type":"content_block_delta"}`,
		`{"delta":{"t\u0065xt":"x","type":"text_delta"},"index":0,"type":"content_block_delta"}`,
		`{"delta":{"text":"x","type":"text_delta"},"index":0,"typ\u0065":"content_block_delta"}`,
		`{"delta":{"text":"x","type":"text_delta"},"index":01,"type":"content_block_delta"}`,
		`{"delta":{"text":"x","type":"text_delta"},"index":-1,"type":"content_block_delta"}`,
		`{"delta":{"text":"x","type":"text_delta"},"index":1e0,"type":"content_block_delta"}`,
		`{"delta":{"text":"x","type":"text_delta"},"index":1234567890,"type":"content_block_delta"}`,
		`{"delta":{"text":"x","type":"text_delta"},"index":7,"type":"content_block_delta"}`,
		`{"delta":{"text":null,"type":"text_delta"},"index":0,"type":"content_block_delta"}`,
		`{"delta":{"text":"\ud800","type":"text_delta"},"index":0,"type":"content_block_delta"}`,
		`{"delta":{"text":"` + "\xff" + `","type":"text_delta"},"index":0,"type":"content_block_delta"}`,
		`{"delta":{"text":"x","type":"text_delta","extra":1},"index":0,"type":"content_block_delta"}`,
		`{"delta":{"citation":{"type":"char_location"},"type":"citations_delta"},"index":0,"type":"content_block_delta"}`,
		`{"delta":{"text":"x","type":"text_delta"},"index":0,"type":"content_block_delta"}}`,
		`{"delta":{"text":"x","type":"text_delta"},"index":0,"type":"content_block_delta",}`,
		`{"delta":{"text":"x","type":"text_delta"},"index":0}`,
		`{"delta":{"stop_reason":"end_turn","stop_sequence":null},"type":"message_delta","usage":{"output_tokens":9}}`,
		`{"content_block":{"text":"","type":"text"},"index":3,"type":"content_block_start"}` + "\n" +
			`{"delta":{"text":"x\n","type":"text_delta"},"index":3,"type":"content_block_delta"}` + "\n" +
			`{"delta":{"text":"y","type":"text_delta"},"index":3,"type":"content_block_delta"}` + "\n" +
			`{"index":3,"type":"content_block_stop"}` + "\n" + `{"type":"message_stop"}`,
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Add([]byte(`{"delta":{"text":"x","type":"text_delta"},"index":0,"type":"content_block_delta"}`), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, depth uint8) {
		opts := provider.Options{Limits: convo.Limits{MaxDepth: int(depth % 4)}}
		lines := bytes.Split(data, []byte("\n"))
		for _, line := range lines {
			readAsRead(t, "readDeltaAnyOrder", (*accumulator).readDeltaAnyOrder, opts, line)
		}
		foldAnyOrder(t, opts, lines)
	})
}

// streamOpen begins the stream foldAnyOrder folds events into: a text
// block (0), a thinking block (1) and a tool call (2), all open.
var streamOpen = []string{
	`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"m","usage":{"input_tokens":1,"output_tokens":1}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	`{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
	`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}`,
}

// foldAnyOrder folds events after streamOpen twice: each event that
// readDeltaAnyOrder takes read by it and the others by read, and every
// event by read; it fails on any difference (an event readDeltaAnyOrder
// left but changed, an error, a snapshot, the message).
func foldAnyOrder(t *testing.T, opts provider.Options, events [][]byte) {
	t.Helper()
	fast := Messages().NewAccumulator(opts).(*accumulator)
	slow := Messages().NewAccumulator(opts).(*accumulator)
	for _, s := range streamOpen {
		err1, err2 := fast.Add(provider.Event{Data: []byte(s)}), slow.Add(provider.Event{Data: []byte(s)})
		if fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Fatalf("%s: %v, then %v", s, err1, err2)
		}
	}
	byRead := func(a *accumulator, data []byte, e *event) error {
		a.r.Reset(data, a.lim.MaxDepth)
		if err := a.read(e); err != nil {
			return err
		}
		return a.apply(e)
	}
	for i, data := range events {
		var ef, es event
		var errF error
		if fast.readDeltaAnyOrder(data, &ef) {
			errF = fast.apply(&ef)
		} else {
			if !reflect.DeepEqual(ef, event{}) {
				t.Fatalf("event %d (%q) left to read, but read into: %+v", i, data, ef)
			}
			errF = byRead(fast, data, &ef)
		}
		errS := byRead(slow, data, &es)
		if fmt.Sprint(errF) != fmt.Sprint(errS) {
			t.Fatalf("event %d (%q): %v; by read: %v", i, data, errF, errS)
		}
		if s1, s2 := fast.Snapshot(), slow.Snapshot(); !reflect.DeepEqual(s1, s2) {
			t.Fatalf("after event %d (%q): %+v; by read: %+v", i, data, s1, s2)
		}
		if errF != nil {
			break
		}
	}
	m1, w1, err1 := fast.Message()
	m2, w2, err2 := slow.Message()
	if !reflect.DeepEqual(m1, m2) || !reflect.DeepEqual(w1, w2) || fmt.Sprint(err1) != fmt.Sprint(err2) {
		t.Fatalf("%+v %v %v\nby read: %+v %v %v", m1, w1, err1, m2, w2, err2)
	}
}

// TestDeltaAnyOrderTaken checks that readDeltaAnyOrder takes every delta
// of text, thinking, a signature and tool input of the recorded streams
// with its members in any order (Anthropic's, sorted as encoding/json
// writes a map, and every other), and that readFast, which add reads an
// event with first, takes them all too: a change that made them fall
// back to the general reader fails here. It leaves every other event.
func TestDeltaAnyOrderTaken(t *testing.T) {
	orders := map[string]int{}
	for _, ev := range fixtureEvents(t) {
		isDelta := bytes.Contains(ev.data, []byte(`"content_block_delta"`)) && jsonx.Valid(ev.data) &&
			!bytes.Contains(ev.data, []byte(`"citations_delta"`)) && !bytes.Contains(ev.data, []byte(`"compaction_delta"`))
		if !isDelta {
			if _, ok := takenAsRead(t, "readDeltaAnyOrder", (*accumulator).readDeltaAnyOrder, ev.data); ok {
				t.Errorf("%s: readDeltaAnyOrder took %s", ev.name, ev.data)
			}
			continue
		}
		for _, data := range permutations(t, ev.data) {
			if _, ok := takenAsRead(t, "readDeltaAnyOrder", (*accumulator).readDeltaAnyOrder, data); !ok {
				t.Errorf("%s: readDeltaAnyOrder left %s", ev.name, data)
			}
			if _, ok := takenAsRead(t, "readFast", (*accumulator).readFast, data); !ok {
				t.Errorf("%s: readFast left %s", ev.name, data)
			}
			orders[string(data[:9])]++
		}
	}
	// Each of the three members first; each order of the delta's two.
	if len(orders) != 3 || orders[`{"type":"`] == 0 || orders[`{"delta":`] == 0 || orders[`{"index":`] == 0 {
		t.Errorf("orders taken: %v", orders)
	}
	for _, data := range codectestSSE(longTextStream(t)) {
		if bytes.Contains(data, []byte(`"content_block_delta"`)) && !bytes.HasPrefix(data, []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`)) {
			t.Fatalf("the long stream's deltas are not in the wire's member order: %s", data)
		}
		if _, ok := takenAsRead(t, "readFast", (*accumulator).readFast, data); !ok && bytes.Contains(data, []byte(`"content_block_delta"`)) {
			t.Errorf("readFast left the long stream's %s", data)
		}
	}
}

// codectestSSE returns the data of each event of an SSE stream.
func codectestSSE(sse []byte) [][]byte {
	var out [][]byte
	for _, line := range bytes.Split(sse, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			out = append(out, d)
		}
	}
	return out
}

// permutations returns a content_block_delta event written with its
// members in every order (six), each with its delta's in both orders,
// as compact JSON.
func permutations(t *testing.T, data []byte) [][]byte {
	t.Helper()
	ms := objectMembers(t, data)
	i := -1
	for j := range ms {
		if ms[j].Key == "delta" {
			i = j
		}
	}
	if len(ms) != 3 || i < 0 {
		t.Fatalf("not an event of three members with a delta: %s", data)
	}
	delta := objectMembers(t, ms[i].Val)
	if len(delta) != 2 {
		t.Fatalf("not a delta of two members: %s", data)
	}
	var out [][]byte
	for _, d := range []wire.Members{delta, {delta[1], delta[0]}} {
		ms[i].Val = d.Object()
		for _, p := range [][3]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}} {
			out = append(out, wire.Members{ms[p[0]], ms[p[1]], ms[p[2]]}.Object())
		}
	}
	return out
}

// objectMembers returns the members of the JSON object data, in order,
// each value compacted.
func objectMembers(t *testing.T, data []byte) wire.Members {
	t.Helper()
	var ms wire.Members
	r := jsonx.NewReader(data, 0)
	err := r.ReadObject(func(key []byte) error {
		v, err := r.ReadRaw()
		ms = append(ms, wire.Member{Key: string(key), Val: v})
		return err
	})
	if err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	return ms
}
