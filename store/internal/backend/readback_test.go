package backend

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// compareReadBack encodes msgs with the read-back skipped where
// readsBackAs allows it and with every message read back, and fails t
// unless both give the same: the same refusal, the same rows, messages of
// the same canonical encoding, and the same pairing of their tool calls.
// It reports whether the read-back was skipped for any message.
func compareReadBack(t *testing.T, name string, msgs []convo.Message) bool {
	t.Helper()
	msgs = append([]convo.Message(nil), msgs...)
	skipped := false
	for i := range msgs {
		if msgs[i].ID == "" {
			msgs[i].ID = "msg_fixture" // both encodings alike, not random
		}
		if body, err := convo.AppendMessage(nil, msgs[i]); err == nil && readsBackAs(&msgs[i], len(body)) {
			skipped = true
		}
	}
	now := time.Date(2026, 12, 6, 5, 40, 0, 0, time.UTC)
	hf, rf, errf := encode(msgs, now, true, 0)
	hs, rs, errs := encode(msgs, now, false, 0)
	if (errf == nil) != (errs == nil) || (errf != nil && errf.Error() != errs.Error()) {
		t.Fatalf("%s: skipping the read-back: %v; reading back: %v", name, errf, errs)
	}
	if errs != nil {
		return skipped
	}
	if !reflect.DeepEqual(rf, rs) {
		t.Fatalf("%s: rows differ:\n%+v\n%+v", name, rf, rs)
	}
	// In an arena (too small for some, room for all), the same rows, and
	// no body grows into the next.
	for _, size := range []int{700, 64 << 10} {
		a := NewArena(size)
		_, ra, erra := encodeIn(a, msgs, now, true, 0)
		if erra != nil {
			t.Fatalf("%s: in an arena of %d: %v", name, size, erra)
		}
		for i := range ra {
			_ = append(ra[i].Body, "#####"...)
		}
		if !reflect.DeepEqual(rf, ra) {
			t.Fatalf("%s: rows differ in an arena of %d:\n%+v\n%+v", name, size, rf, ra)
		}
	}
	for i := range hf {
		bf, err1 := convo.AppendMessage(nil, hf[i])
		bs, err2 := convo.AppendMessage(nil, hs[i])
		if err1 != nil || err2 != nil || !bytes.Equal(bf, bs) {
			t.Fatalf("%s: message %d differs: %v %v\n%s\n%s", name, i, err1, err2, bf, bs)
		}
		if !hf[i].Time.Equal(hs[i].Time) || hf[i].Time.Location() != hs[i].Time.Location() {
			t.Fatalf("%s: message %d time %v, read back %v", name, i, hf[i].Time, hs[i].Time)
		}
	}
	of, errf := Check(nil, hf)
	os2, errs := Check(nil, hs)
	if !reflect.DeepEqual(of, os2) || (errf == nil) != (errs == nil) || (errf != nil && errf.Error() != errs.Error()) {
		t.Fatalf("%s: pairing differs: %v %v; %v %v", name, of, errf, os2, errs)
	}
	return skipped
}

