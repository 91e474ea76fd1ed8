package gemini

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// conversation returns the conversation fields of a request body, under
// their camelCase names, as generic JSON.
func conversation(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	out := map[string]any{}
	for k, v := range m {
		switch k {
		case "contents":
			out[k] = v
		case "systemInstruction", "system_instruction":
			out["systemInstruction"] = v
		}
	}
	return out
}

// sameJSON fails the test unless a and b hold the same conversation.
func sameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	g, w := conversation(t, got), conversation(t, want)
	if !reflect.DeepEqual(g, w) {
		gb, _ := json.MarshalIndent(g, "", " ")
		wb, _ := json.MarshalIndent(w, "", " ")
		t.Errorf("conversation differs\n got: %s\nwant: %s", gb, wb)
	}
}

// TestRoundTrip decodes realistic request bodies, checks the canonical
// history against a golden file, and re-encodes them: the conversation
// fields must come back semantically equal.
func TestRoundTrip(t *testing.T) {
	files, err := filepath.Glob("testdata/roundtrip/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, ".convo.json") {
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			body := codectest.ReadFile(t, file)
			h, warns, err := GenerateContent().Decode(body, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(warns) > 0 {
				t.Errorf("decode warnings:\n%s", string(codectest.WarningText(warns)))
			}
			canon, err := convo.Marshal(h)
			if err != nil {
				t.Fatal(err)
			}
			codectest.Golden(t, strings.TrimSuffix(file, ".json")+".convo.json", canon)

			// The canonical document must carry everything: reload it
			// before encoding, as a program that saved the history would.
			h2, err := convo.Unmarshal(canon)
			if err != nil {
				t.Fatal(err)
			}
			if !h2.Equal(h) {
				t.Fatal("canonical round trip changed the history")
			}
			out, warns, err := GenerateContent().Encode(h2, provider.Options{Strict: true})
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if len(warns) > 0 {
				t.Errorf("encode warnings:\n%s", string(codectest.WarningText(warns)))
			}
			sameJSON(t, out, body)

			// Encoding is deterministic and stable under another trip.
			h3, _, err := GenerateContent().Decode(out, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !h3.Equal(h) {
				t.Error("decoding the encoded request gave another history")
			}
			out2, _, err := GenerateContent().Encode(h3, provider.Options{})
			if err != nil || !bytes.Equal(out, out2) {
				t.Errorf("second encode differs (%v):\n%s\n%s", err, out, out2)
			}
		})
	}
}
