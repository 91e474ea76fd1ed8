package convo_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/internal/lend"
)

// lengthen returns m with every text, reasoning, data and argument string
// made longer than the 4 KiB from which the lending decoder aliases, with
// escapes in the texts (newlines, quotes, non-ASCII), so that both of its
// long-string cases are reached.
func lengthen(m convo.Message) convo.Message {
	m.Parts = lengthenParts(m.Parts)
	return m
}

func lengthenParts(ps []convo.Part) []convo.Part {
	out := make([]convo.Part, len(ps))
	for i, p := range ps {
		if p.Text != "" {
			p.Text = strings.Repeat(p.Text+"\n\"é\t", 4096/len(p.Text)+1)
		}
		if p.Data != "" {
			p.Data = strings.Repeat("AAAA", 1100)
		}
		if p.Args != nil {
			p.Args = json.RawMessage(`{"long":"` + strings.Repeat("x", 5000) + `"}`)
		}
		p.Parts = lengthenParts(p.Parts)
		out[i] = p
	}
	return out
}

// fixtureMessages are the messages of the recorded histories in
// testdata/v1, each as it is and lengthened.
func fixtureMessages(t testing.TB) []convo.Message {
	files, err := filepath.Glob("testdata/v1/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var out []convo.Message
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		h, err := convo.Unmarshal(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, m := range h {
			out = append(out, m, lengthen(m))
		}
	}
	return out
}

// checkLent decodes doc both ways and fails unless they agree: the same
// error or none, and the same message, field for field.
func checkLent(t *testing.T, doc []byte) (convo.Message, bool) {
	t.Helper()
	want, werr := convo.UnmarshalMessage(doc)
	var got convo.Message
	gerr := lend.UnmarshalMessage(doc, &got)
	if (werr == nil) != (gerr == nil) || (werr != nil && werr.Error() != gerr.Error()) {
		t.Fatalf("errors differ: UnmarshalMessage %v, lent %v\n%s", werr, gerr, doc)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded differently:\nlent %+v\nwant %+v", got, want)
	}
	return got, werr == nil
}

// TestLentDecodeMatches: the store's lending decoder (used to read back a
// long message it has just encoded) decodes every recorded message, as it
// is and with long strings, exactly as UnmarshalMessage does.
func TestLentDecodeMatches(t *testing.T) {
	long := 0
	for _, m := range fixtureMessages(t) {
		doc, err := convo.AppendMessage(nil, m)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := checkLent(t, doc)
		for _, p := range got.Parts {
			if len(p.Text) >= 4096 {
				long++
			}
		}
	}
	if long == 0 {
		t.Fatal("no long text decoded: the lengthened fixtures do not reach the lending path")
	}
}

// TestLentDecodeAliases: a long text without escapes is the document's
// bytes, not a copy — the point of the lending decoder — and a long text
// with escapes is a buffer of its own, not the reader's scratch that the
// next string would overwrite.
func TestLentDecodeAliases(t *testing.T) {
	plain := strings.Repeat("a lazy dog ", 1000)
	escaped := strings.Repeat("a \"lazy\"\ndog ", 1000)
	doc, err := convo.AppendMessage(nil, convo.Message{Role: convo.RoleAssistant, Parts: []convo.Part{
		{Type: convo.TypeText, Text: plain}, {Type: convo.TypeText, Text: escaped}, {Type: convo.TypeText, Text: escaped + "2"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := checkLent(t, doc)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(doc)))
	at := uintptr(unsafe.Pointer(unsafe.StringData(m.Parts[0].Text)))
	if at < start || at >= start+uintptr(len(doc)) {
		t.Error("a long text without escapes was copied, not lent from the document")
	}
	if m.Parts[1].Text != escaped || m.Parts[2].Text != escaped+"2" {
		t.Error("a long text with escapes was overwritten by the next one")
	}
	if !bytes.Contains(doc, []byte(plain)) {
		t.Error("the document changed")
	}
}

// FuzzUnmarshalLent: the lending decoder agrees with UnmarshalMessage on
// any input.
func FuzzUnmarshalLent(f *testing.F) {
	for _, m := range fixtureMessages(f) {
		if doc, err := convo.AppendMessage(nil, m); err == nil {
			f.Add(doc)
		}
	}
	f.Add([]byte(`{"role":"user","parts":[{"type":"text","text":"` + strings.Repeat(`\u00e9\n`, 700) + `"}]}`))
	f.Add([]byte(`{"role":"user","parts":[{"type":"text","text":"` + strings.Repeat(`ab`, 2048) + `\x"}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) { checkLent(t, doc) })
}
