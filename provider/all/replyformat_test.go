package all_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/convo-go/convo/provider"
	"github.com/convo-go/convo/provider/all"
)

// replyFixture is one recorded reply (or canonical document) of a format:
// a response body, or a stream as it came over the wire.
type replyFixture struct {
	format, file string
	stream       bool
	data         []byte
}

// replyDirs are the directories of recorded replies of each format (see
// the README beside them), and canonical documents ("convo").
var replyDirs = map[string][]string{
	"anthropic":        {"../anthropic/testdata/recorded", "../anthropic/testdata/reply"},
	"openai-chat":      {"../openai/testdata/recorded/chat"},
	"openai-responses": {"../openai/testdata/recorded/responses"},
	"gemini":           {"../gemini/testdata/recorded", "../gemini/testdata/replies"},
	"ollama":           {"../ollama/testdata/recorded", "../ollama/testdata/replies"},
	"bedrock":          {"../bedrock/testdata/recorded"},
	"litert":           {"../litert/testdata/replies"},
	"convo":            {"../../testdata/v1"},
}

// replyFixtures reads every fixture of replyDirs. A *.chunks.txt file holds
// the data of one event a line (as the Vercel AI SDK records them) and is
// framed as the format sends it: Server-Sent Events (named by their type
// for Anthropic), JSON lines for Bedrock.
func replyFixtures(t *testing.T) []replyFixture {
	var out []replyFixture
	for format, dirs := range replyDirs {
		for _, dir := range dirs {
			files, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				name := f.Name()
				if strings.HasSuffix(name, ".golden") || strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".convo.json") {
					continue
				}
				data, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				stream := !strings.HasSuffix(name, ".json")
				if strings.HasSuffix(name, ".chunks.txt") && format != "bedrock" {
					data = frameSSE(data, format == "anthropic")
				}
				out = append(out, replyFixture{format, filepath.Join(dir, name), stream, data})
			}
		}
	}
	return out
}

// frameSSE frames lines of event data as Server-Sent Events, named by their
// "type" when named is set.
func frameSSE(lines []byte, named bool) []byte {
	var b bytes.Buffer
	for _, l := range bytes.Split(bytes.TrimSpace(lines), []byte("\n")) {
		if named {
			var ev struct{ Type string }
			_ = json.Unmarshal(l, &ev)
			b.WriteString("event: " + ev.Type + "\n")
		}
		b.WriteString("data: ")
		b.Write(l)
		b.WriteString("\n\n")
	}
	return b.Bytes()
}

// sharedShape are the fixtures whose first value no format owns: an error
// body in a shape two formats share. Every other reader still fails on
// them (with the API's error), but cannot name the format.
var sharedShape = map[string]bool{
	"../ollama/testdata/replies/error_body.json": true, // {"error":"…"}, LiteRT's error line too
}

// TestReplyOtherFormat feeds every reply reader (bodies and streams) every
// other format's recorded replies and canonical documents: each is refused
// with one line naming the format it looks like, and never by its own
// reader.
func TestReplyOtherFormat(t *testing.T) {
	n := 0
	for _, fx := range replyFixtures(t) {
		d := provider.DetectReply(fx.data)
		if want := fx.format; sharedShape[fx.file] {
			want = ""
		} else if d.Format != want || !d.Sure {
			t.Errorf("DetectReply(%s) = %+v, want %s", fx.file, d, want)
		}
		for _, f := range all.Formats() {
			err := readReply(f, fx)
			var fe *provider.FormatError
			switch {
			case f.Name() == fx.format:
				if errors.Is(err, provider.ErrOtherFormat) {
					t.Errorf("%s refused by its own reader: %v", fx.file, err)
				}
			case sharedShape[fx.file]:
				if err == nil {
					t.Errorf("%s read as %s: no error", fx.file, f.Name())
				}
			case !errors.As(err, &fe) || fe.Got.Format != fx.format || fe.Want != f.Name() || fe.Stream != fx.stream:
				t.Errorf("%s read as %s: %v, want a FormatError naming %s", fx.file, f.Name(), err, fx.format)
			case strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), fx.format):
				t.Errorf("%s read as %s: %q is not one line naming %s", fx.file, f.Name(), err, fx.format)
			default:
				n++
			}
		}
	}
	if n < 500 {
		t.Fatalf("only %d refusals checked: fixtures missing?", n)
	}
}

// readReply reads a fixture with f, as a stream or as a body.
func readReply(f provider.Format, fx replyFixture) error {
	if fx.stream {
		_, _, err := f.ReadStream(bytes.NewReader(fx.data), provider.Options{})
		return err
	}
	_, _, err := f.DecodeReply(fx.data, provider.Options{})
	if _, _, err2 := provider.DecodeReplies(f, fx.data, provider.Options{}); (err == nil) != (err2 == nil) {
		return fmt.Errorf("DecodeReply: %v, DecodeReplies: %v", err, err2)
	}
	return err
}

// TestReplyOfNoFormat: an object no format owns is not read as an empty
// message by any reader, nor is a binary input read as a stream of text.
func TestReplyOfNoFormat(t *testing.T) {
	for _, f := range all.Formats() {
		for _, body := range []string{`{}`, `{"x":1}`, `{"error":null}`} {
			if m, _, err := f.DecodeReply([]byte(body), provider.Options{}); err == nil {
				t.Errorf("%s read %s as %+v", f.Name(), body, m)
			}
		}
		bin := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00")
		_, _, err := f.ReadStream(bytes.NewReader(bin), provider.Options{})
		if err == nil || (f.Name() != "bedrock" && !strings.Contains(err.Error(), "binary")) {
			t.Errorf("%s read a binary stream: %v", f.Name(), err)
		}
	}
}
