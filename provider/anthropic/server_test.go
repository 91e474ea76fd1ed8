package anthropic

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/internal/codectest"
)

// serverBlocks returns the server tool blocks of a content array, compact,
// in order.
func serverBlocks(t *testing.T, content json.RawMessage) [][]byte {
	return codectest.Elements(t, content, func(t codectest.TB, b json.RawMessage) bool {
		var head struct{ Type string }
		if err := json.Unmarshal(b, &head); err != nil {
			t.Fatalf("%v", err)
		}
		return isServerBlock(head.Type)
	})
}

// TestServerToolsReplay: every server tool block of the recorded and
// hand-made replies becomes a tool_call or tool_result part marked as run
// by Anthropic, and the next request carries the block byte for byte.
func TestServerToolsReplay(t *testing.T) {
	files := append(codectest.Files(t, "testdata/recorded/*.json"), codectest.Files(t, "testdata/reply/*.json")...)
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, ".convo.json") {
			continue
		}
		body := codectest.ReadFile(t, f)
		var reply struct{ Content json.RawMessage }
		if err := json.Unmarshal(body, &reply); err != nil {
			t.Fatal(err)
		}
		want := serverBlocks(t, reply.Content)
		if len(want) == 0 {
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) {
			m, _, err := Messages().DecodeReply(body, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(m.ServerTools()); got != len(want) {
				t.Fatalf("%d server tool parts, want %d", got, len(want))
			}
			for _, p := range m.ServerTools() {
				if p.Provider != ProviderID || p.Server == "" {
					t.Errorf("part not marked as run by Anthropic: %+v", p)
				}
			}
			if err := (convo.History{convo.User("q"), m}).Validate(); m.HasToolCalls() || err != nil {
				t.Errorf("server tools taken for the caller's, or invalid: %v", err)
			}
			req, _, err := Messages().Encode(convo.History{convo.User("q"), m}, provider.Options{Strict: true})
			if err != nil {
				t.Fatal(err)
			}
			var sent struct {
				Messages []struct{ Content json.RawMessage }
			}
			if err := json.Unmarshal(req, &sent); err != nil {
				t.Fatal(err)
			}
			got := serverBlocks(t, sent.Messages[1].Content)
			if len(got) != len(want) {
				t.Fatalf("%d blocks sent, want %d", len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("block %d sent as\n%s\nwant\n%s", i, got[i], want[i])
				}
			}
			// The gateway's encoders give an Anthropic client the same
			// blocks: whole in a reply, whole when they end in a stream.
			var enc struct{ Content json.RawMessage }
			if err := json.Unmarshal(EncodeReply(m, provider.StreamOptions{}), &enc); err != nil {
				t.Fatal(err)
			}
			if got := serverBlocks(t, enc.Content); len(got) != len(want) || !bytes.Equal(bytes.Join(got, nil), bytes.Join(want, nil)) {
				t.Errorf("EncodeReply server blocks differ:\n%s", enc.Content)
			}
			var sse bytes.Buffer
			codectest.WriteDeltas(t, NewStreamEncoder(&sse, provider.StreamOptions{}), m)
			back, _, err := Messages().ReadStream(&sse, provider.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if b := back.ServerTools(); len(b) != len(want) || !slices.EqualFunc(b, m.ServerTools(), convo.Part.Equal) {
				t.Errorf("streamed back: %+v", b)
			}
		})
	}
	if n < 3 {
		t.Fatalf("only %d replies with server tools", n)
	}
}
