package gateway

import (
	"strings"
	"testing"

	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// TestShare: a translated stream's events are read in the SSE reader's
// own buffer (the next event overwrites the last) only for an
// accumulator that copies what it keeps (Anthropic's, OpenAI Chat's);
// any other is given each event's data in memory of its own.
func TestShare(t *testing.T) {
	for _, c := range []struct {
		upstream string
		shared   bool
	}{{"anthropic", true}, {"openai-chat", true}, {"openai-responses", false}, {"gemini", false}} {
		rc, err := all.Lookup(c.upstream)
		if err != nil {
			t.Fatal(err)
		}
		src := stream.NewSSE(strings.NewReader("data: first\n\ndata: again\n\n"))
		share(src, rc.NewAccumulator(provider.Options{}))
		first, err := src.Next()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := src.Next(); err != nil {
			t.Fatal(err)
		}
		if got := string(first.Data) != "first"; got != c.shared {
			t.Errorf("%s: the first event's data is %q after the second: shared %v, want %v", c.upstream, first.Data, got, c.shared)
		}
		src.Release()
	}
}
