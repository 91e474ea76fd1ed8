package openai

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// FuzzDecode feeds arbitrary bytes to both decoders (and to DecodeItems as
// one item). Nothing may panic; whatever decodes must encode, and what is
// encoded must decode and encode again to the same bytes.
func FuzzDecode(f *testing.F) {
	for _, dir := range []string{"chat", "responses"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		for _, file := range files {
			f.Add(readFile(f, file))
		}
	}
	f.Add([]byte(`{"messages":[{"role":"assistant","function_call":{"name":"f","arguments":"{"}},{"role":"function","name":"f","content":"x"}]}`))
	f.Add([]byte(`{"input":[{"summary":[{"type":"summary_text","text":"s"}],"type":"reasoning","id":"r"},{"content":"x","role":"assistant"}]}`))
	f.Add([]byte(`{"input":[{"content":[{"type":"input_text","text":"x","prompt_cache_breakpoint":{"mode":"explicit","ttl":"30m"}}],"role":"user"}]}`))
	opts := provider.Options{Repair: true, Media: provider.MediaPlaceholder}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, codec := range []provider.Codec{Chat(), Responses()} {
			h, _, err := codec.Decode(body, provider.Options{})
			if err != nil {
				continue
			}
			checkStable(t, codec, h, opts)
		}
		if h, _, err := DecodeItems([]json.RawMessage{body}, provider.Options{}); err == nil {
			items, _, err := EncodeItems(h, opts)
			if err == nil {
				if _, _, err := DecodeItems(items, provider.Options{}); err != nil {
					t.Fatalf("DecodeItems of encoded items: %v\n%s", err, body)
				}
			}
		}
	})
}

func mustDecode(t *testing.T, codec provider.Codec, body []byte) convo.History {
	t.Helper()
	h, _, err := codec.Decode(body, provider.Options{})
	if err != nil {
		t.Fatalf("%s: %v\n%s", codec.Name(), err, body)
	}
	return h
}

// checkStable encodes h, decodes the result and encodes again: the two
// encodings must be identical.
func checkStable(t *testing.T, codec provider.Codec, h convo.History, opts provider.Options) {
	t.Helper()
	out, _, err := codec.Encode(h, opts)
	if err != nil {
		return // an unsendable history (say, invalid UTF-8 in a kept field) is refused, not mangled
	}
	h2, _, err := codec.Decode(out, provider.Options{})
	if err != nil {
		t.Fatalf("%s: decoding its own output: %v\n%s", codec.Name(), err, out)
	}
	out2, _, err := codec.Encode(h2, opts)
	if err != nil {
		t.Fatalf("%s: encoding the decoded output: %v\n%s", codec.Name(), err, out)
	}
	// Native members may come back in another order: the JSON values
	// must be equal, and so must the histories.
	if !bytes.Equal(out, out2) && canonicalJSON(t, out) != canonicalJSON(t, out2) {
		t.Fatalf("%s: encoding is not stable:\n%s\n%s", codec.Name(), out, out2)
	}
	if !h2.Equal(mustDecode(t, codec, out2)) {
		t.Fatalf("%s: decoding is not stable:\n%s", codec.Name(), out)
	}
}
