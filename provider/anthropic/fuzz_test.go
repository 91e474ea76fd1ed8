package anthropic

import (
	"bytes"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// FuzzDecode feeds arbitrary bodies to Decode. It must never panic; what it
// accepts must survive the canonical format, and encoding is a fixpoint:
// encode(decode(encode(h))) == encode(h).
func FuzzDecode(f *testing.F) {
	opts := provider.Options{Repair: true, Media: provider.MediaPlaceholder}
	codectest.FuzzFixpoint(f, Messages(), opts, "testdata/roundtrip/*.json",
		`{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"document","source":{"type":"text","data":"x"}}]}]}]}`,
		`{"system":"","messages":[{"role":"system","content":[]},{"role":"assistant","content":""}]}`,
	)
}

// FuzzAccumulate feeds arbitrary events (one per line) to the stream
// accumulator. It must never panic; whatever it returns must be a message
// the canonical format can hold, partial or not.
func FuzzAccumulate(f *testing.F) {
	for _, name := range codectest.Files(f, "testdata/reply/*.sse") {
		f.Add(bytes.Join(codectest.SSEData(codectest.ReadFile(f, name)), []byte("\n")))
	}
	for _, seed := range codectest.RecordedEvents(f, "testdata/recorded") {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		acc := Messages().NewAccumulator(provider.Options{})
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
