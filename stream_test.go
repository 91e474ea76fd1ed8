package convo_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/convo-go/convo"
)

// decodeAll reads every message of doc with a Decoder fed through r.
func decodeAll(doc []byte, wrap func(io.Reader) io.Reader) (convo.History, error) {
	d := convo.NewDecoder(wrap(bytes.NewReader(doc)))
	h := convo.History{}
	for {
		m, err := d.Next()
		if err == io.EOF {
			return h, nil
		}
		if err != nil {
			return h, err
		}
		h = append(h, m)
	}
}

// sameAsUnmarshal checks that the Decoder reads doc as Unmarshal does:
// the same messages, or an error for the same documents.
func sameAsUnmarshal(t *testing.T, name string, doc []byte) {
	t.Helper()
	want, werr := convo.Unmarshal(doc)
	for _, wrap := range []func(io.Reader) io.Reader{func(r io.Reader) io.Reader { return r }, iotest.OneByteReader, iotest.HalfReader} {
		got, gerr := decodeAll(doc, wrap)
		switch {
		case (gerr == nil) != (werr == nil):
			t.Fatalf("%s: Decoder error %v, Unmarshal error %v", name, gerr, werr)
		case werr == nil && !got.Equal(want):
			t.Fatalf("%s: Decoder read %d messages unlike Unmarshal's %d", name, len(got), len(want))
		}
	}
}

func TestDecoderMatchesUnmarshal(t *testing.T) {
	files, _ := filepath.Glob("testdata/v1/*")
	for _, f := range files {
		if strings.HasSuffix(f, ".golden") {
			continue
		}
		doc, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sameAsUnmarshal(t, f, doc)
	}
	for _, doc := range []string{
		``, ` `, `[]`, `[ ]`, `{"format":"convo/v1","messages":[]}`, `{"messages":[],"format":"convo/v1"}`,
		"\xef\xbb\xbf[{\"role\":\"user\"}]", `{"role":"user"} {"role":"assistant"}`,
		`[{"role":"user"},{"role":"assistant"}]`, `[{"role":"user"}`, `[{"role":"user"},]`, `[,{"role":"user"}]`,
		`{"format":"convo/v2","messages":[]}`, `{"format":"convo/v1"}`, `{"messages":[]}`, `{"format":"convo/v1","messages":[],"x":1}`,
		`{"format":"convo/v1","messages":[{"role":"user"}]} x`, `[1]`, `["a"]`, `{"role":"user","parts":[{"type":"text","text":"}\"{"}]}`,
		`{"role":"user"`, `{"format":1,"messages":[]}`, `[{"role":"user"}] [`, `nope`, `{"role":"user"}]`,
	} {
		sameAsUnmarshal(t, doc, []byte(doc))
	}
}

// TestDecoderPlace: errors name the message, as Unmarshal's do.
func TestDecoderPlace(t *testing.T) {
	_, err := decodeAll([]byte(`{"role":"user"}`+"\n"+`{"role":"user","parts":[{"type":"text","text":1}]}`), func(r io.Reader) io.Reader { return r })
	if err == nil || !strings.HasPrefix(err.Error(), "messages[1].parts[0].text:") {
		t.Fatalf("error %v", err)
	}
}

// TestDecoderMessageLimit: MaxBytes bounds one message, refused before it
// is read whole.
func TestDecoderMessageLimit(t *testing.T) {
	big := `{"role":"user","parts":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]}`
	d := convo.Limits{MaxBytes: 1000}.NewDecoder(strings.NewReader(`{"role":"user"}` + "\n" + big))
	if _, err := d.Next(); err != nil {
		t.Fatal(err)
	}
	_, err := d.Next()
	if err == nil || !strings.Contains(err.Error(), "more than 1000 bytes") {
		t.Fatalf("error %v", err)
	}
	if _, again := d.Next(); !errors.Is(again, err) && again.Error() != err.Error() {
		t.Errorf("the error does not stay: %v", again)
	}
}

func FuzzDecoder(f *testing.F) {
	files, _ := filepath.Glob("testdata/v1/*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && !strings.HasSuffix(p, ".golden") {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"messages":[{"role":"user"}],"format":"convo/v1"}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		sameAsUnmarshal(t, "fuzz", doc)
	})
}