// fixtureMessages returns the messages of every canonical fixture
// (testdata/v1) and of every provider fixture that some format's reader
// reads as a reply, a stream or a request.
func fixtureMessages(t *testing.T) map[string][]convo.Message {
	out := map[string][]convo.Message{}
	docs, err := filepath.Glob("../../../testdata/v1/*.json*")
	if err != nil || len(docs) == 0 {
		t.Fatalf("canonical fixtures: %v", err)
	}
	for _, f := range docs {
		if strings.HasSuffix(f, ".golden") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if h, err := convo.Unmarshal(data); err == nil {
			out[f] = h
		}
	}
	err = filepath.WalkDir("../../../provider", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(path, "testdata") || strings.Contains(path, "fuzz") ||
			strings.HasSuffix(path, ".golden") || strings.HasSuffix(path, ".md") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, f := range all.Formats() {
			if m, _, err := f.DecodeReply(data, provider.Options{}); err == nil {
				out[path+" reply "+f.Name()] = []convo.Message{m}
			}
			if m, _, err := f.ReadStream(bytes.NewReader(data), provider.Options{}); err == nil {
				out[path+" stream "+f.Name()] = []convo.Message{m}
			}
			if rc, err := all.LookupRequest(f.Name()); err == nil {
				if req, _, err := rc.DecodeRequest(data, provider.Options{Repair: true}); err == nil {
					out[path+" request "+f.Name()] = req.History
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadsBackAs compares Encode skipping the read-back with Encode
// reading every message back, over every fixture's messages as they are
// and as each change below makes them: those the decoder refuses or
// normalizes, which the read-back must not be skipped for, and those it
// may be.
func TestReadsBackAs(t *testing.T) {
	fixtures := fixtureMessages(t)
	skipped, messages := 0, 0
	for name, h := range fixtures {
		messages += len(h)
		for i := range h {
			if compareReadBack(t, name, h[i:i+1]) {
				skipped++
			}
		}
		compareReadBack(t, name, h)
		for _, c := range readBackChanges {
			changed := make([]convo.Message, len(h))
			for i := range h {
				changed[i] = h[i]
				changed[i].Parts = append([]convo.Part(nil), h[i].Parts...)
				c.change(&changed[i])
				compareReadBack(t, name+" "+c.name, changed[i:i+1])
			}
		}
	}
	t.Logf("%d fixtures, %d messages, %d read back without decoding", len(fixtures), messages, skipped)
	if len(fixtures) < 100 || skipped < messages/2 {
		t.Fatalf("%d fixtures, %d of %d messages not decoded again: fixtures missing, or the fast path not taken", len(fixtures), skipped, messages)
	}
	for _, c := range readBackChanges {
		m := convo.Assistant("a", convo.ToolCall("call_1", "f", json.RawMessage(`{"a":1}`)))
		c.change(&m)
		if got := compareReadBack(t, c.name, []convo.Message{m}); got != c.skips {
			t.Errorf("%s: read-back skipped %v, want %v", c.name, got, c.skips)
		}
	}
}

// nested returns a JSON value nested n levels deep.
func nested(n int) json.RawMessage {
	return json.RawMessage(strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1))
}

// readBackChanges change a message into one the decoder refuses or reads
// as another (skips false), or into one it reads as itself (skips true).
var readBackChanges = []struct {
	name   string
	change func(*convo.Message)
	skips  bool
}{
	{"time in a zone, monotonic", func(m *convo.Message) { m.Time = time.Now().In(time.FixedZone("x", 5400)) }, true},
	{"year 10000", func(m *convo.Message) { m.Time = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, false},
	{"year -1", func(m *convo.Message) { m.Time = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) }, false},
	{"year 9999 in a zone", func(m *convo.Message) { m.Time = time.Date(10000, 1, 1, 0, 30, 0, 0, time.FixedZone("y", 3600)) }, true},
	{"negative usage", func(m *convo.Message) { m.Usage = &convo.Usage{Input: 3, CacheRead: -1} }, false},
	{"usage", func(m *convo.Message) { m.Usage = &convo.Usage{Input: 3, Output: 1 << 40} }, true},
	{"largest cost", func(m *convo.Message) { m.Cost = &convo.Cost{USD: 1<<63 - 1} }, true},
	{"compacted -1", func(m *convo.Message) { m.Compacted = -1 }, false},
	{"compacted 2^31+1", func(m *convo.Message) { m.Compacted = 1<<31 + 1 }, false},
	{"compacted 2^31", func(m *convo.Message) { m.Compacted = 1 << 31 }, true},
	{"meta", func(m *convo.Message) { m.Meta = json.RawMessage(`{"a":1}`) }, false},
	{"extra role", func(m *convo.Message) { m.Extra = convo.Fields{{Key: "role", Value: json.RawMessage(`"user"`)}} }, false},
	{"native array", func(m *convo.Message) { m.Native = convo.Native{"x": json.RawMessage(`[1]`)} }, false},
	{"native spaced", func(m *convo.Message) { m.Native = convo.Native{"x": json.RawMessage(` {"a": 1}`)} }, false},
	{"native 62 deep", func(m *convo.Message) { m.Native = convo.Native{"x": nested(62)} }, true},
	{"native 63 deep", func(m *convo.Message) { m.Native = convo.Native{"x": nested(63)} }, false},
	{"args spaced", func(m *convo.Message) { setArgs(m, json.RawMessage(`{"a": 1}`)) }, false},
	{"args spaced in a string", func(m *convo.Message) { setArgs(m, json.RawMessage(`{"a":"b c \" d"}`)) }, true},
	{"args null", func(m *convo.Message) { setArgs(m, json.RawMessage(`null`)) }, false},
	{"args 61 deep", func(m *convo.Message) { setArgs(m, nested(61)) }, true},
	{"args 62 deep", func(m *convo.Message) { setArgs(m, nested(62)) }, false},
	{"part native 60 deep", func(m *convo.Message) { first(m).Native = convo.Native{"x": nested(60)} }, true},
	{"part native 61 deep", func(m *convo.Message) { first(m).Native = convo.Native{"x": nested(61)} }, false},
	{"part native string", func(m *convo.Message) { first(m).Native = convo.Native{"x": json.RawMessage(`"s"`)} }, false},
	{"bad base64", func(m *convo.Message) {
		m.Parts = append(m.Parts, convo.Image("image/png", nil))
		m.Parts[len(m.Parts)-1].Data = "abc"
	}, false},
	{"image", func(m *convo.Message) { m.Parts = append(m.Parts, convo.Image("image/png", []byte("png"))) }, true},
	{"server on text", func(m *convo.Message) { first(m).Server = "web_search" }, false},
	{"call_id on text", func(m *convo.Message) { first(m).CallID = "c" }, false},
	{"unknown part type", func(m *convo.Message) { first(m).Type = "hologram" }, false},
	{"part extra", func(m *convo.Message) { first(m).Extra = convo.Fields{{Key: "x", Value: json.RawMessage(`1`)}} }, false},
	{"parts nested 4", func(m *convo.Message) { m.Parts = append(m.Parts, nestedResult(4)) }, true},
	{"parts nested 5", func(m *convo.Message) { m.Parts = append(m.Parts, nestedResult(5)) }, false},
	{"empty summary", func(m *convo.Message) {
		m.Parts = append(m.Parts, convo.Part{Type: convo.TypeReasoning, ID: "r", Summary: []string{}})
	}, false},
	{"empty result", func(m *convo.Message) {
		m.Parts = append(m.Parts, convo.Part{Type: convo.TypeToolResult, ID: "r", Parts: []convo.Part{}})
	}, false},
	{"empty parts", func(m *convo.Message) { m.Parts = []convo.Part{} }, false},
	{"empty native", func(m *convo.Message) { m.Native = convo.Native{} }, false},
	{"summary", func(m *convo.Message) {
		m.Parts = append(m.Parts, convo.Part{Type: convo.TypeReasoning, Summary: []string{"s"}, Signature: "sig"})
	}, true},
}

// first returns m's first part, adding a text part if it has none.
func first(m *convo.Message) *convo.Part {
	if len(m.Parts) == 0 {
		m.Parts = []convo.Part{convo.Text("first")}
	}
	return &m.Parts[0]
}

// setArgs sets the arguments of m's tool calls, adding one if it has none.
func setArgs(m *convo.Message, args json.RawMessage) {
	m.Role = convo.RoleAssistant
	m.Parts = append(m.Parts, convo.ToolCall("call_args", "f", nil))
	for i := range m.Parts {
		if m.Parts[i].Type == convo.TypeToolCall {
			m.Parts[i].Args, m.Parts[i].ArgsRaw = args, ""
		}
	}
}

// nestedResult returns a tool result holding tool results n levels deep.
func nestedResult(n int) convo.Part {
	p := convo.Text("innermost")
	for range n {
		p = convo.Part{Type: convo.TypeToolResult, ID: "call_n", Parts: []convo.Part{p}}
	}
	return p
}

// FuzzReadsBackAs: a message decoded from any canonical JSON, with
// arguments, a native member and a time of any shape, encodes alike with
// the read-back skipped where readsBackAs allows it and read back.
func FuzzReadsBackAs(f *testing.F) {
	f.Add([]byte(`{"role":"assistant","parts":[{"type":"text","text":"hi"}]}`), []byte(`{"a":[1,"x y"]}`), []byte(`{"b":{}}`), 2026, int64(0))
	f.Add([]byte(`{"role":"user","time":"2026-12-06T05:40:00.123Z","parts":[{"type":"tool_result","id":"c","parts":[{"type":"text","text":"r"}]}]}`), []byte(` {"a":1}`), []byte(`[]`), 10000, int64(-3600))
	f.Add([]byte(`{"role":"assistant","usage":{"input":1},"cost":{"usd":"0.5"},"parts":[{"type":"reasoning","summary":["s"],"signature":"x"}]}`), []byte(`null`), []byte(`{"a":[[[[]]]]}`), -1, int64(7))
	f.Fuzz(func(t *testing.T, doc, args, native []byte, year int, offset int64) {
		m, err := convo.UnmarshalMessage(doc)
		if err != nil {
			return
		}
		if len(args) > 0 {
			m.Parts = append(m.Parts, convo.Part{Type: convo.TypeToolCall, ID: "call_f", Name: "f", Args: args})
		}
		if len(native) > 0 {
			m.Native = convo.Native{"fuzz": native}
			if len(m.Parts) > 0 {
				m.Parts[0].Native = convo.Native{"fuzz": native}
			}
		}
		if year != 0 {
			m.Time = time.Date(year, 6, 1, 12, 0, 0, 123, time.FixedZone("f", int(offset%100000)))
		}
		compareReadBack(t, string(doc), []convo.Message{m})
	})
}
