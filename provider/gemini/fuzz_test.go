package gemini

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// FuzzDecode feeds Decode arbitrary bodies. It must never panic; what it
// accepts must encode (with repair and placeholders) to valid JSON that
// decodes again, and a second trip must not change the bytes: the codec has
// one fixed point per history.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("testdata/roundtrip/*.json")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		`{"contents":[]}`,
		`{"contents":{"parts":{"text":"one"}}}`,
		`{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f"}},{"functionCall":{"name":"f"}}]},{"parts":[{"functionResponse":{"name":"f","response":{}}}]}]}`,
		`{"contents":[{"parts":[{"text":"a","thought":true,"thoughtSignature":"QQ=="}]}]}`,
		`{"contents":[{"parts":[{"functionResponse":{"name":"f","response":{"output":{"a":1}},"parts":[{"inlineData":{"mimeType":"image/png","data":"QQ"}}]}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	opts := provider.Options{Repair: true, Media: provider.MediaPlaceholder}
	f.Fuzz(func(t *testing.T, body []byte) {
		h, _, err := Codec().Decode(body, provider.Options{})
		if err != nil {
			return
		}
		if _, err := convo.Marshal(h); err != nil {
			t.Fatalf("decoded history does not marshal: %v", err)
		}
		out, _, err := Codec().Encode(h, opts)
		if err != nil {
			return // e.g. a result with no call to name it; reported, not a crash
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON: %s", out)
		}
		h2, _, err := Codec().Decode(out, provider.Options{})
		if err != nil {
			t.Fatalf("encoded request does not decode: %v\n%s", err, out)
		}
		out2, _, err := Codec().Encode(h2, opts)
		if err != nil {
			t.Fatalf("second encode: %v", err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("second trip changed the request:\n%s\n%s", out, out2)
		}
	})
}

// FuzzAccumulate feeds the stream accumulator arbitrary events (one per
// line of the input). It must never panic; whatever it accepted, the final
// message must marshal and equal the last snapshot.
func FuzzAccumulate(f *testing.F) {
	files, _ := filepath.Glob("testdata/replies/*.sse")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		f.Add(bytes.Join(codectest.SSEData(b), []byte("\n")))
	}
	f.Add([]byte(`{"error":{"code":500,"message":"boom"}}`))
	f.Add([]byte("{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\",\"thought\":true},{\"text\":\"\",\"thoughtSignature\":\"x\"}]},\"index\":1}]}\n[DONE]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		acc := ReplyCodec().NewAccumulator(provider.Options{})
		for _, line := range bytes.Split(data, []byte("\n")) {
			if acc.Add(provider.Event{Data: line}) != nil {
				break
			}
		}
		snap := acc.Snapshot()
		m, _, _ := acc.Message()
		if !m.Equal(snap) {
			t.Fatal("final message differs from the last snapshot")
		}
		if _, err := convo.AppendMessage(nil, m); err != nil {
			t.Fatalf("message does not marshal: %v", err)
		}
	})
}
