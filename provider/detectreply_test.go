package provider_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/convo-go/convo/internal/stream"
	"github.com/convo-go/convo/provider"
)

// TestDetectReply: each rule of DetectReply on the smallest body or stream
// it applies to. The recorded replies of every format are checked in
// provider/all (TestReplyOtherFormat).
func TestDetectReply(t *testing.T) {
	for _, tt := range []struct{ in, format, reason string }{
		{`{"format":"convo/v1","messages":[]}`, "convo", `"format":"convo/v1"`},
		{`{"role":"user","parts":[{"type":"text","text":"hi"}]}`, "convo", `a message with "role" and "parts"`},
		{`[{"role":"user","parts":[{"type":"text","text":"hi"}]}]`, "convo", `a message with "role" and "parts"`},
		{`{"role":"model","parts":[{"text":"hi"}]}`, "gemini", `a content of role "model"`},
		{`{"id":"x","object":"chat.completion","choices":[]}`, "openai-chat", `"object":"chat.completion"`},
		{`{"choices":[]}`, "openai-chat", `top-level "choices"`},
		{"data: [DONE]\n\n", "openai-chat", "a [DONE] event"},
		{`{"id":"r","object":"response","output":[]}`, "openai-responses", `"object":"response"`},
		{`{"output":[]}`, "openai-responses", `an "output" array`},
		{"event: response.created\ndata: {}\n\n", "openai-responses", `events named "response.created"`},
		{`{"type":"message","content":[]}`, "anthropic", `"type":"message"`},
		{": comment\nevent: message_start\ndata: {}\n\n", "anthropic", `events named "message_start"`},
		{"data: {\"type\":\"content_block_delta\"}\n\n", "anthropic", `"type":"content_block_delta"`},
		{`{"candidates":[]}`, "gemini", `top-level "candidates"`},
		{`[{"candidates":[]}`, "gemini", `a JSON array of responses with top-level "candidates"`},
		{`{"model":"m","created_at":"t","message":{"role":"assistant"}}`, "ollama", `a "message" object beside "created_at"`},
		{`{"model":"m","done":true}`, "ollama", `top-level "done"`},
		{`{"output":{"message":{}},"stopReason":"end_turn"}`, "bedrock", `top-level "stopReason"`},
		{`{"output":{"message":{}}}`, "bedrock", `an "output" object`},
		{`{"id":"r","output":{}}`, "", ""},
		{"{\"messageStart\":{\"role\":\"assistant\"}}\n", "bedrock", `an event line {"messageStart":…}`},
		{"\x00\x00\x00\x50\x00\x00\x00\x30abcd\x0b:event-type\x07\x00\x0cmessageStart", "bedrock", "the AWS event-stream framing"},
		{`{"role":"assistant","content":"hi"}`, "litert", `a bare message object with "role"`},
		// No format: shared shapes, nothing, or a message cut off before
		// what would tell (a "type" may follow).
		{`{"error":{"message":"x"}}`, "", ""},
		{`{"error":"x"}`, "", ""},
		{`{}`, "", ""},
		{``, "", ""},
		{`{"role":"assistant","content":"hi"`, "", ""},
		{"hello", "", ""},
		{"\x89PNG\r\n\x1a\n\x00", "", ""},
	} {
		d := provider.DetectReply([]byte(tt.in))
		if d.Format != tt.format || d.Reason != tt.reason || d.Sure != (tt.format != "") {
			t.Errorf("DetectReply(%q) = %+v, want %s (%s)", tt.in, d, tt.format, tt.reason)
		}
	}
}

// TestCheckStreamKeepsBytes: the reader CheckStream returns gives the whole
// stream, whatever its length against what CheckStream looks at, and a
// read error after the first bytes still comes.
func TestCheckStreamKeepsBytes(t *testing.T) {
	for _, n := range []int{0, 1, 8<<10 - 1, 8 << 10, 8<<10 + 1, 50 << 10} {
		in := []byte("data: {\"choices\":[]}\n\n" + strings.Repeat(": pad\n", n/6+1))[:max(n, 0)]
		r, err := provider.CheckStream(iotest.OneByteReader(bytes.NewReader(in)), "openai-chat")
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("%d bytes: read back %d bytes, %v", n, len(got), err)
		}
	}
	boom := errors.New("boom")
	r, err := provider.CheckStream(io.MultiReader(strings.NewReader("data: {}\n\n"), iotest.ErrReader(boom)), "gemini")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(r); !errors.Is(err, boom) || string(got) != "data: {}\n\n" {
		t.Fatalf("got %q, %v; want the bytes, then boom", got, err)
	}
}

// FuzzDetectReply: DetectReply names a format only with a reason and
// surely; CheckReply refuses exactly what it surely names as another
// format; CheckStream refuses the same and otherwise gives back every byte.
func FuzzDetectReply(f *testing.F) {
	for _, s := range []string{
		`{"id":"x","object":"chat.completion","choices":[]}`, "data: [DONE]\n\n", "event: message_start\ndata: {}\n\n",
		`[{"candidates":[]}]`, `{"model":"m","done":true}`, `{"role":"assistant","content":"hi"}`, "{\"messageStart\":{}}\n",
		`{"format":"convo/v1"}`, `{"type":"response.created"}`, "\x00\x00\x00\x50\x00\x00\x00\x30abcd\x0b:event-type", `[`, `{"a":`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d := provider.DetectReply(b)
		if (d.Format != "") != d.Sure || (d.Format != "") != (d.Reason != "") {
			t.Fatalf("DetectReply: %+v", d)
		}
		for _, name := range []string{"anthropic", "bedrock", "gemini", "litert", "ollama", "openai-chat", "openai-responses"} {
			want := d.Sure && d.Format != name
			if err := provider.CheckReply(b, name); (err != nil) != want || (err != nil && !errors.Is(err, provider.ErrOtherFormat)) {
				t.Fatalf("CheckReply(%s): %v; DetectReply: %+v", name, err, d)
			}
			r, err := provider.CheckStream(bytes.NewReader(b), name)
			var fe *provider.FormatError
			if want != errors.As(err, &fe) {
				t.Fatalf("CheckStream(%s): %v; DetectReply: %+v", name, err, d)
			}
			if err == nil {
				if got, _ := io.ReadAll(r); !bytes.Equal(got, b) {
					t.Fatalf("CheckStream(%s) gave back %q", name, got)
				}
			}
			// A stream in memory in chunks (the gateway's tap), looked
			// at where it lies: the same verdict and every byte.
			n := len(b)
			cr, cerr := provider.CheckStream(stream.NewChunks([][]byte{b[:n/3], b[n/3 : 2*n/3], b[2*n/3:]}), name)
			if fmt.Sprint(cerr) != fmt.Sprint(err) {
				t.Fatalf("CheckStream(%s) of chunks: %v, want %v", name, cerr, err)
			}
			if cerr == nil {
				if got, _ := io.ReadAll(cr); !bytes.Equal(got, b) {
					t.Fatalf("CheckStream(%s) of chunks gave back %q", name, got)
				}
			}
		}
	})
}
