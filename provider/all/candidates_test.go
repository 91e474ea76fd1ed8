package all_test

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// TestEncodeReplies: a format with candidates gets every reply, one with a
// single reply the first and a warning.
func TestEncodeReplies(t *testing.T) {
	ms := []convo.Message{
		{Role: convo.RoleAssistant, Parts: []convo.Part{{Type: convo.TypeText, Text: "one"}}, Finish: convo.FinishStop},
		{Role: convo.RoleAssistant, Parts: []convo.Part{{Type: convo.TypeText, Text: "two"}}, Finish: convo.FinishLength},
	}
	for _, f := range all.Formats() {
		name := f.Name()
		body, warns, err := all.EncodeReplies(name, ms, provider.StreamOptions{Model: "m"})
		if err != nil {
			continue // no reply encoder for this format
		}
		rc, err := all.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := provider.DecodeReplies(rc, body, provider.Options{})
		if err != nil {
			t.Errorf("%s: %v\n%s", name, err, body)
			continue
		}
		want := 1
		if all.StreamsCandidates(name) {
			want = 2
		}
		if len(got) != want || (want == 1) != (len(warns) == 1) {
			t.Errorf("%s: %d replies, %v", name, len(got), warns)
			continue
		}
		for k := range got {
			if got[k].Text() != ms[k].Text() || got[k].Finish != ms[k].Finish {
				t.Errorf("%s: reply %d is %q %q", name, k, got[k].Text(), got[k].Finish)
			}
		}
	}
	if !all.StreamsCandidates("gemini") || all.StreamsCandidates("anthropic") {
		t.Error("StreamsCandidates")
	}
	if _, _, err := all.EncodeReplies("gemini", nil, provider.StreamOptions{}); err == nil {
		t.Error("no replies encoded")
	}
	if _, _, err := all.EncodeReplies("nope", ms, provider.StreamOptions{}); err == nil {
		t.Error("unknown format encoded")
	}
}

// TestStreamCandidates: every stream encoder takes the deltas of two
// candidates; those of formats with candidates write both, the others the
// first alone.
func TestStreamCandidates(t *testing.T) {
	first := convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{{Type: convo.TypeText, Text: "one"}}, Finish: convo.FinishStop}
	second := convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{{Type: convo.TypeText, Text: "two"}, convo.ToolCall("call_2", "f", json.RawMessage(`{"a":1}`))}, Finish: convo.FinishToolUse}
	ds := provider.MessageDeltas(first)
	last := ds[len(ds)-1]
	ds = ds[:len(ds)-1]
	for _, d := range provider.MessageDeltas(second)[1:] { // its DeltaStart is the reply's
		if d.Kind != provider.DeltaUsage {
			d.Candidate = 1
			ds = append(ds, d)
		}
	}
	ds = append(ds, last)
	for _, f := range all.Formats() {
		name := f.Name()
		var out bytes.Buffer
		enc, err := all.NewStreamEncoder(name, &out, provider.StreamOptions{Model: "m"})
		if err != nil {
			continue
		}
		for _, d := range ds {
			if err := enc.Write(d); err != nil {
				t.Fatal(err)
			}
		}
		rc, _ := all.Lookup(name)
		acc := rc.NewAccumulator(provider.Options{})
		m, _, err := rc.ReadStream(bytes.NewReader(out.Bytes()), provider.Options{})
		if err != nil || m.Text() != "one" || m.HasToolCalls() {
			t.Errorf("%s: first reply %q, %v\n%s", name, m.Text(), err, out.Bytes())
		}
		if _, ok := acc.(provider.CandidatesAccumulator); !ok || !all.StreamsCandidates(name) {
			continue
		}
		ms := readAll(t, name, out.Bytes())
		if len(ms) != 2 || ms[1].Text() != "two" || !ms[1].HasToolCalls() || ms[1].Finish != convo.FinishToolUse {
			t.Errorf("%s: candidates %+v", name, ms)
		}
	}
}

// readAll reads every candidate of an SSE stream in format name.
func readAll(t *testing.T, name string, sse []byte) []convo.Message {
	t.Helper()
	rc, _ := all.Lookup(name)
	acc := rc.NewAccumulator(provider.Options{})
	for _, block := range bytes.Split(sse, []byte("\n\n")) {
		data, ok := bytes.CutPrefix(bytes.TrimSpace(block), []byte("data: "))
		if ok {
			if err := acc.Add(provider.Event{Data: data}); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
	}
	ms, _, err := provider.AccumulatedReplies(acc)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ms
}

// TestCandidatesCross: the choices of a recorded OpenAI Chat n = 3 stream
// reach a Gemini client as three candidates, and those of a Gemini stream
// with three candidates an OpenAI Chat client as three choices.
func TestCandidatesCross(t *testing.T) {
	for _, c := range []struct{ file, from, to string }{
		{"../openai/testdata/candidates/n3-recorded.sse", "openai-chat", "gemini"},
		{"../gemini/testdata/candidates/count3.sse", "gemini", "openai-chat"},
	} {
		sse, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		want := readAll(t, c.from, sse)
		rc, _ := all.Lookup(c.from)
		dr := provider.NewDeltaReader(rc.NewAccumulator(provider.Options{}))
		dr.ReadCandidates()
		var out bytes.Buffer
		enc, _ := all.NewStreamEncoder(c.to, &out, provider.StreamOptions{})
		var ds []provider.Delta
		for _, block := range bytes.Split(sse, []byte("\n\n")) {
			data, ok := bytes.CutPrefix(bytes.TrimSpace(block), []byte("data: "))
			if !ok {
				continue
			}
			if ds, err = dr.Add(ds[:0], provider.Event{Data: data}); err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				_ = enc.Write(d)
			}
		}
		ds, _, _, _ = dr.Finish(ds[:0])
		for _, d := range ds {
			_ = enc.Write(d)
		}
		got := readAll(t, c.to, out.Bytes())
		if len(got) != len(want) {
			t.Errorf("%s to %s: %d candidates, want %d", c.from, c.to, len(got), len(want))
			continue
		}
		for k := range got {
			if got[k].Text() != want[k].Text() || got[k].Finish != want[k].Finish || got[k].HasToolCalls() != want[k].HasToolCalls() {
				t.Errorf("%s to %s: candidate %d: %q, want %q", c.from, c.to, k, got[k].Text(), want[k].Text())
			}
		}
	}
}
