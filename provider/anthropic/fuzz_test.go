package anthropic

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// FuzzDecode feeds arbitrary bodies to Decode. It must never panic; what it
// accepts must survive the canonical format, and encoding is a fixpoint:
// encode(decode(encode(h))) == encode(h).
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/roundtrip/*.json")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"document","source":{"type":"text","data":"x"}}]}]}]}`))
	f.Add([]byte(`{"system":"","messages":[{"role":"system","content":[]},{"role":"assistant","content":""}]}`))
	opts := provider.Options{Repair: true, Media: provider.MediaPlaceholder}
	f.Fuzz(func(t *testing.T, body []byte) {
		h, _, err := Codec().Decode(body, provider.Options{})
		if err != nil {
			return
		}
		canon, err := convo.Marshal(h)
		if err != nil {
			t.Fatalf("decoded history does not marshal: %v", err)
		}
		if _, err := convo.Unmarshal(canon); err != nil {
			t.Fatalf("decoded history does not reload: %v\n%s", err, canon)
		}
		out, _, err := Codec().Encode(h, opts)
		if err != nil {
			return // e.g. an image type the API does not take
		}
		h2, _, err := Codec().Decode(out, provider.Options{})
		if err != nil {
			t.Fatalf("encoded request does not decode: %v\n%s", err, out)
		}
		out2, _, err := Codec().Encode(h2, opts)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("encoding is not a fixpoint\n first: %s\nsecond: %s", out, out2)
		}
	})
}

// FuzzAccumulate feeds arbitrary events (one per line) to the stream
// accumulator. It must never panic; whatever it returns must be a message
// the canonical format can hold, partial or not.
func FuzzAccumulate(f *testing.F) {
	files, _ := filepath.Glob("testdata/reply/*.sse")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		f.Add(bytes.Join(codectest.SSEData(b), []byte("\n")))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		acc := ReplyCodec().NewAccumulator(provider.Options{})
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
	})
}
