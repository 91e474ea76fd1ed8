package gemini

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// TestEncodeReplySignatures: a Gemini reply written again, plain and
// streamed, has its signatures on the parts they came on: the thought's,
// the text parts' and the first function call's (recorded replies
// signed.json and tools.json). A streamed text part's signature is not
// carried: the stream encoder writes text before the part's end, which
// brings its Native.
func TestEncodeReplySignatures(t *testing.T) {
	for _, name := range []string{"signed", "tools"} {
		data, err := os.ReadFile("testdata/replies/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		m, _, err := generateContent{}.DecodeReply(data, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want := signatures(m, false)
		if len(want) == 0 {
			t.Fatalf("%s: no signature to keep", name)
		}
		got, _, err := generateContent{}.DecodeReply(EncodeReply(m, provider.StreamOptions{}), provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if g := signatures(got, false); !reflect.DeepEqual(g, want) {
			t.Errorf("%s, plain: signatures %v, want %v", name, g, want)
		}
		var buf bytes.Buffer
		se := NewStreamEncoder(&buf, provider.StreamOptions{})
		for _, d := range provider.MessageDeltas(m) {
			if err := se.Write(d); err != nil {
				t.Fatal(err)
			}
		}
		got, _, err = generateContent{}.ReadStream(&buf, provider.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if g, w := signatures(got, true), signatures(m, true); !reflect.DeepEqual(g, w) {
			t.Errorf("%s, streamed: signatures %v, want %v\n%s", name, g, w, buf.String())
		}
	}
}

// signatures lists a message's signatures with the type of the part each
// is on, in order; streamed leaves out those of text parts.
func signatures(m convo.Message, streamed bool) []string {
	var out []string
	for _, p := range m.Parts {
		sig := p.Signature
		if v := nativeMember(p.Native, "thoughtSignature"); v != nil {
			sig = string(v)
		}
		if sig != "" && !(streamed && p.Type == convo.TypeText) {
			out = append(out, string(p.Type)+" "+sig)
		}
	}
	return out
}
