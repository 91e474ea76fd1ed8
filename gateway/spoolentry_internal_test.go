package gateway

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/gateway/spool"
	"github.com/convo-go/convo/store"
)

var updateGolden = flag.Bool("update-spool", false, "write testdata/spool/v1.seg (never for a released format: add v2)")

// goldenEntries are the exchanges of testdata/spool/v1.seg.
func goldenEntries() ([]store.Write, [][]forkWrite) {
	at := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	user := convo.User("What is the weather in Paris?", convo.ImageURL("image/png", "https://example.org/sky.png"))
	user.ID, user.Time = "msg_user", at
	reply := convo.Assistant("Let me check.", convo.ToolCall("call_1", "get_weather", json.RawMessage(`{"city":"Paris"}`)))
	reply.Parts = append([]convo.Part{{Type: convo.TypeReasoning, Text: "thinking", Signature: "sig=="}}, reply.Parts...)
	reply.ID, reply.Time = "msg_reply", at
	reply.Origin = &convo.Origin{Provider: "anthropic", Model: "claude-x"}
	reply.Usage = &convo.Usage{Input: 12, Output: 34, Total: 46}
	reply.Finish = convo.FinishToolUse
	fail := convo.ErrorMessage("upstream stream broke")
	fail.ID, fail.Time = "msg_err", at
	other := convo.Assistant("Sunny.")
	other.ID, other.Time = "msg_cand", at
	writes := []store.Write{
		{Tenant: "alice", ID: "conv_1", Create: true, Version: store.AnyVersion, Meta: json.RawMessage(`{"convo_gateway_fingerprint":"fp1"}`), Messages: []convo.Message{user, reply}},
		{Tenant: "", ID: "conv_2", Version: store.AnyVersion, Messages: []convo.Message{fail}},
	}
	forks := [][]forkWrite{
		{{conv: "conv_fork", meta: json.RawMessage(`{"convo_gateway_fingerprint":"fp2"}`), msgs: []convo.Message{other}, tail: 1}},
		nil,
	}
	return writes, forks
}

// TestSpoolEntryGolden: the spooled exchange is a stored format:
// testdata/spool/v1.seg, a spool segment of version 1's entries, reads as
// the writes it was made of, and they encode byte for byte as it. Keep
// the file forever; a new version adds a file.
func TestSpoolEntryGolden(t *testing.T) {
	writes, forks := goldenEntries()
	img := []byte("CVSPOOL1")
	for i := range writes {
		b, err := encodeEntry(writes[i], forks[i])
		if err != nil {
			t.Fatal(err)
		}
		img = spool.AppendFrame(img, time.Unix(1764925200, int64(i)), b)
	}
	path := filepath.Join("testdata", "spool", "v1.seg")
	if *updateGolden {
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, img, 0o644)
	}
	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(img, golden) {
		t.Errorf("the entries encode otherwise than %s holds:\n%s\n%s", path, img, golden)
	}
	frames, err := spool.Frames(golden)
	if err != nil || len(frames) != len(writes) {
		t.Fatalf("%s: %d frames, %v", path, len(frames), err)
	}
	for i, f := range frames {
		w, fw, err := decodeEntry(f.Data)
		if err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		want, _ := json.Marshal(writes[i])
		got, _ := json.Marshal(w)
		if !bytes.Equal(got, want) {
			t.Errorf("entry %d reads as\n%s\nwant\n%s", i, got, want)
		}
		if len(fw) != len(forks[i]) {
			t.Fatalf("entry %d: %d forks, want %d", i, len(fw), len(forks[i]))
		}
		for k := range fw {
			g, _ := json.Marshal(fw[k].msgs)
			wm, _ := json.Marshal(forks[i][k].msgs)
			if fw[k].conv != forks[i][k].conv || fw[k].tail != forks[i][k].tail || !bytes.Equal(fw[k].meta, forks[i][k].meta) || !bytes.Equal(g, wm) {
				t.Errorf("entry %d fork %d reads as %+v", i, k, fw[k])
			}
		}
	}
}

// TestSpoolEntryBad: an entry that is not one is an error naming it, not
// a panic or a write.
func TestSpoolEntryBad(t *testing.T) {
	for _, in := range []string{``, `{`, `[]`, `{"v":2,"tenant":"a","conversation":"c","messages":[]}`, `{"v":1,"messages":[{"role":"nobody"}]}`} {
		if _, _, err := decodeEntry([]byte(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

// TestSpoolEntryCharges: a spooled exchange keeps the charges of its
// write (an added member of version 1), so a replayed recording charges
// its budgets as the store write would have.
func TestSpoolEntryCharges(t *testing.T) {
	writes, _ := goldenEntries()
	w := writes[0]
	w.Charges = []store.Charge{{Key: "tenant", Day: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC), USD: 2_751_000}, {Key: "token:0123456789abcdef", Day: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC), USD: 1}}
	b, err := encodeEntry(w, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"charges":[{"key":"tenant","day":"2026-12-05T00:00:00Z","usd":"0.002751"}`)) {
		t.Errorf("entry %s", b)
	}
	got, _, err := decodeEntry(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Charges) != 2 || got.Charges[0] != w.Charges[0] || got.Charges[1] != w.Charges[1] {
		t.Errorf("charges %+v, want %+v", got.Charges, w.Charges)
	}
}

// TestSpoolEntryMarshal: encodeEntry, which writes each message once,
// writes the bytes json.Marshal writes for the entry, whatever its
// messages hold (what Marshal escapes or compacts: <, >, &, U+2028,
// U+2029, native JSON with spaces), with forks, charges, and none.
func TestSpoolEntryMarshal(t *testing.T) {
	writes, forks := goldenEntries()
	odd := convo.Assistant("a <b> & c\u2028d\u2029 \"e\" \\ f\n")
	odd.ID = "msg_odd"
	odd.Native = convo.Native{"openai": json.RawMessage(`{ "x" : [ 1, "<&>" ] }`)}
	writes = append(writes,
		store.Write{Tenant: "t<&>", ID: "conv_3", Meta: json.RawMessage(`{ "k": "<v>" }`), Messages: []convo.Message{odd, odd}},
		store.Write{ID: "conv_4", Messages: []convo.Message{}},
		store.Write{ID: "conv_5"},
	)
	forks = append(forks, [][]forkWrite{{{conv: "f1", msgs: []convo.Message{odd}, tail: 2}, {conv: "f2", meta: json.RawMessage(`{"a":1}`)}}, nil, nil}...)
	writes[2].Charges = []store.Charge{{Key: "tenant", Day: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC), USD: 7}}
	for i, w := range writes {
		got, err := encodeEntry(w, forks[i])
		if err != nil {
			t.Fatal(err)
		}
		e := spoolEntry{V: 1, Tenant: w.Tenant, Conv: w.ID, Create: w.Create, Meta: w.Meta, Messages: w.Messages, Charges: w.Charges}
		for _, f := range forks[i] {
			e.Forks = append(e.Forks, spoolFork{Conv: f.conv, Meta: f.meta, Messages: f.msgs, Tail: f.tail})
		}
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("entry %d:\n%s\nwant (json.Marshal)\n%s", i, got, want)
		}
	}
}
