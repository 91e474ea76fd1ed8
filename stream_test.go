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

// TestDecoderResume: after a message whose JSON is whole but wrong, Resume
// steps over it and decoding goes on with the right indices; after broken
// JSON it cannot.
func TestDecoderResume(t *testing.T) {
	good := `{"role":"user","parts":[{"type":"text","text":"hi"}]}`
	bad := `{"role":"user","parts":[{"type":"text","text":1}]}`
	tests := []struct {
		name, doc string
		msgs      int
		errs      []string
	}{
		{"array", "[" + good + "," + bad + "," + good + "," + bad + "]", 2,
			[]string{"messages[1].parts[0].text", "messages[3].parts[0].text"}},
		{"envelope", `{"format":"convo/v1","messages":[` + bad + "," + good + "]}", 1, []string{"messages[0].parts[0].text"}},
		{"lines", good + "\n" + bad + "\n" + good + "\n", 2, []string{"messages[1].parts[0].text"}},
		// Brackets that balance make a whole value to step over; what
		// follows is then cut off.
		{"bad json", "[" + good + `,{"role":]`, 1, []string{"messages[1].role", "unexpected end of input"}},
		{"cut off", "[" + bad, 0, []string{"messages[0].parts[0].text", "unexpected end of input"}},
		// A string that never ends leaves nothing to step over.
		{"unterminated", "[" + good + `,{"role":"user]`, 1, []string{"messages[1]"}},
	}
	for _, tt := range tests {
		d := convo.NewDecoder(strings.NewReader(tt.doc))
		var msgs int
		var errs []string
		for {
			_, err := d.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				errs = append(errs, err.Error())
				if !d.Resume() {
					break
				}
				continue
			}
			msgs++
		}
		if msgs != tt.msgs || len(errs) != len(tt.errs) {
			t.Errorf("%s: %d messages, errors %q", tt.name, msgs, errs)
			continue
		}
		for i, want := range tt.errs {
			if !strings.HasPrefix(errs[i], want) {
				t.Errorf("%s: error %d %q, want %s…", tt.name, i, errs[i], want)
			}
		}
	}
	d := convo.NewDecoder(strings.NewReader("[" + good + "]"))
	if d.Resume() {
		t.Error("Resume with no error")
	}
}

// TestValidatorSkip: problems after a skipped message keep their place,
// and results that may answer the unseen message's calls are not reported.
func TestValidatorSkip(t *testing.T) {
	var v convo.Validator
	v.Add(convo.Message{Role: convo.RoleUser, Parts: []convo.Part{convo.Text("q")}})
	v.Skip() // an assistant message with a call, say
	res := convo.Message{Role: convo.RoleTool, Parts: []convo.Part{{Type: convo.TypeToolResult, ID: "c1", Value: []byte(`1`)}}}
	if p := v.Add(res); len(p) != 0 {
		t.Errorf("a result after the skipped message: %v", p)
	}
	if p := v.Add(convo.Message{Role: convo.RoleUser, Phase: "final", Parts: []convo.Part{convo.Text("x")}}); len(p) != 1 || !strings.HasPrefix(p[0].Path, "messages[3]") {
		t.Errorf("problems after the skip: %v", p)
	}
	if p := v.Add(res); len(p) != 1 || !p[0].Unpaired {
		t.Errorf("an orphan result once a message is seen again: %v", p)
	}
}
