package codectest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/convo-go/convo"
	"github.com/convo-go/convo/provider"
)

// Contract runs the rules every provider codec keeps, against its own
// fixtures, so a provider package states them in one line:
//
//	codectest.Contract(t, Messages(), "testdata/reply/*.sse", "testdata/roundtrip/*.json")
//
// For every recorded stream matching streams (a file that fails whole is a
// recorded error and is checked for consistency only):
//
//   - reading it one byte at a time gives what reading it whole gives:
//     message, warnings and error;
//   - cut at any byte it reads as complete or fails with an error wrapping
//     provider.ErrIncomplete (see Cut);
//   - with Options.Strict, a read that had warnings fails with a
//     *provider.StrictError, and one without is unchanged;
//   - where the whole reply <name>.json is beside it, DecodeReply of it
//     gives the same message as ReadStream (and, when strict, fails the
//     same way); at least one such pair must exist.
//
// For every request body matching requests (golden files beside them left
// out): decode then encode is a fixed point (encoding the history decoded
// from what Encode wrote gives the same bytes), and with Strict a decode or
// encode that had warnings fails.
func Contract(t *testing.T, f provider.Format, streams, requests string) {
	t.Run("streams", func(t *testing.T) { contractStreams(t, f, streams) })
	t.Run("cut", func(t *testing.T) { Cut(t, f, streams) })
	t.Run("requests", func(t *testing.T) { contractRequests(t, f, requests) })
}

// read is one ReadStream result in a comparable form.
type read struct {
	m     convo.Message
	warns []provider.Warning
	err   error
}

func readWith(rc provider.ReplyCodec, data []byte, opts provider.Options, oneByte bool) read {
	var r io.Reader = bytes.NewReader(data)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	m, warns, err := rc.ReadStream(r, opts)
	return read{m, warns, err}
}

func (r read) String() string {
	b, _ := convo.AppendMessage(nil, r.m)
	return fmt.Sprintf("%s\nwarnings: %s\nerror: %v", b, WarningText(r.warns), r.err)
}

func contractStreams(t *testing.T, rc provider.ReplyCodec, pattern string) {
	pairs := 0
	for _, file := range Files(t, pattern) {
		base := strings.TrimSuffix(file, filepath.Ext(file))
		t.Run(filepath.Base(file), func(t *testing.T) {
			data := ReadFile(t, file)
			whole := readWith(rc, data, provider.Options{}, false)
			if got := readWith(rc, data, provider.Options{}, true); got.String() != whole.String() {
				t.Errorf("one byte at a time:\n%s\nwhole:\n%s", got, whole)
			}
			strict := readWith(rc, data, provider.Options{Strict: true}, false)
			checkStrict(t, "ReadStream", whole, strict)

			body, err := os.ReadFile(base + ".json")
			if err != nil || whole.err != nil {
				return // no whole twin, or a recorded error
			}
			pairs++
			m, warns, err := rc.DecodeReply(body, provider.Options{})
			if err != nil {
				t.Fatalf("DecodeReply of %s.json: %v", base, err)
			}
			if !m.Equal(whole.m) {
				t.Errorf("DecodeReply and ReadStream differ:\nwhole:  %s\nstream: %s", MessageJSON(t, m), MessageJSON(t, whole.m))
			}
			sm, swarns, serr := rc.DecodeReply(body, provider.Options{Strict: true})
			checkStrict(t, "DecodeReply", read{m, warns, nil}, read{sm, swarns, serr})
		})
	}
	if pairs == 0 {
		t.Errorf("no stream matching %s has its whole reply (<name>.json) beside it: DecodeReply is never compared", pattern)
	}
}

// checkStrict compares a strict read with the same read without Strict.
func checkStrict(t *testing.T, what string, plain, strict read) {
	t.Helper()
	var se *provider.StrictError
	switch {
	case plain.err != nil:
		// A failing read fails strictly too (with its own error or a
		// strict one).
		if strict.err == nil {
			t.Errorf("%s: fails without Strict (%v) but not with it", what, plain.err)
		}
	case len(plain.warns) > 0:
		if !errors.As(strict.err, &se) {
			t.Errorf("%s: warnings %q, but with Strict the error is %v, want a *provider.StrictError", what, WarningText(plain.warns), strict.err)
		}
	default:
		if strict.String() != plain.String() {
			t.Errorf("%s: no warnings, yet Strict changed the result:\n%s\nwant\n%s", what, strict, plain)
		}
	}
}

func contractRequests(t *testing.T, c provider.Codec, pattern string) {
	for _, file := range requests(t, pattern) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			body := ReadFile(t, file)
			h, warns, err := c.Decode(body, provider.Options{})
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			_, _, serr := c.Decode(body, provider.Options{Strict: true})
			checkStrict(t, "Decode", read{warns: warns}, read{err: serr})

			first, warns, err := c.Encode(h, provider.Options{})
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			_, _, serr = c.Encode(h, provider.Options{Strict: true})
			checkStrict(t, "Encode", read{warns: warns}, read{err: serr})

			h2, _, err := c.Decode(first, provider.Options{})
			if err != nil {
				t.Fatalf("Decode of what Encode wrote: %v\n%s", err, first)
			}
			second, _, err := c.Encode(h2, provider.Options{})
			if err != nil {
				t.Fatalf("second Encode: %v", err)
			}
			if !bytes.Equal(first, second) {
				t.Errorf("decode→encode is not a fixed point:\nfirst:  %s\nsecond: %s", first, second)
			}
		})
	}
}
